//! The constant pool: parsed once, entries checked for the tags their users expect.

use super::descriptor::{is_field_descriptor, MethodDescriptor};
use super::reader::Reader;
use super::ClassFormatError;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub enum Constant {
    /// Index 0 and the second slot of a long or double.
    Unusable,
    Utf8(Arc<str>),
    Integer(i32),
    Float(f32),
    Long(i64),
    Double(f64),
    Class {
        name: u16,
    },
    String {
        utf8: u16,
    },
    FieldRef {
        class: u16,
        name_and_type: u16,
    },
    MethodRef {
        class: u16,
        name_and_type: u16,
    },
    InterfaceMethodRef {
        class: u16,
        name_and_type: u16,
    },
    NameAndType {
        name: u16,
        descriptor: u16,
    },
    MethodHandle {
        kind: u8,
        reference: u16,
    },
    MethodType {
        descriptor: u16,
    },
    Dynamic {
        bootstrap: u16,
        name_and_type: u16,
    },
    InvokeDynamic {
        bootstrap: u16,
        name_and_type: u16,
    },
    Module {
        name: u16,
    },
    Package {
        name: u16,
    },
}

/// A symbolic reference to a field or method: owner class, name and descriptor.
#[derive(Debug, Clone)]
pub struct MemberRef {
    pub class: Arc<str>,
    pub name: Arc<str>,
    pub descriptor: Arc<str>,
    pub interface: bool,
}

#[derive(Debug, Clone, Default)]
pub struct ConstantPool {
    entries: Vec<Constant>,
    /// The exact UTF-16 of Utf8 entries that are not valid Unicode (lone surrogates, which Java
    /// string literals may hold); their `Utf8` text has U+FFFD in those places.
    exact_utf16: std::collections::HashMap<u16, Arc<[u16]>>,
}

impl ConstantPool {
    pub(crate) fn parse(r: &mut Reader, major: u16) -> Result<Self, ClassFormatError> {
        let count = r.u2("constant_pool_count")? as usize;
        let mut entries = Vec::with_capacity(count);
        let mut exact_utf16 = std::collections::HashMap::new();
        entries.push(Constant::Unusable);
        while entries.len() < count {
            let at = r.offset();
            let tag = r.u1("constant pool tag")?;
            // Tags newer than the class file's version (HotSpot refuses them).
            let since = match tag {
                15 | 16 | 18 => 51,
                17 => 55,
                _ => 0,
            };
            if major < since {
                return Err(ClassFormatError::hotspot(
                    at,
                    format!("a constant pool tag of class file version {major} (found {tag})"),
                    format!("Class file version does not support constant tag {tag} in class file "),
                    "",
                ));
            }
            let c = match tag {
                1 => {
                    let len = r.u2("Utf8 length")? as usize;
                    let bytes = r.bytes(len, "Utf8 bytes")?;
                    let malformed = || ClassFormatError {
                        offset: at,
                        expected: "well-formed modified UTF-8".into(),
                        hotspot: None,
                    };
                    let text = decode_modified_utf8(bytes).ok_or_else(malformed)?;
                    if text.contains('\u{FFFD}') {
                        let units = modified_utf8_to_utf16(bytes).ok_or_else(malformed)?;
                        exact_utf16.insert(entries.len() as u16, Arc::from(units));
                    }
                    Constant::Utf8(text)
                }
                3 => Constant::Integer(r.u4("Integer")? as i32),
                4 => Constant::Float(f32::from_bits(r.u4("Float")?)),
                5 => Constant::Long(r.u8("Long")? as i64),
                6 => Constant::Double(f64::from_bits(r.u8("Double")?)),
                7 => Constant::Class { name: r.u2("Class name index")? },
                8 => Constant::String { utf8: r.u2("String index")? },
                9..=11 => {
                    let class = r.u2("ref class index")?;
                    let name_and_type = r.u2("ref name_and_type index")?;
                    match tag {
                        9 => Constant::FieldRef { class, name_and_type },
                        10 => Constant::MethodRef { class, name_and_type },
                        _ => Constant::InterfaceMethodRef { class, name_and_type },
                    }
                }
                12 => Constant::NameAndType {
                    name: r.u2("NameAndType name")?,
                    descriptor: r.u2("NameAndType descriptor")?,
                },
                15 => Constant::MethodHandle {
                    kind: r.u1("MethodHandle kind")?,
                    reference: r.u2("MethodHandle reference")?,
                },
                16 => Constant::MethodType { descriptor: r.u2("MethodType descriptor")? },
                17 => Constant::Dynamic {
                    bootstrap: r.u2("Dynamic bootstrap")?,
                    name_and_type: r.u2("Dynamic name_and_type")?,
                },
                18 => Constant::InvokeDynamic {
                    bootstrap: r.u2("InvokeDynamic bootstrap")?,
                    name_and_type: r.u2("InvokeDynamic name_and_type")?,
                },
                19 => Constant::Module { name: r.u2("Module name")? },
                20 => Constant::Package { name: r.u2("Package name")? },
                _ => {
                    return Err(ClassFormatError::hotspot(
                        at,
                        format!("a constant pool tag (found {tag})"),
                        format!("Unknown constant tag {tag} in class file "),
                        "",
                    ))
                }
            };
            let wide = matches!(c, Constant::Long(_) | Constant::Double(_));
            entries.push(c);
            if wide {
                entries.push(Constant::Unusable);
            }
        }
        if entries.len() != count {
            return Err(r.error("a long or double entry that fits in the constant pool"));
        }
        let pool = ConstantPool { entries, exact_utf16 };
        pool.check_references(r.offset(), major)?;
        Ok(pool)
    }

    /// HotSpot's checks of the pool (`ClassFileParser::parse_constant_pool`), in its order and
    /// with its words: first that every index inside an entry points at an entry of the kind it
    /// needs, then that descriptors fit their users and special names are where they may be.
    fn check_references(&self, offset: usize, major: u16) -> Result<(), ClassFormatError> {
        let refuse = |expected: String, before: String, after: &str| {
            Err(ClassFormatError::hotspot(offset, expected, before, after))
        };
        let invalid = |index: u16, after: &str| {
            refuse(
                format!("constant pool index {index} to refer to an entry of the right kind"),
                format!("Invalid constant pool index {index} in class file "),
                after,
            )
        };
        let is = |index: u16, kind: fn(&Constant) -> bool| self.get(index).is_some_and(kind);
        let utf8 = |c: &Constant| matches!(c, Constant::Utf8(_));
        let class = |c: &Constant| matches!(c, Constant::Class { .. });
        let nat = |c: &Constant| matches!(c, Constant::NameAndType { .. });
        let field = |c: &Constant| matches!(c, Constant::FieldRef { .. });
        let method = |c: &Constant| matches!(c, Constant::MethodRef { .. });
        let interface_method = |c: &Constant| matches!(c, Constant::InterfaceMethodRef { .. });
        for (i, c) in self.entries.iter().enumerate() {
            match *c {
                Constant::FieldRef { class: k, name_and_type: n }
                | Constant::MethodRef { class: k, name_and_type: n }
                | Constant::InterfaceMethodRef { class: k, name_and_type: n } => {
                    if !is(k, class) {
                        return invalid(k, "");
                    }
                    if !is(n, nat) {
                        return invalid(n, "");
                    }
                }
                Constant::NameAndType { name, descriptor } => {
                    for index in [name, descriptor] {
                        if !is(index, utf8) {
                            return invalid(index, "");
                        }
                    }
                }
                Constant::Class { name: index }
                | Constant::Module { name: index }
                | Constant::Package { name: index }
                | Constant::String { utf8: index }
                | Constant::MethodType { descriptor: index }
                    if !is(index, utf8) =>
                {
                    return invalid(index, "");
                }
                Constant::MethodHandle { kind, reference } => {
                    if self.get(reference).is_none() || reference == 0 {
                        return invalid(reference, "");
                    }
                    let (ok, not) = match kind {
                        1..=4 => (is(reference, field), " (not a field)"),
                        5 | 8 => (is(reference, method), " (not a method)"),
                        6 | 7 => (
                            is(reference, method) || (major >= 52 && is(reference, interface_method)),
                            " (not a method)",
                        ),
                        9 => (is(reference, interface_method), " (not an interface method)"),
                        _ => {
                            return refuse(
                                format!("a method handle kind from 1 to 9 at constant pool entry #{i}"),
                                format!("Bad method handle kind at constant pool index {i} in class file "),
                                "",
                            )
                        }
                    };
                    if !ok {
                        return invalid(reference, not);
                    }
                }
                Constant::Dynamic { name_and_type: n, .. } | Constant::InvokeDynamic { name_and_type: n, .. }
                    if !is(n, nat) =>
                {
                    return invalid(n, "");
                }
                _ => {}
            }
        }
        let illegal = |what: &str, name: &str, descriptor: &str| {
            refuse(
                format!("a descriptor that fits its {what} {name:?} (found {descriptor:?})"),
                format!("{what} \"{name}\" in class "),
                &format!(" has illegal signature \"{descriptor}\""),
            )
        };
        // Every reference was checked above: these lookups succeed.
        let text = |index: u16| self.utf8(index).map(|s| &**s).unwrap_or("");
        let name_and_type = |index: u16| match self.get(index) {
            Some(&Constant::NameAndType { name, descriptor }) => (name, text(name), text(descriptor)),
            _ => (0, "", ""),
        };
        for c in &self.entries {
            match *c {
                Constant::NameAndType { name, descriptor } => {
                    for index in [descriptor, name] {
                        if text(index).is_empty() {
                            return refuse(
                                format!("a non-empty Utf8 at constant pool entry #{index}"),
                                format!("Illegal zero length constant pool entry at {index} in class "),
                                "",
                            );
                        }
                    }
                    let (n, d) = (text(name), text(descriptor));
                    if d.starts_with('(') {
                        if MethodDescriptor::parse(d).is_none() {
                            return illegal("Method", n, d);
                        }
                    } else if !is_field_descriptor(d) {
                        return illegal("Field", n, d);
                    }
                }
                Constant::Dynamic { name_and_type: nt, .. } => {
                    let (_, n, d) = name_and_type(nt);
                    if d.starts_with('(') {
                        return illegal("CONSTANT_Dynamic", n, d);
                    }
                }
                Constant::FieldRef { name_and_type: nt, .. } => {
                    let (_, n, d) = name_and_type(nt);
                    if d.starts_with('(') {
                        return illegal("Field", n, d);
                    }
                }
                Constant::MethodRef { name_and_type: nt, .. }
                | Constant::InterfaceMethodRef { name_and_type: nt, .. }
                | Constant::InvokeDynamic { name_and_type: nt, .. } => {
                    let (name_index, n, d) = name_and_type(nt);
                    if !d.starts_with('(') {
                        return illegal("Method", n, d);
                    }
                    if matches!(c, Constant::MethodRef { .. }) && n.starts_with('<') && n != "<init>" {
                        return refuse(
                            format!("a method name at constant pool entry #{name_index}"),
                            format!("Bad method name at constant pool index {name_index} in class file "),
                            "",
                        );
                    }
                }
                Constant::MethodHandle { kind: kind @ 5..=8, reference } => {
                    let nt = match self.get(reference) {
                        Some(
                            Constant::MethodRef { name_and_type, .. }
                            | Constant::InterfaceMethodRef { name_and_type, .. },
                        ) => *name_and_type,
                        _ => continue,
                    };
                    let (name_index, n, _) = name_and_type(nt);
                    let (bad, what) =
                        if kind == 8 { (n != "<init>", "constructor") } else { (n == "<init>", "method") };
                    if bad {
                        return refuse(
                            format!("a {what} name at constant pool entry #{name_index}"),
                            format!("Bad {what} name at constant pool index {name_index} in class file "),
                            "",
                        );
                    }
                }
                Constant::MethodType { descriptor } if MethodDescriptor::parse(text(descriptor)).is_none() => {
                    return illegal("Method", "type", text(descriptor));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The highest bootstrap-method index a `Dynamic` or `InvokeDynamic` entry names.
    pub(crate) fn max_bootstrap_index(&self) -> Option<u16> {
        self.entries
            .iter()
            .filter_map(|c| match c {
                Constant::Dynamic { bootstrap, .. } | Constant::InvokeDynamic { bootstrap, .. } => Some(*bootstrap),
                _ => None,
            })
            .max()
    }

    /// An entry `ldc` may load, and so a bootstrap method's static argument (JVMS §4.4).
    pub(crate) fn is_loadable(&self, index: u16) -> bool {
        index != 0
            && matches!(
                self.get(index),
                Some(
                    Constant::Integer(_)
                        | Constant::Float(_)
                        | Constant::Long(_)
                        | Constant::Double(_)
                        | Constant::Class { .. }
                        | Constant::String { .. }
                        | Constant::MethodHandle { .. }
                        | Constant::MethodType { .. }
                        | Constant::Dynamic { .. }
                )
            )
    }

    /// A pool made by [`super::builder::ClassBuilder`]: its entries are consistent by construction.
    pub(crate) fn from_entries(entries: Vec<Constant>) -> Self {
        ConstantPool { entries, exact_utf16: Default::default() }
    }

    /// The UTF-16 code units of a Utf8 entry, exactly as Java sees them (for string literals).
    pub fn utf16(&self, index: u16) -> Result<Vec<u16>, String> {
        if let Some(units) = self.exact_utf16.get(&index) {
            return Ok(units.to_vec());
        }
        Ok(self.utf8(index)?.encode_utf16().collect())
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.len() <= 1
    }

    pub fn get(&self, index: u16) -> Option<&Constant> {
        self.entries.get(index as usize)
    }

    pub fn utf8(&self, index: u16) -> Result<&Arc<str>, String> {
        match self.get(index) {
            Some(Constant::Utf8(s)) => Ok(s),
            _ => Err(format!("constant #{index} to be Utf8")),
        }
    }

    pub fn class_name(&self, index: u16) -> Result<&Arc<str>, String> {
        match self.get(index) {
            Some(Constant::Class { name }) => self.utf8(*name),
            _ => Err(format!("constant #{index} to be a Class")),
        }
    }

    pub fn name_and_type(&self, index: u16) -> Result<(&Arc<str>, &Arc<str>), String> {
        match self.get(index) {
            Some(Constant::NameAndType { name, descriptor }) => Ok((self.utf8(*name)?, self.utf8(*descriptor)?)),
            _ => Err(format!("constant #{index} to be a NameAndType")),
        }
    }

    /// A field, method or interface-method reference.
    pub fn member_ref(&self, index: u16) -> Result<MemberRef, String> {
        let (class, nat, interface) = match self.get(index) {
            Some(Constant::FieldRef { class, name_and_type }) | Some(Constant::MethodRef { class, name_and_type }) => {
                (*class, *name_and_type, false)
            }
            Some(Constant::InterfaceMethodRef { class, name_and_type }) => (*class, *name_and_type, true),
            _ => return Err(format!("constant #{index} to be a member reference")),
        };
        let (name, descriptor) = self.name_and_type(nat)?;
        Ok(MemberRef {
            class: self.class_name(class)?.clone(),
            name: name.clone(),
            descriptor: descriptor.clone(),
            interface,
        })
    }
}

/// Decodes the JVM's modified UTF-8 (surrogate pairs as two 3-byte sequences, NUL as two bytes).
/// Lone surrogates become U+FFFD here; [`ConstantPool::utf16`] keeps them.
pub fn decode_modified_utf8(bytes: &[u8]) -> Option<Arc<str>> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !s.contains('\0') {
            return Some(Arc::from(s));
        }
    }
    modified_utf8_to_utf16(bytes).map(|units| Arc::from(String::from_utf16_lossy(&units)))
}

/// The UTF-16 code units that modified UTF-8 encodes.
fn modified_utf8_to_utf16(bytes: &[u8]) -> Option<Vec<u16>> {
    let mut units: Vec<u16> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b & 0x80 == 0 {
            units.push(b as u16);
            i += 1;
        } else if b & 0xE0 == 0xC0 {
            let b2 = *bytes.get(i + 1)?;
            units.push((((b & 0x1F) as u16) << 6) | (b2 & 0x3F) as u16);
            i += 2;
        } else if b & 0xF0 == 0xE0 {
            let b2 = *bytes.get(i + 1)?;
            let b3 = *bytes.get(i + 2)?;
            units.push((((b & 0x0F) as u16) << 12) | (((b2 & 0x3F) as u16) << 6) | (b3 & 0x3F) as u16);
            i += 3;
        } else {
            return None;
        }
    }
    Some(units)
}
