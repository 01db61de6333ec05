//! java.management's view of the VM (`sun.management.VMManagementImpl`), which
//! `ManagementFactory.getRuntimeMXBean()` and friends read: the JMM version, the optional
//! features (all supported, as HotSpot on Linux says), times, the process id, thread and class
//! counts. The VM has no JVM options of its own, so its input arguments are empty.
//!
//! Threads (`sun.management.ThreadImpl`, the `ThreadMXBean`, and `Thread.getAllStackTraces` /
//! `getStackTrace` of another thread): the live threads, `ThreadInfo` snapshots with HotSpot's
//! thread states, lock, lock owner, blocked and waited counts (times while contention monitoring is
//! on), stack traces, locked monitors and ownable synchronizers; deadlock detection over monitors
//! and ownable synchronizers; each thread's CPU time (the VM's own thread's CPU time, charged to the
//! Java thread that ran at each switch) and the bytes it allocated (the VM's object sizes).

use super::Registry;
use crate::vm::heap::{ObjData, Ref};
use crate::vm::threads::State;
use crate::vm::{Tracker, Vm};
use std::collections::HashMap;

/// What programs change through java.management, and the peak thread count.
pub struct Management {
    /// Flags set with `HotSpotDiagnosticMXBean.setVMOption`.
    pub(crate) flags: HashMap<&'static str, super::flags::FlagValue>,
    verbose_class: bool,
    verbose_gc: bool,
    thread_cpu_time: bool,
    thread_allocated_memory: bool,
    pub(crate) contention_monitoring: bool,
    peak_threads: u64,
}

impl Default for Management {
    fn default() -> Self {
        Management {
            flags: HashMap::new(),
            verbose_class: false,
            verbose_gc: false,
            thread_cpu_time: true,
            thread_allocated_memory: true,
            contention_monitoring: false,
            peak_threads: 0,
        }
    }
}

impl Management {
    pub(super) fn set_thread_cpu_time(&mut self, on: bool) {
        self.thread_cpu_time = on;
    }
    pub(super) fn set_thread_allocated_memory(&mut self, on: bool) {
        self.thread_allocated_memory = on;
    }
}

/// `ThreadMXBean.resetPeakThreadCount`: the peak starts again from the threads alive now.
pub(super) fn reset_peak_threads<T: Tracker>(vm: &mut Vm<T>) {
    vm.management.peak_threads = live_threads(vm, false);
}

/// The JDK's feature release (17, 25, ...).
pub(super) fn feature<T: Tracker>(vm: &Vm<T>) -> u32 {
    vm.opts.jdk.version().and_then(|v| v.split('.').next()?.parse::<u32>().ok()).unwrap_or(17)
}

const VMM: &str = "sun/management/VMManagementImpl";

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    // HotSpot's JMM_VERSION as "major.minor": 3.0 on JDK 17, 4.0 from JDK 21 (virtual threads).
    reg.add(VMM, "getVersion0", "()Ljava/lang/String;", |vm, _, _| {
        let feature = vm.opts.jdk.version().and_then(|v| v.split('.').next()?.parse::<u32>().ok()).unwrap_or(17);
        let version = if feature >= 21 { "4.0" } else { "3.0" };
        Ok(vm.intern_str(version) as u64)
    });
    reg.add(VMM, "initOptionalSupportFields", "()V", |vm, _, _| {
        for field in [
            "compTimeMonitoringSupport",
            "threadContentionMonitoringSupport",
            "currentThreadCpuTimeSupport",
            "otherThreadCpuTimeSupport",
            "objectMonitorUsageSupport",
            "synchronizerUsageSupport",
            "threadAllocatedMemorySupport",
            "remoteDiagnosticCommandsSupport",
            "gcNotificationSupport",
        ] {
            vm.set_static(VMM, field, 1);
        }
        Ok(0)
    });
    reg.add(VMM, "isThreadContentionMonitoringEnabled", "()Z", |vm, _, _| {
        Ok(vm.management.contention_monitoring as u64)
    });
    reg.add(VMM, "isThreadCpuTimeEnabled", "()Z", |vm, _, _| Ok(vm.management.thread_cpu_time as u64));
    reg.add(VMM, "isThreadAllocatedMemoryEnabled", "()Z", |vm, _, _| Ok(vm.management.thread_allocated_memory as u64));
    reg.add(VMM, "getTotalClassCount", "()J", |vm, _, _| Ok(vm.classes.len() as u64));
    reg.add(VMM, "getUnloadedClassCount", "()J", |_, _, _| Ok(0));
    reg.add(VMM, "getVerboseClass", "()Z", |vm, _, _| Ok(vm.management.verbose_class as u64));
    reg.add(VMM, "getVerboseGC", "()Z", |vm, _, _| Ok(vm.management.verbose_gc as u64));
    // `-verbose:class` and `-verbose:gc` switched on at run time: remembered (the beans read them
    // back), but the VM prints no unified-logging lines.
    reg.add("sun/management/ClassLoadingImpl", "setVerboseClass", "(Z)V", |vm, _, a| {
        vm.management.verbose_class = a[0] != 0;
        Ok(0)
    });
    reg.add("sun/management/MemoryImpl", "setVerboseGC", "(Z)V", |vm, _, a| {
        vm.management.verbose_gc = a[1] != 0;
        Ok(0)
    });
    reg.add(VMM, "getProcessId", "()I", |_, _, _| Ok(std::process::id() as u64));
    reg.add(VMM, "getVmArguments0", "()[Ljava/lang/String;", |vm, _, _| Ok(vm.new_string_array(&[])? as u64));
    reg.add(VMM, "getStartupTime", "()J", |vm, _, _| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        Ok(now.saturating_sub(vm.elapsed()).as_millis() as u64)
    });
    reg.add(VMM, "getUptime0", "()J", |vm, _, _| Ok(vm.elapsed().as_millis() as u64));
    reg.add(VMM, "getAvailableProcessors", "()I", |_, _, _| {
        Ok(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as u64)
    });
    reg.add(VMM, "getTotalCompileTime", "()J", |_, _, _| Ok(0));
    reg.add(VMM, "getTotalThreadCount", "()J", |vm, _, _| Ok(vm.threads.len() as u64));
    reg.add(VMM, "getLiveThreadCount", "()I", |vm, _, _| Ok(live_threads(vm, false)));
    reg.add(VMM, "getPeakThreadCount", "()I", |vm, _, _| Ok(peak_threads(vm)));
    reg.add(VMM, "getDaemonThreadCount", "()I", |vm, _, _| Ok(live_threads(vm, true)));
    for name in [
        "getSafepointCount",
        "getTotalSafepointTime",
        "getSafepointSyncTime",
        "getTotalApplicationNonStoppedTime",
        "getLoadedClassSize",
        "getUnloadedClassSize",
        "getClassLoadingTime",
        "getMethodDataSize",
        "getClassInitializationTime",
        "getClassVerificationTime",
    ] {
        reg.add(VMM, name, "()J", |_, _, _| Ok(0));
    }
    reg.add(VMM, "getInitializedClassCount", "()J", |vm, _, _| {
        let done =
            vm.classes.iter().filter(|c| matches!(c.init.get(), crate::vm::class::InitState::Initialized)).count();
        Ok(done as u64)
    });
}

/// jdk.management's `DiagnosticCommandImpl` (the `com.sun.management:type=DiagnosticCommand` MBean
/// the platform MBean server registers): the VM implements no diagnostic command (`jcmd`'s
/// `VM.version`, `GC.run`, ...), so the MBean has no operations and running one fails as an unknown
/// command does in HotSpot.
pub(super) fn register_diagnostics<T: Tracker>(reg: &mut Registry<T>) {
    const DCMD: &str = "com/sun/management/internal/DiagnosticCommandImpl";
    reg.add(DCMD, "setNotificationEnabled", "(Z)V", |_, _, _| Ok(0));
    reg.add(DCMD, "getDiagnosticCommands", "()[Ljava/lang/String;", |vm, _, _| Ok(vm.new_string_array(&[])? as u64));
    reg.add(
        DCMD,
        "getDiagnosticCommandInfo",
        "([Ljava/lang/String;)[Lcom/sun/management/internal/DiagnosticCommandInfo;",
        |vm, t, a| {
            let n = match &vm.heap.get(a[1] as Ref).data {
                ObjData::Refs(names) if a[1] != 0 => names.len(),
                _ => return Err(vm.throw_npe(t)),
            };
            if n > 0 {
                return Err(vm.throw_new(t, "java/lang/IllegalArgumentException", Some("Unknown diagnostic command")));
            }
            let c = vm.load_or_throw(t, "[Lcom/sun/management/internal/DiagnosticCommandInfo;")?;
            Ok(vm.heap.alloc(c, ObjData::Refs(Box::new([]))) as u64)
        },
    );
    reg.add(DCMD, "executeDiagnosticCommand", "(Ljava/lang/String;)Ljava/lang/String;", |vm, t, a| {
        let command = if a[1] == 0 { String::new() } else { vm.rust_string(a[1] as Ref) };
        let name = command.split_whitespace().next().unwrap_or("").to_string();
        let msg = format!("Unknown diagnostic command '{name}'");
        Err(vm.throw_new(t, "java/lang/IllegalArgumentException", Some(&msg)))
    });
}

/// Threads started and not yet ended (daemons only, if asked).
fn live_threads<T: Tracker>(vm: &Vm<T>, daemons_only: bool) -> u64 {
    vm.threads
        .iter()
        .filter(|s| !matches!(s.state, State::Terminated | State::Idle) && (!daemons_only || s.daemon))
        .count() as u64
}

/// The most threads alive at once since the start or the last reset.
fn peak_threads<T: Tracker>(vm: &mut Vm<T>) -> u64 {
    vm.management.peak_threads = vm.management.peak_threads.max(live_threads(vm, false));
    vm.management.peak_threads
}

impl<T: Tracker> Vm<T> {
    /// A thread started: the peak thread count may grow.
    pub(crate) fn note_thread_started(&mut self) {
        peak_threads(self);
    }
}

/// `com.sun.management.internal.OperatingSystemImpl` (jdk.management) on Linux: memory and
/// swap from /proc/meminfo, the process from /proc/self, as HotSpot's library reads them. CPU
/// loads are reported as 0 (no samples are kept).
pub(super) fn register_os<T: Tracker>(reg: &mut Registry<T>) {
    // No Flight Recorder: its natives fail to bind, as in a HotSpot built without JFR, so
    // `FlightRecorder.isAvailable()` is false and libraries that ask (Netty) go on without it.
    reg.add("jdk/jfr/internal/JVM", "registerNatives", "()V", |vm, t, _| {
        let msg = "'void jdk.jfr.internal.JVM.registerNatives()' (the Bloatlens VM has no Flight Recorder)";
        Err(vm.throw_new(t, "java/lang/UnsatisfiedLinkError", Some(msg)))
    });
    const OS: &str = "com/sun/management/internal/OperatingSystemImpl";
    reg.add(OS, "initialize0", "()V", |_, _, _| Ok(0));
    // OperatingSystemMXBean.getSystemLoadAverage: the host's load averages (1, 5, 15 minutes),
    // as many as the array takes, and how many were given (-1 when the host gives none).
    reg.add("jdk/internal/misc/Unsafe", "getLoadAverage0", "([DI)I", |vm, _, a| {
        let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        let loads: Vec<f64> = text.split_whitespace().take(3).filter_map(|v| v.parse().ok()).collect();
        if loads.is_empty() {
            return Ok(-1i32 as u32 as u64);
        }
        let n = loads.len().min(a[2] as i32 as usize);
        if let crate::vm::heap::ObjData::Doubles(out) = &mut vm.heap.get_mut(a[1] as crate::vm::heap::Ref).data {
            for (slot, load) in out.iter_mut().zip(&loads[..n]) {
                *slot = *load;
            }
        }
        Ok(n as u64)
    });
    reg.add(OS, "getCommittedVirtualMemorySize0", "()J", |_, _, _| {
        let pages = std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0);
        Ok(pages * 4096)
    });
    reg.add(OS, "getTotalMemorySize0", "()J", |_, _, _| Ok(meminfo("MemTotal:")));
    reg.add(OS, "getFreeMemorySize0", "()J", |_, _, _| Ok(meminfo("MemFree:")));
    reg.add(OS, "getTotalSwapSpaceSize0", "()J", |_, _, _| Ok(meminfo("SwapTotal:")));
    reg.add(OS, "getFreeSwapSpaceSize0", "()J", |_, _, _| Ok(meminfo("SwapFree:")));
    reg.add(OS, "getOpenFileDescriptorCount0", "()J", |_, _, _| {
        Ok(std::fs::read_dir("/proc/self/fd").map(|d| d.count() as u64).unwrap_or(0))
    });
    reg.add(OS, "getMaxFileDescriptorCount0", "()J", |_, _, _| {
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
        let soft = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .and_then(|l| l["Max open files".len()..].split_whitespace().next()?.parse::<u64>().ok());
        Ok(soft.unwrap_or(1024))
    });
    reg.add(OS, "getProcessCpuTime0", "()J", |_, _, _| {
        // utime and stime (fields 14 and 15 of /proc/self/stat, after the parenthesised name), in
        // clock ticks of 10 ms.
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let fields: Vec<u64> = after.split_whitespace().map(|f| f.parse().unwrap_or(0)).collect();
        let ticks = fields.get(11).copied().unwrap_or(0) + fields.get(12).copied().unwrap_or(0);
        Ok(ticks * 10_000_000)
    });
    reg.add(OS, "getProcessCpuLoad0", "()D", |_, _, _| Ok(0f64.to_bits()));
    reg.add(OS, "getCpuLoad0", "()D", |_, _, _| Ok(0f64.to_bits()));
    reg.add(OS, "getSingleCpuLoad0", "(I)D", |_, _, _| Ok(0f64.to_bits()));
    reg.add(OS, "getHostConfiguredCpuCount0", "()I", |_, _, _| {
        Ok(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as u64)
    });
    reg.add(OS, "getHostOnlineCpuCount0", "()I", |_, _, _| {
        Ok(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as u64)
    });
    reg.add(OS, "getHostTotalCpuTicks0", "()J", |_, _, _| {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let cpu = stat.lines().next().unwrap_or("");
        Ok(cpu.split_whitespace().skip(1).filter_map(|f| f.parse::<u64>().ok()).sum())
    });
}

/// `jdk.internal.platform.CgroupMetrics`: container support on, as HotSpot's default on Linux
/// (the JDK then reads the cgroup files itself); the host's memory and swap totals.
pub(super) fn register_cgroups<T: Tracker>(reg: &mut Registry<T>) {
    const CGROUP: &str = "jdk/internal/platform/CgroupMetrics";
    reg.add(CGROUP, "isUseContainerSupport", "()Z", |_, _, _| Ok(1));
    // HotSpot's OSContainer::is_containerized: whether /proc/self/cgroup puts it in a limited cgroup.
    reg.add(CGROUP, "isContainerized0", "()Z", |_, _, _| Ok(std::path::Path::new("/.dockerenv").exists() as u64));
    reg.add(CGROUP, "getTotalMemorySize0", "()J", |_, _, _| Ok(meminfo("MemTotal:")));
    reg.add(CGROUP, "getTotalSwapSize0", "()J", |_, _, _| Ok(meminfo("SwapTotal:")));
}

/// A /proc/meminfo line's value, in bytes.
pub(super) fn meminfo(key: &str) -> u64 {
    let info = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kb = info.lines().find_map(|l| l.strip_prefix(key)?.split_whitespace().next()?.parse::<u64>().ok());
    kb.unwrap_or(0) * 1024
}
