//! The parts of the NIO default file system (`sun.nio.fs.UnixNativeDispatcher`) that path handling
//! and file attributes need. Paths arrive as C strings in native memory (the JDK's NativeBuffer,
//! allocated through Unsafe); failures are thrown as `UnixException(errno)`, as the JDK expects
//! (a sandbox's refusal as the `AccessDeniedException` the JDK makes of EACCES, see `fs.rs`).
//! Files are opened, changed and listed through `fs.rs`.

use super::{Registry, VmResult};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::sandbox::{FsError, OpenHow, Removal};
use crate::vm::{Fault, JThread, Tracker, Vm, VmError};
use std::os::unix::fs::MetadataExt;

const D: &str = "sun/nio/fs/UnixNativeDispatcher";

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    // JDK 21+: access reports failure as a returned errno.
    reg.add(D, "access0", "(JI)I", |vm, _, a| {
        Ok(match access(vm, a[0], a[2] as i32)? {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().unwrap_or(2) as u64,
        })
    });
    // Files, directories and channels: descriptors share the VM's open-file table with java.io.
    reg.add(D, "open0", "(JII)I", |vm, t, a| {
        let path = c_text(vm, a[0])?;
        let (flags, mode) = (a[2] as i32, a[3] as u32);
        let acc = flags & libc::O_ACCMODE;
        let how = OpenHow {
            read: acc == libc::O_RDONLY || acc == libc::O_RDWR,
            write: acc == libc::O_WRONLY || acc == libc::O_RDWR,
            append: flags & libc::O_APPEND != 0,
            truncate: flags & libc::O_TRUNC != 0,
            create: flags & libc::O_CREAT != 0,
            create_new: flags & (libc::O_CREAT | libc::O_EXCL) == libc::O_CREAT | libc::O_EXCL,
            mode: Some(mode),
            nofollow: flags & libc::O_NOFOLLOW != 0,
        };
        match vm.fs_open(&path, &how) {
            Ok(fd) => Ok(fd as u64),
            Err(e) => Err(vm.nio_error(t, &path, e)),
        }
    });
    // Files.copy's data transfer between two open descriptors, from their current positions
    // to the source's end: JDK 17's UnixCopyFile.transfer, JDK 21+'s directCopy0 (0: done) and
    // bufferedCopy0 (its buffer not needed here).
    reg.add("sun/nio/fs/UnixCopyFile", "transfer", "(IIJ)V", |vm, t, a| copy_fd(vm, t, a[0], a[1]));
    reg.add("sun/nio/fs/LinuxNativeDispatcher", "directCopy0", "(IIJ)I", |vm, t, a| copy_fd(vm, t, a[0], a[1]));
    reg.add("sun/nio/fs/UnixFileSystem", "bufferedCopy0", "(IIJIJ)V", |vm, t, a| copy_fd(vm, t, a[0], a[1]));
    reg.add("sun/nio/fs/LinuxNativeDispatcher", "posix_fadvise", "(IJJI)I", |_, _, _| Ok(0));
    reg.add("sun/nio/fs/LinuxNativeDispatcher", "init", "()V", |_, _, _| Ok(0));
    // The attributes Files.copy(COPY_ATTRIBUTES) gives the target through its descriptor (JDK 21+
    // names the natives with a 0).
    for name in ["fchown", "fchown0"] {
        reg.add(D, name, "(III)V", |vm, t, a| {
            let r = vm.fd_attributes(a[0], |f| std::os::unix::fs::fchown(f, Some(a[1] as u32), Some(a[2] as u32)));
            done(vm, t, "", r)
        });
    }
    for name in ["fchmod", "fchmod0"] {
        reg.add(D, name, "(II)V", |vm, t, a| {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::Permissions::from_mode(a[1] as u32 & 0o7777);
            let r = vm.fd_attributes(a[0], |f| f.set_permissions(mode));
            done(vm, t, "", r)
        });
    }
    // Extended attributes: files here carry none, so there are none to copy.
    reg.add(D, "flistxattr", "(IJI)I", |_, _, _| Ok(0));
    reg.add(D, "fgetxattr0", "(IJJI)I", |vm, t, _| {
        Err(unix_exception(vm, t, &std::io::Error::from_raw_os_error(61))) // ENODATA
    });
    // futimes takes microseconds, futimens nanoseconds, since the epoch.
    reg.add(D, "futimes", "(IJJ)V", |vm, t, a| {
        let times = file_times(a[1], a[3], 1_000);
        let r = vm.fd_attributes(a[0], |f| f.set_times(times));
        done(vm, t, "", r)
    });
    for name in ["futimens", "futimens0"] {
        reg.add(D, name, "(IJJ)V", |vm, t, a| {
            let times = file_times(a[1], a[3], 1);
            let r = vm.fd_attributes(a[0], |f| f.set_times(times));
            done(vm, t, "", r)
        });
    }
    // By path: utimes0 (JDK 17, microseconds), utimensat0 (JDK 21+, nanoseconds; the
    // directory descriptor is AT_FDCWD for the JDK's paths).
    reg.add(D, "utimes0", "(JJJ)V", |vm, t, a| {
        let path = c_text(vm, a[0])?;
        let times = file_times(a[2], a[4], 1_000);
        let r = vm.fs_change(&path, true, |p| std::fs::File::open(p)?.set_times(times));
        done(vm, t, &path, r)
    });
    reg.add(D, "utimensat0", "(IJJJI)V", |vm, t, a| {
        let path = c_text(vm, a[1])?;
        let times = file_times(a[3], a[5], 1);
        let r = vm.fs_change(&path, true, |p| std::fs::File::open(p)?.set_times(times));
        done(vm, t, &path, r)
    });
    reg.add(D, "close0", "(I)V", |vm, _, a| {
        vm.open_files.close(a[0] as i32);
        Ok(0)
    });
    reg.add(D, "mkdir0", "(JI)V", |vm, t, a| {
        let path = c_text(vm, a[0])?;
        // With its mode (a temporary directory is the owner's alone), less the umask as mkdir(2).
        let r = vm.fs_mkdir(&path, a[2] as u32 & 0o7777);
        done(vm, t, &path, r)
    });
    reg.add(D, "chmod0", "(JI)V", |vm, t, a| {
        use std::os::unix::fs::PermissionsExt;
        let path = c_text(vm, a[0])?; // a long: two slots
        let mode = std::fs::Permissions::from_mode(a[2] as u32 & 0o7777);
        let r = vm.fs_change(&path, true, |p| std::fs::set_permissions(p, mode));
        done(vm, t, &path, r)
    });
    reg.add(D, "rmdir0", "(J)V", |vm, t, a| {
        let path = c_text(vm, a[0])?;
        let r = vm.fs_remove(&path, Removal::Dir);
        done(vm, t, &path, r)
    });
    reg.add(D, "unlink0", "(J)V", |vm, t, a| {
        let path = c_text(vm, a[0])?;
        let r = vm.fs_remove(&path, Removal::File);
        done(vm, t, &path, r)
    });
    reg.add(D, "rename0", "(JJ)V", |vm, t, a| {
        let (from, to) = (c_text(vm, a[0])?, c_text(vm, a[2])?);
        let r = vm.fs_rename(&from, &to);
        done(vm, t, &from, r)
    });
    // Links: symlink0(target, link) and link0(existing, link), as the system calls take them.
    reg.add(D, "symlink0", "(JJ)V", |vm, t, a| {
        let (target, link) = (c_text(vm, a[0])?, c_text(vm, a[2])?);
        let r = vm.fs_symlink(&link, &target);
        done(vm, t, &link, r)
    });
    reg.add(D, "link0", "(JJ)V", |vm, t, a| {
        let (existing, link) = (c_text(vm, a[0])?, c_text(vm, a[2])?);
        let r = vm.fs_hard_link(&existing, &link);
        done(vm, t, &link, r)
    });
    reg.add(D, "readlink0", "(J)[B", |vm, t, a| {
        use std::os::unix::ffi::OsStrExt;
        let path = read_at(vm, a[0], false)?;
        match std::fs::read_link(path) {
            Ok(target) => Ok(vm.new_byte_array(target.as_os_str().as_bytes()) as u64),
            Err(e) => Err(unix_exception(vm, t, &e)),
        }
    });
    reg.add(D, "opendir0", "(J)J", |vm, t, a| {
        let path = c_text(vm, a[0])?;
        match vm.fs_list(&path) {
            Ok(names) => {
                use std::os::unix::ffi::OsStringExt;
                Ok(vm.open_files.add_dir(names.into_iter().map(|n| n.into_vec()).collect()))
            }
            Err(e) => Err(unix_exception(vm, t, &e)),
        }
    });
    reg.add(D, "readdir", "(J)[B", |vm, _, a| match vm.open_files.next_dir_entry(a[0]) {
        Some(name) => Ok(vm.new_byte_array(&name) as u64),
        None => Ok(0),
    });
    reg.add(D, "closedir", "(J)V", |vm, _, a| {
        vm.open_files.close_dir(a[0]);
        Ok(0)
    });

    const IOU: &str = "sun/nio/ch/IOUtil";
    reg.add(IOU, "iovMax", "()I", |_, _, _| Ok(1024));
    reg.add(IOU, "writevMax", "()J", |_, _, _| Ok(i32::MAX as u64));
    reg.add(IOU, "fdLimit", "()I", |_, _, _| Ok(1 << 20));
    reg.add(IOU, "fdVal", "(Ljava/io/FileDescriptor;)I", |vm, _, a| Ok(vm.get_named(a[0] as Ref, "fd")));
    reg.add(IOU, "setfdVal", "(Ljava/io/FileDescriptor;I)V", |vm, _, a| {
        vm.set_named(a[0] as Ref, "fd", a[1] & 0xFFFF_FFFF);
        Ok(0)
    });
    reg.add("sun/nio/ch/NativeThread", "current", "()J", |_, _, _| Ok(0));
    reg.add("sun/nio/ch/NativeThread", "signal", "(J)V", |_, _, _| Ok(0));
    reg.add("sun/nio/ch/NativeThread", "init", "()V", |_, _, _| Ok(0));
    // JDK 21+: no host thread to signal (a blocked thread is woken through its descriptor).
    reg.add("sun/nio/ch/NativeThread", "current0", "()J", |_, _, _| Ok(0));
    reg.add("sun/nio/ch/NativeThread", "signal0", "(J)V", |_, _, _| Ok(0));
    reg.add("sun/nio/ch/NativeThread", "supportPendingSignals0", "()Z", |_, _, _| Ok(0));
    reg.add("sun/nio/ch/FileChannelImpl", "initIDs", "()J", |_, _, _| Ok(4096));
    reg.add("sun/nio/ch/FileChannelImpl", "maxDirectTransferSize0", "()I", |_, _, _| Ok(0x7fff_f000));
    // Direct transfers between two open files (sendfile and copy_file_range in HotSpot's library).
    reg.add(
        "sun/nio/ch/FileChannelImpl",
        "transferTo0",
        "(Ljava/io/FileDescriptor;JJLjava/io/FileDescriptor;)J",
        |vm, t, a| {
            // An instance method: the channel, then (src, position, count, dst).
            let (src, dst) = (vm.get_named(a[1] as Ref, "fd") as i32, vm.get_named(a[6] as Ref, "fd") as i32);
            transfer(vm, t, src, Some(a[2]), dst, None, a[4])
        },
    );
    reg.add(
        "sun/nio/ch/FileDispatcherImpl",
        "transferTo0",
        "(Ljava/io/FileDescriptor;JJLjava/io/FileDescriptor;Z)J",
        |vm, t, a| {
            let (src, dst) = (vm.get_named(a[0] as Ref, "fd") as i32, vm.get_named(a[5] as Ref, "fd") as i32);
            transfer(vm, t, src, Some(a[1]), dst, None, a[3])
        },
    );
    reg.add(
        "sun/nio/ch/FileDispatcherImpl",
        "transferFrom0",
        "(Ljava/io/FileDescriptor;Ljava/io/FileDescriptor;JJZ)J",
        |vm, t, a| {
            let (src, dst) = (vm.get_named(a[0] as Ref, "fd") as i32, vm.get_named(a[1] as Ref, "fd") as i32);
            let append = a[6] != 0;
            transfer(vm, t, src, None, dst, (!append).then_some(a[2]), a[4])
        },
    );
    // JDK 17: `FileChannelImpl.map0(prot, position, length, isSync)` on the channel's descriptor.
    reg.add("sun/nio/ch/FileChannelImpl", "map0", "(IJJZ)J", |vm, t, a| {
        let fd_obj = vm.get_named(a[0] as Ref, "fd") as Ref;
        let fd = vm.get_named(fd_obj, "fd") as i32;
        map(vm, t, fd, a[1] as i32, a[2], a[4])
    });
    reg.add("sun/nio/ch/FileChannelImpl", "unmap0", "(JJ)I", |vm, _, a| {
        vm.native_memory.free(a[0]);
        Ok(0)
    });
    const MMU: &str = "java/nio/MappedMemoryUtils";
    reg.add(MMU, "isLoaded0", "(JJJ)Z", |_, _, _| Ok(1));
    reg.add(MMU, "load0", "(JJ)V", |_, _, _| Ok(0));
    reg.add(MMU, "unload0", "(JJ)V", |_, _, _| Ok(0));
    reg.add(MMU, "force0", "(Ljava/io/FileDescriptor;JJ)V", |vm, _, a| {
        vm.native_memory.force(a[1]);
        Ok(0)
    });
    // The identity of an open file (device and inode), which the JDK's file-lock table keys on:
    // JDK 17 sets the key's fields, JDK 21+ fills a long[2].
    reg.add("sun/nio/ch/FileKey", "init", "(Ljava/io/FileDescriptor;)V", |vm, t, a| {
        let fd = vm.get_named(a[1] as Ref, "fd") as i32;
        let (dev, ino) = file_key(vm, t, fd)?;
        vm.set_named(a[0] as Ref, "st_dev", dev);
        vm.set_named(a[0] as Ref, "st_ino", ino);
        Ok(0)
    });
    reg.add("sun/nio/ch/FileKey", "init", "(Ljava/io/FileDescriptor;[J)V", |vm, t, a| {
        let fd = vm.get_named(a[0] as Ref, "fd") as i32;
        let (dev, ino) = file_key(vm, t, fd)?;
        if let ObjData::Longs(out) = &mut vm.heap.get_mut(a[1] as Ref).data {
            if out.len() >= 2 {
                out[0] = dev as i64;
                out[1] = ino as i64;
            }
        }
        Ok(0)
    });
    for dispatcher in ["sun/nio/ch/FileDispatcherImpl", "sun/nio/ch/UnixFileDispatcherImpl"] {
        reg.add(dispatcher, "init", "()V", |_, _, _| Ok(0));
        reg.add(dispatcher, "init0", "()V", |_, _, _| Ok(0));
        reg.add(dispatcher, "read0", "(Ljava/io/FileDescriptor;JI)I", |vm, t, a| {
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            channel_io(vm, t, fd, (a[1], a[3] as i32 as usize), None, false, true)
        });
        reg.add(dispatcher, "pread0", "(Ljava/io/FileDescriptor;JIJ)I", |vm, t, a| {
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            channel_io(vm, t, fd, (a[1], a[3] as i32 as usize), Some(a[4]), false, true)
        });
        // Scatter reads and gathering writes: `count` iovecs (address, length; 16 bytes each) at `iov`.
        reg.add(dispatcher, "readv0", "(Ljava/io/FileDescriptor;JI)J", |vm, t, a| {
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            vectored_io(vm, t, fd, a[1], a[3] as i32, false)
        });
        reg.add(dispatcher, "writev0", "(Ljava/io/FileDescriptor;JI)J", |vm, t, a| {
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            vectored_io(vm, t, fd, a[1], a[3] as i32, true)
        });
        reg.add(dispatcher, "write0", "(Ljava/io/FileDescriptor;JI)I", |vm, t, a| {
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            channel_io(vm, t, fd, (a[1], a[3] as i32 as usize), None, true, true)
        });
        reg.add(dispatcher, "pwrite0", "(Ljava/io/FileDescriptor;JIJ)I", |vm, t, a| {
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            channel_io(vm, t, fd, (a[1], a[3] as i32 as usize), Some(a[4]), true, true)
        });
        reg.add(dispatcher, "seek0", "(Ljava/io/FileDescriptor;J)J", |vm, _, a| {
            use std::io::Seek;
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            let offset = a[1] as i64;
            Ok(match vm.open_files.files.get_mut(&fd) {
                Some(f) if offset < 0 => f.stream_position().unwrap_or(0),
                Some(f) => f.seek(std::io::SeekFrom::Start(offset as u64)).unwrap_or(0),
                None => 0,
            })
        });
        reg.add(dispatcher, "size0", "(Ljava/io/FileDescriptor;)J", |vm, _, a| {
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            Ok(vm.open_files.files.get(&fd).and_then(|f| f.metadata().ok()).map(|m| m.len()).unwrap_or(0))
        });
        reg.add(dispatcher, "truncate0", "(Ljava/io/FileDescriptor;J)I", |vm, _, a| {
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            if let Some(f) = vm.open_files.files.get(&fd) {
                f.set_len(a[1]).ok();
            }
            Ok(0)
        });
        reg.add(dispatcher, "force0", "(Ljava/io/FileDescriptor;Z)I", |_, _, _| Ok(0));
        // JDK 21+: whether a descriptor is something other than a file, directory or block device
        // (a socket, a pipe), which transfers treat as a stream.
        reg.add(dispatcher, "isOther0", "(Ljava/io/FileDescriptor;)Z", |vm, _, a| {
            use std::os::unix::fs::FileTypeExt;
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            let kind = vm.open_files.files.get(&fd).and_then(|f| f.metadata().ok()).map(|m| m.file_type());
            Ok(kind.is_some_and(|k| !(k.is_file() || k.is_dir() || k.is_block_device())) as u64)
        });
        reg.add(dispatcher, "available0", "(Ljava/io/FileDescriptor;)I", |vm, _, a| {
            use std::io::Seek;
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            let left = vm.open_files.files.get_mut(&fd).and_then(|f| {
                let pos = f.stream_position().ok()?;
                Some(f.metadata().ok()?.len().saturating_sub(pos))
            });
            Ok(left.unwrap_or(0).min(i32::MAX as u64))
        });
        // File locks: the VM is one process, and the JDK's own lock table keeps its threads' locks
        // apart; no lock is taken on the host file (other processes are not kept out).
        reg.add(dispatcher, "lock0", "(Ljava/io/FileDescriptor;ZJJZ)I", |_, _, _| Ok(0));
        reg.add(dispatcher, "release0", "(Ljava/io/FileDescriptor;JJ)V", |_, _, _| Ok(0));
        // JDK 21+: mapping moved here from FileChannelImpl.
        reg.add(dispatcher, "allocationGranularity0", "()J", |_, _, _| Ok(4096));
        reg.add(dispatcher, "map0", "(Ljava/io/FileDescriptor;IJJZ)J", |vm, t, a| {
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            map(vm, t, fd, a[1] as i32, a[2], a[4])
        });
        reg.add(dispatcher, "unmap0", "(JJ)I", |vm, _, a| {
            vm.native_memory.free(a[0]);
            Ok(0)
        });
        reg.add(dispatcher, "closeIntFD", "(I)V", |vm, _, a| {
            vm.open_files.close(a[0] as i32);
            Ok(0)
        });
    }
    // Closing (JDK 21+ moved it to UnixDispatcher). Before a channel closes a socket another thread
    // may be blocked on, the JDK "pre-closes" it: shutting the host socket down wakes that thread,
    // which then finds the stream at its end, as after HotSpot's dup2 of a dead socket.
    for dispatcher in ["sun/nio/ch/FileDispatcherImpl", "sun/nio/ch/UnixDispatcher"] {
        reg.add(dispatcher, "close0", "(Ljava/io/FileDescriptor;)V", |vm, _, a| {
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            vm.open_files.close(fd);
            Ok(0)
        });
        reg.add(dispatcher, "preClose0", "(Ljava/io/FileDescriptor;)V", |vm, _, a| {
            let fd = vm.get_named(a[0] as Ref, "fd") as i32;
            if let Some(file) = vm.open_files.files.get(&fd) {
                // Not a socket (a file, a pipe end): nothing blocks on it, nothing to do.
                socket2::SockRef::from(file).shutdown(std::net::Shutdown::Both).ok();
            }
            Ok(0)
        });
    }
    reg.add("sun/nio/ch/UnixDispatcher", "init", "()V", |_, _, _| Ok(0));
    // No optional capabilities (openat, futimens, birth time…): the JDK falls back to the basics.
    reg.add(D, "init", "()I", |_, _, _| Ok(0));
    reg.add(D, "getcwd", "()[B", |vm, _, _| {
        let cwd = vm.working_dir().display().to_string();
        Ok(vm.new_byte_array(cwd.as_bytes()) as u64)
    });
    reg.add(D, "exists0", "(J)Z", |vm, _, a| {
        let path = read_at(vm, a[0], false)?;
        Ok(std::fs::symlink_metadata(path).is_ok() as u64)
    });
    reg.add(D, "stat1", "(J)I", |vm, _, a| {
        let path = read_at(vm, a[0], true)?;
        Ok(std::fs::metadata(path).map(|m| m.mode() as u64).unwrap_or(0))
    });
    reg.add(D, "stat0", "(JLsun/nio/fs/UnixFileAttributes;)V", |vm, t, a| {
        let path = read_at(vm, a[0], true)?;
        let m = std::fs::metadata(&path);
        fill_attributes(vm, t, a[2] as Ref, m)
    });
    reg.add(D, "lstat0", "(JLsun/nio/fs/UnixFileAttributes;)V", |vm, t, a| {
        let path = read_at(vm, a[0], false)?;
        let m = std::fs::symlink_metadata(&path);
        fill_attributes(vm, t, a[2] as Ref, m)
    });
    // JDK 21+: stat reports failure as a returned errno instead of an exception.
    reg.add(D, "stat0", "(JLsun/nio/fs/UnixFileAttributes;)I", |vm, t, a| {
        let path = read_at(vm, a[0], true)?;
        match std::fs::metadata(&path) {
            Ok(m) => fill_attributes(vm, t, a[2] as Ref, Ok(m)),
            Err(e) => Ok(e.raw_os_error().unwrap_or(2) as u64),
        }
    });
    // By descriptor (JDK 17's fstat, JDK 21+'s wrapper of fstat0): the attributes of the file it has open.
    for name in ["fstat", "fstat0"] {
        reg.add(D, name, "(ILsun/nio/fs/UnixFileAttributes;)V", |vm, t, a| {
            let m = match vm.open_files.files.get(&(a[0] as i32)) {
                Some(f) => f.metadata(),
                None => Err(std::io::Error::from_raw_os_error(libc::EBADF)),
            };
            fill_attributes(vm, t, a[1] as Ref, m)
        });
    }
    reg.add(D, "access0", "(JI)V", |vm, t, a| match access(vm, a[0], a[2] as i32)? {
        Ok(()) => Ok(0),
        Err(e) => Err(unix_exception(vm, t, &e)),
    });
    reg.add(D, "realpath0", "(J)[B", |vm, t, a| {
        let text = c_text(vm, a[0])?;
        let real = match vm.sandboxed_canonical(&text) {
            // The program's view: the path it named, links followed, if it exists there.
            Some(canonical) => std::fs::metadata(vm.read_path(&text, true)).map(|_| canonical),
            None => std::fs::canonicalize(vm.host_path(&text)),
        };
        match real {
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

/// The path in the NUL-terminated string at a native-memory address, as the program named it.
fn c_text<T: Tracker>(vm: &mut Vm<T>, addr: u64) -> VmResult<String> {
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

/// Where a read of the path at a native-memory address goes on the host (see `Vm::read_path`).
fn read_at<T: Tracker>(vm: &mut Vm<T>, addr: u64, follow: bool) -> VmResult<std::path::PathBuf> {
    let text = c_text(vm, addr)?;
    Ok(vm.read_path(&text, follow))
}

/// access(2) of the path at `addr` as the JDK asks it: whether it exists, and, for `W_OK` in a
/// sandboxed run, whether the sandbox would let the program change it (EACCES if not).
fn access<T: Tracker>(vm: &mut Vm<T>, addr: u64, mode: i32) -> VmResult<std::io::Result<()>> {
    let text = c_text(vm, addr)?;
    if mode & libc::W_OK != 0 && !vm.fs_may_change(&text) {
        return Ok(Err(std::io::Error::from_raw_os_error(libc::EACCES)));
    }
    Ok(std::fs::metadata(vm.read_path(&text, true)).map(|_| ()))
}

/// A void native's end: done, or the failure thrown as NIO expects it for `path`.
fn done<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, path: &str, r: Result<(), FsError>) -> VmResult<u64> {
    match r {
        Ok(()) => Ok(0),
        Err(e) => Err(vm.nio_error(t, path, e)),
    }
}

/// Access and modification times given in units of `unit_ns` nanoseconds since the epoch.
fn file_times(access: u64, modified: u64, unit_ns: i64) -> std::fs::FileTimes {
    let at = |v: u64| {
        let ns = (v as i64).saturating_mul(unit_ns);
        let d = std::time::Duration::from_nanos(ns.unsigned_abs());
        if ns >= 0 {
            std::time::UNIX_EPOCH + d
        } else {
            std::time::UNIX_EPOCH - d
        }
    };
    std::fs::FileTimes::new().set_accessed(at(access)).set_modified(at(modified))
}

/// Copies what is left of descriptor `src` to descriptor `dst` (errors as UnixException; EBADF
/// for a descriptor not open).
fn copy_fd<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, dst: u64, src: u64) -> VmResult<u64> {
    let bad = || std::io::Error::from_raw_os_error(9);
    let result = match vm.open_files.files.get(&(src as i32)).map(|f| f.try_clone()) {
        Some(Ok(mut from)) => match vm.open_files.files.get_mut(&(dst as i32)) {
            Some(to) => std::io::copy(&mut from, to).map(|_| ()),
            None => Err(bad()),
        },
        Some(Err(e)) => Err(e),
        None => Err(bad()),
    };
    match result {
        Ok(()) => Ok(0),
        Err(e) => Err(unix_exception(vm, t, &e)),
    }
}

pub(super) fn unix_exception<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, e: &std::io::Error) -> Fault {
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

/// readv/writev: each iovec in turn, stopping at a short transfer; the total, or EOF (-1) when
/// a read finds nothing at all (UNAVAILABLE, -2, when a socket has nothing yet).
pub(super) fn vectored_io<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    fd: i32,
    iov: u64,
    count: i32,
    write: bool,
) -> VmResult<u64> {
    let mut total: u64 = 0;
    for k in 0..count.max(0) as u64 {
        let base = vm.native_memory.read(iov + 16 * k, 8).unwrap_or(0);
        let len = vm.native_memory.read(iov + 16 * k + 8, 8).unwrap_or(0) as usize;
        if len == 0 {
            continue;
        }
        let n = channel_io(vm, t, fd, (base, len), None, write, total == 0)?;
        if n == EOF || n == UNAVAILABLE {
            return Ok(if total == 0 { n as i32 as i64 as u64 } else { total });
        }
        total += n;
        if (n as usize) < len {
            break;
        }
    }
    Ok(total)
}

/// Copies up to `count` bytes from `src` (at `from`, leaving its position, or from its position)
/// to `dst` (at `to`, leaving its position, or at its position); the bytes copied.
fn transfer<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    src: i32,
    from: Option<u64>,
    dst: i32,
    to: Option<u64>,
    count: u64,
) -> VmResult<u64> {
    use std::io::{Read, Write};
    use std::os::unix::fs::FileExt;
    let (Some(input), Some(output)) = (vm.open_files.files.get(&src), vm.open_files.files.get(&dst)) else {
        return Err(vm.throw_new(t, "java/io/IOException", Some("Bad file descriptor")));
    };
    let (mut input, mut output) = match (input.try_clone(), output.try_clone()) {
        (Ok(i), Ok(o)) => (i, o),
        (Err(e), _) | (_, Err(e)) => return Err(vm.throw_new(t, "java/io/IOException", Some(&e.to_string()))),
    };
    let mut buf = vec![0u8; count.min(1 << 20) as usize];
    let mut done = 0u64;
    while done < count {
        let want = (count - done).min(buf.len() as u64) as usize;
        let n = match from {
            Some(p) => input.read_at(&mut buf[..want], p + done),
            None => input.read(&mut buf[..want]),
        };
        let n = match n {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => return Err(vm.throw_new(t, "java/io/IOException", Some(&e.to_string()))),
        };
        let w = match to {
            Some(p) => output.write_all_at(&buf[..n], p + done),
            None => output.write_all(&buf[..n]),
        };
        if let Err(e) = w {
            return Err(vm.throw_new(t, "java/io/IOException", Some(&e.to_string())));
        }
        done += n as u64;
    }
    Ok(done)
}

/// The device and inode of the file open as `fd`.
fn file_key<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, fd: i32) -> VmResult<(u64, u64)> {
    match vm.open_files.files.get(&fd).map(|f| f.metadata()) {
        Some(Ok(m)) => Ok((m.dev(), m.ino())),
        Some(Err(e)) => Err(vm.throw_new(t, "java/io/IOException", Some(&e.to_string()))),
        None => Err(vm.throw_new(t, "java/io/IOException", Some("Bad file descriptor"))),
    }
}

/// `map0`: `length` bytes of the file open as `fd` from `position` (the JDK has made the file
/// long enough for a writable mapping) placed in native memory; `prot` is the JDK's MAP_RO (0),
/// MAP_RW (1) or MAP_PV (2, private: changes stay in memory). Its address.
fn map<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, fd: i32, prot: i32, position: u64, length: u64) -> VmResult<u64> {
    use std::os::unix::fs::FileExt;
    let Some(file) = vm.open_files.files.get(&fd) else {
        return Err(vm.throw_new(t, "java/io/IOException", Some("Bad file descriptor")));
    };
    let mut bytes = vec![0u8; length as usize];
    let mut filled = 0;
    while filled < bytes.len() {
        match file.read_at(&mut bytes[filled..], position + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(vm.throw_new(t, "java/io/IOException", Some(&e.to_string()))),
        }
    }
    let sink = if prot == 1 {
        match file.try_clone() {
            Ok(f) => Some((f, position)),
            Err(e) => return Err(vm.throw_new(t, "java/io/IOException", Some(&e.to_string()))),
        }
    } else {
        None
    };
    Ok(vm.native_memory.map_file(bytes, sink))
}

/// IOStatus.EOF and IOStatus.UNAVAILABLE, as an `int` native returns them.
pub(super) const EOF: u64 = -1i32 as u32 as u64;
pub(super) const UNAVAILABLE: u64 = -2i32 as u32 as u64;

/// A read into, or write from, native memory (address, length) on an open descriptor (at
/// `position` when given). Returns the byte count, or EOF (-1) at the end of a file or stream. A
/// socket or pipe with nothing to give or room to take returns UNAVAILABLE in non-blocking mode,
/// and in blocking mode waits (`await_io`) when `wait` says it may: only before anything was
/// transferred, as a wait at the top level makes the whole native run again.
pub(super) fn channel_io<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    fd: i32,
    (address, len): (u64, usize),
    position: Option<u64>,
    write: bool,
    wait: bool,
) -> VmResult<u64> {
    use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
    loop {
        let Some(file) = vm.open_files.files.get_mut(&fd) else {
            return Err(vm.throw_new(t, "java/io/IOException", Some("Bad file descriptor")));
        };
        let saved = position.and_then(|_| file.stream_position().ok());
        if let Some(p) = position {
            file.seek(SeekFrom::Start(p)).ok();
        }
        let result = if write {
            let bytes = match vm.native_memory.read_bytes(address, len) {
                Some(bytes) => bytes,
                None => {
                    (0..len as u64).filter_map(|i| vm.native_memory.read(address + i, 1)).map(|b| b as u8).collect()
                }
            };
            let file = vm.open_files.files.get_mut(&fd).expect("checked above");
            file.write(&bytes)
        } else {
            let mut buf = vec![0u8; len];
            let n = file.read(&mut buf);
            if let Ok(n) = n {
                if !vm.native_memory.write_bytes(address, &buf[..n]) {
                    for (i, &b) in buf[..n].iter().enumerate() {
                        vm.native_memory.write(address + i as u64, 1, b as u64);
                    }
                }
            }
            n
        };
        if let (Some(pos), Some(file)) = (saved, vm.open_files.files.get_mut(&fd)) {
            file.seek(SeekFrom::Start(pos)).ok();
        }
        return match result {
            Ok(0) if !write && len > 0 => Ok(EOF),
            Ok(n) => Ok(n as u64),
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if !wait || vm.open_files.is_nonblocking(fd) {
                    return Ok(UNAVAILABLE);
                }
                let (host, events) = (vm.open_files.host_fd(fd), if write { libc::POLLOUT } else { libc::POLLIN });
                vm.await_io(t, host, events, None)?;
                continue;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if !write && e.kind() == ErrorKind::ConnectionReset => {
                Err(vm.throw_new(t, "sun/net/ConnectionResetException", Some("Connection reset")))
            }
            Err(e) => Err(vm.throw_new(t, "java/io/IOException", Some(&super::sockets::strerror(&e)))),
        };
    }
}
