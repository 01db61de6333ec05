//! An open document's text, as the editor edits it. Keystrokes arrive one by one on the task
//! that publishes diagnostics, so applying one costs what it touches (a rope: positions in
//! logarithmic time, an insertion without moving the rest) and a snapshot shares the text
//! instead of copying it. The byte-indexed [`LineIndex`] that mapping and hovers read is made
//! from the rope on first use after an edit, by the reader that needs it.

use crate::mapping::{Encoding, LineIndex};
use ropey::Rope;
use std::sync::{Arc, OnceLock};
use tower_lsp_server::ls_types::Position;

#[derive(Debug, Clone)]
pub struct Document {
    text: Rope,
    pub version: i32,
    index: OnceLock<Arc<LineIndex>>,
}

/// What an edit changed, in lines of the text before it: `first..=last` were touched, and the
/// lines after `last` moved by `delta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edit {
    pub first: u32,
    pub last: u32,
    pub delta: i64,
}

impl Document {
    pub fn new(text: &str, version: i32) -> Document {
        Document { text: Rope::from_str(text), version, index: OnceLock::new() }
    }

    /// The text with its line starts (made once per version, on first use).
    pub fn index(&self) -> Arc<LineIndex> {
        self.index.get_or_init(|| Arc::new(LineIndex::new(self.text.to_string()))).clone()
    }

    pub fn text(&self) -> String {
        self.text.to_string()
    }

    /// Replaces the whole text.
    pub fn replace_all(&mut self, text: &str) {
        self.text = Rope::from_str(text);
        self.index = OnceLock::new();
    }

    /// Replaces the text between two positions (in the client's encoding) by `new`. Positions
    /// past a line's end or the text's end are clamped to them; a reversed range (a client's
    /// error) is read as the span between its ends.
    pub fn replace(&mut self, mut start: Position, mut end: Position, new: &str, enc: Encoding) -> Edit {
        if (end.line, end.character) < (start.line, start.character) {
            std::mem::swap(&mut start, &mut end);
        }
        let (from, to) = (self.char_at(start, enc), self.char_at(end, enc));
        let removed = self.text.slice(from..to).chars().filter(|&c| c == '\n').count() as i64;
        let added = new.matches('\n').count() as i64;
        self.text.remove(from..to);
        self.text.insert(from, new);
        self.index = OnceLock::new();
        Edit { first: start.line, last: end.line, delta: added - removed }
    }

    /// The char index of `pos`, clamped to its line (without the line break) and to the text.
    fn char_at(&self, pos: Position, enc: Encoding) -> usize {
        let line = pos.line as usize;
        if line >= self.text.len_lines() {
            return self.text.len_chars();
        }
        let start = self.text.line_to_char(line);
        let slice = self.text.line(line);
        let mut len = slice.len_chars();
        // Without its line break: `\n` or `\r\n`.
        if len > 0 && slice.char(len - 1) == '\n' {
            len -= 1;
            if len > 0 && slice.char(len - 1) == '\r' {
                len -= 1;
            }
        }
        let end = start + len;
        let character = pos.character as usize;
        match enc {
            Encoding::Utf32 => start + character.min(len),
            Encoding::Utf16 => {
                let base = self.text.char_to_utf16_cu(start);
                let limit = self.text.char_to_utf16_cu(end);
                self.text.utf16_cu_to_char((base + character).min(limit))
            }
            Encoding::Utf8 => {
                let base = self.text.char_to_byte(start);
                let limit = self.text.char_to_byte(end);
                self.text.byte_to_char((base + character).min(limit))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn edits_land_where_the_client_counts_them() {
        let mut d = Document::new("a😀b\r\nsecond\nthird", 1);
        // UTF-16: the emoji is two units, so `b` is at 3.
        let e = d.replace(pos(0, 3), pos(0, 4), "B", Encoding::Utf16);
        assert_eq!(e, Edit { first: 0, last: 0, delta: 0 });
        assert_eq!(d.text(), "a😀B\r\nsecond\nthird");
        // UTF-8: the emoji is four bytes.
        d.replace(pos(0, 5), pos(0, 6), "b", Encoding::Utf8);
        assert_eq!(d.text(), "a😀b\r\nsecond\nthird");
        // Past the line's end: clamped before its `\r\n`.
        d.replace(pos(0, 99), pos(0, 99), "!", Encoding::Utf16);
        assert_eq!(d.text(), "a😀b!\r\nsecond\nthird");
        // Joining two lines and adding one; a reversed range is read forwards.
        let e = d.replace(pos(2, 0), pos(1, 6), " x\ny\n", Encoding::Utf32);
        assert_eq!(e, Edit { first: 1, last: 2, delta: 1 });
        assert_eq!(d.text(), "a😀b!\r\nsecond x\ny\nthird");
        // Past the end of the text: appended.
        d.replace(pos(40, 0), pos(40, 0), "\nend", Encoding::Utf16);
        assert_eq!(d.text(), "a😀b!\r\nsecond x\ny\nthird\nend");
        assert_eq!(d.index().line(4), Some("end"));
    }

    #[test]
    fn the_index_follows_the_edits_and_snapshots_keep_theirs() {
        let mut d = Document::new("one\ntwo", 1);
        assert_eq!(d.index().line(1), Some("two"));
        let before = d.clone();
        d.replace(pos(1, 0), pos(1, 3), "TWO", Encoding::Utf16);
        assert_eq!(d.index().line(1), Some("TWO"));
        assert_eq!(before.index().line(1), Some("two"));
        d.replace_all("x");
        assert_eq!(d.index().text, "x");
    }
}
