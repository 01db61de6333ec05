//! The file system as the program's natives see it: the host's, through the program's working
//! directory (`Vm::host_path`), or — in a sandboxed run — through [`crate::vm::sandbox`], which
//! decides where each change lands. java.io (`io.rs`) and NIO (`nio.rs`) open, change and list
//! files only through these, and turn an [`FsError`] into what their JDK API throws.

use crate::vm::sandbox::{remove_host, FsError, OpenHow, Removal};
use crate::vm::{Fault, JThread, Tracker, Vm};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

impl<T: Tracker> Vm<T> {
    /// Where a read of the program's `path` goes on the host (`follow`: the last component's link
    /// followed, as stat(2) does, not lstat(2)).
    pub(super) fn read_path(&self, path: &str, follow: bool) -> PathBuf {
        let host = self.host_path(path);
        match &self.sandbox {
            Some(s) => s.read(&host, follow),
            None => host,
        }
    }

    /// Opens the program's `path`, puts it in the open-file table, and returns its descriptor.
    pub(super) fn fs_open(&mut self, path: &str, how: &OpenHow) -> Result<i32, FsError> {
        let host = self.host_path(path);
        let file = match &mut self.sandbox {
            Some(s) => s.open(&host, how)?,
            None => how.open(&host)?,
        };
        let fd = self.open_files.add(file);
        // A file opened only to read, in a sandboxed run: a change of its attributes through the
        // descriptor is a change of the path (see `fd_attributes`).
        if self.sandbox.is_some() && !how.changes() {
            self.open_files.set_origin(fd, host);
        }
        Ok(fd)
    }

    /// mkdir(2) with `mode` (less the umask).
    pub(super) fn fs_mkdir(&mut self, path: &str, mode: u32) -> Result<(), FsError> {
        use std::os::unix::fs::DirBuilderExt;
        let host = self.host_path(path);
        match &mut self.sandbox {
            Some(s) => s.mkdir(&host, mode),
            None => Ok(std::fs::DirBuilder::new().mode(mode).create(&host)?),
        }
    }

    pub(super) fn fs_remove(&mut self, path: &str, removal: Removal) -> Result<(), FsError> {
        let host = self.host_path(path);
        match &mut self.sandbox {
            Some(s) => s.remove(&host, removal),
            None => Ok(remove_host(&host, removal)?),
        }
    }

    pub(super) fn fs_rename(&mut self, from: &str, to: &str) -> Result<(), FsError> {
        let (from, to) = (self.host_path(from), self.host_path(to));
        match &mut self.sandbox {
            Some(s) => s.rename(&from, &to),
            None => Ok(std::fs::rename(&from, &to)?),
        }
    }

    /// A change of an existing file's attributes: `change` run on the host path it lands on.
    pub(super) fn fs_change(
        &mut self,
        path: &str,
        follow: bool,
        change: impl FnOnce(&Path) -> io::Result<()>,
    ) -> Result<(), FsError> {
        let host = self.host_path(path);
        self.fs_change_host(&host, follow, change)
    }

    fn fs_change_host(
        &mut self,
        host: &Path,
        follow: bool,
        change: impl FnOnce(&Path) -> io::Result<()>,
    ) -> Result<(), FsError> {
        match &mut self.sandbox {
            Some(s) => s.change_attributes(host, follow, change),
            None => Ok(change(host)?),
        }
    }

    /// A change of attributes through descriptor `fd` (fchmod, fchown, futimens): on the file it
    /// has open, except a file a sandboxed run opened only to read, whose path is changed instead
    /// (so the sandbox decides). EBADF when it is not open.
    pub(super) fn fd_attributes(
        &mut self,
        fd: u64,
        change: impl FnOnce(&std::fs::File) -> io::Result<()>,
    ) -> Result<(), FsError> {
        let fd = fd as i32;
        if let Some(origin) = self.open_files.origin(fd) {
            return self.fs_change_host(&origin, true, |p| change(&std::fs::File::open(p)?));
        }
        match self.open_files.files.get(&fd) {
            Some(file) => Ok(change(file)?),
            None => Err(FsError::Io(io::Error::from_raw_os_error(libc::EBADF))),
        }
    }

    pub(super) fn fs_symlink(&mut self, link: &str, target: &str) -> Result<(), FsError> {
        let host = self.host_path(link);
        match &mut self.sandbox {
            Some(s) => s.symlink(&host, Path::new(target)),
            None => Ok(std::os::unix::fs::symlink(target, &host)?),
        }
    }

    pub(super) fn fs_hard_link(&mut self, existing: &str, link: &str) -> Result<(), FsError> {
        let (existing, link) = (self.host_path(existing), self.host_path(link));
        match &mut self.sandbox {
            Some(s) => s.hard_link(&existing, &link),
            None => Ok(std::fs::hard_link(&existing, &link)?),
        }
    }

    /// The names in directory `path` (in the host's order outside an overlay).
    pub(super) fn fs_list(&self, path: &str) -> io::Result<Vec<OsString>> {
        let host = self.host_path(path);
        match &self.sandbox {
            Some(s) => s.list(&host),
            None => std::fs::read_dir(&host)?.map(|e| e.map(|e| e.file_name())).collect(),
        }
    }

    /// Whether a change of `path` would be let through (always, outside a sandbox).
    pub(super) fn fs_may_change(&self, path: &str) -> bool {
        match &self.sandbox {
            Some(s) => s.may_change(&self.host_path(path)),
            None => true,
        }
    }

    /// The program's `path` with every link followed, in its view of the file system (None outside
    /// a sandbox: the host's own answer applies).
    pub(super) fn sandboxed_canonical(&self, path: &str) -> Option<PathBuf> {
        self.sandbox.as_ref().map(|s| s.canonical(&self.host_path(path), true))
    }

    /// What `FileOutputStream`, `FileInputStream` and `RandomAccessFile` throw when a file does not
    /// open: `FileNotFoundException: path (reason)`, the reason as the JDK words errno's.
    pub(super) fn file_not_found(&mut self, t: &mut JThread, path: &str, e: FsError) -> Fault {
        let reason = match e {
            FsError::Refused(why) => why,
            FsError::Io(e) => match e.kind() {
                io::ErrorKind::NotFound => "No such file or directory".to_string(),
                io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
                _ => strerror(&e),
            },
        };
        self.throw_new(t, "java/io/FileNotFoundException", Some(&format!("{path} ({reason})")))
    }

    /// What NIO gets for a failed operation on `path`: a `UnixException` with the errno, which the
    /// JDK turns into its `NoSuchFileException`, `FileAlreadyExistsException`…; a refusal is the
    /// `AccessDeniedException` it would make of EACCES, with the sandbox's reason.
    pub(super) fn nio_error(&mut self, t: &mut JThread, path: &str, e: FsError) -> Fault {
        match e {
            FsError::Io(e) => super::nio::unix_exception(self, t, &e),
            FsError::Refused(why) => {
                // No path (a change through a descriptor): the message is the reason alone.
                let file = if path.is_empty() { 0 } else { self.new_string(path) };
                let reason = self.new_string(&why);
                let made = self.pinning(&[file, reason], |vm| {
                    vm.construct(
                        t,
                        "java/nio/file/AccessDeniedException",
                        "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)V",
                        &[file as u64, 0, reason as u64],
                    )
                });
                match made {
                    Ok(e) => Fault::Exception(e),
                    Err(f) => f,
                }
            }
        }
    }

    /// What `File.createNewFile` throws on a failure other than an existing file: `IOException`
    /// with the reason (the JDK's is strerror's).
    pub(super) fn io_exception(&mut self, t: &mut JThread, e: FsError) -> Fault {
        let reason = match e {
            FsError::Refused(why) => why,
            FsError::Io(e) => strerror(&e),
        };
        self.throw_new(t, "java/io/IOException", Some(&reason))
    }
}

/// An I/O error as strerror(3) says it ("Permission denied"), without Rust's " (os error 13)".
fn strerror(e: &io::Error) -> String {
    let text = e.to_string();
    text.split(" (os error").next().unwrap_or(&text).to_string()
}
