//! Natives of java.io for the standard streams: file descriptors 0, 1 and 2.

use super::{Registry, VmResult};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{JThread, Tracker, Vm};
use std::io::Read;

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    reg.add("java/io/FileDescriptor", "getHandle", "(I)J", |_, _, _| Ok(-1i64 as u64));
    reg.add("java/io/FileDescriptor", "getAppend", "(I)Z", |_, _, _| Ok(0));
    reg.add("java/io/FileDescriptor", "close0", "()V", |_, _, _| Ok(0));
    reg.add("java/io/FileOutputStream", "writeBytes", "([BIIZ)V", write_bytes);
    reg.add("java/io/FileOutputStream", "write", "(IZ)V", |vm, _, a| {
        let fd = fd_of(vm, a[0] as Ref);
        vm.write_output(fd, &[a[1] as u8]);
        Ok(0)
    });
    reg.add("java/io/FileInputStream", "readBytes", "([BII)I", read_bytes);
    reg.add("java/io/FileInputStream", "available0", "()I", |_, _, _| Ok(0));
}

/// The `fd` of the FileDescriptor inside a FileInputStream/FileOutputStream.
fn fd_of<T: Tracker>(vm: &Vm<T>, stream: Ref) -> i32 {
    let fdo = vm.get_named(stream, "fd") as Ref;
    if fdo == 0 {
        return -1;
    }
    vm.get_named(fdo, "fd") as i32
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
    if fd != 1 && fd != 2 {
        return Err(vm.throw_new(t, "java/io/IOException", Some("Stream Closed")));
    }
    vm.write_output(fd, &bytes);
    Ok(0)
}

fn read_bytes<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let fd = fd_of(vm, a[0] as Ref);
    let (arr, off, len) = (a[1] as Ref, a[2] as i32 as usize, a[3] as i32 as usize);
    if fd != 0 {
        return Err(vm.throw_new(t, "java/io/IOException", Some("Stream Closed")));
    }
    let mut buf = vec![0u8; len];
    let n = std::io::stdin().read(&mut buf).unwrap_or(0);
    if n == 0 {
        return Ok(-1i32 as u32 as u64);
    }
    if let ObjData::Bytes(b) = &mut vm.heap.get_mut(arr).data {
        for (i, &x) in buf[..n].iter().enumerate() {
            b[off + i] = x as i8;
        }
    }
    Ok(n as u64)
}
