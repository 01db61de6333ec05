//! TCP sockets and selectors: the natives of `sun.nio.ch.Net` (socket, bind, listen, connect,
//! accept, addresses, options, poll), `SocketDispatcher`, `EPoll`, `EventFD` and `IOUtil`'s
//! pipes — what `Socket`, `ServerSocket`, socket channels, `Selector`, `HttpURLConnection` and
//! the servers built on them (Tomcat, the JDK's `HttpServer`) stand on. IPv4 only, as name lookup
//! (`net.rs`).
//!
//! Sockets are host sockets in the VM's open-file table. On the host every one is non-blocking;
//! the mode the program sets is kept beside it (`OpenFiles::is_nonblocking`). A call that would
//! block in blocking mode waits for the descriptor in the VM's scheduler (`Vm::await_io`), so the
//! program's other threads run meanwhile, and the call runs again once it is ready.
//!
//! A sandboxed run (the editor's) reaches the loopback interface only: binding to every interface
//! binds to 127.0.0.1, and any other address is refused with a `SocketException` that says so.

use super::nio::{channel_io, vectored_io, UNAVAILABLE};
use super::{Registry, VmResult};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{Fault, JThread, Tracker, Vm};
use socket2::{Domain, SockAddr, SockRef, Socket, Type};
use std::io::{self, ErrorKind};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

const NET: &str = "sun/nio/ch/Net";
/// IOStatus.INTERRUPTED.
const INTERRUPTED: u64 = -3i32 as u32 as u64;

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    // What the host offers, as HotSpot's library answers it on Linux without IPv6.
    reg.add(NET, "isIPv6Available0", "()Z", |_, _, _| Ok(0));
    reg.add(NET, "isReusePortAvailable0", "()Z", |_, _, _| Ok(1));
    reg.add(NET, "isExclusiveBindAvailable", "()I", |_, _, _| Ok(-1i32 as u32 as u64));
    reg.add(NET, "shouldShutdownWriteBeforeClose0", "()Z", |_, _, _| Ok(0));
    reg.add(NET, "shouldSetBothIPv4AndIPv6Options0", "()Z", |_, _, _| Ok(1));
    reg.add(NET, "canIPv6SocketJoinIPv4Group0", "()Z", |_, _, _| Ok(0));
    reg.add(NET, "canJoin6WithIPv4Group0", "()Z", |_, _, _| Ok(0));
    reg.add(NET, "canUseIPv6OptionsWithIPv4LocalAddress0", "()Z", |_, _, _| Ok(1));
    reg.add(NET, "pollinValue", "()S", |_, _, _| Ok(libc::POLLIN as u64));
    reg.add(NET, "polloutValue", "()S", |_, _, _| Ok(libc::POLLOUT as u64));
    reg.add(NET, "pollerrValue", "()S", |_, _, _| Ok(libc::POLLERR as u64));
    reg.add(NET, "pollhupValue", "()S", |_, _, _| Ok(libc::POLLHUP as u64));
    reg.add(NET, "pollnvalValue", "()S", |_, _, _| Ok(libc::POLLNVAL as u64));
    reg.add(NET, "pollconnValue", "()S", |_, _, _| Ok(libc::POLLOUT as u64));
    reg.add(NET, "socket0", "(ZZZZ)I", |vm, t, a| {
        let ty = if a[1] != 0 { Type::STREAM } else { Type::DGRAM };
        let made = Socket::new(Domain::IPV4, ty, None).and_then(|s| {
            s.set_nonblocking(true)?;
            if a[2] != 0 {
                s.set_reuse_address(true)?;
            }
            Ok(s)
        });
        match made {
            Ok(s) => Ok(add_socket(vm, s) as u64),
            Err(e) => Err(socket_error(vm, t, &e)),
        }
    });
    reg.add(NET, "bind0", "(Ljava/io/FileDescriptor;ZZLjava/net/InetAddress;I)V", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        let ip = ipv4_of(vm, a[3] as Ref);
        let ip = match allowed(vm, ip, true) {
            Ok(ip) => ip,
            Err(why) => return Err(vm.throw_new(t, "java/net/SocketException", Some(&why))),
        };
        let address = SockAddr::from(SocketAddrV4::new(ip, a[4] as u16));
        let r = with_socket(vm, fd, |s| s.bind(&address));
        done(vm, t, r)
    });
    reg.add(NET, "listen", "(Ljava/io/FileDescriptor;I)V", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        let backlog = (a[1] as i32).max(1);
        let r = with_socket(vm, fd, |s| s.listen(backlog));
        done(vm, t, r)
    });
    reg.add(NET, "connect0", "(ZLjava/io/FileDescriptor;Ljava/net/InetAddress;I)I", |vm, t, a| {
        let fd = fd_of(vm, a[1]);
        let ip = ipv4_of(vm, a[2] as Ref);
        if let Err(why) = allowed(vm, ip, false) {
            return Err(vm.throw_new(t, "java/net/SocketException", Some(&why)));
        }
        let address = SockAddr::from(SocketAddrV4::new(ip, a[3] as u16));
        loop {
            // A connection the host finished refusing since the last try reports it here.
            let r = with_socket(vm, fd, |s| match s.take_error()? {
                Some(e) => Err(e),
                None => s.connect(&address),
            });
            match r {
                Ok(()) => return Ok(1),
                Err(e) if e.raw_os_error() == Some(libc::EISCONN) => return Ok(1),
                Err(e) if in_progress(&e) => {
                    if vm.open_files.is_nonblocking(fd) {
                        return Ok(UNAVAILABLE);
                    }
                    vm.await_io(t, vm.open_files.host_fd(fd), libc::POLLOUT, None)?;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => return Ok(INTERRUPTED),
                Err(e) => return Err(socket_error(vm, t, &e)),
            }
        }
    });
    reg.add(NET, "pollConnect", "(Ljava/io/FileDescriptor;J)Z", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        let revents = wait_ready(vm, t, fd, libc::POLLOUT, a[1] as i64)?;
        if revents == 0 {
            return Ok(0);
        }
        match with_socket(vm, fd, |s| s.take_error()) {
            Ok(None) => Ok(1),
            Ok(Some(e)) | Err(e) => Err(socket_error(vm, t, &e)),
        }
    });
    reg.add(NET, "accept", "(Ljava/io/FileDescriptor;Ljava/io/FileDescriptor;[Ljava/net/InetSocketAddress;)I", accept);
    reg.add(NET, "shutdown", "(Ljava/io/FileDescriptor;I)V", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        let how = match a[1] {
            0 => std::net::Shutdown::Read,
            1 => std::net::Shutdown::Write,
            _ => std::net::Shutdown::Both,
        };
        match with_socket(vm, fd, |s| s.shutdown(how)) {
            Err(e) if e.raw_os_error() != Some(libc::ENOTCONN) => Err(socket_error(vm, t, &e)),
            _ => Ok(0),
        }
    });
    reg.add(NET, "localPort", "(Ljava/io/FileDescriptor;)I", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        match with_socket(vm, fd, |s| s.local_addr()).map(|addr| addr.as_socket()) {
            Ok(addr) => Ok(addr.map_or(0, |a| a.port()) as u64),
            Err(e) => Err(socket_error(vm, t, &e)),
        }
    });
    reg.add(NET, "remotePort", "(Ljava/io/FileDescriptor;)I", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        match with_socket(vm, fd, |s| s.peer_addr()).map(|addr| addr.as_socket()) {
            Ok(addr) => Ok(addr.map_or(0, |a| a.port()) as u64),
            Err(e) => Err(socket_error(vm, t, &e)),
        }
    });
    reg.add(NET, "localInetAddress", "(Ljava/io/FileDescriptor;)Ljava/net/InetAddress;", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        match with_socket(vm, fd, |s| s.local_addr()).map(|addr| addr.as_socket()) {
            Ok(addr) => inet_address(vm, t, ip_of(addr)).map(|r| r as u64),
            Err(e) => Err(socket_error(vm, t, &e)),
        }
    });
    reg.add(NET, "remoteInetAddress", "(Ljava/io/FileDescriptor;)Ljava/net/InetAddress;", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        match with_socket(vm, fd, |s| s.peer_addr()).map(|addr| addr.as_socket()) {
            Ok(addr) => inet_address(vm, t, ip_of(addr)).map(|r| r as u64),
            Err(e) => Err(socket_error(vm, t, &e)),
        }
    });
    reg.add(NET, "getIntOption0", "(Ljava/io/FileDescriptor;ZII)I", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        let (level, option) = (a[2] as i32, a[3] as i32);
        match with_socket(vm, fd, |s| get_option(s, level, option)) {
            Ok(v) => Ok(v as u32 as u64),
            Err(e) => Err(socket_error(vm, t, &e)),
        }
    });
    reg.add(NET, "setIntOption0", "(Ljava/io/FileDescriptor;ZIIIZ)V", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        let (level, option, value) = (a[2] as i32, a[3] as i32, a[4] as i32);
        let r = with_socket(vm, fd, |s| set_option(s, level, option, value));
        done(vm, t, r)
    });
    reg.add(NET, "poll", "(Ljava/io/FileDescriptor;IJ)I", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        Ok(wait_ready(vm, t, fd, a[1] as i16, a[2] as i64)? as u16 as u64)
    });
    reg.add(NET, "available", "(Ljava/io/FileDescriptor;)I", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        let host = vm.open_files.host_fd(fd);
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through its pointer argument, here a live local.
        let r = unsafe { libc::ioctl(host, libc::FIONREAD, &mut n) };
        if r < 0 {
            return Err(socket_error(vm, t, &io::Error::last_os_error()));
        }
        Ok(n as u32 as u64)
    });
    reg.add(NET, "discardOOB", "(Ljava/io/FileDescriptor;)Z", |_, _, _| Ok(0));

    // Reads and writes on sockets (JDK 17 writes through FileDispatcherImpl, see nio.rs).
    const SD: &str = "sun/nio/ch/SocketDispatcher";
    reg.add(SD, "read0", "(Ljava/io/FileDescriptor;JI)I", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        channel_io(vm, t, fd, (a[1], a[3] as i32 as usize), None, false, true)
    });
    reg.add(SD, "write0", "(Ljava/io/FileDescriptor;JI)I", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        channel_io(vm, t, fd, (a[1], a[3] as i32 as usize), None, true, true)
    });
    reg.add(SD, "readv0", "(Ljava/io/FileDescriptor;JI)J", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        vectored_io(vm, t, fd, a[1], a[3] as i32, false)
    });
    reg.add(SD, "writev0", "(Ljava/io/FileDescriptor;JI)J", |vm, t, a| {
        let fd = fd_of(vm, a[0]);
        vectored_io(vm, t, fd, a[1], a[3] as i32, true)
    });

    // Selectors: a host epoll instance whose events carry the program's descriptor numbers.
    const EPOLL: &str = "sun/nio/ch/EPoll";
    reg.add(EPOLL, "eventSize", "()I", |_, _, _| Ok(EVENT_SIZE));
    reg.add(EPOLL, "eventsOffset", "()I", |_, _, _| Ok(0));
    reg.add(EPOLL, "dataOffset", "()I", |_, _, _| Ok(4));
    reg.add(EPOLL, "create", "()I", |vm, t, _| {
        // SAFETY: epoll_create1 takes no pointers; a descriptor it returns is new and ours alone.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        owned(vm, t, fd).map(|fd| fd as u64)
    });
    reg.add(EPOLL, "ctl", "(IIII)I", |vm, _, a| {
        let (epfd, op, fd, events) = (a[0] as i32, a[1] as i32, a[2] as i32, a[3] as u32);
        let (host_ep, host) = (vm.open_files.host_fd(epfd), vm.open_files.host_fd(fd));
        if host_ep < 0 || host < 0 {
            return Ok(libc::EBADF as u64);
        }
        let mut event = libc::epoll_event { events, u64: fd as u64 };
        // SAFETY: `event` is a live epoll_event the kernel only reads (and ignores for DEL).
        let r = unsafe { libc::epoll_ctl(host_ep, op, host, &mut event) };
        Ok(if r == 0 { 0 } else { io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL) as u64 })
    });
    reg.add(EPOLL, "wait", "(IJII)I", |vm, t, a| {
        let (epfd, address, max, timeout) = (a[0] as i32, a[1], a[3] as i32, a[4] as i32);
        let host = vm.open_files.host_fd(epfd);
        if wait_ready(vm, t, epfd, libc::POLLIN, timeout as i64)? == 0 {
            return Ok(0);
        }
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; max.max(1) as usize];
        // SAFETY: `events` holds `max` (at least 1) initialised epoll_events for the kernel to fill.
        let n = unsafe { libc::epoll_wait(host, events.as_mut_ptr(), events.len() as i32, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == ErrorKind::Interrupted {
                return Ok(0);
            }
            return Err(vm.throw_new(t, "java/io/IOException", Some(&strerror(&e))));
        }
        for (i, event) in events[..n as usize].iter().enumerate() {
            let at = address + i as u64 * EVENT_SIZE;
            let (bits, data) = (event.events, event.u64);
            vm.native_memory.write(at, 4, bits as u64);
            vm.native_memory.write(at + 4, 8, data);
        }
        Ok(n as u64)
    });
    // The selector's wake-up: an event descriptor written by `wakeup()`, drained by the selector.
    const EVENTFD: &str = "sun/nio/ch/EventFD";
    reg.add(EVENTFD, "eventfd0", "()I", |vm, t, _| {
        // SAFETY: eventfd takes no pointers; a descriptor it returns is new and ours alone.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        owned(vm, t, fd).map(|fd| fd as u64)
    });
    reg.add(EVENTFD, "set0", "(I)I", |vm, _, a| Ok(write_raw(vm, a[0] as i32, &1u64.to_ne_bytes())));

    const IOU: &str = "sun/nio/ch/IOUtil";
    reg.add(IOU, "configureBlocking", "(Ljava/io/FileDescriptor;Z)V", |vm, _, a| {
        let fd = fd_of(vm, a[0]);
        vm.open_files.set_nonblocking(fd, a[1] == 0);
        Ok(0)
    });
    // A pipe (Pipe.open, the poll selector's wake-up) as a connected pair of host sockets: the
    // read end in the high half, the write end in the low half.
    reg.add(IOU, "makePipe", "(Z)J", |vm, t, a| {
        let pair = std::os::unix::net::UnixStream::pair().and_then(|(r, w)| {
            r.set_nonblocking(true)?;
            w.set_nonblocking(true)?;
            Ok((r, w))
        });
        let (r, w) = match pair {
            Ok(pair) => pair,
            Err(e) => return Err(vm.throw_new(t, "java/io/IOException", Some(&strerror(&e)))),
        };
        let (r, w) = (vm.open_files.add(OwnedFd::from(r).into()), vm.open_files.add(OwnedFd::from(w).into()));
        if a[0] == 0 {
            vm.open_files.set_nonblocking(r, true);
            vm.open_files.set_nonblocking(w, true);
        }
        Ok(((r as u64) << 32) | w as u32 as u64)
    });
    reg.add(IOU, "write1", "(IB)I", |vm, _, a| Ok(write_raw(vm, a[0] as i32, &[a[1] as u8])));
    reg.add(IOU, "drain", "(I)Z", |vm, _, a| {
        let mut any = false;
        while read_raw(vm, a[0] as i32, &mut [0u8; 128]) > 0 {
            any = true;
        }
        Ok(any as u64)
    });
    reg.add(IOU, "drain1", "(I)I", |vm, _, a| {
        let n = read_raw(vm, a[0] as i32, &mut [0u8; 1]);
        Ok(if n < 0 { UNAVAILABLE } else { n as u32 as u64 })
    });

    // Extended options (jdk.net): none of the optional ones are offered.
    const LSO: &str = "jdk/net/LinuxSocketOptions";
    for name in ["keepAliveOptionsSupported0", "quickAckSupported0", "incomingNapiIdSupported0"] {
        reg.add(LSO, name, "()Z", |_, _, _| Ok(0));
    }
}

/// The size of a host `struct epoll_event` (packed on x86-64: events, then data).
const EVENT_SIZE: u64 = std::mem::size_of::<libc::epoll_event>() as u64;

fn fd_of<T: Tracker>(vm: &Vm<T>, fd_object: u64) -> i32 {
    vm.get_named(fd_object as Ref, "fd") as i32
}

/// Adds a new host socket to the open-file table (in blocking mode for the program).
fn add_socket<T: Tracker>(vm: &mut Vm<T>, socket: Socket) -> i32 {
    vm.open_files.add(OwnedFd::from(socket).into())
}

/// Takes a descriptor a host call just returned (or the failure it reported as -1).
fn owned<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, fd: i32) -> VmResult<i32> {
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(vm.throw_new(t, "java/io/IOException", Some(&strerror(&e))));
    }
    // SAFETY: `fd` was just returned by the host for this call and nothing else owns it.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    Ok(vm.open_files.add(owned.into()))
}

/// Runs a socket call on the program's descriptor `fd`.
fn with_socket<T: Tracker, R>(vm: &Vm<T>, fd: i32, f: impl FnOnce(SockRef<'_>) -> io::Result<R>) -> io::Result<R> {
    match vm.open_files.files.get(&fd) {
        Some(file) => f(SockRef::from(file)),
        None => Err(io::Error::from_raw_os_error(libc::EBADF)),
    }
}

/// A raw read or write on a pipe or event descriptor: the count, or -1 when it would block.
fn read_raw<T: Tracker>(vm: &mut Vm<T>, fd: i32, buf: &mut [u8]) -> i64 {
    use std::io::Read;
    match vm.open_files.files.get_mut(&fd).map(|f| f.read(buf)) {
        Some(Ok(n)) => n as i64,
        _ => -1,
    }
}

fn write_raw<T: Tracker>(vm: &mut Vm<T>, fd: i32, bytes: &[u8]) -> u64 {
    use std::io::Write;
    match vm.open_files.files.get_mut(&fd).map(|f| f.write(bytes)) {
        Some(Ok(n)) => n as u64,
        _ => UNAVAILABLE,
    }
}

/// `Net.accept(fd, newfd, isaa)`: 1 with the new socket's descriptor in `newfd` and its remote
/// address in `isaa[0]`, or UNAVAILABLE in non-blocking mode when none is pending.
fn accept<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let fd = fd_of(vm, a[0]);
    let (new_fd, isaa) = (a[1] as Ref, a[2] as Ref);
    let (socket, address) = loop {
        match with_socket(vm, fd, |s| s.accept()) {
            Ok(accepted) => break accepted,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if vm.open_files.is_nonblocking(fd) {
                    return Ok(UNAVAILABLE);
                }
                vm.await_io(t, vm.open_files.host_fd(fd), libc::POLLIN, None)?;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => return Ok(INTERRUPTED),
            Err(e) => return Err(socket_error(vm, t, &e)),
        }
    };
    if let Err(e) = socket.set_nonblocking(true) {
        return Err(socket_error(vm, t, &e));
    }
    let remote = address.as_socket();
    let accepted = add_socket(vm, socket);
    vm.set_named(new_fd, "fd", accepted as u32 as u64);
    let ip = inet_address(vm, t, ip_of(remote))?;
    let port = remote.map_or(0, |a| a.port()) as u64;
    let socket_address = vm.pinning(&[ip, isaa, new_fd], |vm| {
        vm.construct(t, "java/net/InetSocketAddress", "(Ljava/net/InetAddress;I)V", &[ip as u64, port])
    })?;
    if let ObjData::Refs(slots) = &mut vm.heap.get_mut(isaa).data {
        if let Some(slot) = slots.first_mut() {
            *slot = socket_address;
        }
    }
    Ok(1)
}

/// Waits until the program's descriptor `fd` is ready for `events`, for `timeout_ms` (-1: no
/// limit, 0: only looks). Returns the ready events, 0 when the time ran out. The deadline of a
/// wait that switched the thread out is kept on the thread for the call made again.
fn wait_ready<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, fd: i32, events: i16, timeout_ms: i64) -> VmResult<i16> {
    let host = vm.open_files.host_fd(fd);
    loop {
        let mut probe = [libc::pollfd { fd: host, events, revents: 0 }];
        crate::vm::threads::poll_host(&mut probe, 0);
        let now = Instant::now();
        let deadline = t.io_deadline.or((timeout_ms > 0).then(|| now + Duration::from_millis(timeout_ms as u64)));
        if probe[0].revents != 0 || host < 0 || timeout_ms == 0 || deadline.is_some_and(|d| d <= now) {
            t.io_deadline = None;
            return Ok(if host < 0 { libc::POLLNVAL } else { probe[0].revents });
        }
        t.io_deadline = deadline;
        vm.await_io(t, host, events, deadline)?;
    }
}

fn in_progress(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EINPROGRESS | libc::EALREADY)) || e.kind() == ErrorKind::WouldBlock
}

/// The IPv4 address an `InetAddress` holds.
pub(super) fn ipv4_of<T: Tracker>(vm: &Vm<T>, address: Ref) -> Ipv4Addr {
    if address == 0 {
        return Ipv4Addr::UNSPECIFIED;
    }
    let holder = vm.get_named(address, "holder") as Ref;
    Ipv4Addr::from(vm.get_named(holder, "address") as u32)
}

fn ip_of(address: Option<SocketAddr>) -> Ipv4Addr {
    match address {
        Some(SocketAddr::V4(a)) => *a.ip(),
        _ => Ipv4Addr::UNSPECIFIED,
    }
}

/// A new `Inet4Address` with no host name.
pub(super) fn inet_address<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, ip: Ipv4Addr) -> VmResult<Ref> {
    let bytes = vm.new_byte_array(&ip.octets());
    vm.pinning(&[bytes], |vm| vm.construct(t, "java/net/Inet4Address", "(Ljava/lang/String;[B)V", &[0, bytes as u64]))
}

/// The address a socket may use: anything in an open run; in a sandboxed run the loopback
/// interface only (every interface, for a bind, meaning loopback).
fn allowed<T: Tracker>(vm: &Vm<T>, ip: Ipv4Addr, bind: bool) -> Result<Ipv4Addr, String> {
    let Some(sandbox) = &vm.sandbox else {
        return Ok(ip);
    };
    if ip.is_loopback() {
        return Ok(ip);
    }
    if bind && ip.is_unspecified() {
        return Ok(Ipv4Addr::LOCALHOST);
    }
    let what = if bind { format!("listening on {ip}") } else { format!("connecting to {ip}") };
    Err(sandbox.network_refusal(&what))
}

/// The socket options the JDK sets by level and number (Linux's, from SocketOptionRegistry).
fn set_option(s: SockRef<'_>, level: i32, option: i32, value: i32) -> io::Result<()> {
    let on = value != 0;
    match (level, option) {
        (libc::SOL_SOCKET, libc::SO_REUSEADDR) => s.set_reuse_address(on),
        (libc::SOL_SOCKET, libc::SO_REUSEPORT) => s.set_reuse_port(on),
        (libc::SOL_SOCKET, libc::SO_KEEPALIVE) => s.set_keepalive(on),
        (libc::SOL_SOCKET, libc::SO_OOBINLINE) => s.set_out_of_band_inline(on),
        (libc::SOL_SOCKET, libc::SO_BROADCAST) => s.set_broadcast(on),
        (libc::SOL_SOCKET, libc::SO_SNDBUF) => s.set_send_buffer_size(value.max(0) as usize),
        (libc::SOL_SOCKET, libc::SO_RCVBUF) => s.set_recv_buffer_size(value.max(0) as usize),
        (libc::SOL_SOCKET, libc::SO_LINGER) => s.set_linger((value >= 0).then(|| Duration::from_secs(value as u64))),
        (libc::IPPROTO_TCP, libc::TCP_NODELAY) => s.set_tcp_nodelay(on),
        (libc::IPPROTO_IP, libc::IP_TOS) => s.set_tos_v4(value as u32),
        (libc::IPPROTO_IP, libc::IP_TTL) => s.set_ttl_v4(value as u32),
        _ => Err(unsupported_option(level, option)),
    }
}

fn get_option(s: SockRef<'_>, level: i32, option: i32) -> io::Result<i32> {
    Ok(match (level, option) {
        (libc::SOL_SOCKET, libc::SO_REUSEADDR) => s.reuse_address()? as i32,
        (libc::SOL_SOCKET, libc::SO_REUSEPORT) => s.reuse_port()? as i32,
        (libc::SOL_SOCKET, libc::SO_KEEPALIVE) => s.keepalive()? as i32,
        (libc::SOL_SOCKET, libc::SO_OOBINLINE) => s.out_of_band_inline()? as i32,
        (libc::SOL_SOCKET, libc::SO_BROADCAST) => s.broadcast()? as i32,
        (libc::SOL_SOCKET, libc::SO_SNDBUF) => s.send_buffer_size()? as i32,
        (libc::SOL_SOCKET, libc::SO_RCVBUF) => s.recv_buffer_size()? as i32,
        (libc::SOL_SOCKET, libc::SO_LINGER) => s.linger()?.map_or(-1, |d| d.as_secs() as i32),
        (libc::IPPROTO_TCP, libc::TCP_NODELAY) => s.tcp_nodelay()? as i32,
        (libc::IPPROTO_IP, libc::IP_TOS) => s.tos_v4()? as i32,
        (libc::IPPROTO_IP, libc::IP_TTL) => s.ttl_v4()? as i32,
        _ => return Err(unsupported_option(level, option)),
    })
}

fn unsupported_option(level: i32, option: i32) -> io::Error {
    io::Error::other(format!("socket option {option} at level {level} is not supported by the Bloatlens VM"))
}

fn done<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, r: io::Result<()>) -> VmResult<u64> {
    match r {
        Ok(()) => Ok(0),
        Err(e) => Err(socket_error(vm, t, &e)),
    }
}

/// The exception HotSpot's `handleSocketError` throws for a failed socket call, with the
/// host's message for it ("Connection refused", "Address already in use").
fn socket_error<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, e: &io::Error) -> Fault {
    let class = match e.raw_os_error() {
        Some(libc::EPROTO) => "java/net/ProtocolException",
        Some(libc::ECONNREFUSED | libc::ETIMEDOUT | libc::ENOTCONN) => "java/net/ConnectException",
        Some(libc::EHOSTUNREACH) => "java/net/NoRouteToHostException",
        Some(libc::EADDRINUSE | libc::EADDRNOTAVAIL | libc::EACCES) => "java/net/BindException",
        _ => "java/net/SocketException",
    };
    vm.throw_new(t, class, Some(&strerror(e)))
}

/// The host's message for an error, as strerror(3) gives it (without Rust's "(os error N)").
pub(super) fn strerror(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_messages_lose_rusts_error_number() {
        assert_eq!(strerror(&io::Error::from_raw_os_error(libc::ECONNREFUSED)), "Connection refused");
        assert_eq!(strerror(&io::Error::other("plain")), "plain");
    }

    #[test]
    fn options_the_jdk_sets_reach_the_host_socket() {
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        let s = SockRef::from(&socket);
        set_option(s, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1).unwrap();
        assert_eq!(get_option(SockRef::from(&socket), libc::IPPROTO_TCP, libc::TCP_NODELAY).unwrap(), 1);
        set_option(SockRef::from(&socket), libc::SOL_SOCKET, libc::SO_LINGER, 3).unwrap();
        assert_eq!(get_option(SockRef::from(&socket), libc::SOL_SOCKET, libc::SO_LINGER).unwrap(), 3);
        set_option(SockRef::from(&socket), libc::SOL_SOCKET, libc::SO_LINGER, -1).unwrap();
        assert_eq!(get_option(SockRef::from(&socket), libc::SOL_SOCKET, libc::SO_LINGER).unwrap(), -1);
        assert!(set_option(SockRef::from(&socket), 999, 1, 1).is_err());
    }
}
