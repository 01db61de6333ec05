//! `com.sun.management.internal.Flag` (jdk.management): HotSpot's flags as
//! `HotSpotDiagnosticMXBean.getVMOption`, `setVMOption` and `getDiagnosticOptions` see them (HotSpot's
//! `jmm_GetVMGlobals` and `jmm_SetVMGlobal`). Libraries read them to size things as HotSpot lays
//! objects out (Lucene's `RamUsageEstimator`: `UseCompressedOops`, `ObjectAlignmentInBytes`) or to
//! learn the collector in use.
//!
//! The VM answers as HotSpot run with `-XX:+UseSerialGC` (as its memory pools present it): the
//! flags are JDK 17's or JDK 25's table as that HotSpot gives it to java.management — the unlocked
//! (product and manageable) flags in HotSpot's order, with their types, origins and default values
//! (`hotspot_flags_*.tsv`, made by `scripts/hotspot-flags/generate.sh`). The values HotSpot computes
//! for the machine (ergonomic ones) are computed here the same way, for this machine and the VM's own
//! heap: `MaxHeapSize` is the VM's heap cap (what `Runtime.maxMemory` and the memory pools report),
//! the initial heap a 64th of physical memory, `CICompilerCount` from the processor count. Other
//! CPU-dependent defaults (`UseAVX` and the like) are those of the machine the tables were made on.
//! Manageable flags can be set, with HotSpot's range and constraint checks and messages; setting one
//! changes what the VM does only for `ShowCodeDetailsInExceptionMessages` (helpful
//! NullPointerException messages); the heap-dump flags are kept but no dump is ever written.

use super::Registry;
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{Fault, JThread, Tracker, Vm, VmError, VmResult};
use std::collections::HashMap;
use std::sync::OnceLock;

const FLAG: &str = "com/sun/management/internal/Flag";
const FLAG_CTOR: &str = "(Ljava/lang/String;Ljava/lang/Object;ZZLcom/sun/management/VMOption$Origin;)V";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Type {
    Boolean,
    Long,
    Double,
    Str,
}

/// One flag of HotSpot's table.
struct Def {
    name: &'static str,
    ty: Type,
    /// Manageable: settable through `setVMOption` (HotSpot's `is_writeable`, and `is_external`).
    writeable: bool,
    /// `VMOption.Origin` constant name.
    origin: &'static str,
    value: &'static str,
}

struct Table {
    /// `getInternalFlagCount`: every flag HotSpot has, locked and development ones included.
    internal_count: i32,
    flags: Vec<Def>,
    by_name: HashMap<&'static str, usize>,
}

/// A flag's value as java.management receives it.
#[derive(Clone, Debug, PartialEq)]
pub enum FlagValue {
    Bool(bool),
    Long(i64),
    Double(f64),
    Str(String),
}

impl FlagValue {
    fn of(ty: Type, text: &str) -> FlagValue {
        match ty {
            Type::Boolean => FlagValue::Bool(text == "true"),
            Type::Long => FlagValue::Long(text.parse().unwrap_or(0)),
            Type::Double => FlagValue::Double(text.parse().unwrap_or(0.0)),
            Type::Str => FlagValue::Str(text.to_string()),
        }
    }
}

fn parse(text: &'static str) -> Table {
    let mut lines = text.lines();
    let internal_count = lines
        .next()
        .and_then(|l| l.strip_prefix("count\t"))
        .and_then(|n| n.parse().ok())
        .expect("a flag table starts with its count");
    let mut flags = Vec::new();
    for line in lines {
        let mut cols = line.splitn(5, '\t');
        let (Some(name), Some(ty), Some(writeable), Some(origin)) =
            (cols.next(), cols.next(), cols.next(), cols.next())
        else {
            continue;
        };
        let ty = match ty {
            "Boolean" => Type::Boolean,
            "Long" => Type::Long,
            "Double" => Type::Double,
            _ => Type::Str,
        };
        flags.push(Def { name, ty, writeable: writeable == "true", origin, value: cols.next().unwrap_or("") });
    }
    let by_name = flags.iter().enumerate().map(|(i, d)| (d.name, i)).collect();
    Table { internal_count, flags, by_name }
}

/// The table of the JDK in use: JDK 17's up to JDK 20, JDK 25's from 21 on.
fn table<T: Tracker>(vm: &Vm<T>) -> &'static Table {
    static JDK17: OnceLock<Table> = OnceLock::new();
    static JDK25: OnceLock<Table> = OnceLock::new();
    if super::management::feature(vm) >= 21 {
        JDK25.get_or_init(|| parse(include_str!("hotspot_flags_25.tsv")))
    } else {
        JDK17.get_or_init(|| parse(include_str!("hotspot_flags_17.tsv")))
    }
}

const MB: i64 = 1 << 20;

/// What HotSpot computes for this machine and this heap, where the table's value came from the
/// machine it was made on.
fn ergonomic<T: Tracker>(vm: &Vm<T>, name: &str) -> Option<FlagValue> {
    let max_heap = vm.opts.limits.max_heap_bytes as i64;
    // HotSpot's initial heap: InitialRAMPercentage (1.5625%) of physical memory, in 2 MiB steps.
    let initial = || {
        let physical = super::management::meminfo("MemTotal:") as i64;
        let initial = ((physical / 64 + 2 * MB - 1) / (2 * MB)).max(4) * 2 * MB;
        initial.min(max_heap)
    };
    const GEN: i64 = 64 << 10;
    Some(FlagValue::Long(match name {
        "MaxHeapSize" | "SoftMaxHeapSize" => max_heap,
        "InitialHeapSize" => initial(),
        "MinHeapSize" => (8 * MB).min(initial()),
        "NewSize" => initial() / 3 / GEN * GEN,
        "OldSize" => initial() - initial() / 3 / GEN * GEN,
        // As the memory pools split the heap: the young generation a third of it.
        "MaxNewSize" => max_heap / 3 / GEN * GEN,
        "CICompilerCount" => {
            let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as i64;
            let log = 63 - cpus.max(1).leading_zeros() as i64;
            let loglog = 63 - log.max(1).leading_zeros() as i64;
            (log * loglog * 3 / 2).max(2)
        }
        // Compressed oops need a heap below 32 GiB.
        "UseCompressedOops" | "UseCompressedClassPointers" => return Some(FlagValue::Bool(max_heap < 32 << 30)),
        _ => return None,
    }))
}

/// A flag's value and origin now: set by management, computed for this machine, or the table's.
fn current<T: Tracker>(vm: &Vm<T>, def: &Def) -> (FlagValue, &'static str) {
    if let Some(v) = vm.management.flags.get(def.name) {
        return (v.clone(), "MANAGEMENT");
    }
    if def.origin == "ERGONOMIC" {
        if let Some(v) = ergonomic(vm, def.name) {
            return (v, def.origin);
        }
    }
    (FlagValue::of(def.ty, def.value), def.origin)
}

/// `ShowCodeDetailsInExceptionMessages` (manageable): whether NullPointerExceptions get HotSpot's
/// helpful messages.
pub(crate) fn show_code_details<T: Tracker>(vm: &Vm<T>) -> bool {
    !matches!(vm.management.flags.get("ShowCodeDetailsInExceptionMessages"), Some(FlagValue::Bool(false)))
}

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    reg.add(FLAG, "initialize", "()V", |_, _, _| Ok(0));
    reg.add(FLAG, "getInternalFlagCount", "()I", |vm, _, _| Ok(table(vm).internal_count as u32 as u64));
    reg.add(FLAG, "getAllFlagNames", "()[Ljava/lang/String;", |vm, _, _| {
        let names: Vec<Option<String>> = table(vm).flags.iter().map(|d| Some(d.name.to_string())).collect();
        Ok(vm.new_string_array(&names)? as u64)
    });
    reg.add(FLAG, "getFlags", "([Ljava/lang/String;[Lcom/sun/management/internal/Flag;I)I", |vm, t, a| {
        let (names, out, count) = (a[0] as Ref, a[1] as Ref, a[2] as i32);
        if out == 0 {
            return Err(vm.throw_npe(t));
        }
        if count <= 0 {
            return Err(vm.throw_new(t, "java/lang/IllegalArgumentException", None));
        }
        let table = table(vm);
        let wanted: Vec<usize> = if names == 0 {
            (0..table.flags.len()).take(count as usize).collect()
        } else {
            let refs = match &vm.heap.get(names).data {
                ObjData::Refs(r) => r.to_vec(),
                _ => Vec::new(),
            };
            let mut found = Vec::new();
            for &name in refs.iter().take(count as usize) {
                if name == 0 {
                    return Err(vm.throw_npe(t));
                }
                let name = vm.rust_string(name);
                found.extend(table.by_name.get(name.as_str()).copied());
            }
            found
        };
        let capacity = match &vm.heap.get(out).data {
            ObjData::Refs(r) => r.len(),
            _ => 0,
        };
        let mut filled = 0;
        for i in wanted.into_iter().take(capacity) {
            let flag = new_flag(vm, t, &table.flags[i])?;
            if let ObjData::Refs(items) = &mut vm.heap.get_mut(out).data {
                items[filled] = flag;
            }
            filled += 1;
        }
        Ok(filled as u64)
    });
    reg.add(FLAG, "setLongValue", "(Ljava/lang/String;J)V", |vm, t, a| {
        set(vm, t, a[0] as Ref, FlagValue::Long(a[1] as i64))
    });
    reg.add(FLAG, "setDoubleValue", "(Ljava/lang/String;D)V", |vm, t, a| {
        set(vm, t, a[0] as Ref, FlagValue::Double(f64::from_bits(a[1])))
    });
    reg.add(FLAG, "setBooleanValue", "(Ljava/lang/String;Z)V", |vm, t, a| {
        set(vm, t, a[0] as Ref, FlagValue::Bool(a[1] != 0))
    });
    reg.add(FLAG, "setStringValue", "(Ljava/lang/String;Ljava/lang/String;)V", |vm, t, a| {
        let value = if a[1] == 0 { String::new() } else { vm.rust_string(a[1] as Ref) };
        set(vm, t, a[0] as Ref, FlagValue::Str(value))
    });
}

/// A `Flag` as HotSpot's native makes it: the value boxed anew (`new Boolean`, `new Long`,
/// `new Double`, or the string), the origin one of `VMOption.Origin`'s constants.
fn new_flag<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, def: &Def) -> VmResult<Ref> {
    let (value, origin) = current(vm, def);
    let mark = vm.pinned.len();
    let result = new_flag_pinned(vm, t, def, value, origin);
    vm.pinned.truncate(mark);
    result
}

fn new_flag_pinned<T: Tracker>(
    vm: &mut Vm<T>,
    t: &mut JThread,
    def: &Def,
    value: FlagValue,
    origin: &str,
) -> VmResult<Ref> {
    let boxed = match value {
        FlagValue::Bool(z) => construct(vm, t, "java/lang/Boolean", "(Z)V", &[z as u64])?,
        FlagValue::Long(j) => construct(vm, t, "java/lang/Long", "(J)V", &[j as u64, 0])?,
        FlagValue::Double(d) => construct(vm, t, "java/lang/Double", "(D)V", &[d.to_bits(), 0])?,
        FlagValue::Str(s) => vm.new_string(&s),
    };
    vm.pinned.push(boxed);
    let origins = vm.load_or_throw(t, "com/sun/management/VMOption$Origin")?;
    vm.initialize(t, origins)?;
    let origin = vm.classes[origins as usize]
        .field(origin, None)
        .filter(|f| f.is_static())
        .map(|f| vm.statics[f.slot as usize])
        .unwrap_or(0);
    let name = vm.new_string(def.name);
    vm.pinned.push(name);
    let args = [name as u64, boxed as u64, def.writeable as u64, def.writeable as u64, origin];
    construct(vm, t, FLAG, FLAG_CTOR, &args)
}

/// `new C(args)` through the constructor of that descriptor; the object is left pinned.
fn construct<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, class: &str, desc: &str, args: &[u64]) -> VmResult<Ref> {
    let c = vm.load_or_throw(t, class)?;
    vm.initialize(t, c)?;
    let ctor = vm
        .find_declared_method(c, "<init>", desc)
        .ok_or_else(|| Fault::Fatal(VmError::Internal(format!("{class} has no constructor {desc}"))))?;
    let obj = vm.alloc_instance(c);
    vm.pinned.push(obj);
    let mut full = Vec::with_capacity(args.len() + 1);
    full.push(obj as u64);
    full.extend_from_slice(args);
    vm.invoke(t, ctor, &full)?;
    Ok(obj)
}

/// `jmm_SetVMGlobal`: a manageable flag takes the value (origin MANAGEMENT) if it is within the
/// flag's range and satisfies its constraint; otherwise IllegalArgumentException with HotSpot's message.
fn set<T: Tracker>(vm: &mut Vm<T>, t: &mut JThread, name: Ref, value: FlagValue) -> VmResult<u64> {
    if name == 0 {
        return Err(vm.throw_new(t, "java/lang/NullPointerException", Some("The flag name cannot be null.")));
    }
    let name = vm.rust_string(name);
    let table = table(vm);
    let Some(&i) = table.by_name.get(name.as_str()) else {
        let msg = "Error: there is no flag with the given name.";
        return Err(vm.throw_new(t, "java/lang/IllegalArgumentException", Some(msg)));
    };
    let def = &table.flags[i];
    if !def.writeable {
        let msg = format!("{name} error: flag is not writeable.");
        return Err(vm.throw_new(t, "java/lang/IllegalArgumentException", Some(&msg)));
    }
    let long = |vm: &Vm<T>, n: &str| match table.by_name.get(n).map(|&j| current(vm, &table.flags[j]).0) {
        Some(FlagValue::Long(v)) => v,
        _ => 0,
    };
    let problem = match (name.as_str(), &value) {
        ("MinHeapFreeRatio" | "MaxHeapFreeRatio", FlagValue::Long(v)) if !(0..=100).contains(v) => {
            Some("must have value in range [0...100]")
        }
        ("MinHeapFreeRatio", FlagValue::Long(v)) if *v > long(vm, "MaxHeapFreeRatio") => {
            Some("value violates its flag's constraint.")
        }
        ("MaxHeapFreeRatio", FlagValue::Long(v)) if *v < long(vm, "MinHeapFreeRatio") => {
            Some("value violates its flag's constraint.")
        }
        ("HeapDumpGzipLevel", FlagValue::Long(v)) if !(0..=9).contains(v) => Some("must have value in range [0...9]"),
        ("SoftMaxHeapSize", FlagValue::Long(v)) if (*v as u64) > vm.opts.limits.max_heap_bytes => {
            Some("value violates its flag's constraint.")
        }
        _ => None,
    };
    if let Some(problem) = problem {
        let msg = format!("{name} error: {problem}");
        return Err(vm.throw_new(t, "java/lang/IllegalArgumentException", Some(&msg)));
    }
    vm.management.flags.insert(def.name, value);
    Ok(0)
}
