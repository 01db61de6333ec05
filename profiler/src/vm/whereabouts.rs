//! Where the program has been lately. At every budget check (about every million instructions) the
//! innermost frame of the user's code is sampled, so that a run that a budget or a cancel stops can
//! say where it was: "98% of the last 10 s in Report.render (Report.java:84)".

use super::class::MethodId;
use super::{JThread, Tracker, Vm};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How far back the samples reach.
const WINDOW: Duration = Duration::from_secs(10);
/// At most this many samples are kept (a budget check comes every few milliseconds).
const MAX_SAMPLES: usize = 8192;

/// Recent (time, method, bytecode index) samples, oldest first.
#[derive(Default)]
pub(crate) struct Samples {
    recent: VecDeque<(Instant, MethodId, u16)>,
}

/// Where a stopped run spent its last seconds: the source line most samples were on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StopPlace {
    /// `com.acme.Report` (dots, as Java names it).
    pub class: String,
    pub method: String,
    pub file: Option<String>,
    pub line: Option<u16>,
    /// Share of the samples of the last `seconds` on this line (0..1).
    pub share: f64,
    pub seconds: f64,
}

impl StopPlace {
    /// "98% of the last 10.0 s in Report.render (Report.java:84)".
    pub fn describe(&self) -> String {
        let simple = self.class.rsplit(['.', '$']).next().unwrap_or(&self.class);
        let at = match (&self.file, self.line) {
            (Some(f), Some(l)) => format!(" ({f}:{l})"),
            _ => String::new(),
        };
        format!("{:.0}% of the last {:.1} s in {simple}.{}{at}", self.share * 100.0, self.seconds, self.method)
    }
}

impl<T: Tracker> Vm<T> {
    /// Records where `t` is: its innermost frame of the user's code, else its innermost frame.
    /// Called at budget checks, with the frames synced.
    pub(super) fn sample_whereabouts(&mut self, t: &JThread) {
        let innermost = t.frames.len().checked_sub(1);
        let frame = (0..t.frames.len())
            .rev()
            .find(|&i| self.classes[self.methods[t.frames[i].method as usize].class as usize].user)
            .or(innermost);
        let Some(i) = frame else { return };
        let f = &t.frames[i];
        // The running frame is about to execute `pc` (a backward branch's target: the loop's head);
        // a caller is inside the call just before its `pc`.
        let at = if Some(i) == innermost { f.pc } else { f.pc.saturating_sub(1) };
        let bci = f.code.bci.get(at as usize).copied().unwrap_or(0);
        let now = Instant::now();
        let samples = &mut self.whereabouts.recent;
        samples.push_back((now, f.method, bci));
        while samples.len() > MAX_SAMPLES || samples.front().is_some_and(|s| now.duration_since(s.0) > WINDOW) {
            samples.pop_front();
        }
    }

    /// The line most recent samples were on, if any were taken.
    pub fn stop_place(&self) -> Option<StopPlace> {
        let samples = &self.whereabouts.recent;
        let (first, last) = (samples.front()?.0, samples.back()?.0);
        let mut counts: Vec<((MethodId, Option<u16>), usize)> = Vec::new();
        for &(_, m, bci) in samples {
            let key = (m, self.methods[m as usize].line_of(bci));
            match counts.iter_mut().find(|(k, _)| *k == key) {
                Some((_, n)) => *n += 1,
                None => counts.push((key, 1)),
            }
        }
        let &((m, line), n) = counts.iter().max_by_key(|(_, n)| *n)?;
        let method = &self.methods[m as usize];
        let class = &self.classes[method.class as usize];
        Some(StopPlace {
            class: class.java_name(),
            method: method.name.to_string(),
            file: class.file.as_ref().and_then(|f| f.source_file.as_deref().map(String::from)),
            line,
            share: n as f64 / samples.len() as f64,
            seconds: last.duration_since(first).as_secs_f64().max(0.1),
        })
    }
}
