//! The parts of the NIO default file system (`sun.nio.fs.UnixNativeDispatcher`) that path handling
//! and file attributes need. Paths arrive as C strings in native memory (the JDK's NativeBuffer,
//! allocated through Unsafe); failures are thrown as `UnixException(errno)`, as the JDK expects.

use super::{Registry, VmResult};
use crate::vm::heap::Ref;
use crate::vm::{Fault, JThread, Tracker, Vm, VmError};
use std::os::unix::fs::MetadataExt;

const D: &str = "sun/nio/fs/UnixNativeDispatcher";

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    // No optional capabilities (openat, futimens, birth time…): the JDK falls back to the basics.
    reg.add(D, "init", "()I", |_, _, _| Ok(0));
    reg.add(D, "getcwd", "()[B", |vm, _, _| {
        let cwd = std::env::current_dir().map(|p| p.display().to_string()).unwrap_or_else(|_| "/".into());
        Ok(vm.new_byte_array(cwd.as_bytes()) as u64)
    });
    reg.add(D, "exists0", "(J)Z", |vm, _, a| {
        let path = c_string(vm, a[0])?;
        Ok(std::fs::symlink_metadata(path).is_ok() as u64)
    });
    reg.add(D, "stat1", "(J)I", |vm, _, a| {
        let path = c_string(vm, a[0])?;
        Ok(std::fs::metadata(path).map(|m| m.mode() as u64).unwrap_or(0))
    });
    reg.add(D, "stat0", "(JLsun/nio/fs/UnixFileAttributes;)V", |vm, t, a| {
        let path = c_string(vm, a[0])?;
        let m = std::fs::metadata(&path);
        fill_attributes(vm, t, a[2] as Ref, m)
    });
    reg.add(D, "lstat0", "(JLsun/nio/fs/UnixFileAttributes;)V", |vm, t, a| {
        let path = c_string(vm, a[0])?;
        let m = std::fs::symlink_metadata(&path);
        fill_attributes(vm, t, a[2] as Ref, m)
    });
    // JDK 21+: stat reports failure as a returned errno instead of an exception.
    reg.add(D, "stat0", "(JLsun/nio/fs/UnixFileAttributes;)I", |vm, t, a| {
        let path = c_string(vm, a[0])?;
        match std::fs::metadata(&path) {
            Ok(m) => fill_attributes(vm, t, a[2] as Ref, Ok(m)),
            Err(e) => Ok(e.raw_os_error().unwrap_or(2) as u64),
        }
    });
    reg.add(D, "access0", "(JI)V", |vm, t, a| {
        let path = c_string(vm, a[0])?;
        match std::fs::metadata(path) {
            Ok(_) => Ok(0),
            Err(e) => Err(unix_exception(vm, t, &e)),
        }
    });
    reg.add(D, "realpath0", "(J)[B", |vm, t, a| {
        let path = c_string(vm, a[0])?;
        match std::fs::canonicalize(path) {
            Ok(p) => Ok(vm.new_byte_array(p.display().to_string().as_bytes()) as u64),
            Err(e) => Err(unix_exception(vm, t, &e)),
        }
    });
    reg.add(D, "strerror", "(I)[B", |vm, _, a| {
        let msg = std::io::Error::from_raw_os_error(a[0] as i32).to_string();
        let msg = msg.split(" (os error").next().unwrap_or(&msg).to_string();
        Ok(vm.new_byte_array(msg.as_bytes()) as u64)
    });
}

/// The NUL-terminated string at a native-memory address.
fn c_string<T: Tracker>(vm: &mut Vm<T>, addr: u64) -> VmResult<String> {
    let mut bytes = Vec::new();
    for i in 0.. {
        match vm.native_memory.read(addr + i, 1) {
            Some(0) => break,
            Some(b) => bytes.push(b as u8),
            None => return Err(Fault::Fatal(VmError::Internal(format!("path at unallocated address {addr:#x}")))),
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn unix_exception<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, e: &std::io::Error) -> Fault {
    let errno = e.raw_os_error().unwrap_or(2);
    let class = match vm.load_or_throw(t, "sun/nio/fs/UnixException") {
        Ok(c) => c,
        Err(f) => return f,
    };
    let obj = vm.alloc_instance(class);
    match vm.find_declared_method(class, "<init>", "(I)V") {
        Some(ctor) => match vm.invoke(t, ctor, &[obj as u64, errno as u64]) {
            Ok(_) => Fault::Exception(obj),
            Err(f) => f,
        },
        None => Fault::Fatal(VmError::Internal("UnixException(int)".into())),
    }
}

fn fill_attributes<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    attrs: Ref,
    m: std::io::Result<std::fs::Metadata>,
) -> VmResult<u64> {
    let m = match m {
        Ok(m) => m,
        Err(e) => return Err(unix_exception(vm, t, &e)),
    };
    let fields: [(&str, u64); 15] = [
        ("st_mode", m.mode() as u64),
        ("st_ino", m.ino()),
        ("st_dev", m.dev()),
        ("st_rdev", m.rdev()),
        ("st_nlink", m.nlink()),
        ("st_uid", m.uid() as u64),
        ("st_gid", m.gid() as u64),
        ("st_size", m.size()),
        ("st_atime_sec", m.atime() as u64),
        ("st_atime_nsec", m.atime_nsec() as u64),
        ("st_mtime_sec", m.mtime() as u64),
        ("st_mtime_nsec", m.mtime_nsec() as u64),
        ("st_ctime_sec", m.ctime() as u64),
        ("st_ctime_nsec", m.ctime_nsec() as u64),
        ("st_birthtime_sec", 0),
    ];
    for (name, v) in fields {
        vm.set_named(attrs, name, v);
    }
    Ok(0)
}
