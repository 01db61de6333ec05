//! Class-file parsing (JVMS §4). `parse` turns bytes into a [`ClassFile`] or a [`ClassFormatError`]
//! that names the byte offset and what was expected there; it never panics on malformed input.

pub mod builder;
mod constant_pool;
pub mod descriptor;
mod reader;

pub use constant_pool::{decode_modified_utf8, Constant, ConstantPool, MemberRef};
use reader::Reader;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed class file at byte {offset}: expected {expected}")]
pub struct ClassFormatError {
    pub offset: usize,
    pub expected: String,
    /// How HotSpot words this refusal, when it is one HotSpot makes: its message's text before
    /// and after the class's name (see [`ClassFormatError::hotspot_message`]).
    pub hotspot: Option<(String, String)>,
}

impl ClassFormatError {
    /// A refusal HotSpot words as `before` + the class's name + `after`.
    pub(crate) fn hotspot(offset: usize, expected: impl Into<String>, before: String, after: &str) -> Self {
        ClassFormatError { offset, expected: expected.into(), hotspot: Some((before, after.to_string())) }
    }

    /// HotSpot's message for this refusal of the class `name` (internal form, as HotSpot prints
    /// it), if HotSpot makes it.
    pub fn hotspot_message(&self, name: &str) -> Option<String> {
        self.hotspot.as_ref().map(|(before, after)| format!("{before}{name}{after}"))
    }
}

pub mod access {
    pub const PUBLIC: u16 = 0x0001;
    pub const PRIVATE: u16 = 0x0002;
    pub const PROTECTED: u16 = 0x0004;
    pub const STATIC: u16 = 0x0008;
    pub const FINAL: u16 = 0x0010;
    pub const SYNCHRONIZED: u16 = 0x0020;
    /// On classes, the same bit as SYNCHRONIZED: `invokespecial` selects from the superclass.
    pub const SUPER: u16 = 0x0020;
    pub const BRIDGE: u16 = 0x0040;
    pub const VARARGS: u16 = 0x0080;
    pub const NATIVE: u16 = 0x0100;
    pub const INTERFACE: u16 = 0x0200;
    pub const ABSTRACT: u16 = 0x0400;
    pub const SYNTHETIC: u16 = 0x1000;
    pub const ANNOTATION: u16 = 0x2000;
    pub const ENUM: u16 = 0x4000;
}

#[derive(Debug, Clone)]
pub struct ClassFile {
    pub minor_version: u16,
    pub major_version: u16,
    pub constant_pool: ConstantPool,
    pub access_flags: u16,
    pub this_class: Arc<str>,
    pub super_class: Option<Arc<str>>,
    pub interfaces: Vec<Arc<str>>,
    pub fields: Vec<FieldInfo>,
    pub methods: Vec<MethodInfo>,
    pub source_file: Option<Arc<str>>,
    pub bootstrap_methods: Vec<BootstrapMethod>,
    pub inner_classes: Vec<InnerClass>,
    pub nest_host: Option<Arc<str>>,
    pub nest_members: Vec<Arc<str>>,
    pub record_components: Vec<RecordComponent>,
    pub permitted_subclasses: Vec<Arc<str>>,
    /// The generic signature (`Signature` attribute), if any.
    pub signature: Option<Arc<str>>,
    /// For local and anonymous classes (`EnclosingMethod`): the enclosing class, and the method
    /// (name, descriptor) when the class is declared inside one.
    pub enclosing_method: Option<EnclosingMethod>,
    /// The class's annotation attributes, raw (for `Class.getRawAnnotations`).
    pub annotations: RawAnnotations,
}

/// The raw bodies of the runtime-visible annotation attributes of a class, field or method, with
/// constant-pool indices of their own class: reflection hands them to the JDK's
/// `AnnotationParser` as HotSpot does.
#[derive(Debug, Clone, Default)]
pub struct RawAnnotations {
    /// `RuntimeVisibleAnnotations`.
    pub visible: Option<Arc<[u8]>>,
    /// `RuntimeVisibleTypeAnnotations`.
    pub type_annotations: Option<Arc<[u8]>>,
    /// `RuntimeVisibleParameterAnnotations` (methods).
    pub parameters: Option<Arc<[u8]>>,
    /// `AnnotationDefault` (methods of annotation interfaces).
    pub default: Option<Arc<[u8]>>,
}

impl RawAnnotations {
    /// Keeps the body of `name` if it is one of the annotation attributes; false otherwise.
    fn keep(&mut self, name: &str, body: &[u8]) -> bool {
        let slot = match name {
            "RuntimeVisibleAnnotations" => &mut self.visible,
            "RuntimeVisibleTypeAnnotations" => &mut self.type_annotations,
            "RuntimeVisibleParameterAnnotations" => &mut self.parameters,
            "AnnotationDefault" => &mut self.default,
            _ => return false,
        };
        *slot = Some(Arc::from(body));
        true
    }
}

/// The `EnclosingMethod` attribute of a local or anonymous class.
#[derive(Debug, Clone)]
pub struct EnclosingMethod {
    pub class: Arc<str>,
    /// (name, descriptor) of the method the class is declared in, if any.
    pub method: Option<(Arc<str>, Arc<str>)>,
}

#[derive(Debug, Clone)]
pub struct FieldInfo {
    pub access_flags: u16,
    pub name: Arc<str>,
    pub descriptor: Arc<str>,
    pub constant_value: Option<u16>,
    pub signature: Option<Arc<str>>,
    pub annotations: RawAnnotations,
}

#[derive(Debug, Clone)]
pub struct MethodInfo {
    pub access_flags: u16,
    pub name: Arc<str>,
    pub descriptor: Arc<str>,
    pub code: Option<Code>,
    pub exceptions: Vec<Arc<str>>,
    pub signature: Option<Arc<str>>,
    /// Annotated `@jdk.internal.vm.annotation.Hidden`: left out of stack traces and walks.
    pub hidden: bool,
    /// Annotated `@jdk.internal.reflect.CallerSensitive`: a method handle to it binds its caller.
    pub caller_sensitive: bool,
    pub annotations: RawAnnotations,
    /// The raw `MethodParameters` attribute (for `Executable.getParameters0`).
    pub parameters: Option<Arc<[u8]>>,
}

#[derive(Debug, Clone, Default)]
pub struct Code {
    pub max_stack: u16,
    pub max_locals: u16,
    pub bytecode: Vec<u8>,
    pub exception_table: Vec<ExceptionHandler>,
    /// (start_pc, line_number), as javac wrote them.
    pub line_numbers: Vec<(u16, u16)>,
    pub local_variables: Vec<LocalVariable>,
    /// The raw `StackMapTable` attribute (read by the verifier), if any.
    pub stack_map_table: Option<Arc<[u8]>>,
}

#[derive(Debug, Clone, Copy)]
pub struct ExceptionHandler {
    pub start_pc: u16,
    pub end_pc: u16,
    pub handler_pc: u16,
    /// Constant-pool index of the caught class; 0 catches everything (`finally`).
    pub catch_type: u16,
}

#[derive(Debug, Clone)]
pub struct LocalVariable {
    pub start_pc: u16,
    pub length: u16,
    pub name: Arc<str>,
    pub descriptor: Arc<str>,
    pub index: u16,
}

#[derive(Debug, Clone)]
pub struct BootstrapMethod {
    pub method_handle: u16,
    pub arguments: Vec<u16>,
}

#[derive(Debug, Clone)]
pub struct InnerClass {
    pub inner_class: Option<Arc<str>>,
    pub outer_class: Option<Arc<str>>,
    pub inner_name: Option<Arc<str>>,
    pub access_flags: u16,
}

#[derive(Debug, Clone)]
pub struct RecordComponent {
    pub name: Arc<str>,
    pub descriptor: Arc<str>,
    pub signature: Option<Arc<str>>,
    pub annotations: RawAnnotations,
}

impl Code {
    /// The source line of a bytecode index, from the LineNumberTable.
    pub fn line_of(&self, bci: u16) -> Option<u16> {
        self.line_numbers.iter().filter(|(pc, _)| *pc <= bci).max_by_key(|(pc, _)| *pc).map(|(_, l)| *l)
    }
}

impl ClassFile {
    /// A class with no members or attributes yet (the parser and the builder fill it in).
    pub fn new(
        this_class: Arc<str>,
        super_class: Option<Arc<str>>,
        interfaces: Vec<Arc<str>>,
        access_flags: u16,
    ) -> Self {
        ClassFile {
            minor_version: 0,
            major_version: 0,
            constant_pool: ConstantPool::default(),
            access_flags,
            this_class,
            super_class,
            interfaces,
            fields: Vec::new(),
            methods: Vec::new(),
            source_file: None,
            bootstrap_methods: Vec::new(),
            inner_classes: Vec::new(),
            nest_host: None,
            nest_members: Vec::new(),
            record_components: Vec::new(),
            permitted_subclasses: Vec::new(),
            signature: None,
            enclosing_method: None,
            annotations: RawAnnotations::default(),
        }
    }

    pub fn is_interface(&self) -> bool {
        self.access_flags & access::INTERFACE != 0
    }
}

/// Parses a class file. Versions newer than the JDK in use are refused by the loader, not here,
/// so that tools can still read them.
pub fn parse(bytes: &[u8]) -> Result<ClassFile, ClassFormatError> {
    let mut r = Reader::new(bytes);
    let magic = r.u4("the magic number 0xCAFEBABE")?;
    if magic != 0xCAFE_BABE {
        return Err(ClassFormatError {
            offset: 0,
            expected: format!("the magic number 0xCAFEBABE (found {magic:#010X})"),
            hotspot: None,
        });
    }
    let minor_version = r.u2("minor_version")?;
    let major_version = r.u2("major_version")?;
    let cp = ConstantPool::parse(&mut r, major_version)?;
    let access_flags = r.u2("access_flags")?;
    let this_class = class_at(&cp, &mut r, "this_class")?;
    let super_index = r.u2("super_class")?;
    let super_class =
        if super_index == 0 { None } else { Some(cp.class_name(super_index).map_err(|e| r.error(e))?.clone()) };
    let n = r.u2("interfaces_count")?;
    let mut interfaces = Vec::with_capacity(n as usize);
    for _ in 0..n {
        interfaces.push(class_at(&cp, &mut r, "an interface index")?);
    }
    let n = r.u2("fields_count")?;
    let mut fields = Vec::with_capacity(n as usize);
    for _ in 0..n {
        fields.push(parse_field(&cp, &mut r)?);
    }
    let n = r.u2("methods_count")?;
    let mut methods = Vec::with_capacity(n as usize);
    for _ in 0..n {
        methods.push(parse_method(&cp, &mut r)?);
    }
    let mut class = ClassFile::new(this_class, super_class, interfaces, access_flags);
    class.minor_version = minor_version;
    class.major_version = major_version;
    class.fields = fields;
    class.methods = methods;
    let n = r.u2("attributes_count")?;
    let mut seen_bootstrap_methods = false;
    for _ in 0..n {
        let (name, body) = attribute(&cp, &mut r)?;
        if class.annotations.keep(&name, body) {
            continue;
        }
        let mut a = Reader::new(body);
        let base = r.offset() - body.len();
        let rebase = |e: ClassFormatError| ClassFormatError { offset: base + e.offset, ..e };
        match &*name {
            "SourceFile" => class.source_file = Some(utf8_at(&cp, &mut a, "SourceFile index").map_err(rebase)?),
            "Signature" => class.signature = Some(utf8_at(&cp, &mut a, "Signature index").map_err(rebase)?),
            "EnclosingMethod" => {
                let outer = class_at(&cp, &mut a, "enclosing class_index").map_err(rebase)?;
                let at = a.offset();
                let nat = a.u2("enclosing method_index").map_err(rebase)?;
                let method = if nat == 0 {
                    None
                } else {
                    let (n, d) = cp
                        .name_and_type(nat)
                        .map_err(|e| rebase(ClassFormatError { offset: at, expected: e, hotspot: None }))?;
                    Some((n.clone(), d.clone()))
                };
                class.enclosing_method = Some(EnclosingMethod { class: outer, method });
            }
            "BootstrapMethods" if major_version >= 51 => {
                if seen_bootstrap_methods {
                    return Err(rebase(hotspot(
                        &a,
                        "one BootstrapMethods attribute",
                        "Multiple BootstrapMethods attributes",
                    )));
                }
                seen_bootstrap_methods = true;
                class.bootstrap_methods = bootstrap_methods(&cp, &mut a).map_err(rebase)?;
            }
            "InnerClasses" => {
                let count = a.u2("number_of_classes").map_err(rebase)?;
                for _ in 0..count {
                    let inner = optional_class(&cp, &mut a, "inner_class_info_index").map_err(rebase)?;
                    let outer = optional_class(&cp, &mut a, "outer_class_info_index").map_err(rebase)?;
                    let name_index = a.u2("inner_name_index").map_err(rebase)?;
                    let inner_name = if name_index == 0 {
                        None
                    } else {
                        Some(cp.utf8(name_index).map_err(|e| rebase(a.error(e)))?.clone())
                    };
                    let access_flags = a.u2("inner_class_access_flags").map_err(rebase)?;
                    class.inner_classes.push(InnerClass {
                        inner_class: inner,
                        outer_class: outer,
                        inner_name,
                        access_flags,
                    });
                }
            }
            "NestHost" => class.nest_host = Some(class_at(&cp, &mut a, "host_class_index").map_err(rebase)?),
            "NestMembers" | "PermittedSubclasses" => {
                let count = a.u2("number_of_classes").map_err(rebase)?;
                let mut list = Vec::with_capacity(count as usize);
                for _ in 0..count {
                    list.push(class_at(&cp, &mut a, "a class index").map_err(rebase)?);
                }
                if &*name == "NestMembers" {
                    class.nest_members = list;
                } else {
                    class.permitted_subclasses = list;
                }
            }
            "Record" => {
                let count = a.u2("components_count").map_err(rebase)?;
                for _ in 0..count {
                    let name = utf8_at(&cp, &mut a, "record component name").map_err(rebase)?;
                    let descriptor = utf8_at(&cp, &mut a, "record component descriptor").map_err(rebase)?;
                    let attrs = a.u2("record component attributes_count").map_err(rebase)?;
                    let mut component =
                        RecordComponent { name, descriptor, signature: None, annotations: RawAnnotations::default() };
                    for _ in 0..attrs {
                        let (name, body) = attribute(&cp, &mut a).map_err(rebase)?;
                        if &*name == "Signature" && body.len() == 2 {
                            component.signature = cp.utf8(u16::from_be_bytes([body[0], body[1]])).ok().cloned();
                        } else {
                            component.annotations.keep(&name, body);
                        }
                    }
                    class.record_components.push(component);
                }
            }
            _ => {}
        }
    }
    if cp.max_bootstrap_index().is_some() && !seen_bootstrap_methods {
        return Err(hotspot(&r, "a BootstrapMethods attribute", "Missing BootstrapMethods attribute"));
    }
    if !r.at_end() {
        return Err(r.error("the end of the class file"));
    }
    class.constant_pool = cp;
    Ok(class)
}

/// A refusal HotSpot words as `"{words} in class file {name}"`.
fn hotspot(r: &Reader, expected: &str, words: &str) -> ClassFormatError {
    ClassFormatError::hotspot(r.offset(), expected, format!("{words} in class file "), "")
}

/// The body of a `BootstrapMethods` attribute, checked as HotSpot checks it: enough entries for
/// every `Dynamic` and `InvokeDynamic` constant, each a method handle with loadable arguments.
fn bootstrap_methods(cp: &ConstantPool, a: &mut Reader) -> Result<Vec<BootstrapMethod>, ClassFormatError> {
    let length = a.remaining();
    if length < 2 {
        return Err(ClassFormatError::hotspot(
            a.offset(),
            "num_bootstrap_methods",
            format!("Invalid BootstrapMethods attribute length {length} in class file "),
            "",
        ));
    }
    let count = a.u2("num_bootstrap_methods")?;
    if cp.max_bootstrap_index().is_some_and(|max| max >= count) {
        return Err(hotspot(a, "a bootstrap method for every dynamic constant", "Short length on BootstrapMethods"));
    }
    let overrun = |a: &Reader| {
        hotspot(
            a,
            "bootstrap methods within the attribute",
            "Invalid BootstrapMethods num_bootstrap_methods or num_bootstrap_arguments value",
        )
    };
    let mut methods = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let at = a.offset();
        let method_handle = a.u2("bootstrap_method_ref")?;
        let nargs = a.u2("num_bootstrap_arguments")?;
        if method_handle == 0 || !matches!(cp.get(method_handle), Some(Constant::MethodHandle { .. })) {
            return Err(ClassFormatError::hotspot(
                at,
                format!("bootstrap_method_ref #{method_handle} to be a MethodHandle"),
                format!("bootstrap_method_index {method_handle} has bad constant type in class file "),
                "",
            ));
        }
        if a.remaining() < 2 * nargs as usize {
            return Err(overrun(a));
        }
        let mut arguments = Vec::with_capacity(nargs as usize);
        for _ in 0..nargs {
            let at = a.offset();
            let argument = a.u2("bootstrap argument")?;
            if !cp.is_loadable(argument) {
                return Err(ClassFormatError::hotspot(
                    at,
                    format!("bootstrap argument #{argument} to be a loadable constant"),
                    format!("argument_index {argument} has bad constant type in class file "),
                    "",
                ));
            }
            arguments.push(argument);
        }
        methods.push(BootstrapMethod { method_handle, arguments });
    }
    if !a.at_end() {
        return Err(hotspot(a, "the end of the BootstrapMethods attribute", "Bad length on BootstrapMethods"));
    }
    Ok(methods)
}

fn class_at(cp: &ConstantPool, r: &mut Reader, what: &str) -> Result<Arc<str>, ClassFormatError> {
    let at = r.offset();
    let i = r.u2(what)?;
    cp.class_name(i).cloned().map_err(|e| ClassFormatError {
        offset: at,
        expected: format!("{what}: {e}"),
        hotspot: None,
    })
}

fn optional_class(cp: &ConstantPool, r: &mut Reader, what: &str) -> Result<Option<Arc<str>>, ClassFormatError> {
    let at = r.offset();
    let i = r.u2(what)?;
    if i == 0 {
        return Ok(None);
    }
    cp.class_name(i).cloned().map(Some).map_err(|e| ClassFormatError {
        offset: at,
        expected: format!("{what}: {e}"),
        hotspot: None,
    })
}

fn utf8_at(cp: &ConstantPool, r: &mut Reader, what: &str) -> Result<Arc<str>, ClassFormatError> {
    let at = r.offset();
    let i = r.u2(what)?;
    cp.utf8(i).cloned().map_err(|e| ClassFormatError { offset: at, expected: format!("{what}: {e}"), hotspot: None })
}

/// Reads one attribute header and returns its name and body.
fn attribute<'a>(cp: &ConstantPool, r: &mut Reader<'a>) -> Result<(Arc<str>, &'a [u8]), ClassFormatError> {
    let name = utf8_at(cp, r, "attribute_name_index")?;
    let len = r.u4("attribute_length")? as usize;
    Ok((name, r.bytes(len, "attribute body")?))
}

fn parse_field(cp: &ConstantPool, r: &mut Reader) -> Result<FieldInfo, ClassFormatError> {
    let access_flags = r.u2("field access_flags")?;
    let name = utf8_at(cp, r, "field name_index")?;
    let descriptor = utf8_at(cp, r, "field descriptor_index")?;
    if !descriptor::is_field_descriptor(&descriptor) {
        return Err(r.error(format!("a field descriptor (found {descriptor:?})")));
    }
    let mut field = FieldInfo {
        access_flags,
        name,
        descriptor,
        constant_value: None,
        signature: None,
        annotations: RawAnnotations::default(),
    };
    let n = r.u2("field attributes_count")?;
    for _ in 0..n {
        let (name, body) = attribute(cp, r)?;
        if field.annotations.keep(&name, body) {
            continue;
        }
        match &*name {
            "ConstantValue" if body.len() == 2 => field.constant_value = Some(u16::from_be_bytes([body[0], body[1]])),
            "Signature" if body.len() == 2 => {
                field.signature = cp.utf8(u16::from_be_bytes([body[0], body[1]])).ok().cloned()
            }
            _ => {}
        }
    }
    Ok(field)
}

fn parse_method(cp: &ConstantPool, r: &mut Reader) -> Result<MethodInfo, ClassFormatError> {
    let access_flags = r.u2("method access_flags")?;
    let name = utf8_at(cp, r, "method name_index")?;
    let descriptor = utf8_at(cp, r, "method descriptor_index")?;
    if descriptor::MethodDescriptor::parse(&descriptor).is_none() {
        return Err(r.error(format!("a method descriptor (found {descriptor:?})")));
    }
    let mut method = MethodInfo {
        access_flags,
        name,
        descriptor,
        code: None,
        exceptions: Vec::new(),
        signature: None,
        hidden: false,
        caller_sensitive: false,
        annotations: RawAnnotations::default(),
        parameters: None,
    };
    let n = r.u2("method attributes_count")?;
    for _ in 0..n {
        let (name, body) = attribute(cp, r)?;
        let base = r.offset() - body.len();
        let rebase = |e: ClassFormatError| ClassFormatError { offset: base + e.offset, ..e };
        let mut a = Reader::new(body);
        match &*name {
            "Code" => method.code = Some(parse_code(cp, &mut a).map_err(rebase)?),
            "Exceptions" => {
                let count = a.u2("number_of_exceptions").map_err(rebase)?;
                for _ in 0..count {
                    method.exceptions.push(class_at(cp, &mut a, "exception class").map_err(rebase)?);
                }
            }
            "Signature" if body.len() == 2 => {
                method.signature = cp.utf8(u16::from_be_bytes([body[0], body[1]])).ok().cloned()
            }
            // Malformed annotations do not make a class unloadable: they only hide nothing.
            "RuntimeVisibleAnnotations" => {
                let types = annotation_types(cp, &mut a).unwrap_or_default();
                method.hidden = types.iter().any(|t| &**t == HIDDEN);
                method.caller_sensitive = types.iter().any(|t| &**t == CALLER_SENSITIVE);
                method.annotations.keep(&name, body);
            }
            "MethodParameters" => method.parameters = Some(Arc::from(body)),
            _ if method.annotations.keep(&name, body) => {}
            _ => {}
        }
    }
    Ok(method)
}

const HIDDEN: &str = "Ljdk/internal/vm/annotation/Hidden;";
const CALLER_SENSITIVE: &str = "Ljdk/internal/reflect/CallerSensitive;";

/// The types of a RuntimeVisibleAnnotations attribute's annotations (their values skipped).
fn annotation_types(cp: &ConstantPool, r: &mut Reader) -> Result<Vec<Arc<str>>, ClassFormatError> {
    let n = r.u2("num_annotations")?;
    let mut types = Vec::with_capacity(n as usize);
    for _ in 0..n {
        types.push(annotation(cp, r)?);
    }
    Ok(types)
}

/// One annotation: its type; its element values are skipped.
fn annotation(cp: &ConstantPool, r: &mut Reader) -> Result<Arc<str>, ClassFormatError> {
    let ty = utf8_at(cp, r, "annotation type_index")?;
    let pairs = r.u2("num_element_value_pairs")?;
    for _ in 0..pairs {
        r.u2("element_name_index")?;
        skip_element_value(cp, r)?;
    }
    Ok(ty)
}

fn skip_element_value(cp: &ConstantPool, r: &mut Reader) -> Result<(), ClassFormatError> {
    match r.u1("element_value tag")? {
        b'B' | b'C' | b'D' | b'F' | b'I' | b'J' | b'S' | b'Z' | b's' | b'c' => {
            r.u2("element value index")?;
        }
        b'e' => {
            r.u2("enum type_name_index")?;
            r.u2("enum const_name_index")?;
        }
        b'@' => {
            annotation(cp, r)?;
        }
        b'[' => {
            for _ in 0..r.u2("num_values")? {
                skip_element_value(cp, r)?;
            }
        }
        other => return Err(r.error(format!("an element_value tag (found {other:#x})"))),
    }
    Ok(())
}

fn parse_code(cp: &ConstantPool, r: &mut Reader) -> Result<Code, ClassFormatError> {
    let max_stack = r.u2("max_stack")?;
    let max_locals = r.u2("max_locals")?;
    let len = r.u4("code_length")? as usize;
    if len == 0 || len > 65535 {
        return Err(r.error(format!("a code_length from 1 to 65535 (found {len})")));
    }
    let bytecode = r.bytes(len, "bytecode")?.to_vec();
    let n = r.u2("exception_table_length")?;
    let mut exception_table = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let h = ExceptionHandler {
            start_pc: r.u2("start_pc")?,
            end_pc: r.u2("end_pc")?,
            handler_pc: r.u2("handler_pc")?,
            catch_type: r.u2("catch_type")?,
        };
        if h.start_pc >= h.end_pc || h.end_pc as usize > len || h.handler_pc as usize >= len {
            return Err(r.error("an exception handler whose pcs lie within the code"));
        }
        if h.catch_type != 0 && cp.class_name(h.catch_type).is_err() {
            return Err(r.error("a catch_type naming a class"));
        }
        exception_table.push(h);
    }
    let mut code = Code {
        max_stack,
        max_locals,
        bytecode,
        exception_table,
        line_numbers: Vec::new(),
        local_variables: Vec::new(),
        stack_map_table: None,
    };
    let n = r.u2("Code attributes_count")?;
    for _ in 0..n {
        let (name, body) = attribute(cp, r)?;
        let base = r.offset() - body.len();
        let rebase = |e: ClassFormatError| ClassFormatError { offset: base + e.offset, ..e };
        let mut a = Reader::new(body);
        match &*name {
            "LineNumberTable" => {
                let count = a.u2("line_number_table_length").map_err(rebase)?;
                for _ in 0..count {
                    let pc = a.u2("line start_pc").map_err(rebase)?;
                    let line = a.u2("line_number").map_err(rebase)?;
                    code.line_numbers.push((pc, line));
                }
            }
            "LocalVariableTable" => {
                let count = a.u2("local_variable_table_length").map_err(rebase)?;
                for _ in 0..count {
                    let start_pc = a.u2("local start_pc").map_err(rebase)?;
                    let length = a.u2("local length").map_err(rebase)?;
                    let name = utf8_at(cp, &mut a, "local name_index").map_err(rebase)?;
                    let descriptor = utf8_at(cp, &mut a, "local descriptor_index").map_err(rebase)?;
                    let index = a.u2("local index").map_err(rebase)?;
                    code.local_variables.push(LocalVariable { start_pc, length, name, descriptor, index });
                }
            }
            "StackMapTable" => code.stack_map_table = Some(Arc::from(body)),
            _ => {}
        }
    }
    Ok(code)
}

#[cfg(test)]
mod tests;
