//! Native methods: the JDK's `native` methods, implemented in Rust. They are bound by
//! (class, name, descriptor) on first call and cached per method. A native the VM lacks ends
//! the run with an error naming it; `registerNatives`/`initIDs` are accepted everywhere.
//!
//! An entry may also name a Java method that is not native: the loader then runs the Rust
//! implementation instead of the bytecode. That is kept for the few places where the JDK's code
//! would do what this VM does not (spin classes) — see `reflect.rs`.

mod accessors;
mod annotations;
pub(crate) mod class_loading;
mod flags;
mod fs;
mod imaging_lib;
mod instrument;
pub(crate) mod invoke;
mod io;
mod java2d;
mod lang;
mod management;
pub(crate) mod memory;
mod memory_pools;
mod net;
mod nio;
mod reflect;
mod sockets;
pub(crate) mod stack_walk;
mod thread_info;
mod zip;
mod zlib;
pub use io::OpenFiles;
pub use java2d::Surfaces;
pub use management::Management;
pub use memory::NativeMemory;
pub use memory_pools::MemoryBeans;
pub use zip::Inflaters;
mod system;

use super::class::MethodId;
use super::heap::{ObjData, Ref};
use super::tracker::Site;
use super::{Fault, JThread, Tracker, Vm, VmError, VmResult};
use std::collections::HashMap;

/// A native receives its arguments in slot form (receiver first; longs and doubles take two
/// slots, value in the first) and returns its result in slot form (0 for void).
pub type NativeFn<T> = fn(&mut Vm<T>, &mut JThread, &[u64]) -> VmResult<u64>;

pub(super) type Table<T> = HashMap<(&'static str, &'static str, &'static str), NativeFn<T>>;

/// Registers natives; `"*"` as descriptor matches any overload.
pub(super) struct Registry<'a, T: Tracker>(&'a mut Table<T>);

impl<T: Tracker> Registry<'_, T> {
    pub fn add(&mut self, class: &'static str, name: &'static str, desc: &'static str, f: NativeFn<T>) {
        self.0.insert((class, name, desc), f);
    }
}

pub(super) fn table<T: Tracker>() -> Table<T> {
    let mut t = HashMap::new();
    let mut r = Registry(&mut t);
    lang::register(&mut r);
    system::register(&mut r);
    class_loading::register(&mut r);
    io::register(&mut r);
    memory::register(&mut r);
    invoke::register(&mut r);
    zip::register(&mut r);
    java2d::register(&mut r);
    imaging_lib::register(&mut r);
    management::register(&mut r);
    management::register_os(&mut r);
    management::register_cgroups(&mut r);
    management::register_diagnostics(&mut r);
    flags::register(&mut r);
    thread_info::register(&mut r);
    memory_pools::register(&mut r);
    net::register(&mut r);
    nio::register(&mut r);
    sockets::register(&mut r);
    reflect::register(&mut r);
    accessors::register(&mut r);
    annotations::register(&mut r);
    stack_walk::register(&mut r);
    instrument::register(&mut r);
    t
}

/// Natives of JDK 17 that JDK 21+ made Java methods (around `wait0`, `sleepNanos0`): their Rust
/// implementation stands for the native only, never for the later Java method.
pub(super) const NATIVE_ONLY: &[(&str, &str, &str)] =
    &[("java/lang/Object", "wait", "(J)V"), ("java/lang/Thread", "sleep", "(J)V")];

/// Where the JDK's network code lives: a native there that the VM lacks is named with what the VM's
/// network I/O covers.
const NETWORK: &[&str] = &["java/net/", "jdk/net/", "sun/net/", "sun/nio/ch/"];

fn nothing<T: Tracker>(_: &mut Vm<T>, _: &mut JThread, _: &[u64]) -> VmResult<u64> {
    Ok(0)
}

impl<T: Tracker> Vm<T> {
    /// Runs native method `m` with the `nargs` argument slots at `args_at` on the thread's stack.
    pub(super) fn call_native(&mut self, t: &mut JThread, m: MethodId, args_at: usize, nargs: usize) -> VmResult<u64> {
        let f = match self.native_cache.get(&m) {
            Some(&f) => f,
            None => {
                let f = self.bind_native(m)?;
                self.native_cache.insert(m, f);
                f
            }
        };
        let site = match t.frames.last() {
            Some(fr) => Site { method: fr.method, pc: fr.pc.saturating_sub(1) },
            None => Site { method: m, pc: 0 },
        };
        let observing = self.observing(t);
        if observing {
            self.tracker.on_native(site, m);
        }
        let mut unsafe_load = None;
        if T::FLOW && observing {
            self.track_native(t, site, m, args_at, nargs);
            unsafe_load = self.track_unsafe_reference(t, site, m, args_at);
        }
        t.natives.push((t.frames.len() as u32, m));
        let mut buf = [0u64; 16];
        let result = if nargs <= buf.len() {
            buf[..nargs].copy_from_slice(&t.stack[args_at..args_at + nargs]);
            f(self, t, &buf[..nargs])
        } else {
            let args = t.stack[args_at..args_at + nargs].to_vec();
            f(self, t, &args)
        };
        t.natives.pop();
        // The native may have run Java code (even other threads) in between.
        if self.observing(t) {
            self.tell_thread();
            if T::FLOW {
                match (unsafe_load, &result) {
                    (Some(loc), Ok(value)) => self.track_unsafe_load(t, site, loc, *value, args_at),
                    _ => self.tracker.flow_new(args_at),
                }
            }
        }
        result
    }

    fn bind_native(&self, m: MethodId) -> VmResult<NativeFn<T>> {
        let method = &self.methods[m as usize];
        let class = &*self.classes[method.class as usize].name;
        let (name, desc) = (&*method.name, &*method.descriptor);
        // A registered `initIDs` returns something (FileChannelImpl's allocation granularity).
        if let Some(&f) = self.natives.get(&(class, name, desc)).or_else(|| self.natives.get(&(class, name, "*"))) {
            return Ok(f);
        }
        if name == "registerNatives" || name == "initIDs" {
            return Ok(nothing::<T>);
        }
        if class == "jdk/internal/misc/Unsafe" {
            if let Some(f) = memory::bind_unsafe_access::<T>(name) {
                return Ok(f);
            }
        }
        let native = format!("{}.{name}{desc}", class.replace('/', "."));
        if NETWORK.iter().any(|p| class.starts_with(p)) && !class.contains("File") {
            return Err(Fault::Fatal(VmError::Unsupported(format!(
                "native method {native} (the VM's network I/O is TCP over IPv4, selectors and network interfaces)"
            ))));
        }
        Err(Fault::Fatal(VmError::UnsupportedNative {
            class: class.replace('/', "."),
            name: name.to_string(),
            descriptor: desc.to_string(),
        }))
    }

    /// The fields of an instance (natives read and write them by slot).
    pub(super) fn fields(&self, r: Ref) -> &[u64] {
        match &self.heap.get(r).data {
            ObjData::Fields(f) => f,
            _ => &[],
        }
    }

    pub(super) fn set_field(&mut self, r: Ref, slot: u32, v: u64) {
        if let ObjData::Fields(f) = &mut self.heap.get_mut(r).data {
            f[slot as usize] = v;
        }
    }

    /// Reads a named instance field (slow: for natives off the hot path).
    pub(super) fn get_named(&self, r: Ref, name: &str) -> u64 {
        let class = self.heap.get(r).class;
        self.field_slot(class, name).map(|s| self.fields(r)[s as usize]).unwrap_or(0)
    }

    pub(super) fn set_named(&mut self, r: Ref, name: &str, v: u64) {
        let class = self.heap.get(r).class;
        if let Some(s) = self.field_slot(class, name) {
            self.set_field(r, s, v);
        }
    }

    /// Sets a static field by class and name (boot and natives).
    pub(super) fn set_static(&mut self, class: &str, name: &str, v: u64) -> bool {
        let Some(c) = self.lookup_class(class) else {
            return false;
        };
        match self.classes[c as usize].field(name, None).filter(|f| f.is_static()).map(|f| f.slot) {
            Some(s) => {
                self.statics[s as usize] = v;
                true
            }
            None => false,
        }
    }

    /// The program's working directory: the run's own (`Options::cwd`), else the process's.
    pub(super) fn working_dir(&self) -> std::path::PathBuf {
        match &self.opts.cwd {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().unwrap_or_else(|_| "/".into()),
        }
    }

    /// A path the program names, as the host opens it: a relative one against the program's working
    /// directory (the process's directory is shared with other runs, so never changed for one).
    pub(super) fn host_path(&self, path: &str) -> std::path::PathBuf {
        match &self.opts.cwd {
            // The empty path names no file (`new File("").exists()` is false), not the directory.
            Some(dir) if !path.is_empty() && !path.starts_with('/') => dir.join(path),
            _ => path.into(),
        }
    }

    /// A new `byte[]` with these contents.
    pub(super) fn new_byte_array(&mut self, bytes: &[u8]) -> Ref {
        let data: Box<[i8]> = bytes.iter().map(|&b| b as i8).collect();
        self.heap.alloc(self.wk.byte_array, ObjData::Bytes(data))
    }

    /// A new `String[]` with these contents (nulls for None).
    pub(super) fn new_string_array(&mut self, items: &[Option<String>]) -> VmResult<Ref> {
        let class = self.load_class("[Ljava/lang/String;").map_err(|_| VmError::Internal("String[]".into()))?;
        let refs: Vec<Ref> = items.iter().map(|s| s.as_deref().map(|s| self.new_string(s)).unwrap_or(0)).collect();
        Ok(self.heap.alloc(class, ObjData::Refs(refs.into())))
    }
}
