//! Core reflection: `Class.getDeclared{Methods,Fields,Constructors}0` build the JDK's own
//! `Method`/`Field`/`Constructor` objects (their `slot` holds our method id or field slot), and
//! the native accessors invoke through them. Field access goes through Unsafe (see memory.rs).
//! `ReflectionFactory.inflationThreshold()` is overridden to never be reached, so the JDK never
//! spins accessor classes: every reflective call comes back here.

use super::{Registry, VmResult};
use crate::classfile::descriptor::Kind;
use crate::classfile::{FieldInfo, MethodInfo};
use crate::vm::class::{ClassId, MethodId};
use crate::vm::heap::{ObjData, Ref};
use crate::vm::{Fault, JThread, Tracker, Vm, VmError};
use std::sync::Arc;

pub(super) fn register<T: Tracker>(reg: &mut Registry<T>) {
    const ARRAY: &str = "java/lang/reflect/Array";
    reg.add(ARRAY, "getLength", "(Ljava/lang/Object;)I", |vm, t, a| {
        let (_, len) = vm.reflect_array(t, a[0] as Ref, 0)?;
        Ok(len as u64)
    });
    reg.add(ARRAY, "get", "(Ljava/lang/Object;I)Ljava/lang/Object;", |vm, t, a| {
        let (kind, v) = vm.array_element(t, a[0] as Ref, a[1] as i32)?;
        Ok(vm.box_value(t, kind, v)? as u64)
    });
    reg.add(ARRAY, "set", "(Ljava/lang/Object;ILjava/lang/Object;)V", |vm, t, a| {
        let (arr, i, value) = (a[0] as Ref, a[1] as i32, a[2] as Ref);
        let (elem, _) = vm.reflect_array(t, arr, i)?;
        let v = if elem == Kind::Reference {
            let ac = vm.heap.get(arr).class;
            if let crate::vm::class::ClassKind::Array { component, .. } = vm.classes[ac as usize].kind {
                if value != 0 && !vm.is_subtype(vm.heap.get(value).class, component) {
                    return Err(vm.throw_new(
                        t,
                        "java/lang/IllegalArgumentException",
                        Some("array element type mismatch"),
                    ));
                }
            }
            value as u64
        } else {
            match vm.unbox(value, elem) {
                Some(v) => v,
                None => {
                    return Err(vm.throw_new(t, "java/lang/IllegalArgumentException", Some("argument type mismatch")))
                }
            }
        };
        vm.array_store_raw(arr, i as usize, v);
        Ok(0)
    });
    // HotSpot's Reflection::reflect_new_multi_array: at most 255 dimensions in all.
    reg.add(ARRAY, "multiNewArray", "(Ljava/lang/Class;[I)Ljava/lang/Object;", |vm, t, a| {
        let (mirror, dims) = (a[0] as Ref, a[1] as Ref);
        if mirror == 0 || dims == 0 {
            return Err(vm.throw_npe(t));
        }
        let counts: Vec<i32> = match &vm.heap.get(dims).data {
            ObjData::Ints(v) => v.to_vec(),
            _ => Vec::new(),
        };
        if counts.is_empty() || counts.len() > 255 {
            return Err(vm.throw_new(t, "java/lang/IllegalArgumentException", None));
        }
        if let Some(n) = counts.iter().find(|&&n| n < 0) {
            return Err(vm.throw_new(t, "java/lang/NegativeArraySizeException", Some(&n.to_string())));
        }
        let mut class = vm.class_of_mirror(mirror);
        let inner_dims = match vm.classes[class as usize].kind {
            crate::vm::class::ClassKind::Primitive('V') => {
                return Err(vm.throw_new(t, "java/lang/IllegalArgumentException", None))
            }
            crate::vm::class::ClassKind::Array { dims, .. } => dims as usize,
            _ => 0,
        };
        if inner_dims + counts.len() > 255 {
            return Err(vm.throw_new(t, "java/lang/IllegalArgumentException", None));
        }
        for _ in 0..counts.len() {
            class = vm.array_class_or_throw(t, class)?;
        }
        Ok(vm.multi_new_array(t, class, &counts)? as u64)
    });
    macro_rules! typed {
        ($($get:literal, $set:literal, $desc:literal, $kind:expr);* $(;)?) => {$(
            reg.add(ARRAY, $get, concat!("(Ljava/lang/Object;I)", $desc), |vm, t, a| {
                let (kind, v) = vm.array_element(t, a[0] as Ref, a[1] as i32)?;
                let boxed = vm.box_value(t, kind, v)?;
                match vm.unbox(boxed, $kind) {
                    Some(v) if kind != Kind::Reference => Ok(v),
                    _ => Err(vm.throw_new(t, "java/lang/IllegalArgumentException", Some("Argument is not an array of primitive type"))),
                }
            });
            reg.add(ARRAY, $set, concat!("(Ljava/lang/Object;I", $desc, ")V"), |vm, t, a| {
                let (arr, i) = (a[0] as Ref, a[1] as i32);
                let (elem, _) = vm.reflect_array(t, arr, i)?;
                let boxed = vm.box_value(t, $kind, a[2])?;
                match vm.unbox(boxed, elem) {
                    Some(v) if elem != Kind::Reference => {
                        vm.array_store_raw(arr, i as usize, v);
                        Ok(0)
                    }
                    _ => Err(vm.throw_new(t, "java/lang/IllegalArgumentException", Some("argument type mismatch"))),
                }
            });
        )*};
    }
    typed! {
        "getBoolean", "setBoolean", "Z", Kind::Boolean;
        "getByte", "setByte", "B", Kind::Byte;
        "getChar", "setChar", "C", Kind::Char;
        "getShort", "setShort", "S", Kind::Short;
        "getInt", "setInt", "I", Kind::Int;
        "getLong", "setLong", "J", Kind::Long;
        "getFloat", "setFloat", "F", Kind::Float;
        "getDouble", "setDouble", "D", Kind::Double;
    }
    reg.add("jdk/internal/reflect/ReflectionFactory", "inflationThreshold", "()I", |_, _, _| Ok(i32::MAX as u64));
    reg.add("java/lang/Class", "getDeclaredMethods0", "(Z)[Ljava/lang/reflect/Method;", |vm, t, a| {
        let c = vm.class_of_mirror(a[0] as Ref);
        let mut objs = Vec::new();
        for m in vm.declared_methods(c, false, a[1] != 0) {
            let obj = vm.pinning(&objs, |vm| vm.reflect_method(t, m))?;
            objs.push(obj);
        }
        vm.ref_array(t, "[Ljava/lang/reflect/Method;", objs)
    });
    reg.add("java/lang/Class", "getDeclaredConstructors0", "(Z)[Ljava/lang/reflect/Constructor;", |vm, t, a| {
        let c = vm.class_of_mirror(a[0] as Ref);
        let mut objs = Vec::new();
        for m in vm.declared_methods(c, true, a[1] != 0) {
            let obj = vm.pinning(&objs, |vm| vm.reflect_constructor(t, m))?;
            objs.push(obj);
        }
        vm.ref_array(t, "[Ljava/lang/reflect/Constructor;", objs)
    });
    reg.add("java/lang/Class", "getDeclaredFields0", "(Z)[Ljava/lang/reflect/Field;", |vm, t, a| {
        let c = vm.class_of_mirror(a[0] as Ref);
        let count = vm.classes[c as usize].fields.len();
        let mut objs = Vec::new();
        for i in 0..count {
            let f = &vm.classes[c as usize].fields[i];
            if a[1] != 0 && f.access & crate::classfile::access::PUBLIC == 0 {
                continue;
            }
            let obj = vm.pinning(&objs, |vm| vm.reflect_field(t, c, i))?;
            objs.push(obj);
        }
        vm.ref_array(t, "[Ljava/lang/reflect/Field;", objs)
    });
    reg.add("java/lang/Class", "getRecordComponents0", "()[Ljava/lang/reflect/RecordComponent;", |vm, t, a| {
        let c = vm.class_of_mirror(a[0] as Ref);
        let components = match &vm.classes[c as usize].file {
            Some(file) => file.record_components.clone(),
            None => Vec::new(),
        };
        let rc = vm.load_or_throw(t, "java/lang/reflect/RecordComponent")?;
        let mut objs = Vec::new();
        for comp in components {
            let accessor = match vm.find_declared_method(c, &comp.name, &format!("(){}", comp.descriptor)) {
                Some(m) => vm.pinning(&objs, |vm| vm.reflect_method(t, m))?,
                None => 0,
            };
            objs.push(accessor);
            let ty = vm.pinning(&objs, |vm| vm.type_mirror(t, c, &comp.descriptor))?;
            objs.pop();
            let obj = vm.alloc_instance(rc);
            let (name, mirror) = (vm.intern_str(&comp.name), vm.mirror(c));
            let signature = comp.signature.as_ref().map(|s| vm.intern_str(s)).unwrap_or(0);
            vm.set_named(obj, "clazz", mirror as u64);
            vm.set_named(obj, "name", name as u64);
            vm.set_named(obj, "type", ty as u64);
            vm.set_named(obj, "accessor", accessor as u64);
            vm.set_named(obj, "signature", signature as u64);
            let annotations = vm.raw_bytes(&comp.annotations.visible);
            vm.set_named(obj, "annotations", annotations as u64);
            let type_annotations = vm.raw_bytes(&comp.annotations.type_annotations);
            vm.set_named(obj, "typeAnnotations", type_annotations as u64);
            objs.push(obj);
        }
        vm.ref_array(t, "[Ljava/lang/reflect/RecordComponent;", objs)
    });
    // The native accessors: JDK 17's (HotSpot's messages), and JDK 18+'s behind
    // Direct{Method,Constructor}HandleAccessor, which stand in for the method-handle accessors
    // HotSpot would use and so give their messages.
    const INVOKE0: &str = "(Ljava/lang/reflect/Method;Ljava/lang/Object;[Ljava/lang/Object;)Ljava/lang/Object;";
    const NEW_INSTANCE0: &str = "(Ljava/lang/reflect/Constructor;[Ljava/lang/Object;)Ljava/lang/Object;";
    reg.add("jdk/internal/reflect/NativeMethodAccessorImpl", "invoke0", INVOKE0, |vm, t, a| {
        let m = vm.get_named(a[0] as Ref, "slot") as MethodId;
        vm.reflective_call(t, m, a[1] as Ref, a[2] as Ref, false, false)
    });
    reg.add("jdk/internal/reflect/DirectMethodHandleAccessor$NativeAccessor", "invoke0", INVOKE0, |vm, t, a| {
        let m = vm.get_named(a[0] as Ref, "slot") as MethodId;
        vm.reflective_call(t, m, a[1] as Ref, a[2] as Ref, false, true)
    });
    reg.add("jdk/internal/reflect/NativeConstructorAccessorImpl", "newInstance0", NEW_INSTANCE0, |vm, t, a| {
        let m = vm.get_named(a[0] as Ref, "slot") as MethodId;
        vm.reflective_call(t, m, 0, a[1] as Ref, true, false)
    });
    reg.add(
        "jdk/internal/reflect/DirectConstructorHandleAccessor$NativeAccessor",
        "newInstance0",
        NEW_INSTANCE0,
        |vm, t, a| {
            let m = vm.get_named(a[0] as Ref, "slot") as MethodId;
            vm.reflective_call(t, m, 0, a[1] as Ref, true, true)
        },
    );
}

impl<T: Tracker> Vm<T> {
    /// A class's declared methods (not `<init>`/`<clinit>`) or its constructors, optionally public only.
    fn declared_methods(&self, class: ClassId, constructors: bool, public_only: bool) -> Vec<MethodId> {
        self.classes[class as usize]
            .methods
            .iter()
            .copied()
            .filter(|&m| {
                let method = &self.methods[m as usize];
                let wanted = if constructors { &*method.name == "<init>" } else { !method.name.starts_with('<') };
                wanted && (!public_only || method.access & crate::classfile::access::PUBLIC != 0)
            })
            .collect()
    }

    fn ref_array(&mut self, t: &mut JThread, class: &str, items: Vec<Ref>) -> VmResult<u64> {
        // Loading the array class may run a class loader: the items are in no frame meanwhile.
        let c = self.pinning(&items, |vm| vm.load_or_throw(t, class))?;
        Ok(self.heap.alloc(c, ObjData::Refs(items.into())) as u64)
    }

    /// The mirror of the class a field descriptor names (`I` → int.class), as `from` sees it.
    pub(crate) fn type_mirror(&mut self, t: &mut JThread, from: ClassId, desc: &str) -> VmResult<Ref> {
        let name = match desc.as_bytes()[0] {
            b'L' => desc[1..desc.len() - 1].to_string(),
            b'[' => desc.to_string(),
            c => crate::vm::loader::PRIMITIVES
                .iter()
                .find(|p| p.1 as u8 == c)
                .map(|p| p.0.to_string())
                .unwrap_or_default(),
        };
        // A class's own name is itself, found by name or not (the VM's generated lambda classes are not).
        if *self.classes[from as usize].name == *name {
            return Ok(self.mirror(from));
        }
        let c = match desc.as_bytes()[0] {
            b'L' | b'[' => self.load_seen_from(t, from, &name)?,
            _ => self.load_or_throw(t, &name)?,
        };
        Ok(self.mirror(c))
    }

    pub(crate) fn type_mirrors(&mut self, t: &mut JThread, from: ClassId, descs: &[String]) -> VmResult<Ref> {
        let mut mirrors = Vec::with_capacity(descs.len());
        for d in descs {
            let m = self.pinning(&mirrors, |vm| vm.type_mirror(t, from, d))?;
            mirrors.push(m);
        }
        self.ref_array(t, "[Ljava/lang/Class;", mirrors).map(|r| r as Ref)
    }

    pub(super) fn construct(&mut self, t: &mut JThread, class: &str, desc: &str, args: &[u64]) -> VmResult<Ref> {
        let c = self.load_or_throw(t, class)?;
        self.initialize(t, c)?;
        let ctor = self
            .find_declared_method(c, "<init>", desc)
            .ok_or_else(|| VmError::Unsupported(format!("{class} without constructor {desc}")))?;
        let obj = self.alloc_instance(c);
        let mut full = vec![obj as u64];
        full.extend_from_slice(args);
        self.invoke(t, ctor, &full)?;
        Ok(obj)
    }

    /// Runs `f` with `refs` pinned, so that a collection inside it keeps them.
    pub(crate) fn pinning<R>(&mut self, refs: &[Ref], f: impl FnOnce(&mut Self) -> R) -> R {
        let n = self.pinned.len();
        self.pinned.extend_from_slice(refs);
        let r = f(self);
        self.pinned.truncate(n);
        r
    }

    pub(super) fn reflect_method(&mut self, t: &mut JThread, m: MethodId) -> VmResult<Ref> {
        let method = &self.methods[m as usize];
        let (class, name, access, parsed) = (method.class, method.name.clone(), method.access, method.parsed.clone());
        let signature = method.signature.clone().map(|s| self.intern_str(&s)).unwrap_or(0);
        let decl = self.mirror(class);
        let name = self.intern_str(&name);
        let params = self.type_mirrors(t, class, &parsed.param_types)?;
        let ret = if parsed.ret == Kind::Void {
            self.mirror(self.lookup_class("void").unwrap_or(0))
        } else {
            self.pinning(&[params], |vm| vm.type_mirror(t, class, &parsed.return_type))?
        };
        let ex = self.pinning(&[params, ret], |vm| vm.exception_types(t, m))?;
        let raw = self.method_info(m).map(|i| i.annotations.clone()).unwrap_or_default();
        let (annotations, parameters, default) =
            (self.raw_bytes(&raw.visible), self.raw_bytes(&raw.parameters), self.raw_bytes(&raw.default));
        self.pinning(&[params, ret, ex, annotations, parameters, default], |vm| {
            vm.construct(
                t,
                "java/lang/reflect/Method",
                "(Ljava/lang/Class;Ljava/lang/String;[Ljava/lang/Class;Ljava/lang/Class;[Ljava/lang/Class;IILjava/lang/String;[B[B[B)V",
                &[
                    decl as u64,
                    name as u64,
                    params as u64,
                    ret as u64,
                    ex as u64,
                    access as u64,
                    m as u64,
                    signature as u64,
                    annotations as u64,
                    parameters as u64,
                    default as u64,
                ],
            )
        })
    }

    pub(super) fn reflect_constructor(&mut self, t: &mut JThread, m: MethodId) -> VmResult<Ref> {
        let method = &self.methods[m as usize];
        let (class, access, parsed) = (method.class, method.access, method.parsed.clone());
        let signature = method.signature.clone().map(|s| self.intern_str(&s)).unwrap_or(0);
        let decl = self.mirror(class);
        let params = self.type_mirrors(t, class, &parsed.param_types)?;
        let ex = self.pinning(&[params], |vm| vm.exception_types(t, m))?;
        let raw = self.method_info(m).map(|i| i.annotations.clone()).unwrap_or_default();
        let (annotations, parameters) = (self.raw_bytes(&raw.visible), self.raw_bytes(&raw.parameters));
        self.pinning(&[params, ex, annotations, parameters], |vm| {
            vm.construct(
                t,
                "java/lang/reflect/Constructor",
                "(Ljava/lang/Class;[Ljava/lang/Class;[Ljava/lang/Class;IILjava/lang/String;[B[B)V",
                &[
                    decl as u64,
                    params as u64,
                    ex as u64,
                    access as u64,
                    m as u64,
                    signature as u64,
                    annotations as u64,
                    parameters as u64,
                ],
            )
        })
    }

    pub(super) fn reflect_field(&mut self, t: &mut JThread, class: ClassId, index: usize) -> VmResult<Ref> {
        let f = self.classes[class as usize].fields[index].clone();
        let decl = self.mirror(class);
        let name = self.intern_str(&f.name);
        let ty = self.type_mirror(t, class, &f.descriptor)?;
        let trusted_final = f.is_static() && f.access & crate::classfile::access::FINAL != 0;
        let signature = f.signature.clone().map(|s| self.intern_str(&s)).unwrap_or(0);
        let raw = self.field_info(class, index).and_then(|i| i.annotations.visible.clone());
        let annotations = self.raw_bytes(&raw);
        self.pinning(&[ty, annotations], |vm| {
            vm.construct(
                t,
                "java/lang/reflect/Field",
                "(Ljava/lang/Class;Ljava/lang/String;Ljava/lang/Class;IZILjava/lang/String;[B)V",
                &[
                    decl as u64,
                    name as u64,
                    ty as u64,
                    f.access as u64,
                    trusted_final as u64,
                    f.slot as u64,
                    signature as u64,
                    annotations as u64,
                ],
            )
        })
    }

    /// The class-file record of method `m` (a class's methods keep the class file's order).
    pub(super) fn method_info(&self, m: MethodId) -> Option<&MethodInfo> {
        let class = &self.classes[self.methods[m as usize].class as usize];
        let i = class.methods.iter().position(|&x| x == m)?;
        class.file.as_ref()?.methods.get(i)
    }

    /// The class-file record of a class's `index`th declared field.
    fn field_info(&self, class: ClassId, index: usize) -> Option<&FieldInfo> {
        self.classes[class as usize].file.as_ref()?.fields.get(index)
    }

    /// A new `byte[]` of an attribute's raw body; null when the attribute is absent.
    pub(super) fn raw_bytes(&mut self, bytes: &Option<Arc<[u8]>>) -> Ref {
        bytes.as_ref().map(|b| self.new_byte_array(b)).unwrap_or(0)
    }

    /// The checked exceptions a method declares (its `Exceptions` attribute), as its class sees them.
    fn exception_types(&mut self, t: &mut JThread, m: MethodId) -> VmResult<Ref> {
        let class = self.methods[m as usize].class;
        let names = self.method_info(m).map(|i| i.exceptions.clone()).unwrap_or_default();
        let mut mirrors = Vec::with_capacity(names.len());
        for n in names {
            let c = self.pinning(&mirrors, |vm| vm.load_seen_from(t, class, &n))?;
            mirrors.push(self.mirror(c));
        }
        self.ref_array(t, "[Ljava/lang/Class;", mirrors).map(|r| r as Ref)
    }

    /// The primitive held by a wrapper object, in slot form, converted to `want` (widening
    /// allowed, as `Method.invoke` does); None if `obj` is not a suitable wrapper.
    fn unbox(&self, obj: Ref, want: Kind) -> Option<u64> {
        if obj == 0 {
            return None;
        }
        let class = &*self.classes[self.heap.get(obj).class as usize].name;
        let have = match class {
            "java/lang/Integer" => Kind::Int,
            "java/lang/Long" => Kind::Long,
            "java/lang/Boolean" => Kind::Boolean,
            "java/lang/Byte" => Kind::Byte,
            "java/lang/Short" => Kind::Short,
            "java/lang/Character" => Kind::Char,
            "java/lang/Float" => Kind::Float,
            "java/lang/Double" => Kind::Double,
            _ => return None,
        };
        let v = self.get_named(obj, "value");
        let as_i = |v: u64| v as i32 as i64;
        Some(match (have, want) {
            (h, w) if h == w => v,
            (Kind::Byte | Kind::Short | Kind::Char | Kind::Int, Kind::Int | Kind::Short)
                if want != Kind::Short || have == Kind::Byte =>
            {
                v
            }
            (Kind::Byte | Kind::Short | Kind::Char | Kind::Int, Kind::Long) => as_i(v) as u64,
            (Kind::Byte | Kind::Short | Kind::Char | Kind::Int, Kind::Float) => (as_i(v) as f32).to_bits() as u64,
            (Kind::Byte | Kind::Short | Kind::Char | Kind::Int, Kind::Double) => (as_i(v) as f64).to_bits(),
            (Kind::Long, Kind::Float) => (v as i64 as f32).to_bits() as u64,
            (Kind::Long, Kind::Double) => (v as i64 as f64).to_bits(),
            (Kind::Float, Kind::Double) => (f32::from_bits(v as u32) as f64).to_bits(),
            _ => return None,
        })
    }

    /// The IllegalArgumentException for null passed as a primitive: HotSpot's native accessors
    /// give no message; the method-handle accessors wrap the NullPointerException their
    /// unboxing (`ValueConversions.unbox*`) hits.
    fn null_for_primitive(&mut self, t: &mut JThread, k: Kind, handles: bool) -> Fault {
        const IAE: &str = "java/lang/IllegalArgumentException";
        if !handles {
            return self.throw_new(t, IAE, None);
        }
        let value = match k {
            Kind::Byte => "byteValue",
            Kind::Short => "shortValue",
            Kind::Long => "longValue",
            Kind::Float => "floatValue",
            Kind::Double => "doubleValue",
            _ => "intValue",
        };
        let msg = format!(
            "Cannot invoke \"java.lang.Number.{value}()\" because the return value of \"sun.invoke.util.ValueConversions.primitiveConversion(sun.invoke.util.Wrapper, Object, boolean)\" is null"
        );
        let npe = match self.throw_new(t, "java/lang/NullPointerException", Some(&msg)) {
            Fault::Exception(e) => e,
            other => return other,
        };
        let iae = self.pinning(&[npe], |vm| vm.construct(t, IAE, "(Ljava/lang/Throwable;)V", &[npe as u64]));
        match iae {
            Ok(e) => Fault::Exception(e),
            Err(f) => f,
        }
    }

    /// Boxes a slot value of kind `k` with the wrapper's `valueOf`.
    pub(crate) fn box_value(&mut self, t: &mut JThread, k: Kind, v: u64) -> VmResult<Ref> {
        let (class, desc) = match k {
            Kind::Int => ("java/lang/Integer", "(I)Ljava/lang/Integer;"),
            Kind::Long => ("java/lang/Long", "(J)Ljava/lang/Long;"),
            Kind::Boolean => ("java/lang/Boolean", "(Z)Ljava/lang/Boolean;"),
            Kind::Byte => ("java/lang/Byte", "(B)Ljava/lang/Byte;"),
            Kind::Short => ("java/lang/Short", "(S)Ljava/lang/Short;"),
            Kind::Char => ("java/lang/Character", "(C)Ljava/lang/Character;"),
            Kind::Float => ("java/lang/Float", "(F)Ljava/lang/Float;"),
            Kind::Double => ("java/lang/Double", "(D)Ljava/lang/Double;"),
            Kind::Reference => return Ok(v as Ref),
            Kind::Void => return Ok(0),
        };
        let c = self.load_or_throw(t, class)?;
        self.initialize(t, c)?;
        let m = self
            .find_declared_method(c, "valueOf", desc)
            .ok_or_else(|| VmError::Internal(format!("{class}.valueOf")))?;
        let args: &[u64] = if k.is_wide() { &[v, 0] } else { &[v] };
        Ok(self.invoke(t, m, args)? as Ref)
    }

    /// `Method.invoke` / `Constructor.newInstance` after the JDK's own checks: check the receiver
    /// and the arguments, unbox them, dispatch, box the result; exceptions come back wrapped in
    /// InvocationTargetException. `handles`: the messages of JDK 18+'s method-handle accessors
    /// rather than HotSpot's native ones.
    fn reflective_call(
        &mut self,
        t: &mut JThread,
        m: MethodId,
        receiver: Ref,
        args: Ref,
        construct: bool,
        handles: bool,
    ) -> VmResult<u64> {
        let method = &self.methods[m as usize];
        let (class, parsed, is_static, sig, private) =
            (method.class, method.parsed.clone(), method.is_static(), method.sig, method.is_private());
        let given: Vec<Ref> = match args {
            0 => Vec::new(),
            r => match &self.heap.get(r).data {
                ObjData::Refs(v) => v.to_vec(),
                _ => Vec::new(),
            },
        };
        // HotSpot's order: the receiver (null, then its class), the argument count, each argument.
        if !construct && !is_static {
            if receiver == 0 {
                let msg = handles.then_some("Cannot invoke \"Object.getClass()\" because \"o\" is null");
                return Err(self.throw_new(t, "java/lang/NullPointerException", msg));
            }
            let rc = self.heap.get(receiver).class;
            if !self.is_subtype(rc, class) {
                let msg = if handles {
                    let (have, want) =
                        (self.classes[rc as usize].java_name(), self.classes[class as usize].java_name());
                    format!("object of type {have} is not an instance of {want}")
                } else {
                    "object is not an instance of declaring class".to_string()
                };
                return Err(self.throw_new(t, "java/lang/IllegalArgumentException", Some(&msg)));
            }
        }
        if given.len() != parsed.params.len() {
            let msg = if handles {
                format!("wrong number of arguments: {} expected: {}", given.len(), parsed.params.len())
            } else {
                "wrong number of arguments".to_string()
            };
            return Err(self.throw_new(t, "java/lang/IllegalArgumentException", Some(&msg)));
        }
        let mut slots: Vec<u64> = Vec::new();
        let target_obj = if construct {
            self.initialize(t, class)?;
            let obj = self.alloc_instance(class);
            slots.push(obj as u64);
            obj
        } else if !is_static {
            slots.push(receiver as u64);
            receiver
        } else {
            self.initialize(t, class)?;
            0
        };
        for (i, &k) in parsed.params.iter().enumerate() {
            let v = if k == Kind::Reference {
                if given[i] != 0 {
                    let desc = &parsed.param_types[i];
                    let name = desc.strip_prefix('L').and_then(|d| d.strip_suffix(';')).unwrap_or(desc);
                    let want = self.pinning(&[target_obj], |vm| vm.load_seen_from(t, class, name))?;
                    if !self.is_subtype(self.heap.get(given[i]).class, want) {
                        let msg = Some("argument type mismatch");
                        return Err(self.throw_new(t, "java/lang/IllegalArgumentException", msg));
                    }
                }
                given[i] as u64
            } else if given[i] == 0 {
                return Err(self.null_for_primitive(t, k, handles));
            } else {
                match self.unbox(given[i], k) {
                    Some(v) => v,
                    None => {
                        return Err(self.throw_new(
                            t,
                            "java/lang/IllegalArgumentException",
                            Some("argument type mismatch"),
                        ))
                    }
                }
            };
            slots.push(v);
            if k.is_wide() {
                slots.push(0);
            }
        }
        // Virtual dispatch for instance methods, as Method.invoke specifies.
        let target = if construct || is_static || private {
            m
        } else {
            let rc = self.heap.get(receiver).class;
            self.classes[rc as usize].dispatch.get(&sig).copied().unwrap_or(m)
        };
        let result = self.pinning(&[target_obj], |vm| vm.invoke(t, target, &slots));
        match result {
            Ok(_) if construct => Ok(target_obj as u64),
            Ok(v) => Ok(self.box_value(t, parsed.ret, v)? as u64),
            Err(Fault::Exception(e)) => {
                let wrapped = self.pinning(&[e], |vm| {
                    vm.construct(
                        t,
                        "java/lang/reflect/InvocationTargetException",
                        "(Ljava/lang/Throwable;)V",
                        &[e as u64],
                    )
                })?;
                Err(Fault::Exception(wrapped))
            }
            Err(other) => Err(other),
        }
    }
}

impl<T: Tracker> Vm<T> {
    /// Checks that `arr` is an array and `index` within it (unless `index` is 0 and only the
    /// length is wanted); returns the element kind and the length.
    fn reflect_array(&mut self, t: &mut JThread, arr: Ref, index: i32) -> VmResult<(Kind, usize)> {
        if arr == 0 {
            return Err(self.throw_npe(t));
        }
        let Some(len) = self.heap.get(arr).data.array_len() else {
            return Err(self.throw_new(t, "java/lang/IllegalArgumentException", Some("Argument is not an array")));
        };
        let kind = match &self.heap.get(arr).data {
            ObjData::Refs(_) => Kind::Reference,
            ObjData::Bytes(_) => {
                let ac = self.heap.get(arr).class;
                if &*self.classes[ac as usize].name == "[Z" {
                    Kind::Boolean
                } else {
                    Kind::Byte
                }
            }
            ObjData::Chars(_) => Kind::Char,
            ObjData::Shorts(_) => Kind::Short,
            ObjData::Ints(_) => Kind::Int,
            ObjData::Longs(_) => Kind::Long,
            ObjData::Floats(_) => Kind::Float,
            ObjData::Doubles(_) => Kind::Double,
            ObjData::Fields(_) => Kind::Reference,
        };
        if index < 0 || (index as usize >= len && !(index == 0 && len == 0)) {
            return Err(self.throw_index(t, index, len));
        }
        Ok((kind, len))
    }

    /// An element in slot form, with its kind.
    fn array_element(&mut self, t: &mut JThread, arr: Ref, index: i32) -> VmResult<(Kind, u64)> {
        let (kind, len) = self.reflect_array(t, arr, index)?;
        if len == 0 {
            return Err(self.throw_index(t, index, len));
        }
        let i = index as usize;
        let v = match &self.heap.get(arr).data {
            ObjData::Refs(a) => a[i] as u64,
            ObjData::Bytes(a) => a[i] as i32 as u32 as u64,
            ObjData::Chars(a) => a[i] as u64,
            ObjData::Shorts(a) => a[i] as i32 as u32 as u64,
            ObjData::Ints(a) => a[i] as u32 as u64,
            ObjData::Longs(a) => a[i] as u64,
            ObjData::Floats(a) => a[i].to_bits() as u64,
            ObjData::Doubles(a) => a[i].to_bits(),
            ObjData::Fields(_) => 0,
        };
        Ok((kind, v))
    }

    /// Stores a slot-form value into an element (bounds already checked).
    fn array_store_raw(&mut self, arr: Ref, i: usize, v: u64) {
        match &mut self.heap.get_mut(arr).data {
            ObjData::Refs(a) => a[i] = v as Ref,
            ObjData::Bytes(a) => a[i] = v as i8,
            ObjData::Chars(a) => a[i] = v as u16,
            ObjData::Shorts(a) => a[i] = v as i16,
            ObjData::Ints(a) => a[i] = v as i32,
            ObjData::Longs(a) => a[i] = v as i64,
            ObjData::Floats(a) => a[i] = f32::from_bits(v as u32),
            ObjData::Doubles(a) => a[i] = f64::from_bits(v),
            ObjData::Fields(_) => {}
        }
    }
}
