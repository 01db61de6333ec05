//! The constant pool: parsed once, entries checked for the tags their users expect.

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
    pub(crate) fn parse(r: &mut Reader) -> Result<Self, ClassFormatError> {
        let count = r.u2("constant_pool_count")? as usize;
        let mut entries = Vec::with_capacity(count);
        let mut exact_utf16 = std::collections::HashMap::new();
        entries.push(Constant::Unusable);
        while entries.len() < count {
            let at = r.offset();
            let tag = r.u1("constant pool tag")?;
            let c = match tag {
                1 => {
                    let len = r.u2("Utf8 length")? as usize;
                    let bytes = r.bytes(len, "Utf8 bytes")?;
                    let malformed = || ClassFormatError { offset: at, expected: "well-formed modified UTF-8".into() };
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
                    return Err(ClassFormatError { offset: at, expected: format!("a constant pool tag (found {tag})") })
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
        pool.check_references().map_err(|e| r.error(e))?;
        Ok(pool)
    }

    /// Every index inside an entry points at an entry of the kind it needs.
    fn check_references(&self) -> Result<(), String> {
        for (i, c) in self.entries.iter().enumerate() {
            let ok = match *c {
                Constant::Class { name } | Constant::Module { name } | Constant::Package { name } => {
                    self.utf8(name).is_ok()
                }
                Constant::String { utf8 } => self.utf8(utf8).is_ok(),
                Constant::MethodType { descriptor } => self.utf8(descriptor).is_ok(),
                Constant::FieldRef { class, name_and_type }
                | Constant::MethodRef { class, name_and_type }
                | Constant::InterfaceMethodRef { class, name_and_type } => {
                    self.class_name(class).is_ok() && self.name_and_type(name_and_type).is_ok()
                }
                Constant::NameAndType { name, descriptor } => self.utf8(name).is_ok() && self.utf8(descriptor).is_ok(),
                Constant::Dynamic { name_and_type, .. } | Constant::InvokeDynamic { name_and_type, .. } => {
                    self.name_and_type(name_and_type).is_ok()
                }
                Constant::MethodHandle { kind, reference } => {
                    (1..=9).contains(&kind)
                        && matches!(
                            self.get(reference),
                            Some(
                                Constant::FieldRef { .. }
                                    | Constant::MethodRef { .. }
                                    | Constant::InterfaceMethodRef { .. }
                            )
                        )
                }
                _ => true,
            };
            if !ok {
                return Err(format!("constant pool entry #{i} to refer to entries of the right kind"));
            }
        }
        Ok(())
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
