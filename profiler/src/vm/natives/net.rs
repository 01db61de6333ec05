//! `java.net.InetAddress` natives: the local host name and name lookup through the system
//! resolver. The VM answers as a host without IPv6 would (`Inet4AddressImpl`), so every address
//! is an `Inet4Address`; reverse lookup and reachability report failure rather than guess.

use super::{nothing, Registry, VmResult};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{JThread, Tracker, Vm};
use std::net::{IpAddr, ToSocketAddrs};

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
