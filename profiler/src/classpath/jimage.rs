//! The JDK's `lib/modules` file (the jimage format): a hashed index of resources named
//! `/module/parent/base.extension`, with `/packages/<pkg>` entries that map a package to its module.
//! The index (header, hash tables, locations, strings: a few MB) is read once; resources are read
//! with positioned reads on demand, so the image's 100+ MB never sit in memory.

use super::{ClassPathError, Origin};
use std::collections::HashMap;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const MAGIC: u32 = 0xCAFE_DADA;
const HASH_MULTIPLIER: u32 = 0x0100_0193;
const HEADER_SIZE: usize = 28;

// Location attribute kinds.
const ATTR_END: u8 = 0;
const ATTR_MODULE: u8 = 1;
const ATTR_PARENT: u8 = 2;
const ATTR_BASE: u8 = 3;
const ATTR_EXTENSION: u8 = 4;
const ATTR_OFFSET: u8 = 5;
const ATTR_COMPRESSED: u8 = 6;
const ATTR_UNCOMPRESSED: u8 = 7;

pub struct JImage {
    path: PathBuf,
    file: std::fs::File,
    /// The index only: everything before the resources.
    data: Vec<u8>,
    file_len: u64,
    table_length: usize,
    redirect: usize,
    offsets: usize,
    locations: usize,
    strings: usize,
    index_size: usize,
    package_modules: Mutex<HashMap<String, Option<String>>>,
}

#[derive(Default)]
struct Location {
    attrs: [u64; 8],
}

fn hash(name: &[u8], seed: u32) -> u32 {
    let mut h = seed;
    for &b in name {
        h = h.wrapping_mul(HASH_MULTIPLIER) ^ b as u32;
    }
    h & 0x7FFF_FFFF
}

impl JImage {
    pub fn open(path: &Path) -> Result<Self, ClassPathError> {
        let io = |source| ClassPathError::Io { path: path.into(), source };
        let file = std::fs::File::open(path).map_err(io)?;
        let file_len = file.metadata().map_err(io)?.len();
        let bad = |reason: &str| ClassPathError::BadImage { path: path.into(), reason: reason.into() };
        let mut header = [0u8; HEADER_SIZE];
        if file_len < HEADER_SIZE as u64 {
            return Err(bad("shorter than its header"));
        }
        file.read_exact_at(&mut header, 0).map_err(io)?;
        let word =
            |i: usize| u32::from_le_bytes([header[i * 4], header[i * 4 + 1], header[i * 4 + 2], header[i * 4 + 3]]);
        if word(0) != MAGIC {
            return Err(bad("wrong magic number (a big-endian image is not supported)"));
        }
        let table_length = word(4) as usize;
        let locations_size = word(5) as usize;
        let strings_size = word(6) as usize;
        let redirect = HEADER_SIZE;
        let offsets = redirect + table_length * 4;
        let locations = offsets + table_length * 4;
        let strings = locations + locations_size;
        let index_size = strings + strings_size;
        if index_size as u64 > file_len || table_length == 0 {
            return Err(bad("index larger than the file"));
        }
        let mut data = vec![0u8; index_size];
        file.read_exact_at(&mut data, 0).map_err(io)?;
        Ok(JImage {
            path: path.into(),
            file,
            data,
            file_len,
            table_length,
            redirect,
            offsets,
            locations,
            strings,
            index_size,
            package_modules: Mutex::new(HashMap::new()),
        })
    }

    fn u32_at(&self, pos: usize) -> Option<u32> {
        let b = self.data.get(pos..pos + 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn string(&self, offset: u64) -> Option<&str> {
        let start = self.strings + offset as usize;
        let end = start + self.data.get(start..self.index_size)?.iter().position(|&b| b == 0)?;
        std::str::from_utf8(&self.data[start..end]).ok()
    }

    fn location(&self, offset: usize) -> Option<Location> {
        let mut loc = Location::default();
        let mut p = self.locations + offset;
        loop {
            let b = *self.data.get(p)?;
            let kind = b >> 3;
            if kind == ATTR_END {
                return Some(loc);
            }
            let len = (b & 7) as usize + 1;
            let mut v = 0u64;
            for i in 0..len {
                v = (v << 8) | *self.data.get(p + 1 + i)? as u64;
            }
            *loc.attrs.get_mut(kind as usize)? = v;
            p += 1 + len;
        }
    }

    fn verify(&self, loc: &Location, name: &str) -> bool {
        let mut rebuilt = String::with_capacity(name.len());
        let part = |k: u8| self.string(loc.attrs[k as usize]).unwrap_or("");
        let (module, parent, base, ext) = (part(ATTR_MODULE), part(ATTR_PARENT), part(ATTR_BASE), part(ATTR_EXTENSION));
        if !module.is_empty() {
            rebuilt.push('/');
            rebuilt.push_str(module);
            rebuilt.push('/');
        }
        if !parent.is_empty() {
            rebuilt.push_str(parent);
            rebuilt.push('/');
        }
        rebuilt.push_str(base);
        if !ext.is_empty() {
            rebuilt.push('.');
            rebuilt.push_str(ext);
        }
        rebuilt == name
    }

    /// The bytes of the resource with this full name (`/java.base/java/lang/Object.class`).
    pub fn image_resource(&self, name: &str) -> Result<Option<Vec<u8>>, ClassPathError> {
        let bad = |reason: String| ClassPathError::BadImage { path: self.path.clone(), reason };
        let bytes = name.as_bytes();
        let index = hash(bytes, HASH_MULTIPLIER) as usize % self.table_length;
        let redirect = self.u32_at(self.redirect + index * 4).ok_or_else(|| bad("redirect table".into()))? as i32;
        let slot = match redirect {
            0 => return Ok(None),
            r if r < 0 => (-1 - r) as usize,
            r => hash(bytes, r as u32) as usize % self.table_length,
        };
        if slot >= self.table_length {
            return Err(bad(format!("redirect of {name} out of range")));
        }
        let offset = self.u32_at(self.offsets + slot * 4).ok_or_else(|| bad("offsets table".into()))? as usize;
        let loc = self.location(offset).ok_or_else(|| bad(format!("location of {name}")))?;
        if !self.verify(&loc, name) {
            return Ok(None);
        }
        if loc.attrs[ATTR_COMPRESSED as usize] != 0 {
            return Err(bad(format!(
                "{name} is compressed, which is not supported (an image made with jlink --compress)"
            )));
        }
        let start = self.index_size as u64 + loc.attrs[ATTR_OFFSET as usize];
        let size = loc.attrs[ATTR_UNCOMPRESSED as usize];
        if start + size > self.file_len {
            return Err(bad(format!("{name} lies beyond the file")));
        }
        let mut body = vec![0u8; size as usize];
        self.file
            .read_exact_at(&mut body, start)
            .map_err(|source| ClassPathError::Io { path: self.path.clone(), source })?;
        Ok(Some(body))
    }

    /// Every resource name in the image (`/java.base/java/lang/Object.class`, …).
    pub fn names(&self) -> Vec<String> {
        (0..self.table_length)
            .filter_map(|i| self.u32_at(self.offsets + i * 4))
            .filter_map(|off| self.location(off as usize))
            .map(|loc| {
                let part = |k: u8| self.string(loc.attrs[k as usize]).unwrap_or("");
                let (module, parent, base, ext) =
                    (part(ATTR_MODULE), part(ATTR_PARENT), part(ATTR_BASE), part(ATTR_EXTENSION));
                let mut name = String::new();
                if !module.is_empty() {
                    name.push_str(&format!("/{module}/"));
                }
                if !parent.is_empty() {
                    name.push_str(&format!("{parent}/"));
                }
                name.push_str(base);
                if !ext.is_empty() {
                    name.push_str(&format!(".{ext}"));
                }
                name
            })
            .collect()
    }

    /// The module that holds a package (`java/lang` → `java.base`), from `/packages/java.lang`.
    pub fn module_of_package(&self, package: &str) -> Result<Option<String>, ClassPathError> {
        if let Some(m) = self.package_modules.lock().unwrap_or_else(|p| p.into_inner()).get(package) {
            return Ok(m.clone());
        }
        let dotted = package.replace('/', ".");
        let module = match self.image_resource(&format!("/packages/{dotted}"))? {
            None => None,
            Some(content) => content
                .chunks_exact(8)
                .find(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) == 0)
                .or_else(|| content.chunks_exact(8).next())
                .and_then(|c| self.string(u32::from_le_bytes([c[4], c[5], c[6], c[7]]) as u64))
                .map(str::to_string),
        };
        self.package_modules.lock().unwrap_or_else(|p| p.into_inner()).insert(package.to_string(), module.clone());
        Ok(module)
    }
}

impl JImage {
    /// The class file of a class, by internal name (`java/lang/String`), and its module.
    pub fn find(&self, internal_name: &str) -> Result<Option<(Vec<u8>, Origin)>, ClassPathError> {
        self.resource(&format!("{internal_name}.class"))
    }

    /// A resource by path (`java/lang/String.class`), from the module holding its package.
    pub fn resource(&self, path: &str) -> Result<Option<(Vec<u8>, Origin)>, ClassPathError> {
        // Data directories are not packages: the nearest enclosing package names the module.
        let mut dir = path.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
        let module = loop {
            if let Some(m) = self.module_of_package(dir)? {
                break m;
            }
            match dir.rsplit_once('/') {
                Some((parent, _)) => dir = parent,
                None => return Ok(None),
            }
        };
        Ok(self.image_resource(&format!("/{module}/{path}"))?.map(|b| (b, Origin::Module(module))))
    }
}
