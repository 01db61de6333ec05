//! The embedded JVM: loads classes from the user's JDK and class path, runs them in one
//! interpreter loop ([`interp`]) generic over a [`Tracker`], with slow paths (resolution,
//! natives, exceptions, GC) in modules of their own.

pub mod assertions;
mod boot;
pub mod class;
mod class_loaders;
pub mod decode;
mod exceptions;
mod flow;
mod gc;
pub mod heap;
mod indy;
mod instrument;
mod interp;
mod loader;
mod method_handles;
mod natives;
mod npe;
mod ops;
mod refmap;
mod resolve;
pub mod sandbox;
mod strings;
pub mod threads;
pub mod tracker;
mod varhandle;
mod verification;
pub mod whereabouts;

use crate::classfile::ClassFormatError;
use crate::classpath::{ClassPathError, JImage, Jdk};
use class::{Class, ClassId, Method, MethodId, SigId};
use heap::{Heap, Ref};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};
pub use tracker::{CountingTracker, NoTracker, Site, Tracker};

/// Resource limits of one run. Each ends the run with a clear outcome.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Bytecode instructions executed.
    pub max_instructions: u64,
    pub max_wall: Duration,
    /// Live heap after a collection; beyond it allocation throws OutOfMemoryError.
    pub max_heap_bytes: u64,
    /// Java frames on one thread; beyond it a call throws StackOverflowError. The default, 10,000,
    /// is about what HotSpot's default 1 MB thread stack holds of ordinary frames (JDK 17 measured:
    /// 7,900 to 9,800 frames of small static methods interpreted, 9,800 to 11,700 compiled).
    pub max_stack_depth: usize,
    /// Set from another thread to stop the run (a newer save replaced it); checked with the budgets.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Limits {
    /// The same budgets; the cancel flag aside, which is each run's own.
    pub fn boots_like(&self, other: &Limits) -> bool {
        let Limits { max_instructions, max_wall, max_heap_bytes, max_stack_depth, cancel: _ } = self;
        *max_instructions == other.max_instructions
            && *max_wall == other.max_wall
            && *max_heap_bytes == other.max_heap_bytes
            && *max_stack_depth == other.max_stack_depth
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_instructions: 50_000_000_000,
            max_wall: Duration::from_secs(600),
            max_heap_bytes: 2 << 30,
            max_stack_depth: 10_000,
            cancel: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    pub jdk: Jdk,
    /// The user's class path (directories and jars, `:`-separated).
    pub class_path: String,
    /// What the program reads from `System.in`.
    pub stdin: Stdin,
    /// The program's `System.out` goes to the process's stderr (the CLI when the report is on stdout).
    pub stdout_to_stderr: bool,
    /// Where the user's sources are (see [`crate::classpath::is_user_code`]); empty: every class
    /// path directory is the user's.
    pub source_roots: Vec<std::path::PathBuf>,
    pub limits: Limits,
    /// Bytes of the calling thread's native stack that nested calls into Java may use, measured from
    /// where the VM is created; a call beyond throws `StackOverflowError`. 0: unchecked (the caller
    /// promises a shallow program).
    pub native_stack_budget: usize,
    /// Collect after this many bytes were allocated since the last collection.
    pub gc_interval_bytes: u64,
    /// Bytes `main` allocates before its first collection (then one every `gc_interval_bytes`);
    /// None: collections go on counting from start-up. What start-up allocates varies with the
    /// paths and the environment (`user.dir`, the home directory), and would move every collection
    /// of the program's run, and so its objects' lifetimes, with them.
    pub first_collection_in_main: Option<u64>,
    /// System properties given as `-Dkey=value` (they override the VM's own, as with `java`).
    pub properties: Vec<(String, String)>,
    /// The program's working directory (`user.dir`, and what its relative paths resolve against);
    /// None: the process's own. The VM never changes the process's directory: a language server
    /// runs several programs in one process.
    pub cwd: Option<std::path::PathBuf>,
    /// Environment variables the program sees besides (and over) the process's own.
    pub env: Vec<(String, String)>,
    /// A debug mode: freed handles are never reused, so a reference the collector missed fails at
    /// its first use (and at the next collection that finds it among the roots); collections come
    /// every `gc_interval_bytes`, however large the live heap.
    pub check_handles: bool,
    /// Instructions a thread runs before another runnable one gets its turn ([`threads::SLICE`]).
    pub time_slice: u64,
    /// What the program may change on disk (None: whatever its user may; see [`sandbox`]).
    pub sandbox: Option<sandbox::SandboxConfig>,
    /// `-javaagent:JAR[=options]`s, in order: their `premain`s run before the main class loads,
    /// their jars appended to the system class loader's search.
    pub java_agents: Vec<String>,
    /// `-ea`/`-da`/`-esa`/`-dsa`: which classes run their `assert` statements.
    pub assertions: assertions::AssertionStatus,
    /// What trackers observe.
    pub observe: Observe,
}

/// What trackers observe of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Observe {
    /// The user's code and everything it calls, on every thread. The JDK's start-up, a test
    /// launcher's own work and a pool's threads until they call the user's code run unobserved:
    /// nothing there can be reported, and following its values is most of a profile's cost on
    /// a short run. When the main class is not the user's (a program of jars alone, with no
    /// test launcher of ours), everything after start-up is observed instead.
    #[default]
    UserCode,
    /// Everything from the JDK's start-up on (to compare with; the findings are the same).
    Everything,
}

/// What a program's `System.in` reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Stdin {
    /// The process's own standard input (the CLI: the terminal or a pipe).
    #[default]
    Inherit,
    /// Nothing: end of input at once (the language server, whose stdin is the editor's protocol).
    Empty,
    /// This file (the language server's `stdinFile` setting).
    File(std::path::PathBuf),
}

/// A run-ending condition that is not a Java exception.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    #[error("native method {class}.{name}{descriptor} is not supported by the Bloatlens VM")]
    UnsupportedNative { class: String, name: String, descriptor: String },
    #[error("instruction budget exhausted after {0} instructions")]
    InstructionBudget(u64),
    #[error("the run was cancelled")]
    Cancelled,
    #[error("time budget exhausted after {}", crate::report::human_duration(*.0))]
    TimeBudget(Duration),
    /// A budget ran out while the JDK was still starting (booting, or loading the main class):
    /// the program itself never ran, so Bloatlens could not run it.
    #[error("the budget ended the JDK's start-up before main ({0}): the program did not run")]
    StartupBudget(Box<VmError>),
    #[error(transparent)]
    ClassPath(#[from] ClassPathError),
    #[error("class {class}: {error}")]
    ClassFormat { class: String, error: ClassFormatError },
    #[error("class {class} has class-file version {major}, newer than the JDK in use supports ({max}, Java {java})")]
    UnsupportedVersion { class: String, major: u16, max: u16, java: u16 },
    #[error("bad bytecode in {method}: {reason}")]
    BadCode { method: String, reason: String },
    #[error("{0} is not supported by the Bloatlens VM yet")]
    Unsupported(String),
    /// The program reached for something the VM never gives it (another process, the network).
    #[error("{0}")]
    Refused(String),
    #[error("could not find or load main class {class}{hint}")]
    MainClassNotFound { class: String, hint: String },
    #[error("{error} occurred while loading main class {class}")]
    MainClassLinkage { class: String, error: String },
    #[error("main method not found in class {0}; define it as `public static void main(String[] args)`")]
    NoMainMethod(String),
    #[error("deadlock: {0}")]
    Deadlock(String),
    #[error("VM start-up failed: {0}")]
    Boot(String),
    #[error("internal VM error: {0}")]
    Internal(String),
}

impl VmError {
    /// This error, met before the program's `main` started: a budget running out is the
    /// JDK's start-up cut short ([`VmError::StartupBudget`]), not the program stopped.
    pub fn before_main(self) -> VmError {
        match self {
            e @ (VmError::InstructionBudget(_) | VmError::TimeBudget(_)) => VmError::StartupBudget(Box::new(e)),
            e => e,
        }
    }
}

/// Why a slow path did not produce a value.
#[derive(Debug)]
pub enum Fault {
    /// A Java exception is being thrown.
    Exception(Ref),
    /// `System.exit` / `Runtime.halt` with this status.
    Exit(i32),
    /// The current thread gave way to the scheduler; its frames are ready to resume.
    Yield,
    Fatal(VmError),
}

impl From<VmError> for Fault {
    fn from(e: VmError) -> Self {
        Fault::Fatal(e)
    }
}

pub type VmResult<T> = Result<T, Fault>;

/// One Java frame. `pc` and `sp` are written back by the interpreter before any slow path.
#[derive(Debug, Clone)]
pub struct Frame {
    pub method: MethodId,
    pub code: Rc<decode::Code>,
    pub pc: u32,
    /// Index of local 0 in the thread's slot stack.
    pub locals: u32,
    /// One past the top of the operand stack.
    pub sp: u32,
    /// The monitor a synchronized method holds (0: none), released when the frame ends.
    pub monitor: Ref,
    /// Whether trackers observe this frame: it runs the user's code or code the user's code
    /// called (see [`Vm::observing`]).
    pub tracked: bool,
}

/// A Java thread: its slot stack (locals and operands of every frame, contiguous) and frames.
pub struct JThread {
    pub stack: Vec<u64>,
    pub frames: Vec<Frame>,
    /// The `java.lang.Thread` object.
    pub obj: Ref,
    /// Monitors this thread holds, innermost last (an object appears once per entry).
    pub held: Vec<Ref>,
    /// An exception to throw as soon as the thread resumes (InterruptedException).
    pub pending_exception: Ref,
    /// Native methods running, innermost last, with the number of Java frames below each: natives
    /// have no frame, but stack traces and stack walks show them as HotSpot does.
    pub natives: Vec<(u32, class::MethodId)>,
    /// The thread yielded to the scheduler: its top frame stopped between two ops, and its `pc` is
    /// the op it resumes at (a loop's head, a handler, a contended `monitorenter` or synchronized
    /// call run again, the op after a blocking native), not one in progress. Cleared when it runs.
    pub suspended: bool,
    /// The deadline of a timed wait for a descriptor (`Net.poll`, a selector's select) that
    /// switched the thread out: the native, run again, waits on to it rather than start anew.
    pub io_deadline: Option<std::time::Instant>,
}

/// Slots a thread's stack starts with, and the most it may grow to.
const STACK_INITIAL: usize = 1 << 14;
pub const STACK_MAX: usize = 1 << 22;

impl Default for JThread {
    fn default() -> Self {
        JThread::new()
    }
}

impl JThread {
    pub fn new() -> JThread {
        JThread {
            stack: vec![0; STACK_INITIAL],
            frames: Vec::new(),
            obj: 0,
            held: Vec::new(),
            pending_exception: 0,
            natives: Vec::new(),
            suspended: false,
            io_deadline: None,
        }
    }

    /// The bytecode index frame `depth` is at. A caller is inside the call just before its `pc`,
    /// and so is a running top frame (its `pc` was advanced past the op in progress); a suspended
    /// thread's top frame is at `pc` itself. The collector's reference maps and stack traces read
    /// the frame's slots as they are at this index.
    pub fn frame_bci(&self, depth: usize) -> u16 {
        let f = &self.frames[depth];
        let at = if self.suspended && depth + 1 == self.frames.len() { f.pc } else { f.pc.saturating_sub(1) };
        f.code.bci.get(at as usize).copied().unwrap_or(0)
    }

    /// Grows the slot stack (by doubling) so that `slots` fit, up to [`STACK_MAX`]; false beyond.
    pub fn ensure_capacity(&mut self, slots: usize) -> bool {
        if slots <= self.stack.len() {
            return true;
        }
        if slots > STACK_MAX {
            return false;
        }
        let new_len = slots.next_power_of_two().min(STACK_MAX);
        self.stack.resize(new_len, 0);
        true
    }
    /// Where a new frame would start: above the top frame's operands.
    pub fn top_sp(&self) -> usize {
        self.frames.last().map(|f| f.sp as usize).unwrap_or(0)
    }
}

/// How a program run ended.
#[derive(Debug)]
pub enum Outcome {
    /// `main` returned (status 0) or `System.exit(status)` was called.
    Exited(i32),
    /// An exception escaped `main`; it was printed as HotSpot prints it. Status 1.
    UncaughtException(String),
    /// The VM stopped the run (budget, unsupported feature, bad class).
    Stopped(VmError),
}

/// Run-level counters for the report and the benchmark.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub instructions: u64,
    pub allocated_bytes: u64,
    pub objects_allocated: u64,
    pub collections: u64,
    pub classes_loaded: usize,
    pub wall: Duration,
}

/// Slot numbers and classes that natives and the VM use often, found once during boot.
#[derive(Debug, Default, Clone)]
pub struct WellKnown {
    pub class: ClassId,
    pub string: ClassId,
    pub string_value: u32,
    pub string_coder: u32,
    /// The hidden slot of a `java.lang.Class` that holds the class id + 1.
    pub class_id_slot: u32,
    pub class_component_type: Option<u32>,
    pub throwable_backtrace: u32,
    pub throwable_depth: Option<u32>,
    pub byte_array: ClassId,
    /// The mirror slots of a class's module and defining loader.
    pub class_module: Option<u32>,
    pub class_loader: Option<u32>,
    /// JDK 21+: the mirror slot of a class's protection domain (JDK 17 asks a native instead).
    pub class_protection_domain: Option<u32>,
    pub invoke: natives::invoke::InvokeSlots,
}

pub struct Vm<T: Tracker = NoTracker> {
    pub opts: Options,
    pub tracker: T,
    /// The JDK image the boot loader defines classes from.
    image: JImage,
    pub classes: Vec<Class>,
    /// Classes by name, per loader (0: the boot loader) that defined them or initiated their loading.
    namespaces: HashMap<Ref, HashMap<Arc<str>, ClassId>>,
    /// The named module of each (loader, package), from `Module.defineModule0`.
    package_modules: HashMap<(Ref, Arc<str>), Ref>,
    /// Modules defined to the boot loader: the JDK image's classes it may define.
    boot_modules: std::collections::HashSet<Arc<str>>,
    /// The boot loader's unnamed module (`BootLoader.setBootLoaderUnnamedModule0`).
    boot_unnamed_module: Ref,
    /// Every class loader that defined a class or a module (GC roots: classes are never unloaded).
    loaders: Vec<Ref>,
    /// `ClassLoader.getSystemClassLoader()`, once phase 3 has run.
    system_loader: Ref,
    /// Nesting of Java code the VM runs on its own behalf (a class loader answering a resolution):
    /// the JVM's work, not the program's, so trackers are not told of it.
    unobserved: u32,
    /// Instructions run unobserved so far (left out of the counts trackers see).
    unobserved_instructions: u64,
    /// Every frame is observed, not only the user's code and what it calls (see [`Observe`]).
    observe_all: bool,
    /// Where the JDK image is mapped in native memory (address, length), once the JDK asked.
    jdk_image_map: Option<(u64, usize)>,
    pub methods: Vec<Method>,
    sigs: HashMap<(Arc<str>, Arc<str>), SigId>,
    pub statics: Vec<u64>,
    /// Static slots that hold references (GC roots).
    static_ref_slots: Vec<u32>,
    pub heap: Heap,
    interned: HashMap<Box<[u16]>, Ref>,
    /// References held by Rust code across calls into Java (GC roots).
    pub(crate) pinned: Vec<Ref>,
    pub wk: WellKnown,
    natives: HashMap<(&'static str, &'static str, &'static str), natives::NativeFn<T>>,
    pub instructions: u64,
    started: Instant,
    /// Bytes written by the program to stdout/stderr go here when captured (tests, LSP).
    pub capture: Option<(Vec<u8>, Vec<u8>)>,
    pub booted: bool,
    /// Number of Rust-level re-entries into the interpreter (class init, natives calling Java).
    nesting: usize,
    /// Native stack address below which a nested call into Java throws `StackOverflowError`
    /// (see [`Options::native_stack_budget`]; 0: unchecked).
    native_stack_floor: usize,
    /// Natives bound so far, by method.
    native_cache: HashMap<MethodId, natives::NativeFn<T>>,
    /// Extra frames allowed while a StackOverflowError is being built.
    depth_slack: usize,
    /// Instruction count at which the budgets are checked next.
    next_check: u64,
    /// Objects the VM itself keeps alive (the thread groups).
    extra_roots: Vec<Ref>,
    /// What made a class's initialization fail, as HotSpot records it (the cause of every later
    /// `NoClassDefFoundError: Could not initialize class`); also in `extra_roots`.
    init_errors: rustc_hash::FxHashMap<ClassId, Ref>,
    /// `MethodType`, `MethodHandle` and dynamic constants resolved so far, by (class, index).
    linked_constants: HashMap<(ClassId, u16), (u64, crate::classfile::descriptor::Kind)>,
    /// State of the identity-hash generator.
    hash_state: u32,
    pub native_memory: natives::NativeMemory,
    /// The Java stack where the last fatal error happened (for diagnostics).
    pub last_fatal_stack: String,
    /// java.util.zip.Inflater state.
    pub(crate) inflaters: natives::Inflaters,
    /// Java2D's image surfaces (`natives/java2d.rs`).
    pub(crate) surfaces: natives::Surfaces,
    /// java.management's memory pools and managers, once created.
    memory_beans: natives::MemoryBeans,
    /// What programs set through java.management (flags, verbosity, thread figures on or off).
    pub(crate) management: natives::Management,
    /// Where the running thread's CPU time and allocation were last charged from.
    usage_mark: threads::UsageMark,
    /// VarHandle call sites the JDK linked (handles the VM does not access itself): by (caller,
    /// bci), the invoker and its appendix.
    varhandle_sites: HashMap<(MethodId, u16), (MethodId, Ref)>,
    /// Files the program has open.
    pub(crate) open_files: natives::OpenFiles,
    /// Where a sandboxed run's changes go (see [`Options::sandbox`]).
    pub(crate) sandbox: Option<sandbox::Sandbox>,
    /// BLOATLENS_TRACE_EXCEPTIONS: print every exception's stack as it is created (VM debugging).
    trace_exceptions: bool,
    /// The collector's `java.lang.ref` state: reference classes, the pending-reference list.
    refs: gc::References,
    /// Reference maps of methods that were on a stack during a collection.
    ref_maps: HashMap<MethodId, Rc<refmap::RefMaps>>,
    /// Every Java thread; the running one's stack is borrowed out of its slot.
    pub(crate) threads: Vec<threads::Slot>,
    /// Index of the running thread.
    pub(crate) current: usize,
    /// The thread trackers were last told the events belong to (`usize::MAX`: none yet).
    told_thread: usize,
    /// Instruction count at which the running thread's slice ends.
    pub(crate) switch_at: u64,
    /// True once `main` runs under the scheduler (start-up runs on the main thread alone).
    pub(crate) scheduling: bool,
    /// Set by a native that switched its thread out to wait for a descriptor: the call is made
    /// again, with the same arguments, when the thread resumes.
    pub(crate) retry_native: bool,
    /// The nesting at which a thread may be switched out: 1, its outermost activation; deeper
    /// while a thread blocked inside a nested call runs the others ([`threads::Slot::in_place`]).
    pub(crate) yield_nesting: usize,
    /// The call the outermost scheduler runs to its end (thread, frame depth), and its ending
    /// when it came inside a nested scheduler, for the outermost one to take.
    pub(crate) scheduled_call: Option<(usize, usize)>,
    pub(crate) call_done: Option<threads::Finished>,
    /// Native counter of thread ids (JDK 21+ `Thread.getNextThreadIdOffset`), 0 until asked for.
    pub(crate) next_tid_address: u64,
    /// The newest class-file version the JDK in use runs (44 + its feature release).
    pub(crate) max_major_version: u16,
    /// `StackWalker` walks in progress.
    stack_walks: natives::stack_walk::StackWalks,
    /// Classes the VM generated so far (linked call sites, field accessors): numbers their names.
    generated_classes: u32,
    /// Where the program has been lately (sampled at budget checks).
    whereabouts: whereabouts::Samples,
    /// `java.lang.instrument` agents and the boot loader's appended jars.
    agents: instrument::Agents,
}

impl<T: Tracker> Vm<T> {
    /// Loads the JDK's class library and boots the VM (System.initPhase1 for real).
    pub fn new(opts: Options, tracker: T) -> Result<(Vm<T>, JThread), VmError> {
        Self::new_captured(opts, tracker, false)
    }

    /// Like `new`; with `capture`, program output is kept in memory (see `capture`).
    pub fn new_captured(opts: Options, tracker: T, capture: bool) -> Result<(Vm<T>, JThread), VmError> {
        // The boot loader's: the JDK image. The class path is the application loader's (Java).
        let image = JImage::open(&opts.jdk.modules())?;
        let native_stack_floor = match opts.native_stack_budget {
            0 => 0,
            budget => interp::native_stack_address().saturating_sub(budget),
        };
        let mut heap = Heap::new();
        if opts.check_handles {
            heap.check_handles();
        }
        let mut vm = Vm {
            opts,
            tracker,
            image,
            classes: Vec::new(),
            namespaces: HashMap::new(),
            package_modules: HashMap::new(),
            boot_modules: Default::default(),
            boot_unnamed_module: 0,
            loaders: Vec::new(),
            system_loader: 0,
            jdk_image_map: None,
            unobserved: 0,
            unobserved_instructions: 0,
            observe_all: false,
            methods: Vec::new(),
            sigs: HashMap::new(),
            statics: Vec::new(),
            static_ref_slots: Vec::new(),
            heap,
            interned: HashMap::new(),
            pinned: Vec::new(),
            wk: WellKnown::default(),
            natives: natives::table(),
            instructions: 0,
            started: Instant::now(),
            capture: capture.then(Default::default),
            booted: false,
            nesting: 0,
            native_stack_floor,
            native_cache: HashMap::new(),
            depth_slack: 0,
            next_check: 0,
            extra_roots: Vec::new(),
            init_errors: Default::default(),
            linked_constants: HashMap::new(),
            hash_state: 0x2545_F491,
            native_memory: natives::NativeMemory::default(),
            last_fatal_stack: String::new(),
            generated_classes: 0,
            whereabouts: Default::default(),
            stack_walks: Default::default(),
            max_major_version: 0,
            next_tid_address: 0,
            threads: Vec::new(),
            current: 0,
            told_thread: usize::MAX,
            switch_at: u64::MAX,
            scheduling: false,
            retry_native: false,
            yield_nesting: 1,
            scheduled_call: None,
            call_done: None,
            ref_maps: HashMap::new(),
            refs: Default::default(),
            trace_exceptions: std::env::var_os("BLOATLENS_TRACE_EXCEPTIONS").is_some(),
            open_files: natives::OpenFiles::default(),
            sandbox: None,
            inflaters: natives::Inflaters::default(),
            surfaces: natives::Surfaces::default(),
            memory_beans: natives::MemoryBeans::default(),
            agents: Default::default(),
            management: natives::Management::default(),
            usage_mark: threads::UsageMark::default(),
            varhandle_sites: HashMap::new(),
        };
        if let Some(config) = &vm.opts.sandbox {
            let sandbox = sandbox::Sandbox::new(config, &vm.working_dir()).map_err(|e| {
                VmError::Boot(format!("cannot set up the sandbox of {}: {e}", config.workspace.display()))
            })?;
            vm.sandbox = Some(sandbox);
        }
        let feature: u16 = vm.opts.jdk.version().and_then(|v| v.split('.').next()?.parse().ok()).unwrap_or(17);
        vm.max_major_version = 44 + feature;
        if let Stdin::File(path) = &vm.opts.stdin {
            let file = std::fs::File::open(path)
                .map_err(|e| VmError::Boot(format!("cannot read {} as the program's input: {e}", path.display())))?;
            vm.open_files.set_stdin(file);
        }
        // Start-up is observed only when everything is (see [`Observe`]).
        vm.observe_all = vm.opts.observe == Observe::Everything;
        let mut thread = JThread::new();
        vm.boot(&mut thread)?;
        Ok((vm, thread))
    }

    /// A booted VM's run starts: it takes the run's cancel flag and sandbox log (a VM booted ahead
    /// of its run, [`crate::prepared`], was booted with another's), and its clock skips the time it
    /// waited, so that its wall time and time budget count the boot and the run, as a cold run's.
    pub fn begin_run(
        &mut self,
        waited: Duration,
        cancel: Option<Arc<AtomicBool>>,
        sandbox: Option<&sandbox::SandboxConfig>,
    ) {
        self.started += waited;
        self.opts.limits.cancel = cancel;
        if let (Some(running), Some(config)) = (self.sandbox.as_mut(), sandbox) {
            running.rebind(config);
        }
        if let (Some(booted), Some(config)) = (self.opts.sandbox.as_mut(), sandbox) {
            booted.log = config.log.clone();
            booted.writable = config.writable.clone();
        }
    }

    pub fn stats(&self) -> Stats {
        Stats {
            instructions: self.instructions,
            allocated_bytes: self.heap.allocated_bytes,
            objects_allocated: self.heap.objects_allocated,
            collections: self.heap.collections,
            classes_loaded: self.classes.len(),
            wall: self.started.elapsed(),
        }
    }

    pub fn sig(&mut self, name: &Arc<str>, descriptor: &Arc<str>) -> SigId {
        let next = self.sigs.len() as SigId;
        *self.sigs.entry((name.clone(), descriptor.clone())).or_insert(next)
    }

    pub fn find_sig(&self, name: &str, descriptor: &str) -> Option<SigId> {
        self.sigs.get(&(Arc::from(name), Arc::from(descriptor))).copied()
    }

    pub fn method_name(&self, m: MethodId) -> String {
        let m = &self.methods[m as usize];
        format!("{}.{}{}", self.classes[m.class as usize].java_name(), m.name, m.descriptor)
    }

    /// Writes program output: to the process's stdout/stderr, or to the capture buffers. Written
    /// through at once, as the JDK's `FileOutputStream.writeBytes` does (a prompt without a newline
    /// shows before the program reads its answer).
    pub fn write_output(&mut self, fd: i32, bytes: &[u8]) {
        use std::io::Write;
        match (&mut self.capture, fd) {
            (Some((out, _)), 1) => out.extend_from_slice(bytes),
            (Some((_, err)), _) => err.extend_from_slice(bytes),
            (None, 1) if !self.opts.stdout_to_stderr => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(bytes).and_then(|_| out.flush());
            }
            (None, _) => {
                let _ = std::io::stderr().write_all(bytes);
            }
        }
    }

    pub fn flush_output(&mut self) {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
    }

    /// Whether trackers are told what runs now, the VM's own work aside (see [`Vm::unobserved`]);
    /// within the interpreter's loop, where the frame is known: [`Vm::observing`] in one.
    #[inline(always)]
    pub(crate) fn observed(&self) -> bool {
        self.unobserved == 0
    }

    /// Whether trackers are told what `t`'s top frame does: the VM's own work is not observed,
    /// nor frames that neither run the user's code nor were called from it (see [`Observe`]).
    #[inline(always)]
    pub(crate) fn observing(&self, t: &JThread) -> bool {
        self.unobserved == 0 && t.frames.last().is_some_and(|f| f.tracked)
    }

    /// Whether a frame for `m` is observed, called from a frame that is (`caller`) or not.
    #[inline(always)]
    pub(crate) fn tracks(&self, caller: bool, m: MethodId) -> bool {
        T::OBSERVES && (caller || self.observe_all || tracker::is_user_method(&self.methods, &self.classes, m))
    }

    /// From the main class on, everything is observed when asked, or when the main class is not
    /// the user's (nothing would be otherwise) unless it is the test launcher, which calls the
    /// user's tests.
    pub(crate) fn observe_from_main(&mut self, main: ClassId) {
        let class = &self.classes[main as usize];
        let launcher = class.name.as_ref() == crate::junit::RUNNER_CLASS;
        self.observe_all = self.opts.observe == Observe::Everything || !(tracker::is_user_class(class) || launcher);
    }

    /// The instruction count trackers see: what ran observed.
    pub(crate) fn observed_instructions(&self) -> u64 {
        self.instructions - self.unobserved_instructions
    }

    /// Runs `f` (which runs Java for the VM's own purposes) unseen by the trackers.
    pub(crate) fn unobserved<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let before = self.instructions;
        self.unobserved += 1;
        let r = f(self);
        self.unobserved -= 1;
        self.unobserved_instructions += self.instructions - before;
        r
    }

    fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}
