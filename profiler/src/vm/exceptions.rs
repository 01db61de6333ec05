//! Java exceptions raised by the VM itself (with HotSpot's messages), stack traces
//! (`Throwable.fillInStackTrace` and `StackTraceElement`), budgets and the stack-depth cap.

use super::class::{ClassId, MethodId};
use super::heap::{ObjData, Ref};
use super::loader::LoadError;
use super::{Fault, JThread, Tracker, Vm, VmError, VmResult};

/// Frames allowed beyond the cap while the StackOverflowError itself is being built.
const OVERFLOW_SLACK: usize = 200;
/// What one nested call from Rust into Java costs of the stack budget, in frames.
const NATIVE_CALL_FRAMES: usize = 10;
/// Frames a stack trace keeps, innermost first: HotSpot's `MaxJavaStackTraceDepth` default.
const MAX_JAVA_STACK_TRACE_DEPTH: usize = 1024;

impl<T: Tracker> Vm<T> {
    /// Creates and returns (as a fault to propagate) a new exception of class `name`.
    pub fn throw_new(&mut self, t: &mut JThread, name: &str, message: Option<&str>) -> Fault {
        match self.new_throwable(t, name, message) {
            Ok(e) => Fault::Exception(e),
            Err(f) => f,
        }
    }

    /// An interface call on an object whose class does not implement the interface, in the words
    /// of HotSpot's interpreter.
    pub(super) fn not_implemented(&mut self, t: &mut JThread, class: ClassId, iface: ClassId) -> Fault {
        let msg = format!(
            "Class {} does not implement the requested interface {}",
            self.classes[class as usize].java_name(),
            self.classes[iface as usize].java_name()
        );
        self.throw_new(t, "java/lang/IncompatibleClassChangeError", Some(&msg))
    }

    /// A call that selected an abstract method `m` for an object of class `receiver`: HotSpot's
    /// words for a class that neither defines nor inherits an implementation.
    pub(super) fn abstract_method_error(&mut self, t: &mut JThread, m: MethodId, receiver: Option<ClassId>) -> Fault {
        let method = &self.methods[m as usize];
        let holder = &self.classes[method.class as usize];
        let msg = match receiver {
            Some(r) => {
                // `int Shape.sides()` without the class: `'abstract int sides()'`.
                let signature = self.pretty_method("", &method.name, &method.descriptor).replacen(" .", " ", 1);
                let kind = if holder.is_interface() { "interface" } else { "abstract class" };
                format!(
                    "Receiver class {} does not define or inherit an implementation of the resolved method \
                     'abstract {signature}' of {kind} {}.",
                    self.classes[r as usize].java_name(),
                    holder.java_name()
                )
            }
            None => self.method_name(m),
        };
        self.throw_new(t, "java/lang/AbstractMethodError", Some(&msg))
    }

    fn new_throwable(&mut self, t: &mut JThread, name: &str, message: Option<&str>) -> VmResult<Ref> {
        let class = match self.load_class(name) {
            Ok(c) => c,
            Err(LoadError::NotFound(n)) => {
                return Err(Fault::Fatal(VmError::Internal(format!("exception class {n} missing"))))
            }
            Err(LoadError::Fatal(e)) => return Err(Fault::Fatal(e)),
        };
        self.initialize(t, class)?;
        let obj = self.alloc_instance(class);
        self.pinned.push(obj);
        let msg = message.map(|m| self.new_string(m)).unwrap_or(0);
        let result = match self.find_method(class, "<init>", "(Ljava/lang/String;)V") {
            Some(ctor) => self.invoke(t, ctor, &[obj as u64, msg as u64]),
            None => Err(Fault::Fatal(VmError::Internal(format!("{name} has no (String) constructor")))),
        };
        self.pinned.pop();
        result.map(|_| obj)
    }

    pub(super) fn throw_npe(&mut self, t: &mut JThread) -> Fault {
        self.throw_new(t, "java/lang/NullPointerException", None)
    }

    pub(super) fn throw_index(&mut self, t: &mut JThread, index: i32, len: usize) -> Fault {
        let msg = format!("Index {index} out of bounds for length {len}");
        self.throw_new(t, "java/lang/ArrayIndexOutOfBoundsException", Some(&msg))
    }

    pub(super) fn throw_oom(&mut self, t: &mut JThread, msg: &str) -> Fault {
        self.throw_new(t, "java/lang/OutOfMemoryError", Some(msg))
    }

    /// HotSpot's ClassCastException message, module and loader included.
    pub(super) fn throw_class_cast(&mut self, t: &mut JThread, from: ClassId, to: ClassId) -> Fault {
        let (a, b) = (self.classes[from as usize].java_name(), self.classes[to as usize].java_name());
        let (ma, mb) = (self.module_and_loader(from), self.module_and_loader(to));
        let msg = if ma == mb {
            format!("class {a} cannot be cast to class {b} ({a} and {b} are in {ma})")
        } else {
            format!("class {a} cannot be cast to class {b} ({a} is in {ma}; {b} is in {mb})")
        };
        self.throw_new(t, "java/lang/ClassCastException", Some(&msg))
    }

    /// Frames the current thread may hold. Each nested call from the VM back into Java (a class
    /// initialiser, reflection, a native calling Java) counts as [`NATIVE_CALL_FRAMES`] frames: on
    /// HotSpot those activations take the same stack (about 2 KB for a class initialisation, where a
    /// small Java frame takes 100 bytes), so recursion through them overflows as early.
    pub(super) fn depth_limit(&self) -> usize {
        (self.opts.limits.max_stack_depth + self.depth_slack)
            .saturating_sub(self.nesting.saturating_sub(1) * NATIVE_CALL_FRAMES)
    }

    pub(super) fn stack_overflow(&mut self, t: &mut JThread) -> Fault {
        if self.depth_slack > 0 {
            return Fault::Fatal(VmError::Internal("stack overflow while building a StackOverflowError".into()));
        }
        self.depth_slack = OVERFLOW_SLACK;
        let f = self.throw_new(t, "java/lang/StackOverflowError", None);
        self.depth_slack = 0;
        f
    }

    /// Called every so many instructions (at backward branches): instruction and time budgets;
    /// `running` is the thread running now, which may be switched out.
    pub(super) fn check_budgets(&mut self, running: Option<&JThread>) -> VmResult<()> {
        let limits = &self.opts.limits;
        if self.instructions >= limits.max_instructions {
            return Err(Fault::Fatal(VmError::InstructionBudget(self.instructions)));
        }
        if limits.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
            return Err(Fault::Fatal(VmError::Cancelled));
        }
        let elapsed = self.elapsed();
        if elapsed >= limits.max_wall {
            return Err(Fault::Fatal(VmError::TimeBudget(elapsed)));
        }
        self.next_check = (self.instructions + (1 << 20)).min(limits.max_instructions);
        if self.instructions >= self.switch_at {
            self.maybe_switch(running)?;
        }
        self.next_check = self.next_check.min(self.switch_at);
        Ok(())
    }

    /// `Throwable.fillInStackTrace(int)`: records at most [`MAX_JAVA_STACK_TRACE_DEPTH`] (method, bci) of every frame below the
    /// throwable's own construction into a `long[]` backtrace.
    pub(super) fn fill_in_stack_trace(&mut self, t: &mut JThread, throwable: Ref) -> VmResult<()> {
        let tclass = self.heap.get(throwable).class;
        if self.trace_exceptions {
            eprintln!("[bloatlens] {} created\n{}", self.classes[tclass as usize].java_name(), self.java_stack(t));
        }
        let stack = self.stack_frames(t);
        let mut frames = stack.iter().peekable();
        while let Some(&&(m, _)) = frames.peek() {
            if &*self.methods[m as usize].name == "fillInStackTrace" {
                frames.next();
            } else {
                break;
            }
        }
        while let Some(&&(m, _)) = frames.peek() {
            let m = &self.methods[m as usize];
            if &*m.name == "<init>" && self.is_subtype(tclass, m.class) {
                frames.next();
            } else {
                break;
            }
        }
        let trace: Vec<i64> = frames
            .filter(|&&(m, _)| !self.is_hidden_frame(m))
            .map(|&(m, bci)| ((m as i64) << 32) | bci as i64)
            .take(MAX_JAVA_STACK_TRACE_DEPTH)
            .collect();
        let long_array = self.load_class("[J").map_err(|_| VmError::Internal("[J".into()))?;
        let depth = trace.len();
        let bt = self.heap.alloc(long_array, ObjData::Longs(trace.into()));
        let (bslot, dslot) = (self.wk.throwable_backtrace, self.wk.throwable_depth);
        if let ObjData::Fields(f) = &mut self.heap.get_mut(throwable).data {
            f[bslot as usize] = bt as u64;
            if let Some(d) = dslot {
                f[d as usize] = depth as u64;
            }
        }
        Ok(())
    }

    /// A frame stack traces leave out: a method of a class the VM generated, or one the JDK marks
    /// `@Hidden`.
    pub(super) fn is_hidden_frame(&self, m: MethodId) -> bool {
        let method = &self.methods[m as usize];
        method.hidden || self.classes[method.class as usize].hidden
    }

    /// The thread's (method, bci) pairs, innermost first, with the natives running between its
    /// frames (bci 0).
    pub(super) fn stack_frames(&self, t: &JThread) -> Vec<(MethodId, u16)> {
        let mut out = Vec::with_capacity(t.frames.len() + t.natives.len());
        let mut natives = t.natives.iter().rev().peekable();
        for (depth, f) in t.frames.iter().enumerate().rev() {
            while let Some(&&(_, m)) = natives.peek().filter(|(below, _)| *below as usize > depth) {
                out.push((m, 0));
                natives.next();
            }
            out.push((f.method, t.frame_bci(depth)));
        }
        out.extend(natives.map(|&(_, m)| (m, 0)));
        out
    }

    /// The (method, bci) pairs of a backtrace made by `fill_in_stack_trace`.
    pub(super) fn decode_backtrace(&self, backtrace: Ref) -> Vec<(MethodId, u16)> {
        match backtrace {
            0 => Vec::new(),
            r => match &self.heap.get(r).data {
                ObjData::Longs(v) => v.iter().map(|&x| ((x >> 32) as MethodId, x as u16)).collect(),
                _ => Vec::new(),
            },
        }
    }

    /// `StackTraceElement.initStackTraceElements`: fills each element from the backtrace.
    pub(super) fn init_stack_trace_elements(&mut self, elements: Ref, backtrace: Ref, depth: usize) -> VmResult<()> {
        let frames = self.decode_backtrace(backtrace);
        let targets: Vec<Ref> = match &self.heap.get(elements).data {
            ObjData::Refs(v) => v.to_vec(),
            _ => return Ok(()),
        };
        for (i, &ste) in targets.iter().enumerate().take(depth.min(frames.len())) {
            let (m, bci) = frames[i];
            self.fill_stack_trace_element(ste, m, bci)?;
        }
        Ok(())
    }

    pub(super) fn fill_stack_trace_element(&mut self, ste: Ref, m: MethodId, bci: u16) -> VmResult<()> {
        let method = &self.methods[m as usize];
        let class = method.class;
        let line: i32 = if method.is_native() { -2 } else { method.line_of(bci).map(|l| l as i32).unwrap_or(-1) };
        let method_name = method.name.clone();
        let c = &self.classes[class as usize];
        let class_name = c.java_name();
        let file = c.file.as_ref().and_then(|f| f.source_file.clone());
        let loader = c.loader;
        let module = self.module_of(class);
        let module_name = self.module_name_of(class);
        // As HotSpot: the loader's name (null for unnamed loaders), a named module's name and version.
        let loader_name = if loader == 0 { 0 } else { self.get_named(loader, "name") };
        let module_version = match (module, &module_name) {
            (0, _) | (_, None) => 0,
            _ => {
                // The parsed version's text (as HotSpot's module entry keeps it), else the raw
                // string of an unparsable one.
                let descriptor = self.get_named(module, "descriptor") as Ref;
                match (descriptor, self.get_named(descriptor.max(1), "version") as Ref) {
                    (0, _) => 0,
                    (_, 0) => self.get_named(descriptor, "rawVersionString"),
                    (_, version) => self.get_named(version, "version"),
                }
            }
        };
        let ste_class = self.heap.get(ste).class;
        let slot = |vm: &Self, n: &str| vm.field_slot(ste_class, n);
        let mirror = self.mirror(class);
        let values = [
            ("declaringClassObject", mirror as u64),
            ("declaringClass", self.intern_str(&class_name) as u64),
            ("methodName", self.intern_str(&method_name) as u64),
            ("fileName", file.map(|f| self.intern_str(&f) as u64).unwrap_or(0)),
            ("lineNumber", line as u32 as u64),
            ("moduleName", module_name.map(|m| self.intern_str(&m) as u64).unwrap_or(0)),
            ("moduleVersion", module_version),
            ("classLoaderName", loader_name),
        ];
        for (name, v) in values {
            if let Some(s) = slot(self, name) {
                if let ObjData::Fields(f) = &mut self.heap.get_mut(ste).data {
                    f[s as usize] = v;
                }
            }
        }
        Ok(())
    }

    /// The thread's Java stack, innermost first, as `at Class.method(File:line)` lines.
    pub fn java_stack(&self, t: &JThread) -> String {
        t.frames
            .iter()
            .enumerate()
            .rev()
            .map(|(depth, f)| {
                let m = &self.methods[f.method as usize];
                let bci = t.frame_bci(depth);
                let line = m.line_of(bci).map(|l| l.to_string()).unwrap_or_else(|| "?".into());
                format!("\tat {}.{}(line {line})", self.classes[m.class as usize].java_name(), m.name)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A one-line description of an exception object: `java.lang.RuntimeException: message`.
    pub fn describe_exception(&self, e: Ref) -> String {
        let class = self.classes[self.heap.get(e).class as usize].java_name();
        let msg = self
            .classes
            .iter()
            .find(|c| &*c.name == "java/lang/Throwable")
            .and_then(|c| c.field("detailMessage", None))
            .and_then(|f| match &self.heap.get(e).data {
                ObjData::Fields(v) => Some(v[f.slot as usize] as Ref),
                _ => None,
            })
            .filter(|&r| r != 0)
            .map(|r| self.rust_string(r));
        match msg {
            Some(m) => format!("{class}: {m}"),
            None => class,
        }
    }
}
