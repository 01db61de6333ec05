//! A profile booted ahead of its run: the VM starts the JDK (about a tenth of a second, the same
//! for every program) on a thread of its own and waits before `main`, so that a caller that knows
//! what its next run will look like — the language server, between two saves — pays only for the
//! program when the run comes. The run must [boot like](ProfileConfig::boots_like) the one it was
//! booted for: the same class path, properties, JDK, analyses and settings; only the main class,
//! its arguments, the cancel flag and the sandbox's log may differ.
//!
//! Booting reads nothing of the program: its classes are loaded after the wait, so classes
//! compiled meanwhile are the ones that run. Jars on the class path are checked too (their size
//! and time of change), should a build have replaced one while the VM waited.

use crate::profile::{profile_when, ProfileConfig};
use crate::report::Report;
use crate::run::RunResult;
use crate::vm::VmError;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::SystemTime;

pub struct Prepared {
    config: ProfileConfig,
    /// The class path's files as they were when the VM booted: (path, length, time of change).
    files: Vec<(PathBuf, Option<(u64, SystemTime)>)>,
    start: mpsc::SyncSender<ProfileConfig>,
    /// Set when the JDK has booted and the VM waits for its run.
    booted: Arc<AtomicBool>,
    done: JoinHandle<Result<(RunResult, Report), VmError>>,
}

impl Prepared {
    /// Boots a VM for runs like `config` on a thread of its own; returns at once.
    pub fn boot(config: ProfileConfig) -> std::io::Result<Prepared> {
        let (start, starts) = mpsc::sync_channel::<ProfileConfig>(1);
        let files = class_path_files(&config.run.class_path);
        let mut booting = config.clone();
        // Booting answers to no run's cancel flag (`config`'s may be a finished run's, which a newer
        // save sets): the run's own is taken when it starts.
        booting.run.limits.cancel = None;
        let booted = Arc::new(AtomicBool::new(false));
        let waiting = booted.clone();
        let done = std::thread::Builder::new().name("bloatlens-prepared".into()).spawn(move || {
            let start = move || {
                waiting.store(true, Ordering::Release);
                starts.recv().ok()
            };
            profile_when(&booting, false, start).map(|(r, report, _)| (r, report))
        })?;
        Ok(Prepared { config, files, start, booted, done })
    }

    /// Whether the JDK has booted: a run started now waits for nothing.
    pub fn is_booted(&self) -> bool {
        self.booted.load(Ordering::Acquire)
    }

    /// Whether this VM can run `config`: it boots alike, and no jar it reads changed since.
    pub fn fits(&self, config: &ProfileConfig) -> bool {
        self.config.boots_like(config) && self.files == class_path_files(&config.run.class_path)
    }

    /// Runs `config` on this VM (booting still, or waiting). None: it cannot (its boot failed or
    /// it does not [fit](Self::fits)); the caller runs `config` from the start, which says why
    /// should it fail again.
    pub fn run(self, config: &ProfileConfig) -> Option<Result<(RunResult, Report), VmError>> {
        if !self.fits(config) || self.start.send(config.clone()).is_err() {
            return None;
        }
        match self.done.join() {
            Ok(result) => Some(result),
            // `run_when` turns the VM's panics into errors; this is the thread's own.
            Err(_) => Some(Err(VmError::Internal("the prepared profile's thread crashed".into()))),
        }
    }
}

/// The class path's files (jars), each with its length and time of change (None: unreadable).
fn class_path_files(class_path: &str) -> Vec<(PathBuf, Option<(u64, SystemTime)>)> {
    std::env::split_paths(class_path)
        .filter(|p| !p.is_dir())
        .map(|p| {
            let seen = std::fs::metadata(&p).ok().and_then(|m| Some((m.len(), m.modified().ok()?)));
            (p, seen)
        })
        .collect()
}
