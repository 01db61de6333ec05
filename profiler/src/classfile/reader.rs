//! A bounds-checked big-endian cursor over class-file bytes. Every read that runs past the end
//! becomes a `ClassFormatError` naming the offset and what was expected there.

use super::ClassFormatError;

pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    pub(crate) fn offset(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    pub(crate) fn error(&self, expected: impl Into<String>) -> ClassFormatError {
        ClassFormatError { offset: self.pos, expected: expected.into(), hotspot: None }
    }

    pub(crate) fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], ClassFormatError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end {
            Some(end) => {
                let s = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(self.error(format!("{what} ({n} bytes, but only {} remain)", self.bytes.len() - self.pos))),
        }
    }

    pub(crate) fn u1(&mut self, what: &str) -> Result<u8, ClassFormatError> {
        Ok(self.bytes(1, what)?[0])
    }

    pub(crate) fn u2(&mut self, what: &str) -> Result<u16, ClassFormatError> {
        let b = self.bytes(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn u4(&mut self, what: &str) -> Result<u32, ClassFormatError> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u64, ClassFormatError> {
        let b = self.bytes(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }
}
