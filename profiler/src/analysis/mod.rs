//! The analyses: trackers that watch a run (`vm::Tracker`) and turn what they saw into report
//! findings when it ends (`Tracker::finish`).
//!
//! - [`objects`]: producers (allocation site × context) and source locations, shared by all;
//! - [`shadow`]: shadow storage for slots and heap locations, for trackers that follow values;
//! - [`copy`]: copy profiling — the copy graph, hot copy chains, the clone detector, the flat and
//!   cumulative copy profiles;
//! - [`refprop`]: reference propagation — NATH, mostly-NATH, never- and rarely-used sites,
//!   write-read imbalance.

pub mod allocation_line;
pub mod bottleneck;
pub mod calltree;
pub mod cct;
pub mod copy;
pub mod costben;
pub mod events;
pub mod fingerprint;
pub mod lifetime;
pub mod objects;
pub mod placement;
pub mod refprop;
pub mod shadow;
pub mod words;
