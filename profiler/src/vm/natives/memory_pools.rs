//! java.management's memory pools and managers (`sun.management.MemoryImpl`, `MemoryPoolImpl`,
//! `MemoryManagerImpl`, `GarbageCollectorImpl`, jdk.management's `GarbageCollectorExtImpl` and
//! `GcInfoBuilder`), as HotSpot with `-XX:+UseSerialGC` presents them: three code heaps, Metaspace
//! and the compressed class space under two non-collecting managers, and the young and old
//! generations under the `Copy` and `MarkSweepCompact` collectors. Like HotSpot, the VM creates
//! each pool and manager once, through the same factory methods
//! (`ManagementFactoryHelper.createMemoryPool`/`createMemoryManager`,
//! `GarbageCollectorExtImpl.createGarbageCollector`), and hands out those instances ever after.
//!
//! The figures of the heap pools come from the VM's heap: it is one mark-and-sweep space of
//! `--max-heap-mb`, shown split as SerialGC splits it (the young generation a third, its eden
//! eight tenths of that and each survivor space a tenth). What was allocated since the last
//! collection is in Eden; what survived a collection is in the Tenured generation; survivor spaces
//! are empty (nothing is copied). Every collection is a whole-heap mark-and-sweep, so it counts
//! for `MarkSweepCompact`. The VM compiles nothing: the code heaps hold only HotSpot's start-up
//! figure of stubs and interpreter; the metaspace figures are estimated from the classes and
//! methods loaded. No usage threshold is ever crossed (there is no low-memory detector), so the
//! sensors Java registers are kept by Java alone.

use super::Registry;
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{Fault, JThread, Tracker, Vm, VmError, VmResult};

/// The pools and managers once created, as Java objects (also GC roots, in `extra_roots`).
#[derive(Default)]
pub struct MemoryBeans {
    /// By `Pool` index.
    pools: Vec<Ref>,
    /// By `Manager` index.
    managers: Vec<Ref>,
    /// Peak `used` seen per pool since the start or `resetPeakUsage`.
    peaks: [u64; POOLS.len()],
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pool {
    NonNMethods,
    Profiled,
    NonProfiled,
    Metaspace,
    CompressedClass,
    Eden,
    Survivor,
    Tenured,
}

struct PoolInfo {
    pool: Pool,
    name: &'static str,
    heap: bool,
    /// Whether a usage threshold, and a collection usage threshold, can be set.
    usage_threshold: bool,
    collection_threshold: bool,
}

/// HotSpot's order (MemoryService's pool list) on JDK 17; from JDK 25 on the profiled code heap
/// comes first.
const POOLS: [PoolInfo; 8] = [
    pool(Pool::NonNMethods, "CodeHeap 'non-nmethods'", false, true, false),
    pool(Pool::Profiled, "CodeHeap 'profiled nmethods'", false, true, false),
    pool(Pool::NonProfiled, "CodeHeap 'non-profiled nmethods'", false, true, false),
    pool(Pool::Metaspace, "Metaspace", false, true, false),
    pool(Pool::CompressedClass, "Compressed Class Space", false, true, false),
    pool(Pool::Eden, "Eden Space", true, false, true),
    pool(Pool::Survivor, "Survivor Space", true, false, true),
    pool(Pool::Tenured, "Tenured Gen", true, true, true),
];

const fn pool(pool: Pool, name: &'static str, heap: bool, usage: bool, collection: bool) -> PoolInfo {
    PoolInfo { pool, name, heap, usage_threshold: usage, collection_threshold: collection }
}

struct ManagerInfo {
    name: &'static str,
    /// A garbage collector (`GarbageCollectorMXBean`) rather than a plain memory manager.
    collector: bool,
    pools: &'static [Pool],
}

const CODE_CACHE: usize = 0;
const MARK_SWEEP: usize = 3;

const MANAGERS: [ManagerInfo; 4] = [
    ManagerInfo {
        name: "CodeCacheManager",
        collector: false,
        pools: &[Pool::NonNMethods, Pool::Profiled, Pool::NonProfiled],
    },
    ManagerInfo { name: "Metaspace Manager", collector: false, pools: &[Pool::Metaspace, Pool::CompressedClass] },
    ManagerInfo { name: "Copy", collector: true, pools: &[Pool::Eden, Pool::Survivor] },
    ManagerInfo { name: "MarkSweepCompact", collector: true, pools: &[Pool::Eden, Pool::Survivor, Pool::Tenured] },
];

/// `java.lang.management.MemoryUsage`'s four figures.
#[derive(Clone, Copy)]
struct Usage {
    init: i64,
    used: u64,
    committed: u64,
    max: i64,
}

/// HotSpot's code heaps with the default 240 MiB reserved code cache: 2496 KiB committed each.
const CODE_HEAP_COMMITTED: u64 = 2_555_904;

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    const MEM: &str = "sun/management/MemoryImpl";
    const POOL: &str = "sun/management/MemoryPoolImpl";
    reg.add(MEM, "getMemoryPools0", "()[Ljava/lang/management/MemoryPoolMXBean;", |vm, t, _| {
        create_beans(vm, t)?;
        let order = pool_order(vm);
        let refs: Vec<Ref> = order.iter().map(|&i| vm.memory_beans.pools[i]).collect();
        new_ref_array(vm, t, "[Ljava/lang/management/MemoryPoolMXBean;", refs)
    });
    reg.add(MEM, "getMemoryManagers0", "()[Ljava/lang/management/MemoryManagerMXBean;", |vm, t, _| {
        create_beans(vm, t)?;
        let refs = vm.memory_beans.managers.clone();
        new_ref_array(vm, t, "[Ljava/lang/management/MemoryManagerMXBean;", refs)
    });
    reg.add(MEM, "getMemoryUsage0", "(Z)Ljava/lang/management/MemoryUsage;", |vm, t, a| {
        let usage = if a[1] != 0 { heap_usage(vm) } else { non_heap_usage(vm) };
        new_usage(vm, t, usage)
    });

    reg.add(POOL, "getUsage0", "()Ljava/lang/management/MemoryUsage;", |vm, t, a| {
        let Some(p) = pool_of(vm, a[0] as Ref) else { return Ok(0) };
        let usage = pool_usage(vm, POOLS[p].pool);
        new_usage(vm, t, usage)
    });
    reg.add(POOL, "getPeakUsage0", "()Ljava/lang/management/MemoryUsage;", |vm, t, a| {
        let Some(p) = pool_of(vm, a[0] as Ref) else { return Ok(0) };
        let mut usage = pool_usage(vm, POOLS[p].pool);
        usage.used = vm.memory_beans.peaks[p].max(usage.used).min(usage.committed);
        new_usage(vm, t, usage)
    });
    reg.add(POOL, "getCollectionUsage0", "()Ljava/lang/management/MemoryUsage;", |vm, t, a| {
        let Some(p) = pool_of(vm, a[0] as Ref) else { return Ok(0) };
        match collection_usage(vm, POOLS[p].pool) {
            Some(usage) => new_usage(vm, t, usage),
            None => Ok(0),
        }
    });
    reg.add(POOL, "resetPeakUsage0", "()V", |vm, _, a| {
        if let Some(p) = pool_of(vm, a[0] as Ref) {
            vm.memory_beans.peaks[p] = pool_usage(vm, POOLS[p].pool).used;
        }
        Ok(0)
    });
    reg.add(POOL, "setUsageThreshold0", "(JJ)V", |_, _, _| Ok(0));
    reg.add(POOL, "setCollectionThreshold0", "(JJ)V", |_, _, _| Ok(0));
    reg.add(POOL, "setPoolUsageSensor", "(Lsun/management/Sensor;)V", |_, _, _| Ok(0));
    reg.add(POOL, "setPoolCollectionSensor", "(Lsun/management/Sensor;)V", |_, _, _| Ok(0));
    reg.add(POOL, "getMemoryManagers0", "()[Ljava/lang/management/MemoryManagerMXBean;", |vm, t, a| {
        let Some(p) = pool_of(vm, a[0] as Ref) else { return Ok(0) };
        let pool = POOLS[p].pool;
        let refs: Vec<Ref> = MANAGERS
            .iter()
            .enumerate()
            .filter(|(_, m)| m.pools.contains(&pool))
            .map(|(i, _)| vm.memory_beans.managers[i])
            .collect();
        new_ref_array(vm, t, "[Ljava/lang/management/MemoryManagerMXBean;", refs)
    });

    reg.add(
        "sun/management/MemoryManagerImpl",
        "getMemoryPools0",
        "()[Ljava/lang/management/MemoryPoolMXBean;",
        |vm, t, a| {
            let this = a[0] as Ref;
            let Some(m) = vm.memory_beans.managers.iter().position(|&r| r == this) else { return Ok(0) };
            let mut pools: Vec<Pool> = MANAGERS[m].pools.to_vec();
            if m == CODE_CACHE && code_heaps_profiled_first(vm) {
                pools.swap(0, 1);
            }
            let refs: Vec<Ref> = pools
                .iter()
                .map(|p| vm.memory_beans.pools[POOLS.iter().position(|i| i.pool == *p).unwrap_or(0)])
                .collect();
            new_ref_array(vm, t, "[Ljava/lang/management/MemoryPoolMXBean;", refs)
        },
    );
    const GC: &str = "sun/management/GarbageCollectorImpl";
    reg.add(GC, "getCollectionCount", "()J", |vm, _, a| {
        let this = a[0] as Ref;
        let m = vm.memory_beans.managers.iter().position(|&r| r == this);
        Ok(if m == Some(MARK_SWEEP) { vm.heap.collections } else { 0 })
    });
    // Collections are not timed.
    reg.add(GC, "getCollectionTime", "()J", |_, _, _| Ok(0));

    const EXT: &str = "com/sun/management/internal/GarbageCollectorExtImpl";
    reg.add(EXT, "setNotificationEnabled", "(Lcom/sun/management/GarbageCollectorMXBean;Z)V", |_, _, _| Ok(0));
    const BUILDER: &str = "com/sun/management/internal/GcInfoBuilder";
    // HotSpot's one GC-specific attribute: the number of GC threads (1 for SerialGC).
    reg.add(BUILDER, "getNumGcExtAttributes", "(Ljava/lang/management/GarbageCollectorMXBean;)I", |_, _, _| Ok(1));
    reg.add(
        BUILDER,
        "fillGcAttributeInfo",
        "(Ljava/lang/management/GarbageCollectorMXBean;I[Ljava/lang/String;[C[Ljava/lang/String;)V",
        |vm, _, a| {
            let (count, names, types, descriptions) = (a[2] as i32, a[3] as Ref, a[4] as Ref, a[5] as Ref);
            if count < 1 {
                return Ok(0);
            }
            let name = vm.new_string("GcThreadCount");
            let description = vm.new_string("Number of GC threads");
            for (array, value) in [(names, name), (descriptions, description)] {
                if let ObjData::Refs(items) = &mut vm.heap.get_mut(array).data {
                    if let Some(slot) = items.first_mut() {
                        *slot = value;
                    }
                }
            }
            if let ObjData::Chars(items) = &mut vm.heap.get_mut(types).data {
                if let Some(slot) = items.first_mut() {
                    *slot = 'I' as u16;
                }
            }
            Ok(0)
        },
    );
    // The VM keeps no record of each collection (times, usage before and after): as HotSpot before
    // the first collection, there is no last GC information.
    reg.add(
        BUILDER,
        "getLastGcInfo0",
        "(Ljava/lang/management/GarbageCollectorMXBean;I[Ljava/lang/Object;[C[Ljava/lang/management/MemoryUsage;[Ljava/lang/management/MemoryUsage;)Lcom/sun/management/GcInfo;",
        |_, _, _| Ok(0),
    );
}

/// Creates every pool and manager on first use, through the JDK's factory methods.
fn create_beans<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread) -> VmResult<()> {
    if !vm.memory_beans.pools.is_empty() {
        return Ok(());
    }
    let helper = class(vm, t, "sun/management/ManagementFactoryHelper")?;
    let create_pool =
        method(vm, helper, "createMemoryPool", "(Ljava/lang/String;ZJJ)Ljava/lang/management/MemoryPoolMXBean;")?;
    let create_manager =
        method(vm, helper, "createMemoryManager", "(Ljava/lang/String;)Ljava/lang/management/MemoryManagerMXBean;")?;
    // Collectors are jdk.management's extended ones when that module is there, as in HotSpot.
    const GC_DESC: &str = "(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/management/GarbageCollectorMXBean;";
    let ext = match vm.load_class("com/sun/management/internal/GarbageCollectorExtImpl") {
        Ok(c) => {
            vm.initialize(t, c)?;
            vm.find_declared_method(c, "createGarbageCollector", GC_DESC)
        }
        Err(_) => None,
    };
    let create_collector = match ext {
        Some(m) => m,
        None => method(vm, helper, "createGarbageCollector", GC_DESC)?,
    };
    let mut pools = Vec::with_capacity(POOLS.len());
    for info in &POOLS {
        let name = vm.new_string(info.name);
        // A threshold that can be set starts at 0; -1 says it cannot.
        let threshold = |supported: bool| if supported { 0 } else { -1i64 as u64 };
        let args = [
            name as u64,
            info.heap as u64,
            threshold(info.usage_threshold),
            0,
            threshold(info.collection_threshold),
            0,
        ];
        let pool = vm.invoke(t, create_pool, &args)? as Ref;
        vm.extra_roots.push(pool);
        pools.push(pool);
    }
    let mut managers = Vec::with_capacity(MANAGERS.len());
    for info in &MANAGERS {
        let name = vm.new_string(info.name);
        let manager = if info.collector {
            vm.invoke(t, create_collector, &[name as u64, 0])?
        } else {
            vm.invoke(t, create_manager, &[name as u64])?
        } as Ref;
        vm.extra_roots.push(manager);
        managers.push(manager);
    }
    vm.memory_beans.pools = pools;
    vm.memory_beans.managers = managers;
    Ok(())
}

fn class<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, name: &str) -> VmResult<crate::vm::class::ClassId> {
    let c = vm.load_or_throw(t, name)?;
    vm.initialize(t, c)?;
    Ok(c)
}

fn method<T: Tracker>(
    vm: &Vm<T>,
    class: crate::vm::class::ClassId,
    name: &str,
    desc: &str,
) -> VmResult<crate::vm::class::MethodId> {
    vm.find_declared_method(class, name, desc)
        .ok_or_else(|| Fault::Fatal(VmError::Internal(format!("the JDK has no management factory {name}{desc}"))))
}

/// The pools in the order `getMemoryPools0` gives them, as indexes into `POOLS`.
fn pool_order<T: Tracker>(vm: &Vm<T>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..POOLS.len()).collect();
    if code_heaps_profiled_first(vm) {
        order.swap(0, 1);
    }
    order
}

/// JDK 25's HotSpot lists the profiled code heap before the non-nmethods one (JDK 17's after).
fn code_heaps_profiled_first<T: Tracker>(vm: &Vm<T>) -> bool {
    feature(vm) >= 25
}

fn feature<T: Tracker>(vm: &Vm<T>) -> u32 {
    vm.opts.jdk.version().and_then(|v| v.split('.').next()?.parse::<u32>().ok()).unwrap_or(17)
}

fn pool_of<T: Tracker>(vm: &Vm<T>, this: Ref) -> Option<usize> {
    vm.memory_beans.pools.iter().position(|&r| r == this)
}

/// The heap's generations: (eden, one survivor space, tenured) maximum sizes; together they make
/// the heap's maximum, as HotSpot's `Runtime.maxMemory` counts one survivor space.
fn generations<T: Tracker>(vm: &Vm<T>) -> (u64, u64, u64) {
    const ALIGN: u64 = 64 << 10;
    let max = vm.opts.limits.max_heap_bytes;
    let young = max / 3 / ALIGN * ALIGN;
    let survivor = young / 10 / ALIGN * ALIGN;
    let eden = young - 2 * survivor;
    (eden, survivor, max - eden - survivor)
}

/// Bytes allocated since the last collection (Eden) and bytes that survived one (Tenured).
fn young_and_old<T: Tracker>(vm: &Vm<T>) -> (u64, u64) {
    let (eden_max, _, tenured_max) = generations(vm);
    let young = vm.heap.allocated_since_gc.min(vm.heap.live_bytes).min(eden_max);
    let old = (vm.heap.live_bytes - young).min(tenured_max);
    (young, old)
}

fn pool_usage<T: Tracker>(vm: &mut Vm<T>, pool: Pool) -> Usage {
    let (eden, survivor, tenured) = generations(vm);
    let (young, old) = young_and_old(vm);
    let heap = |size: u64, used: u64| Usage { init: size as i64, used, committed: size, max: size as i64 };
    let classes = vm.classes.len() as u64;
    let methods = vm.methods.len() as u64;
    let usage = match pool {
        Pool::Eden => heap(eden, young),
        Pool::Survivor => heap(survivor, 0),
        Pool::Tenured => heap(tenured, old),
        // HotSpot's start-up figures: stubs, adapters and the interpreter; no compiled methods.
        Pool::NonNMethods => code_heap(1_114_368, 5_828_608),
        Pool::Profiled => code_heap(0, 122_912_768),
        Pool::NonProfiled => code_heap(0, 122_916_864),
        // Metadata per class and per method, committed in 64 KiB granules.
        Pool::Metaspace => {
            let used = classes * 600 + methods * 80;
            Usage { init: 0, used, committed: granules(used), max: -1 }
        }
        Pool::CompressedClass => {
            let used = classes * 100;
            Usage { init: 0, used, committed: granules(used), max: 1 << 30 }
        }
    };
    if let Some(p) = POOLS.iter().position(|i| i.pool == pool) {
        vm.memory_beans.peaks[p] = vm.memory_beans.peaks[p].max(usage.used);
    }
    usage
}

fn code_heap(used: u64, max: i64) -> Usage {
    Usage { init: CODE_HEAP_COMMITTED as i64, used, committed: CODE_HEAP_COMMITTED, max }
}

fn granules(bytes: u64) -> u64 {
    bytes.div_ceil(64 << 10).max(1) * (64 << 10)
}

/// A collected pool's usage after the last collection; committed 0 before the first one, as
/// HotSpot reports it. None for pools no collector manages.
fn collection_usage<T: Tracker>(vm: &mut Vm<T>, pool: Pool) -> Option<Usage> {
    let (eden, survivor, tenured) = generations(vm);
    let collected = vm.heap.collections > 0;
    let (_, old) = young_and_old(vm);
    let after = |size: u64, used: u64| Usage {
        init: size as i64,
        used: if collected { used } else { 0 },
        committed: if collected { size } else { 0 },
        max: size as i64,
    };
    match pool {
        Pool::Eden => Some(after(eden, 0)),
        Pool::Survivor => Some(after(survivor, 0)),
        Pool::Tenured => Some(after(tenured, old)),
        _ => None,
    }
}

/// The heap as one: its maximum is `Runtime.maxMemory`, all of it committed from the start.
fn heap_usage<T: Tracker>(vm: &Vm<T>) -> Usage {
    let max = vm.opts.limits.max_heap_bytes;
    let used = vm.heap.live_bytes.min(max);
    Usage { init: max as i64, used, committed: max, max: max as i64 }
}

/// The non-heap pools added up, as HotSpot does (no maximum, as Metaspace has none).
fn non_heap_usage<T: Tracker>(vm: &mut Vm<T>) -> Usage {
    let mut total = Usage { init: 0, used: 0, committed: 0, max: -1 };
    for info in POOLS.iter().filter(|i| !i.heap) {
        let u = pool_usage(vm, info.pool);
        total.init += u.init.max(0);
        total.used += u.used;
        total.committed += u.committed;
    }
    total
}

/// A new `MemoryUsage` through its constructor (which checks the figures).
fn new_usage<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, u: Usage) -> VmResult<u64> {
    let c = class(vm, t, "java/lang/management/MemoryUsage")?;
    let ctor = method(vm, c, "<init>", "(JJJJ)V")?;
    let obj = vm.alloc_instance(c);
    vm.pinned.push(obj);
    let result = vm.invoke(t, ctor, &[obj as u64, u.init as u64, 0, u.used, 0, u.committed, 0, u.max as u64, 0]);
    vm.pinned.pop();
    result.map(|_| obj as u64)
}

fn new_ref_array<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, class: &str, refs: Vec<Ref>) -> VmResult<u64> {
    let c = vm.load_or_throw(t, class)?;
    Ok(vm.heap.alloc(c, ObjData::Refs(refs.into())) as u64)
}
