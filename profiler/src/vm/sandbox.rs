//! What a sandboxed run may change on disk (`RunConfig::sandbox`): the language server's
//! profile-on-save runs, and `bloatlens run|profile --sandbox`. Every file native that changes
//! something (creates, truncates, appends, deletes, renames, makes a directory or a link, sets
//! permissions or times) asks here first; reads stay allowed everywhere.
//!
//! Paths are canonicalised first — made absolute against the program's working directory, every
//! symbolic link followed as the kernel would (the last component only where the operation
//! follows it), `..` taken after the link it follows — and then fall in one of three areas:
//! - **private**: the run's own temporary directory (what `java.io.tmpdir` names in a sandboxed
//!   run, removed when the run ends), the paths the caller lets through (the JUnit runner's
//!   outcomes file), `/dev/null`: changed for real;
//! - **the workspace**: into a per-run overlay ([`WorkspaceWrites::Overlay`]: the program sees its
//!   own changes for the rest of the run, the workspace itself never changes), or for real
//!   ([`WorkspaceWrites::Allow`]); either way each changed path is told to the run's [`WriteLog`]
//!   before the change is made, so that a file watcher can tell the run's changes from the user's;
//! - **outside**: refused, as a permission problem ([`FsError::Refused`]: each native throws what
//!   its JDK API throws for one, with a message saying why and how to allow it).
//!
//! The overlay is a copy-up union of the workspace (the lower layer, never written) and a scratch
//! directory (the upper layer): a path is its upper entry when there is one, else its lower one
//! unless the program deleted it (or a directory above it) during the run. A change to a lower
//! file copies it up first; a rename copies the whole subtree up and renames there; listing a
//! directory merges both layers. Renaming between the overlay and the temporary directory fails
//! with `EXDEV`, as between two file systems (`Files.move` then copies, `File.renameTo` says false).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where a sandboxed run's changes inside the workspace go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkspaceWrites {
    /// Into a scratch overlay private to the run: the program sees them, the workspace does not change.
    #[default]
    Overlay,
    /// Into the workspace itself.
    Allow,
}

impl std::str::FromStr for WorkspaceWrites {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "overlay" => Ok(WorkspaceWrites::Overlay),
            "allow" => Ok(WorkspaceWrites::Allow),
            _ => Err(format!("`{s}`: expected overlay or allow")),
        }
    }
}

/// A sandboxed run's bounds.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The directory the program may change (through the overlay, or for real).
    pub workspace: PathBuf,
    pub workspace_writes: WorkspaceWrites,
    /// Files or directories outside the workspace the run may change for real.
    pub writable: Vec<PathBuf>,
    /// How the user lets a refused change through: the end of the refusal's message.
    pub allow_hint: String,
    /// Where the run's changes in the workspace, and its refusals, are told as they happen.
    pub log: WriteLog,
    /// Where the run's scratch directory (the overlay's upper layer, the temporary directory) is
    /// made, and removed after the run; None: the system's temporary directory.
    pub scratch_in: Option<PathBuf>,
}

impl SandboxConfig {
    /// The same bounds; the log and the files let through aside, which are each run's own
    /// (a sandbox takes them again when its run starts, [`Sandbox::rebind`]).
    pub fn boots_like(&self, other: &SandboxConfig) -> bool {
        let SandboxConfig { workspace, workspace_writes, writable: _, allow_hint, log: _, scratch_in } = self;
        *workspace == other.workspace
            && *workspace_writes == other.workspace_writes
            && *allow_hint == other.allow_hint
            && *scratch_in == other.scratch_in
    }

    pub fn new(
        workspace: impl Into<PathBuf>,
        workspace_writes: WorkspaceWrites,
        allow_hint: impl Into<String>,
    ) -> Self {
        SandboxConfig {
            workspace: workspace.into(),
            workspace_writes,
            writable: Vec::new(),
            allow_hint: allow_hint.into(),
            log: WriteLog::default(),
            scratch_in: None,
        }
    }
}

/// The workspace paths a sandboxed run changed (named under the workspace as configured, not
/// canonicalised, so that they compare with what a watcher of that directory reports), each
/// told before the change is made; and what it refused. Shared: read it while the run goes on.
#[derive(Debug, Clone, Default)]
pub struct WriteLog(Arc<Mutex<Log>>);

#[derive(Debug, Default)]
struct Log {
    written: HashMap<PathBuf, Instant>,
    refused: Vec<String>,
}

/// Refusals kept in a log (the first ones; a count says the rest).
const REFUSALS_KEPT: usize = 100;

impl WriteLog {
    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every workspace path the run changed, sorted.
    pub fn written(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self.lock().written.keys().cloned().collect();
        paths.sort();
        paths
    }

    /// Whether the run changed `path` during the last `within`.
    pub fn wrote_lately(&self, path: &Path, within: Duration) -> bool {
        self.lock().written.get(path).is_some_and(|t| t.elapsed() <= within)
    }

    /// When the run last changed a path (None: it changed none).
    pub fn last_write(&self) -> Option<Instant> {
        self.lock().written.values().max().copied()
    }

    /// What the sandbox refused (`write /home/me/.gitconfig`), in order, the first 100.
    pub fn refused(&self) -> Vec<String> {
        self.lock().refused.clone()
    }

    fn wrote(&self, path: PathBuf) {
        self.lock().written.insert(path, Instant::now());
    }

    fn refuse(&self, what: String) {
        let mut log = self.lock();
        if log.refused.len() < REFUSALS_KEPT && !log.refused.contains(&what) {
            log.refused.push(what);
        }
    }
}

/// Why a file operation did not happen.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FsError {
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The sandbox refused it: the sentence to give the program (after the path).
    #[error("{0}")]
    Refused(String),
}

fn errno(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

/// How a file is opened (the flags of open(2) that matter here).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OpenHow {
    pub read: bool,
    pub write: bool,
    pub append: bool,
    pub truncate: bool,
    pub create: bool,
    pub create_new: bool,
    /// The mode of a file created (open(2)'s third argument), less the umask.
    pub mode: Option<u32>,
    /// `O_NOFOLLOW`: a symbolic link as the last component fails (ELOOP).
    pub nofollow: bool,
}

impl OpenHow {
    /// Whether opening so changes the file system (or lets the program change a file).
    pub fn changes(&self) -> bool {
        self.write || self.append || self.truncate || self.create || self.create_new
    }

    pub fn open(&self, path: &Path) -> io::Result<std::fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut o = std::fs::OpenOptions::new();
        o.read(self.read)
            .write(self.write)
            .append(self.append)
            .truncate(self.truncate)
            .create(self.create && !self.create_new)
            .create_new(self.create_new);
        if let Some(mode) = self.mode {
            o.mode(mode);
        }
        if self.nofollow {
            // The path was checked without following its last link: the kernel must not either.
            o.custom_flags(libc::O_NOFOLLOW);
        }
        o.open(path)
    }
}

/// What a removal accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Removal {
    /// unlink(2): not a directory (EISDIR).
    File,
    /// rmdir(2): an empty directory (ENOTDIR, ENOTEMPTY).
    Dir,
    /// `File.delete`: either.
    Either,
}

/// Where a change lands.
enum Target {
    /// This host path, for real (the private area, or the workspace when changes are allowed).
    Host(PathBuf),
    /// This path relative to the workspace, in the overlay.
    Overlay(PathBuf),
}

/// What a canonical path is to the sandbox.
enum Area {
    Private,
    Workspace(PathBuf),
    Outside,
}

/// Paths let through, canonical where they exist (else absolute).
fn canonical_all(paths: &[PathBuf]) -> Vec<PathBuf> {
    paths
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| std::path::absolute(p).unwrap_or_else(|_| p.clone())))
        .collect()
}

/// Links followed in one path before giving up (Linux's limit).
const MAX_LINKS: usize = 40;

/// A sandboxed run's state (see the module's documentation).
pub(crate) struct Sandbox {
    /// The workspace, canonical.
    workspace: PathBuf,
    /// The workspace as configured, absolute: what the log names paths under.
    named: PathBuf,
    writes: WorkspaceWrites,
    writable: Vec<PathBuf>,
    hint: String,
    log: WriteLog,
    /// The program's working directory (relative paths resolve against it).
    cwd: PathBuf,
    /// Holds the overlay's upper layer and the temporary directory; removed with the sandbox.
    _scratch: tempfile::TempDir,
    upper: PathBuf,
    tmp: PathBuf,
    /// Workspace paths (relative) whose lower entry, and everything below it, the run deleted.
    hidden: HashSet<PathBuf>,
    /// The overlay holds something: reads in the workspace must look at it.
    touched: bool,
}

impl Sandbox {
    pub fn new(config: &SandboxConfig, cwd: &Path) -> io::Result<Sandbox> {
        let named = std::path::absolute(&config.workspace)?;
        let workspace = std::fs::canonicalize(&named)?;
        if !workspace.is_dir() {
            return Err(io::Error::other(format!("the workspace {} is not a directory", named.display())));
        }
        let mut scratch = tempfile::Builder::new();
        // Private: the program reads back what it wrote there.
        scratch.prefix("bloatlens-sandbox-").permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
        let scratch = match &config.scratch_in {
            Some(dir) => {
                std::fs::create_dir_all(dir)?;
                scratch.tempdir_in(dir)?
            }
            None => scratch.tempdir()?,
        };
        let root = std::fs::canonicalize(scratch.path())?;
        let (upper, tmp) = (root.join("overlay"), root.join("tmp"));
        std::fs::create_dir(&upper)?;
        std::fs::create_dir(&tmp)?;
        Ok(Sandbox {
            workspace,
            named,
            writes: config.workspace_writes,
            writable: canonical_all(&config.writable),
            hint: config.allow_hint.clone(),
            log: config.log.clone(),
            cwd: cwd.to_path_buf(),
            _scratch: scratch,
            upper,
            tmp,
            hidden: HashSet::new(),
            touched: false,
        })
    }

    /// Takes the run's own log and files let through, in place of those it was made with (a VM
    /// booted ahead of its run).
    pub fn rebind(&mut self, config: &SandboxConfig) {
        self.writable = canonical_all(&config.writable);
        self.log = config.log.clone();
    }

    /// The directory `java.io.tmpdir` names in this run: private to it, removed when it ends.
    pub fn tmp_dir(&self) -> &Path {
        &self.tmp
    }

    /// `path` made absolute against the program's working directory (None: the empty path, which
    /// names no file).
    fn absolute(&self, path: &Path) -> Option<PathBuf> {
        if path.as_os_str().is_empty() {
            None
        } else if path.is_absolute() {
            Some(path.to_path_buf())
        } else {
            Some(self.cwd.join(path))
        }
    }

    /// The canonical form of `path` in the program's view (the overlay's links included): every
    /// link followed as the kernel follows it — the last component only with `follow` — and `..`
    /// taken after the link before it. Components that do not exist are kept as they are.
    pub fn canonical(&self, path: &Path, follow: bool) -> PathBuf {
        let Some(path) = self.absolute(path) else { return PathBuf::new() };
        let mut todo: Vec<OsString> = Vec::new();
        push_components(&mut todo, &path);
        let mut done = PathBuf::from("/");
        let mut links = 0;
        // `todo` is a stack: its last element is the next component.
        while let Some(c) = todo.pop() {
            if c == ".." {
                done.pop();
                continue;
            }
            let next = done.join(&c);
            if todo.is_empty() && !follow {
                done = next;
                break;
            }
            match self.link_target(&next) {
                Some(target) if links < MAX_LINKS => {
                    links += 1;
                    if target.is_absolute() {
                        done = PathBuf::from("/");
                    }
                    push_components(&mut todo, &target);
                }
                _ => done = next,
            }
        }
        done
    }

    /// The target of the symbolic link at canonical-so-far `path` in the program's view, if it is one.
    fn link_target(&self, path: &Path) -> Option<PathBuf> {
        let host = match self.overlay_rel(path) {
            Some(rel) => self.node(&rel)?.0,
            None => path.to_path_buf(),
        };
        let meta = std::fs::symlink_metadata(&host).ok()?;
        meta.file_type().is_symlink().then(|| std::fs::read_link(&host).ok()).flatten()
    }

    /// `path`'s place in the workspace when the overlay applies to it.
    fn overlay_rel(&self, path: &Path) -> Option<PathBuf> {
        if !self.touched || self.writes != WorkspaceWrites::Overlay || path.starts_with(&self.tmp) {
            return None;
        }
        path.strip_prefix(&self.workspace).ok().map(Path::to_path_buf)
    }

    fn area(&self, canonical: &Path) -> Area {
        if canonical.starts_with(&self.tmp)
            || canonical == Path::new("/dev/null")
            || self.writable.iter().any(|w| canonical.starts_with(w))
        {
            Area::Private
        } else if let Ok(rel) = canonical.strip_prefix(&self.workspace) {
            Area::Workspace(rel.to_path_buf())
        } else {
            Area::Outside
        }
    }

    /// Where a read of `path` goes on the host: `path` itself, unless it lies in the overlay.
    pub fn read(&self, path: &Path, follow: bool) -> PathBuf {
        if !self.touched || self.writes != WorkspaceWrites::Overlay || path.as_os_str().is_empty() {
            return path.to_path_buf();
        }
        let canonical = self.canonical(path, follow);
        match self.overlay_rel(&canonical) {
            Some(rel) => match self.node(&rel) {
                Some((host, _)) => host,
                None => self.upper.join(rel), // absent: ENOENT
            },
            None => path.to_path_buf(),
        }
    }

    /// Whether a change of `path` would be let through (`File.canWrite`, `Files.isWritable`).
    pub fn may_change(&self, path: &Path) -> bool {
        !matches!(self.area(&self.canonical(path, true)), Area::Outside)
    }

    /// Where a change of `path` lands, or why it does not (said in the log too). `what`: the
    /// change, for the log (`write`, `delete`…).
    fn target(&mut self, path: &Path, follow: bool, what: &str) -> Result<Target, FsError> {
        if path.as_os_str().is_empty() {
            return Err(FsError::Io(errno(libc::ENOENT)));
        }
        let canonical = self.canonical(path, follow);
        match self.area(&canonical) {
            Area::Private => Ok(Target::Host(canonical)),
            Area::Workspace(rel) => {
                self.log.wrote(self.named.join(&rel));
                match self.writes {
                    WorkspaceWrites::Allow => Ok(Target::Host(canonical)),
                    WorkspaceWrites::Overlay => {
                        self.touched = true;
                        Ok(Target::Overlay(rel))
                    }
                }
            }
            Area::Outside => {
                self.log.refuse(format!("{what} {}", canonical.display()));
                Err(FsError::Refused(self.refusal("writes outside the workspace")))
            }
        }
    }

    /// The sentence a refusal gives the program: "Permission denied: Bloatlens's sandbox refuses
    /// writes outside the workspace /ws (…how to allow it…)".
    /// Why a socket call is refused: a sandboxed run reaches the loopback interface only.
    pub(crate) fn network_refusal(&self, what: &str) -> String {
        format!(
            "Permission denied: Bloatlens's sandbox refuses {what}: a sandboxed run reaches 127.0.0.1 only ({})",
            self.hint
        )
    }

    fn refusal(&self, what: &str) -> String {
        format!("Permission denied: Bloatlens's sandbox refuses {what} {} ({})", self.workspace.display(), self.hint)
    }

    // The overlay's view.

    /// Whether the lower entry of `rel` shows (neither it nor a directory above it was deleted).
    fn lower_visible(&self, rel: &Path) -> bool {
        self.hidden.is_empty() || !rel.ancestors().any(|a| self.hidden.contains(a))
    }

    /// The host entry that is `rel` in the overlay, with its own metadata (links not followed).
    fn node(&self, rel: &Path) -> Option<(PathBuf, std::fs::Metadata)> {
        let up = self.upper.join(rel);
        if let Ok(m) = std::fs::symlink_metadata(&up) {
            return Some((up, m));
        }
        if self.lower_visible(rel) {
            let low = self.workspace.join(rel);
            if let Ok(m) = std::fs::symlink_metadata(&low) {
                return Some((low, m));
            }
        }
        None
    }

    fn is_dir(&self, rel: &Path) -> bool {
        self.node(rel).is_some_and(|(_, m)| m.is_dir())
    }

    /// Makes `rel`'s directory exist in the upper layer (it must be one in the overlay).
    fn ensure_parent(&mut self, rel: &Path) -> io::Result<()> {
        let Some(parent) = rel.parent() else { return Ok(()) };
        match self.node(parent) {
            None => Err(errno(libc::ENOENT)),
            Some((_, m)) if !m.is_dir() => Err(errno(libc::ENOTDIR)),
            Some(_) => {
                let up = self.upper.join(parent);
                if !up.is_dir() {
                    std::fs::create_dir_all(&up)?;
                }
                Ok(())
            }
        }
    }

    /// `rel` in the upper layer (copied up from the lower one if need be): the host path to change.
    fn copy_up(&mut self, rel: &Path) -> io::Result<PathBuf> {
        let up = self.upper.join(rel);
        if std::fs::symlink_metadata(&up).is_ok() {
            return Ok(up);
        }
        self.ensure_parent(rel)?;
        let low = self.workspace.join(rel);
        if self.lower_visible(rel) {
            if let Ok(m) = std::fs::symlink_metadata(&low) {
                if m.file_type().is_symlink() {
                    std::os::unix::fs::symlink(std::fs::read_link(&low)?, &up)?;
                } else if m.is_dir() {
                    std::fs::create_dir(&up)?;
                    std::fs::set_permissions(&up, m.permissions())?;
                } else {
                    std::fs::copy(&low, &up)?;
                    // The copy is the same file to the program: as old as it.
                    if let Ok(modified) = m.modified() {
                        let _ = std::fs::File::options().write(true).open(&up).and_then(|f| f.set_modified(modified));
                    }
                }
            }
        }
        Ok(up)
    }

    /// `rel` and everything under it in the upper layer.
    fn copy_up_tree(&mut self, rel: &Path) -> io::Result<()> {
        self.copy_up(rel)?;
        if self.node(rel).is_some_and(|(_, m)| m.is_dir()) {
            for name in self.merged_names(rel)? {
                self.copy_up_tree(&rel.join(name))?;
            }
        }
        Ok(())
    }

    /// The names in directory `rel` of the overlay: the upper layer's and the lower one's that show.
    fn merged_names(&self, rel: &Path) -> io::Result<Vec<OsString>> {
        let mut names = BTreeSet::new();
        let up = self.upper.join(rel);
        if up.is_dir() {
            for e in std::fs::read_dir(&up)? {
                names.insert(e?.file_name());
            }
        }
        let low = self.workspace.join(rel);
        if self.lower_visible(rel) && low.is_dir() && !std::fs::symlink_metadata(&up).is_ok_and(|m| !m.is_dir()) {
            for e in std::fs::read_dir(&low)? {
                let name = e?.file_name();
                if self.lower_visible(&rel.join(&name)) {
                    names.insert(name);
                }
            }
        }
        Ok(names.into_iter().collect())
    }

    // The changes.

    /// Opens `path` as `how` says: a read-only open reads where [`Sandbox::read`] says, a
    /// change lands where its area puts it.
    pub fn open(&mut self, path: &Path, how: &OpenHow) -> Result<std::fs::File, FsError> {
        let follow = !(how.nofollow || how.create_new);
        if !how.changes() {
            return Ok(how.open(&self.read(path, !how.nofollow))?);
        }
        match self.target(path, follow, "write")? {
            Target::Host(p) => Ok(how.open(&p)?),
            Target::Overlay(rel) => {
                match self.node(&rel) {
                    Some(_) if how.create_new => return Err(errno(libc::EEXIST).into()),
                    Some((_, m)) if how.nofollow && m.file_type().is_symlink() => return Err(errno(libc::ELOOP).into()),
                    Some(_) => {
                        self.copy_up(&rel)?;
                    }
                    None if !how.create => return Err(errno(libc::ENOENT).into()),
                    None => self.ensure_parent(&rel)?,
                }
                Ok(how.open(&self.upper.join(&rel))?)
            }
        }
    }

    /// mkdir(2) with `mode` (less the umask).
    pub fn mkdir(&mut self, path: &Path, mode: u32) -> Result<(), FsError> {
        use std::os::unix::fs::DirBuilderExt;
        let host = self.new_name(path, "mkdir")?;
        Ok(std::fs::DirBuilder::new().mode(mode).create(host)?)
    }

    /// Where a new name `path` (a directory or a link made there) is made: the host's path, or in
    /// the overlay (an error when the overlay's view has the name already).
    fn new_name(&mut self, path: &Path, what: &str) -> Result<PathBuf, FsError> {
        Ok(match self.target(path, false, what)? {
            Target::Host(p) => p,
            Target::Overlay(rel) => {
                if self.node(&rel).is_some() {
                    return Err(errno(libc::EEXIST).into());
                }
                self.ensure_parent(&rel)?;
                self.upper.join(rel)
            }
        })
    }

    /// unlink(2), rmdir(2), or either (`File.delete`); the last component is not followed.
    pub fn remove(&mut self, path: &Path, removal: Removal) -> Result<(), FsError> {
        match self.target(path, false, "delete")? {
            Target::Host(p) => Ok(remove_host(&p, removal)?),
            Target::Overlay(rel) => {
                let (_, meta) = self.node(&rel).ok_or_else(|| errno(libc::ENOENT))?;
                match (removal, meta.is_dir()) {
                    (Removal::File, true) => return Err(errno(libc::EISDIR).into()),
                    (Removal::Dir, false) => return Err(errno(libc::ENOTDIR).into()),
                    _ => {}
                }
                if meta.is_dir() && !self.merged_names(&rel)?.is_empty() {
                    return Err(errno(libc::ENOTEMPTY).into());
                }
                let up = self.upper.join(&rel);
                match std::fs::symlink_metadata(&up) {
                    Ok(m) if m.is_dir() => std::fs::remove_dir_all(&up)?,
                    Ok(_) => std::fs::remove_file(&up)?,
                    Err(_) => {}
                }
                self.hidden.insert(rel);
                Ok(())
            }
        }
    }

    /// rename(2): neither last component followed; between the overlay and a real directory, EXDEV.
    pub fn rename(&mut self, from: &Path, to: &Path) -> Result<(), FsError> {
        let source = self.target(from, false, "rename")?;
        let target = self.target(to, false, "rename into")?;
        match (source, target) {
            (Target::Host(a), Target::Host(b)) => Ok(std::fs::rename(a, b)?),
            (Target::Overlay(a), Target::Overlay(b)) => {
                let (_, src) = self.node(&a).ok_or_else(|| errno(libc::ENOENT))?;
                if a == b {
                    return Ok(());
                }
                if b.starts_with(&a) {
                    return Err(errno(libc::EINVAL).into());
                }
                if let Some((_, dst)) = self.node(&b) {
                    match (src.is_dir(), dst.is_dir()) {
                        (true, false) => return Err(errno(libc::ENOTDIR).into()),
                        (false, true) => return Err(errno(libc::EISDIR).into()),
                        (true, true) if !self.merged_names(&b)?.is_empty() => return Err(errno(libc::ENOTEMPTY).into()),
                        _ => {}
                    }
                }
                self.ensure_parent(&b)?;
                self.copy_up_tree(&a)?;
                let (up_a, up_b) = (self.upper.join(&a), self.upper.join(&b));
                if std::fs::symlink_metadata(&up_b).is_ok_and(|m| m.is_dir()) {
                    std::fs::remove_dir(&up_b)?; // empty (checked above)
                }
                std::fs::rename(up_a, up_b)?;
                self.hidden.insert(a);
                self.hidden.insert(b);
                Ok(())
            }
            _ => Err(errno(libc::EXDEV).into()),
        }
    }

    /// A change of an existing file's attributes (permissions, times, owner): `change` applied to
    /// the host path it lands on.
    pub fn change_attributes(
        &mut self,
        path: &Path,
        follow: bool,
        change: impl FnOnce(&Path) -> io::Result<()>,
    ) -> Result<(), FsError> {
        match self.target(path, follow, "change")? {
            Target::Host(p) => Ok(change(&p)?),
            Target::Overlay(rel) => {
                self.node(&rel).ok_or_else(|| errno(libc::ENOENT))?;
                let up = self.copy_up(&rel)?;
                Ok(change(&up)?)
            }
        }
    }

    /// symlink(2): a link at `link` to `target` (stored as given; what it points to is checked
    /// when a change goes through it).
    pub fn symlink(&mut self, link: &Path, target: &Path) -> Result<(), FsError> {
        let host = self.new_name(link, "link")?;
        Ok(std::os::unix::fs::symlink(target, host)?)
    }

    /// link(2): `link` another name of `existing`, which must lie where the link does — a hard link
    /// to a file outside the workspace would let a change of the link change that file.
    pub fn hard_link(&mut self, existing: &Path, link: &Path) -> Result<(), FsError> {
        let canonical = self.canonical(existing, false);
        if matches!(self.area(&canonical), Area::Outside) {
            self.log.refuse(format!("hard link to {}", canonical.display()));
            return Err(FsError::Refused(self.refusal("hard links to files outside the workspace")));
        }
        let source = self.target(existing, false, "link")?;
        match (source, self.target(link, false, "link")?) {
            (Target::Host(a), Target::Host(b)) => Ok(std::fs::hard_link(a, b)?),
            (Target::Overlay(a), Target::Overlay(b)) => {
                self.node(&a).ok_or_else(|| errno(libc::ENOENT))?;
                if self.node(&b).is_some() {
                    return Err(errno(libc::EEXIST).into());
                }
                let up_a = self.copy_up(&a)?;
                self.ensure_parent(&b)?;
                Ok(std::fs::hard_link(up_a, self.upper.join(b))?)
            }
            _ => Err(errno(libc::EXDEV).into()),
        }
    }

    /// The names in directory `path` (links followed), sorted when the overlay merges them.
    pub fn list(&self, path: &Path) -> io::Result<Vec<OsString>> {
        if self.touched && self.writes == WorkspaceWrites::Overlay && !path.as_os_str().is_empty() {
            if let Some(rel) = self.overlay_rel(&self.canonical(path, true)) {
                return match self.node(&rel) {
                    None => Err(errno(libc::ENOENT)),
                    Some(_) if !self.is_dir(&rel) => Err(errno(libc::ENOTDIR)),
                    Some(_) => self.merged_names(&rel),
                };
            }
        }
        std::fs::read_dir(path)?.map(|e| e.map(|e| e.file_name())).collect()
    }
}

/// Pushes `path`'s components on `stack` so that the first is on top (`.` dropped).
fn push_components(stack: &mut Vec<OsString>, path: &Path) {
    let parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_os_string()),
            Component::ParentDir => Some("..".into()),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    stack.extend(parts.into_iter().rev());
}

/// A removal on the host, as the natives do it outside a sandbox.
pub(crate) fn remove_host(path: &Path, removal: Removal) -> io::Result<()> {
    match removal {
        Removal::File => std::fs::remove_file(path),
        Removal::Dir => std::fs::remove_dir(path),
        Removal::Either => std::fs::remove_file(path).or_else(|_| std::fs::remove_dir(path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixture {
        _dir: tempfile::TempDir,
        ws: PathBuf,
        outside: PathBuf,
        sb: Sandbox,
    }

    fn fixture(writes: WorkspaceWrites) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (ws, outside) = (root.join("ws"), root.join("outside"));
        std::fs::create_dir_all(ws.join("data/sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(ws.join("data/a.txt"), "lower a").unwrap();
        std::fs::write(ws.join("data/sub/deep.txt"), "deep").unwrap();
        std::fs::write(outside.join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("out")).unwrap();
        let config = SandboxConfig::new(&ws, writes, "test hint");
        let sb = Sandbox::new(&config, &ws).unwrap();
        Fixture { _dir: dir, ws, outside, sb }
    }

    fn write(sb: &mut Sandbox, path: &str, text: &str) -> Result<(), FsError> {
        let how = OpenHow { write: true, create: true, truncate: true, ..Default::default() };
        use std::io::Write;
        sb.open(Path::new(path), &how)?.write_all(text.as_bytes())?;
        Ok(())
    }

    fn read(sb: &Sandbox, path: &str) -> io::Result<String> {
        std::fs::read_to_string(sb.read(Path::new(path), true))
    }

    fn names(sb: &Sandbox, path: &str) -> Vec<String> {
        sb.list(Path::new(path)).unwrap().into_iter().map(|n| n.to_string_lossy().into_owned()).collect()
    }

    /// Every file under `dir` with its contents (a snapshot to compare).
    fn snapshot(dir: &Path) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                let m = std::fs::symlink_metadata(&p).unwrap();
                if m.is_dir() {
                    stack.push(p.clone());
                    out.push((p, "<dir>".into()));
                } else if m.is_file() {
                    out.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
                } else {
                    out.push((p.clone(), format!("-> {}", std::fs::read_link(&p).unwrap().display())));
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn the_overlay_shows_the_runs_changes_and_leaves_the_workspace_as_it_was() {
        let mut f = fixture(WorkspaceWrites::Overlay);
        let before = snapshot(&f.ws);
        let sb = &mut f.sb;
        write(sb, "data/a.txt", "upper a").unwrap();
        write(sb, "new.txt", "new").unwrap();
        assert_eq!(read(sb, "data/a.txt").unwrap(), "upper a");
        assert_eq!(read(sb, "new.txt").unwrap(), "new");
        assert_eq!(names(sb, "."), ["data", "new.txt", "out"]);
        // Delete, then the name is gone (and can come back).
        sb.remove(Path::new("data/sub/deep.txt"), Removal::File).unwrap();
        assert!(read(sb, "data/sub/deep.txt").is_err());
        assert!(names(sb, "data/sub").is_empty());
        sb.remove(Path::new("data/sub"), Removal::Dir).unwrap();
        assert_eq!(names(sb, "data"), ["a.txt"]);
        sb.mkdir(Path::new("data/sub"), 0o755).unwrap();
        assert!(names(sb, "data/sub").is_empty(), "a directory made again is empty");
        // A directory renamed takes its lower contents along.
        sb.mkdir(Path::new("tree"), 0o755).unwrap();
        sb.rename(Path::new("data"), Path::new("tree/moved")).unwrap();
        assert_eq!(names(sb, "."), ["new.txt", "out", "tree"]);
        assert_eq!(names(sb, "tree/moved"), ["a.txt", "sub"]);
        assert_eq!(read(sb, "tree/moved/a.txt").unwrap(), "upper a");
        assert!(
            matches!(sb.remove(Path::new("tree"), Removal::Dir), Err(FsError::Io(e)) if e.raw_os_error() == Some(libc::ENOTEMPTY))
        );
        assert!(
            matches!(sb.open(Path::new("new.txt"), &OpenHow { write: true, create_new: true, ..Default::default() }), Err(FsError::Io(e)) if e.raw_os_error() == Some(libc::EEXIST))
        );
        assert_eq!(snapshot(&f.ws), before, "the workspace itself never changed");
        let written: Vec<PathBuf> =
            f.sb.log.written().iter().map(|p| p.strip_prefix(&f.ws).unwrap().to_path_buf()).collect();
        assert!(
            written.contains(&PathBuf::from("new.txt")) && written.contains(&PathBuf::from("tree/moved")),
            "{written:?}"
        );
    }

    #[test]
    fn changes_outside_the_workspace_are_refused_after_links_and_dots() {
        let mut f = fixture(WorkspaceWrites::Allow);
        let before = snapshot(&f.outside);
        let sb = &mut f.sb;
        let outside = f.outside.join("secret.txt").display().to_string();
        for path in [outside.as_str(), "out/secret.txt", "data/../../outside/secret.txt", "out/new.txt"] {
            match write(sb, path, "changed") {
                Err(FsError::Refused(why)) => {
                    assert!(why.contains("Bloatlens's sandbox") && why.contains("test hint"), "{why}")
                }
                other => panic!("{path}: {other:?}"),
            }
        }
        assert!(matches!(sb.remove(Path::new("out/secret.txt"), Removal::File), Err(FsError::Refused(_))));
        assert!(matches!(sb.rename(Path::new("out/secret.txt"), Path::new("stolen.txt")), Err(FsError::Refused(_))));
        assert!(matches!(sb.hard_link(Path::new("out/secret.txt"), Path::new("alias.txt")), Err(FsError::Refused(_))));
        // Opened without following its last link (NOFOLLOW_LINKS), a link to a file outside is not
        // followed by the kernel either.
        std::os::unix::fs::symlink(f.outside.join("secret.txt"), f.ws.join("secret-link")).unwrap();
        let nofollow = OpenHow { write: true, create: true, nofollow: true, ..Default::default() };
        assert!(
            matches!(sb.open(Path::new("secret-link"), &nofollow), Err(FsError::Io(e)) if e.raw_os_error() == Some(libc::ELOOP))
        );
        // The link itself is in the workspace: removing it is a change there.
        sb.remove(Path::new("out"), Removal::File).unwrap();
        assert_eq!(snapshot(&f.outside), before);
        // Each refusal once, by what and where (the three names of secret.txt are one path).
        assert_eq!(sb.log.refused().len(), 5, "{:?}", sb.log.refused());
        // The private temporary directory is writable.
        let tmp = sb.tmp_dir().join("t.txt").display().to_string();
        write(sb, &tmp, "scratch").unwrap();
        assert!(!sb.may_change(&f.outside.join("x")) && sb.may_change(Path::new("x")));
    }

    #[test]
    fn allowed_changes_land_in_the_workspace_and_are_logged() {
        let mut f = fixture(WorkspaceWrites::Allow);
        write(&mut f.sb, "Gen.java", "class Gen {}").unwrap();
        assert_eq!(std::fs::read_to_string(f.ws.join("Gen.java")).unwrap(), "class Gen {}");
        assert!(f.sb.log.wrote_lately(&f.ws.join("Gen.java"), Duration::from_secs(60)));
    }
}
