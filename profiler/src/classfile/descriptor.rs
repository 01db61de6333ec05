//! Field and method descriptors (JVMS §4.3).

/// The JVM's value kinds as they sit in a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Boolean,
    Byte,
    Char,
    Short,
    Int,
    Float,
    Long,
    Double,
    Reference,
    Void,
}

impl Kind {
    pub fn from_descriptor_char(c: u8) -> Option<Kind> {
        Some(match c {
            b'Z' => Kind::Boolean,
            b'B' => Kind::Byte,
            b'C' => Kind::Char,
            b'S' => Kind::Short,
            b'I' => Kind::Int,
            b'F' => Kind::Float,
            b'J' => Kind::Long,
            b'D' => Kind::Double,
            b'L' | b'[' => Kind::Reference,
            b'V' => Kind::Void,
            _ => return None,
        })
    }

    /// Operand-stack slots a value of this kind takes.
    pub fn slots(self) -> usize {
        match self {
            Kind::Long | Kind::Double => 2,
            Kind::Void => 0,
            _ => 1,
        }
    }

    pub fn is_wide(self) -> bool {
        matches!(self, Kind::Long | Kind::Double)
    }
}

/// Length of the field type starting at `s[0]`, or None if malformed.
fn field_type_len(s: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < s.len() && s[i] == b'[' {
        i += 1;
    }
    if i > 255 {
        return None;
    }
    match *s.get(i)? {
        b'Z' | b'B' | b'C' | b'S' | b'I' | b'F' | b'J' | b'D' => Some(i + 1),
        b'L' => {
            let end = s[i..].iter().position(|&c| c == b';')?;
            if end <= 1 {
                return None;
            }
            Some(i + end + 1)
        }
        _ => None,
    }
}

pub fn is_field_descriptor(s: &str) -> bool {
    field_type_len(s.as_bytes()) == Some(s.len())
}

/// The kind of a field descriptor.
pub fn field_kind(s: &str) -> Kind {
    Kind::from_descriptor_char(s.as_bytes().first().copied().unwrap_or(b'V')).unwrap_or(Kind::Void)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodDescriptor {
    pub params: Vec<Kind>,
    /// The parameter descriptors, one string each.
    pub param_types: Vec<String>,
    pub ret: Kind,
    pub return_type: String,
}

impl MethodDescriptor {
    pub fn parse(s: &str) -> Option<MethodDescriptor> {
        let b = s.as_bytes();
        if b.first() != Some(&b'(') {
            return None;
        }
        let mut i = 1;
        let mut params = Vec::new();
        let mut param_types = Vec::new();
        while *b.get(i)? != b')' {
            let len = field_type_len(&b[i..])?;
            params.push(Kind::from_descriptor_char(b[i])?);
            param_types.push(s[i..i + len].to_string());
            i += len;
        }
        i += 1;
        let ret = if b.get(i) == Some(&b'V') && i + 1 == b.len() {
            Kind::Void
        } else {
            let len = field_type_len(&b[i..])?;
            if i + len != b.len() {
                return None;
            }
            Kind::from_descriptor_char(b[i])?
        };
        Some(MethodDescriptor { params, param_types, ret, return_type: s[i..].to_string() })
    }

    /// Slots the parameters take (without the receiver).
    pub fn param_slots(&self) -> usize {
        self.params.iter().map(|k| k.slots()).sum()
    }
}

/// The primitive types with their descriptor characters.
pub const PRIMITIVES: [(&str, char); 9] = [
    ("boolean", 'Z'),
    ("byte", 'B'),
    ("char", 'C'),
    ("short", 'S'),
    ("int", 'I'),
    ("float", 'F'),
    ("long", 'J'),
    ("double", 'D'),
    ("void", 'V'),
];

/// Java's name of the primitive type a descriptor character stands for (`I` → `int`).
pub fn primitive_name(c: char) -> Option<&'static str> {
    PRIMITIVES.iter().find(|p| p.1 == c).map(|p| p.0)
}
