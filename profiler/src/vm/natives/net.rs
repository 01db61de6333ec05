//! `java.net.InetAddress` natives: the local host name and name lookup through the system
//! resolver. The VM answers as a host without IPv6 would (`Inet4AddressImpl`), so every address
//! is an `Inet4Address`; reverse lookup and reachability report failure rather than guess.
//! `java.net.NetworkInterface`: the host's interfaces (getifaddrs) with their IPv4 addresses.

use super::{nothing, Registry, VmResult};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{JThread, Tracker, Vm};
use nix::net::if_::InterfaceFlags;
use nix::sys::socket::SockaddrStorage;
use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs};

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    for class in ["java/net/InetAddress", "java/net/Inet4Address", "java/net/Inet6Address"] {
        reg.add(class, "init", "()V", nothing);
    }
    // JDK 17 asks the factory, JDK 21+ InetAddress itself.
    reg.add("java/net/InetAddressImplFactory", "isIPv6Supported", "()Z", |_, _, _| Ok(0));
    reg.add("java/net/InetAddress", "isIPv6Supported", "()Z", |_, _, _| Ok(0));
    reg.add("java/net/InetAddress", "isIPv4Available", "()Z", |_, _, _| Ok(1));
    const IMPL: &str = "java/net/Inet4AddressImpl";
    reg.add(IMPL, "getLocalHostName", "()Ljava/lang/String;", |vm, _, _| {
        let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "localhost".to_string());
        Ok(vm.new_string(&name) as u64)
    });
    reg.add(IMPL, "lookupAllHostAddr", "(Ljava/lang/String;)[Ljava/net/InetAddress;", lookup_all);
    reg.add(IMPL, "getHostByAddr", "([B)Ljava/lang/String;", |vm, t, _| {
        Err(vm.throw_new(t, "java/net/UnknownHostException", None))
    });
    reg.add(IMPL, "isReachable0", "([BI[BI)Z", |_, _, _| Ok(0));

    const NI: &str = "java/net/NetworkInterface";
    reg.add(NI, "init", "()V", nothing);
    reg.add(NI, "getAll", "()[Ljava/net/NetworkInterface;", |vm, t, _| {
        let all = host_interfaces();
        interface_array(vm, t, &all).map(|r| r as u64)
    });
    reg.add(NI, "getByName0", "(Ljava/lang/String;)Ljava/net/NetworkInterface;", |vm, t, a| {
        let name = vm.rust_string(a[0] as Ref);
        match host_interfaces().into_iter().find(|i| i.name == name) {
            Some(i) => interface_object(vm, t, &i).map(|r| r as u64),
            None => Ok(0),
        }
    });
    reg.add(NI, "getByIndex0", "(I)Ljava/net/NetworkInterface;", |vm, t, a| {
        match host_interfaces().into_iter().find(|i| i.index == a[0] as i32) {
            Some(i) => interface_object(vm, t, &i).map(|r| r as u64),
            None => Ok(0),
        }
    });
    reg.add(NI, "getByInetAddress0", "(Ljava/net/InetAddress;)Ljava/net/NetworkInterface;", |vm, t, a| {
        let ip = super::sockets::ipv4_of(vm, a[0] as Ref);
        match host_interfaces().into_iter().find(|i| i.addresses.iter().any(|x| x.ip == ip)) {
            Some(i) => interface_object(vm, t, &i).map(|r| r as u64),
            None => Ok(0),
        }
    });
    reg.add(NI, "boundInetAddress0", "(Ljava/net/InetAddress;)Z", |vm, _, a| {
        let ip = super::sockets::ipv4_of(vm, a[0] as Ref);
        Ok(host_interfaces().iter().any(|i| i.addresses.iter().any(|x| x.ip == ip)) as u64)
    });
    reg.add(NI, "isUp0", "(Ljava/lang/String;I)Z", |vm, _, a| {
        Ok(flags_of(vm, a[0]).contains(InterfaceFlags::IFF_UP | InterfaceFlags::IFF_RUNNING) as u64)
    });
    reg.add(NI, "isLoopback0", "(Ljava/lang/String;I)Z", |vm, _, a| {
        Ok(flags_of(vm, a[0]).contains(InterfaceFlags::IFF_LOOPBACK) as u64)
    });
    reg.add(NI, "supportsMulticast0", "(Ljava/lang/String;I)Z", |vm, _, a| {
        Ok(flags_of(vm, a[0]).contains(InterfaceFlags::IFF_MULTICAST) as u64)
    });
    reg.add(NI, "isP2P0", "(Ljava/lang/String;I)Z", |vm, _, a| {
        Ok(flags_of(vm, a[0]).contains(InterfaceFlags::IFF_POINTOPOINT) as u64)
    });
    // From the kernel's view of the interface; an all-zero hardware address (loopback) is none.
    reg.add(NI, "getMacAddr0", "([BLjava/lang/String;I)[B", |vm, _, a| {
        let name = vm.rust_string(a[1] as Ref);
        let text = std::fs::read_to_string(format!("/sys/class/net/{name}/address")).unwrap_or_default();
        let mac: Vec<u8> = text.trim().split(':').filter_map(|h| u8::from_str_radix(h, 16).ok()).collect();
        if mac.len() != 6 || mac.iter().all(|&b| b == 0) {
            return Ok(0);
        }
        Ok(vm.new_byte_array(&mac) as u64)
    });
    reg.add(NI, "getMTU0", "(Ljava/lang/String;I)I", |vm, _, a| {
        let name = vm.rust_string(a[0] as Ref);
        let mtu =
            std::fs::read_to_string(format!("/sys/class/net/{name}/mtu")).ok().and_then(|m| m.trim().parse().ok());
        Ok(mtu.unwrap_or(-1i32) as u32 as u64)
    });
}

/// One of the host's network interfaces, as NetworkInterface shows it.
struct HostInterface {
    name: String,
    index: i32,
    flags: InterfaceFlags,
    addresses: Vec<HostAddress>,
}

struct HostAddress {
    ip: Ipv4Addr,
    prefix: u32,
    broadcast: Option<Ipv4Addr>,
}

/// The host's interfaces that have an IPv4 address, as HotSpot lists them without IPv6: the last
/// the kernel names first (HotSpot prepends each to its list), each one's addresses likewise.
/// Empty when getifaddrs fails.
fn host_interfaces() -> Vec<HostInterface> {
    let mut out: Vec<HostInterface> = Vec::new();
    let v4 = |a: &Option<SockaddrStorage>| a.as_ref().and_then(|a| a.as_sockaddr_in()).map(|a| a.ip());
    for entry in nix::ifaddrs::getifaddrs().into_iter().flatten() {
        let at = match out.iter().position(|i| i.name == entry.interface_name) {
            Some(at) => at,
            None => {
                let index = nix::net::if_::if_nametoindex(entry.interface_name.as_str()).map_or(0, |i| i as i32);
                out.push(HostInterface {
                    name: entry.interface_name.clone(),
                    index,
                    flags: entry.flags,
                    addresses: Vec::new(),
                });
                out.len() - 1
            }
        };
        if let Some(ip) = v4(&entry.address) {
            let prefix = v4(&entry.netmask).map_or(0, |m| u32::from(m).count_ones());
            let broadcast = v4(&entry.broadcast).filter(|_| entry.flags.contains(InterfaceFlags::IFF_BROADCAST));
            out[at].addresses.insert(0, HostAddress { ip, prefix, broadcast });
        }
    }
    out.retain(|i| !i.addresses.is_empty());
    out.reverse();
    out
}

fn flags_of<T: Tracker>(vm: &Vm<T>, name: u64) -> InterfaceFlags {
    let name = vm.rust_string(name as Ref);
    host_interfaces().into_iter().find(|i| i.name == name).map_or(InterfaceFlags::empty(), |i| i.flags)
}

/// A `NetworkInterface[]` of these interfaces.
fn interface_array<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, all: &[HostInterface]) -> VmResult<Ref> {
    let mut objects = Vec::with_capacity(all.len());
    for i in all {
        let object = vm.pinning(&objects, |vm| interface_object(vm, t, i))?;
        objects.push(object);
    }
    vm.pinning(&objects, |vm| ref_array(vm, t, "[Ljava/net/NetworkInterface;", objects.clone()))
}

/// A `NetworkInterface` with its name, index, addresses and their bindings (no children).
fn interface_object<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, i: &HostInterface) -> VmResult<Ref> {
    let mut pins = vec![vm.new_string(&i.name)];
    let (mut addresses, mut bindings) = (Vec::new(), Vec::new());
    for a in &i.addresses {
        let ip = vm.pinning(&pins, |vm| super::sockets::inet_address(vm, t, a.ip))?;
        pins.push(ip);
        let broadcast = match a.broadcast {
            Some(b) => vm.pinning(&pins, |vm| super::sockets::inet_address(vm, t, b))?,
            None => 0,
        };
        pins.push(broadcast);
        let binding = vm.pinning(&pins, |vm| vm.construct(t, "java/net/InterfaceAddress", "()V", &[]))?;
        pins.push(binding);
        vm.set_named(binding, "address", ip as u64);
        vm.set_named(binding, "broadcast", broadcast as u64);
        vm.set_named(binding, "maskLength", a.prefix as u64);
        addresses.push(ip);
        bindings.push(binding);
    }
    let addrs = vm.pinning(&pins, |vm| ref_array(vm, t, "[Ljava/net/InetAddress;", addresses))?;
    pins.push(addrs);
    let binds = vm.pinning(&pins, |vm| ref_array(vm, t, "[Ljava/net/InterfaceAddress;", bindings))?;
    pins.push(binds);
    let childs = vm.pinning(&pins, |vm| ref_array(vm, t, "[Ljava/net/NetworkInterface;", Vec::new()))?;
    pins.push(childs);
    let object = vm.pinning(&pins, |vm| vm.construct(t, "java/net/NetworkInterface", "()V", &[]))?;
    let name = pins[0] as u64;
    for (field, value) in [("name", name), ("displayName", name), ("index", i.index as u32 as u64)] {
        vm.set_named(object, field, value);
    }
    for (field, value) in [("addrs", addrs), ("bindings", binds), ("childs", childs)] {
        vm.set_named(object, field, value as u64);
    }
    Ok(object)
}

fn ref_array<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, class: &str, items: Vec<Ref>) -> VmResult<Ref> {
    let class = vm.load_or_throw(t, class)?;
    Ok(vm.heap.alloc(class, ObjData::Refs(items.into())))
}

/// The IPv4 addresses the system resolver gives `host`, as `Inet4Address`es named `host`.
fn lookup_all<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, a: &[u64]) -> VmResult<u64> {
    let name = a[1] as Ref;
    if name == 0 {
        return Err(vm.throw_npe(t));
    }
    let host = vm.rust_string(name);
    let mut addresses: Vec<[u8; 4]> = Vec::new();
    for address in (host.as_str(), 0).to_socket_addrs().into_iter().flatten() {
        if let IpAddr::V4(v4) = address.ip() {
            if !addresses.contains(&v4.octets()) {
                addresses.push(v4.octets());
            }
        }
    }
    if addresses.is_empty() {
        let msg = format!("{host}: Name or service not known");
        return Err(vm.throw_new(t, "java/net/UnknownHostException", Some(&msg)));
    }
    let mut objects = Vec::with_capacity(addresses.len());
    for octets in addresses {
        let bytes = vm.new_byte_array(&octets);
        let object = vm.pinning(&objects, |vm| {
            vm.pinning(&[name, bytes], |vm| {
                vm.construct(t, "java/net/Inet4Address", "(Ljava/lang/String;[B)V", &[name as u64, bytes as u64])
            })
        })?;
        objects.push(object);
    }
    let array = vm.pinning(&objects, |vm| vm.load_or_throw(t, "[Ljava/net/InetAddress;"))?;
    Ok(vm.heap.alloc(array, ObjData::Refs(objects.into())) as u64)
}
