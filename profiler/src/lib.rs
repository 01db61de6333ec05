//! Bloatlens' profiler: an embedded, instrumented JVM ([`vm`]) that runs the real JDK class
//! library from the user's JDK ([`classpath`]), reading class files with [`classfile`].
//! The analyses and the report are built on the VM's [`vm::Tracker`] hooks.

pub mod analysis;
pub mod classfile;
pub mod classpath;
pub mod cost_model;
pub mod evidence;
pub mod fixes;
pub mod gate;
pub mod graphs;
pub mod javac;
pub mod junit;
pub mod patterns;
pub mod prepared;
pub mod private_dir;
pub mod profile;
pub mod project;
pub mod quickfix;
pub mod recognise;
pub mod report;
pub mod run;
pub mod sarif;
pub mod text;
pub mod triage;
pub mod verify;
pub mod vm;
