//! Natives of java.io: the standard streams (fds 0–2), files opened by FileInputStream and
//! FileOutputStream (a VM-side table of open files, from fd 3 up), and `UnixFileSystem`. Files
//! are opened, changed and listed through `fs.rs` (a sandboxed run's changes go where its
//! sandbox says).

use super::{Registry, VmResult};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::sandbox::{FsError, OpenHow, Removal};
use crate::vm::{JThread, Stdin, Tracker, Vm};
use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Files the program opened, by the `fd` stored in their FileDescriptor, and open directory
/// listings (NIO's opendir/readdir) by handle.
#[derive(Default)]
pub struct OpenFiles {
    pub(super) files: HashMap<i32, std::fs::File>,
    next: i32,
    dirs: HashMap<u64, std::vec::IntoIter<Vec<u8>>>,
    next_dir: u64,
    /// The host path of each file a sandboxed run opened only to read (see `Vm::fd_attributes`).
    origins: HashMap<i32, PathBuf>,
    /// Descriptors the program put in non-blocking mode (`IOUtil.configureBlocking`). On the host
    /// every socket, pipe and event descriptor is non-blocking: a Java thread that must block
    /// waits in the VM's scheduler, never in the host (see `Vm::await_io`).
    nonblocking: HashSet<i32>,
}

impl OpenFiles {
    /// `System.in` reads `file` (as descriptor 0).
    pub(crate) fn set_stdin(&mut self, file: std::fs::File) {
        self.files.insert(0, file);
    }

    pub(super) fn add_dir(&mut self, names: Vec<Vec<u8>>) -> u64 {
        self.next_dir += 1;
        self.dirs.insert(self.next_dir, names.into_iter());
        self.next_dir
    }
    pub(super) fn next_dir_entry(&mut self, handle: u64) -> Option<Vec<u8>> {
        self.dirs.get_mut(&handle)?.next()
    }
    pub(super) fn close_dir(&mut self, handle: u64) {
        self.dirs.remove(&handle);
    }
    pub(super) fn add(&mut self, f: std::fs::File) -> i32 {
        self.next = self.next.max(3);
        let fd = self.next;
        self.next += 1;
        self.files.insert(fd, f);
        fd
    }
    pub(super) fn close(&mut self, fd: i32) {
        self.files.remove(&fd);
        self.origins.remove(&fd);
        self.nonblocking.remove(&fd);
    }
    pub(super) fn is_nonblocking(&self, fd: i32) -> bool {
        self.nonblocking.contains(&fd)
    }
    pub(super) fn set_nonblocking(&mut self, fd: i32, nonblocking: bool) {
        if nonblocking {
            self.nonblocking.insert(fd);
        } else {
            self.nonblocking.remove(&fd);
        }
    }
    /// The host's descriptor behind `fd` (-1 for none: poll(2) then ignores it).
    pub(super) fn host_fd(&self, fd: i32) -> i32 {
        use std::os::fd::AsRawFd;
        self.files.get(&fd).map_or(-1, |f| f.as_raw_fd())
    }
    pub(super) fn set_origin(&mut self, fd: i32, path: PathBuf) {
        self.origins.insert(fd, path);
    }
    pub(super) fn origin(&self, fd: i32) -> Option<PathBuf> {
        self.origins.get(&fd).cloned()
    }
}

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    // `System.console()`: whether the program's standard streams are a terminal (JDK 17 asks for
    // stdin and stdout together, JDK 22+ for each); never when the VM captures them or gives the
    // program another stdin. No console charset of its own on Linux (null), as in HotSpot.
    reg.add("java/io/Console", "encoding", "()Ljava/lang/String;", |_, _, _| Ok(0));
    reg.add("java/io/Console", "istty", "()Z", |vm, _, _| Ok((tty_status(vm) & 3 == 3) as u64));
    reg.add("java/io/Console", "ttyStatus", "()I", |vm, _, _| Ok(tty_status(vm)));
    // Serialization's class descriptors: the JDK asks only whether a class has a static initializer
    // (for the default serialVersionUID); its field-ID setup has nothing to set up here.
    reg.add("java/io/ObjectStreamClass", "initNative", "()V", |_, _, _| Ok(0));
    reg.add("java/io/ObjectStreamClass", "hasStaticInitializer", "(Ljava/lang/Class;)Z", |vm, _, a| {
        let class = vm.class_of_mirror(a[0] as Ref);
        Ok(vm.find_declared_method(class, "<clinit>", "()V").is_some() as u64)
    });
    reg.add("java/io/FileInputStream", "isRegularFile0", "(Ljava/io/FileDescriptor;)Z", |vm, _, a| {
        let fd = vm.get_named(a[1] as Ref, "fd") as i32;
        Ok(vm.open_files.files.get(&fd).and_then(|f| f.metadata().ok()).is_some_and(|m| m.is_file()) as u64)
    });
    // RandomAccessFile: files in the same table as the streams (the JDK's ZipFile reads jars so).
    const RAF: &str = "java/io/RandomAccessFile";
    reg.add(RAF, "open0", "(Ljava/lang/String;I)V", |vm, t, a| {
        let path = vm.rust_string(a[1] as Ref);
        let write = a[2] as i32 & 2 != 0; // RandomAccessFile.RW
        let how = OpenHow { read: true, write, create: write, ..Default::default() };
        let fd = vm.fs_open(&path, &how);
        open_into(vm, t, a[0] as Ref, &path, fd)
    });
    reg.add(RAF, "read0", "()I", |vm, t, a| {
        let fd = fd_of(vm, a[0] as Ref);
        let mut b = [0u8; 1];
        match read_fd(vm, t, fd, &mut b)? {
            0 => Ok(-1i32 as u32 as u64),
            _ => Ok(b[0] as u64),
        }
    });
    reg.add(RAF, "readBytes", "([BII)I", read_bytes);
    reg.add(RAF, "writeBytes", "([BII)V", |vm, t, a| write_bytes(vm, t, &[a[0], a[1], a[2], a[3], 0]));
    reg.add(RAF, "write0", "(I)V", |vm, t, a| {
        let fd = fd_of(vm, a[0] as Ref);
        write_fd(vm, t, fd, &[a[1] as u8])?;
        Ok(0)
    });
    reg.add(RAF, "seek0", "(J)V", |vm, t, a| {
        let fd = fd_of(vm, a[0] as Ref);
        match vm.open_files.files.get_mut(&fd) {
            Some(f) => {
                f.seek(SeekFrom::Start(a[1])).ok();
                Ok(0)
            }
            None => Err(vm.throw_new(t, "java/io/IOException", Some("Stream Closed"))),
        }
    });
    reg.add(RAF, "getFilePointer", "()J", |vm, _, a| {
        let fd = fd_of(vm, a[0] as Ref);
        Ok(vm.open_files.files.get_mut(&fd).and_then(|f| f.stream_position().ok()).unwrap_or(0))
    });
    reg.add(RAF, "length0", "()J", |vm, _, a| {
        let fd = fd_of(vm, a[0] as Ref);
        Ok(vm.open_files.files.get(&fd).and_then(|f| f.metadata().ok()).map(|m| m.len()).unwrap_or(0))
    });
    reg.add(RAF, "length", "()J", |vm, _, a| {
        let fd = fd_of(vm, a[0] as Ref);
        Ok(vm.open_files.files.get(&fd).and_then(|f| f.metadata().ok()).map(|m| m.len()).unwrap_or(0))
    });
    reg.add(RAF, "setLength0", "(J)V", |vm, _, a| {
        let fd = fd_of(vm, a[0] as Ref);
        if let Some(f) = vm.open_files.files.get(&fd) {
            f.set_len(a[1]).ok();
        }
        Ok(0)
    });
    reg.add("java/io/FileDescriptor", "getHandle", "(I)J", |_, _, _| Ok(-1i64 as u64));
    reg.add("java/io/FileDescriptor", "getAppend", "(I)Z", |_, _, _| Ok(0));
    reg.add("java/io/FileDescriptor", "close0", "()V", |vm, _, a| {
        let fd = vm.get_named(a[0] as Ref, "fd") as i32;
        vm.open_files.close(fd);
        vm.set_named(a[0] as Ref, "fd", -1i32 as u32 as u64);
        Ok(0)
    });
    // A stream the program never closed, closed by the JDK's Cleaner once it is unreachable.
    reg.add("java/io/FileCleanable", "cleanupClose0", "(IJ)V", |vm, _, a| {
        vm.open_files.close(a[0] as i32);
        Ok(0)
    });
    reg.add("java/io/FileOutputStream", "writeBytes", "([BIIZ)V", write_bytes);
    reg.add("java/io/FileOutputStream", "write", "(IZ)V", |vm, t, a| {
        let fd = fd_of(vm, a[0] as Ref);
        write_fd(vm, t, fd, &[a[1] as u8])?;
        Ok(0)
    });
    reg.add("java/io/FileOutputStream", "open0", "(Ljava/lang/String;Z)V", |vm, t, a| {
        let path = vm.rust_string(a[1] as Ref);
        let append = a[2] != 0;
        let how = OpenHow { write: true, create: true, append, truncate: !append, ..Default::default() };
        let fd = vm.fs_open(&path, &how);
        open_into(vm, t, a[0] as Ref, &path, fd)
    });
    reg.add("java/io/FileInputStream", "open0", "(Ljava/lang/String;)V", |vm, t, a| {
        let path = vm.rust_string(a[1] as Ref);
        let fd = if vm.read_path(&path, true).is_dir() {
            Err(FsError::Io(std::io::Error::other("Is a directory")))
        } else {
            vm.fs_open(&path, &OpenHow { read: true, ..Default::default() })
        };
        open_into(vm, t, a[0] as Ref, &path, fd)
    });
    reg.add("java/io/FileInputStream", "readBytes", "([BII)I", read_bytes);
    reg.add("java/io/FileInputStream", "read0", "()I", |vm, t, a| {
        let fd = fd_of(vm, a[0] as Ref);
        let mut b = [0u8; 1];
        match read_fd(vm, t, fd, &mut b)? {
            0 => Ok(-1i32 as u32 as u64),
            _ => Ok(b[0] as u64),
        }
    });
    reg.add("java/io/FileInputStream", "available0", "()I", |vm, _, a| {
        let fd = fd_of(vm, a[0] as Ref);
        let left = vm.open_files.files.get_mut(&fd).and_then(|f| {
            let pos = f.stream_position().ok()?;
            Some(f.metadata().ok()?.len().saturating_sub(pos))
        });
        Ok(left.unwrap_or(0).min(i32::MAX as u64))
    });
    reg.add("java/io/FileInputStream", "length0", "()J", |vm, _, a| {
        let fd = fd_of(vm, a[0] as Ref);
        Ok(vm.open_files.files.get(&fd).and_then(|f| f.metadata().ok()).map(|m| m.len()).unwrap_or(0))
    });
    reg.add("java/io/FileInputStream", "position0", "()J", |vm, _, a| {
        let fd = fd_of(vm, a[0] as Ref);
        Ok(vm.open_files.files.get_mut(&fd).and_then(|f| f.stream_position().ok()).unwrap_or(0))
    });
    reg.add("java/io/FileInputStream", "skip0", "(J)J", |vm, _, a| {
        let fd = fd_of(vm, a[0] as Ref);
        let n = a[1] as i64;
        Ok(match vm.open_files.files.get_mut(&fd) {
            Some(f) => {
                let before = f.stream_position().unwrap_or(0);
                let after = f.seek(SeekFrom::Current(n)).unwrap_or(before);
                (after as i64 - before as i64) as u64
            }
            None => 0,
        })
    });

    const FS: &str = "java/io/UnixFileSystem";
    reg.add(FS, "canonicalize0", "(Ljava/lang/String;)Ljava/lang/String;", |vm, _, a| {
        let text = vm.rust_string(a[1] as Ref);
        let canon = match vm.sandboxed_canonical(&text) {
            Some(p) => p.display().to_string(),
            None => canonicalize(&vm.host_path(&text).display().to_string()),
        };
        Ok(vm.new_string(&canon) as u64)
    });
    reg.add(FS, "getBooleanAttributes0", "(Ljava/io/File;)I", |vm, _, a| {
        let path = file_path(vm, a[1] as Ref);
        Ok(match std::fs::metadata(&path) {
            Ok(m) => {
                let hidden = Path::new(&path).file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
                1 | if m.is_file() { 2 } else { 0 } | if m.is_dir() { 4 } else { 0 } | if hidden { 8 } else { 0 }
            }
            Err(_) => 0,
        })
    });
    // `File.canRead/canWrite/canExecute`: access(2), as HotSpot (the modes are POSIX's R_OK/W_OK/X_OK);
    // in a sandboxed run a file it would not let the program change is not writable.
    for name in ["checkAccess", "checkAccess0"] {
        reg.add(FS, name, "(Ljava/io/File;I)Z", |vm, _, a| {
            let mode = a[2] as i32 & 7;
            if mode & libc::W_OK != 0 && !vm.fs_may_change(&file_text(vm, a[1] as Ref)) {
                return Ok(0);
            }
            let path = file_path(vm, a[1] as Ref);
            let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else { return Ok(0) };
            // SAFETY: `c` is a NUL-terminated string that outlives the call; access(2) only reads it.
            Ok((unsafe { libc::access(c.as_ptr(), mode) } == 0) as u64)
        });
    }
    // `File.setReadable/setWritable/setExecutable`: the owner's bit, or everyone's, set or cleared.
    for name in ["setPermission", "setPermission0"] {
        reg.add(FS, name, "(Ljava/io/File;IZZ)Z", |vm, _, a| {
            let path = file_text(vm, a[1] as Ref);
            let (access, enable, owner_only) = (a[2] as u32 & 7, a[3] != 0, a[4] != 0);
            let bits = if owner_only { access << 6 } else { access << 6 | access << 3 | access };
            Ok(vm
                .fs_change(&path, true, |p| change_mode(p, |mode| if enable { mode | bits } else { mode & !bits }))
                .is_ok() as u64)
        });
    }
    // `File.setReadOnly`: every write bit cleared.
    reg.add(FS, "setReadOnly", "(Ljava/io/File;)Z", |vm, _, a| {
        let path = file_text(vm, a[1] as Ref);
        Ok(vm.fs_change(&path, true, |p| change_mode(p, |mode| mode & !0o222)).is_ok() as u64)
    });
    // pathconf(_PC_NAME_MAX) (`File.createTempFile` keeps its names under it): Linux's file systems' 255.
    reg.add(FS, "getNameMax0", "(Ljava/lang/String;)J", |_, _, _| Ok(255));
    reg.add(FS, "getLength", "(Ljava/io/File;)J", |vm, _, a| {
        Ok(std::fs::metadata(file_path(vm, a[1] as Ref)).map(|m| m.len()).unwrap_or(0))
    });
    // JDK 21+ name these natives with a trailing 0.
    for name in ["getLastModifiedTime", "getLastModifiedTime0"] {
        reg.add(FS, name, "(Ljava/io/File;)J", |vm, _, a| {
            let t = std::fs::metadata(file_path(vm, a[1] as Ref)).and_then(|m| m.modified()).ok();
            Ok(t.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| d.as_millis() as u64).unwrap_or(0))
        });
    }
    for name in ["setLastModifiedTime", "setLastModifiedTime0"] {
        reg.add(FS, name, "(Ljava/io/File;J)Z", |vm, _, a| {
            // HotSpot keeps the access time and sets the modification time (milliseconds).
            let path = file_text(vm, a[1] as Ref);
            let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(a[2]);
            let set = |p: &Path| std::fs::File::open(p)?.set_times(std::fs::FileTimes::new().set_modified(at));
            Ok(vm.fs_change(&path, true, set).is_ok() as u64)
        });
    }
    reg.add(FS, "list", "(Ljava/io/File;)[Ljava/lang/String;", |vm, _, a| {
        match vm.fs_list(&file_text(vm, a[1] as Ref)) {
            Ok(names) => {
                let mut names: Vec<Option<String>> =
                    names.into_iter().map(|n| Some(n.to_string_lossy().into_owned())).collect();
                names.sort();
                Ok(vm.new_string_array(&names)? as u64)
            }
            Err(_) => Ok(0),
        }
    });
    reg.add(FS, "createDirectory", "(Ljava/io/File;)Z", |vm, _, a| {
        let path = file_text(vm, a[1] as Ref);
        Ok(vm.fs_mkdir(&path, 0o777).is_ok() as u64)
    });
    // False when the file exists; any other failure is an IOException (strerror's words).
    reg.add(FS, "createFileExclusively", "(Ljava/lang/String;)Z", |vm, t, a| {
        let path = vm.rust_string(a[1] as Ref);
        let how = OpenHow { write: true, create: true, create_new: true, mode: Some(0o666), ..Default::default() };
        match vm.fs_open(&path, &how) {
            Ok(fd) => {
                vm.open_files.close(fd);
                Ok(1)
            }
            Err(FsError::Io(e)) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(0),
            Err(e) => Err(vm.io_exception(t, e)),
        }
    });
    reg.add(FS, "delete0", "(Ljava/io/File;)Z", |vm, _, a| {
        let path = file_text(vm, a[1] as Ref);
        Ok(vm.fs_remove(&path, Removal::Either).is_ok() as u64)
    });
    reg.add(FS, "rename0", "(Ljava/io/File;Ljava/io/File;)Z", |vm, _, a| {
        let (from, to) = (file_text(vm, a[1] as Ref), file_text(vm, a[2] as Ref));
        Ok(vm.fs_rename(&from, &to).is_ok() as u64)
    });
}

/// `File.path` of a java.io.File as the program wrote it (empty for none).
fn file_text<T: Tracker>(vm: &Vm<T>, file: Ref) -> String {
    match vm.get_named(file, "path") as Ref {
        0 => String::new(),
        s => vm.rust_string(s),
    }
}

/// Where a read of a java.io.File goes on the host (see `Vm::read_path`).
fn file_path<T: Tracker>(vm: &Vm<T>, file: Ref) -> PathBuf {
    vm.read_path(&file_text(vm, file), true)
}

/// chmod(2) of `path` to what `change` makes of its mode.
fn change_mode(path: &Path, change: impl FnOnce(u32) -> u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)?.permissions().mode();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(change(mode)))
}

/// Java's canonical form: symlinks resolved for the part that exists, `.`/`..` folded for the rest.
fn canonicalize(path: &str) -> String {
    let p = Path::new(path);
    if let Ok(c) = std::fs::canonicalize(p) {
        return c.display().to_string();
    }
    let mut parts: Vec<String> = Vec::new();
    for c in p.components() {
        match c {
            std::path::Component::RootDir => parts.clear(),
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            std::path::Component::Prefix(_) => {}
        }
    }
    format!("/{}", parts.join("/"))
}

fn open_into<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    stream: Ref,
    path: &str,
    fd: Result<i32, FsError>,
) -> VmResult<u64> {
    match fd {
        Ok(fd) => {
            let fdo = vm.get_named(stream, "fd") as Ref;
            if fdo != 0 {
                vm.set_named(fdo, "fd", fd as u32 as u64);
            }
            Ok(0)
        }
        Err(e) => Err(vm.file_not_found(t, path, e)),
    }
}

/// The `fd` of the FileDescriptor inside a FileInputStream/FileOutputStream.
fn fd_of<T: Tracker>(vm: &Vm<T>, stream: Ref) -> i32 {
    let fdo = vm.get_named(stream, "fd") as Ref;
    if fdo == 0 {
        return -1;
    }
    vm.get_named(fdo, "fd") as i32
}

fn write_fd<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, fd: i32, bytes: &[u8]) -> VmResult<()> {
    match fd {
        1 | 2 => vm.write_output(fd, bytes),
        _ => match vm.open_files.files.get_mut(&fd) {
            Some(f) => {
                if let Err(e) = f.write_all(bytes) {
                    return Err(vm.throw_new(t, "java/io/IOException", Some(&e.to_string())));
                }
            }
            None => return Err(vm.throw_new(t, "java/io/IOException", Some("Stream Closed"))),
        },
    }
    Ok(())
}

fn read_fd<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, fd: i32, buf: &mut [u8]) -> VmResult<usize> {
    let r = match fd {
        0 if vm.opts.stdin == Stdin::Empty => Ok(0),
        0 if vm.opts.stdin == Stdin::Inherit => std::io::stdin().read(buf),
        _ => match vm.open_files.files.get_mut(&fd) {
            Some(f) => f.read(buf),
            None => return Err(vm.throw_new(t, "java/io/IOException", Some("Stream Closed"))),
        },
    };
    r.map_err(|e| vm.throw_new(t, "java/io/IOException", Some(&e.to_string())))
}

fn write_bytes<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let fd = fd_of(vm, a[0] as Ref);
    let (arr, off, len) = (a[1] as Ref, a[2] as i32, a[3] as i32);
    if arr == 0 {
        return Err(vm.throw_npe(t));
    }
    let bytes: Vec<u8> = match &vm.heap.get(arr).data {
        ObjData::Bytes(b) => {
            if off < 0 || len < 0 || off as usize + len as usize > b.len() {
                return Err(vm.throw_new(t, "java/lang/IndexOutOfBoundsException", None));
            }
            b[off as usize..off as usize + len as usize].iter().map(|&x| x as u8).collect()
        }
        _ => return Ok(0),
    };
    write_fd(vm, t, fd, &bytes)?;
    Ok(0)
}

fn read_bytes<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let fd = fd_of(vm, a[0] as Ref);
    let (arr, off, len) = (a[1] as Ref, a[2] as i32, a[3] as i32);
    if arr == 0 {
        return Err(vm.throw_npe(t));
    }
    let cap = vm.heap.get(arr).data.array_len().unwrap_or(0);
    if off < 0 || len < 0 || off as usize + len as usize > cap {
        return Err(vm.throw_new(t, "java/lang/IndexOutOfBoundsException", None));
    }
    if len == 0 {
        return Ok(0);
    }
    let mut buf = vec![0u8; len as usize];
    let n = read_fd(vm, t, fd, &mut buf)?;
    if n == 0 {
        return Ok(-1i32 as u32 as u64);
    }
    if let ObjData::Bytes(b) = &mut vm.heap.get_mut(arr).data {
        for (i, &x) in buf[..n].iter().enumerate() {
            b[off as usize + i] = x as i8;
        }
    }
    Ok(n as u64)
}

/// Which of the program's stdin, stdout and stderr are terminals (bits 1, 2, 4).
fn tty_status<T: Tracker>(vm: &Vm<T>) -> u64 {
    // SAFETY: isatty only inspects the descriptor number it is given.
    let tty = |fd: i32| unsafe { libc::isatty(fd) } == 1;
    let captured = vm.capture.is_some();
    let stdin = vm.opts.stdin == Stdin::Inherit && tty(0);
    let stdout = !captured && if vm.opts.stdout_to_stderr { tty(2) } else { tty(1) };
    let stderr = !captured && tty(2);
    stdin as u64 | (stdout as u64) << 1 | (stderr as u64) << 2
}
