//! Compact JSON text from any `Serialize` type, byte for byte as
//! `serde_json::to_writer` writes it: the writer behind every tool result and
//! every canonical text the core makes.
//!
//! serde_json looks every byte of every string up in an escape table; this
//! writer copies a string eight bytes at a time while none of them needs
//! escaping, which is nearly all of a tool result. Numbers other than
//! integers are still written by serde_json, so floats come out exactly as
//! it writes them. The tests compare the two writers on every kind of value.

use std::fmt;

use serde::ser::{self, Serialize};

/// The `serialize_*` methods of the narrower integers, each widening its
/// value to the method for the widest one: what both serializers here do
/// with them, written once (defined before `mod key` so that it sees it).
macro_rules! widen_integers {
    ($wide_fn:ident($wide:ty): $($narrow_fn:ident($narrow:ty)),+) => {
        $(fn $narrow_fn(self, v: $narrow) -> Result<(), Error> {
            self.$wide_fn(<$wide>::from(v))
        })+
    };
}

mod key;
use key::KeyWriter;

/// Writes `value` as compact JSON at the end of `out`.
pub(crate) fn write<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) -> Result<(), Error> {
    value.serialize(&mut Writer { out })
}

/// The text `write` writes, as a `String` of exactly its size.
///
/// The bytes go into a buffer kept per thread, then are copied once into an
/// allocation of their size: a text kept for an episode's life (a result,
/// canonical arguments) carries no spare capacity, and no buffer grows by
/// reallocation while it is written. A text written while another is being
/// written gets a buffer of its own.
pub(crate) fn text(write: impl FnOnce(&mut Vec<u8>)) -> String {
    /// Most bytes the per-thread buffer keeps between texts.
    const KEEP: usize = 64 * 1024;
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    // Everything written here is UTF-8 (strings as they are, ASCII around
    // them, serde_json's numbers); were it not, the text shows where.
    let exact = |bytes: &[u8]| std::str::from_utf8(bytes).map_or_else(|_| String::from_utf8_lossy(bytes).into_owned(), str::to_owned);
    BUFFER.with(|buffer| match buffer.try_borrow_mut() {
        Ok(mut out) => {
            out.clear();
            write(&mut out);
            let text = exact(&out);
            out.shrink_to(KEEP);
            text
        }
        Err(_) => {
            let mut out = Vec::new();
            write(&mut out);
            exact(&out)
        }
    })
}

/// Writes `text` as a JSON string: quoted, with `"`, `\` and control
/// characters escaped as serde_json escapes them.
pub(crate) fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    // Most strings are short and need no escape (keys, ids, codes, dates):
    // one look at them, one fixed-size copy.
    if bytes.len() <= 16 && plain_short(bytes) {
        push_short_quoted::<false>(out, bytes);
        return;
    }
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // `start..i` is the run of bytes not yet copied that need no escape.
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        if let Some(chunk) = bytes[i..].first_chunk::<8>()
            && !needs_escape(u64::from_le_bytes(*chunk))
        {
            i += 8;
            continue;
        }
        let byte = bytes[i];
        i += 1;
        let escape = ESCAPE[usize::from(byte)];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[start..i - 1]);
        out.extend_from_slice(&[b'\\', escape]);
        if escape == b'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[b'0', b'0', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]]);
        }
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// The character after the backslash that escapes a byte, 0 for a byte
/// written as it is; `u` means `\u00XX`.
const ESCAPE: [u8; 256] = {
    let mut table = [0; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x0c] = b'f';
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Whether any of eight bytes is `"`, `\` or below 0x20 (exact, with no
/// false negatives: the classic "has a byte less than n" and "has a zero
/// byte" word tricks).
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGH != 0;
    below_space || has_zero(word ^ (ONES * u64::from(b'"'))) || has_zero(word ^ (ONES * u64::from(b'\\')))
}

/// Whether a string of at most 16 bytes needs no escape, read as at most
/// two overlapping words instead of a byte at a time.
#[inline(always)]
fn plain_short(bytes: &[u8]) -> bool {
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
    let half = |at: usize| u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default()));
    let n = bytes.len();
    match n {
        0..4 => bytes.iter().all(|&b| ESCAPE[usize::from(b)] == 0),
        4..8 => !needs_escape(half(0) | half(n - 4) << 32),
        _ => !needs_escape(word(0)) && !needs_escape(word(n - 8)),
    }
}

/// Writes a string of at most 16 bytes that needs no escape, quoted, and
/// then a `:` when `COLON` (an object's key): the text goes into a
/// fixed-size buffer with at most two overlapping fixed-size copies, and the
/// buffer into `out` with one, instead of a `memcpy` call and three pushes.
fn push_short_quoted<const COLON: bool>(out: &mut Vec<u8>, bytes: &[u8]) {
    const SIZE: usize = 19;
    let n = bytes.len();
    let mut buf = [0u8; SIZE];
    buf[0] = b'"';
    match n {
        0..4 => bytes.iter().zip(&mut buf[1..4]).for_each(|(&b, slot)| *slot = b),
        4..8 => {
            buf[1..5].copy_from_slice(&bytes[..4]);
            buf[n - 3..=n].copy_from_slice(&bytes[n - 4..]);
        }
        _ => {
            buf[1..9].copy_from_slice(&bytes[..8]);
            buf[n - 7..=n].copy_from_slice(&bytes[n - 8..]);
        }
    }
    buf[n + 1] = b'"';
    if COLON {
        buf[n + 2] = b':';
    }
    let len = n + 2 + usize::from(COLON);
    out.extend_from_slice(&buf);
    out.truncate(out.len() - (SIZE - len));
}

/// Writes an unsigned integer in decimal.
pub(crate) fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

pub(crate) fn write_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    write_u64(out, n.unsigned_abs());
}

/// Why a value could not be written: a map key that is not a string, or a
/// `Serialize` implementation that failed.
#[derive(Debug)]
pub(crate) struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

impl From<serde_json::Error> for Error {
    fn from(error: serde_json::Error) -> Self {
        Error(error.to_string())
    }
}

struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl Writer<'_> {
    /// A value serde_json writes itself (floats, 128-bit integers, bytes).
    fn by_serde_json<T: Serialize>(&mut self, value: T) -> Result<(), Error> {
        Ok(serde_json::to_writer(&mut *self.out, &value)?)
    }

    /// `{"variant":` of an externally tagged enum variant with data.
    fn open_variant(&mut self, variant: &str) {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
    }
}

fn compound<'w, 'a>(writer: &'w mut Writer<'a>, open: u8, close: &'static [u8]) -> Compound<'w, 'a> {
    writer.out.push(open);
    Compound { writer, first: true, close }
}

/// A list or an object being written; `close` ends it (and the object of an
/// enum variant around it).
struct Compound<'w, 'a> {
    writer: &'w mut Writer<'a>,
    first: bool,
    close: &'static [u8],
}

impl Compound<'_, '_> {
    fn separate(&mut self) {
        if !std::mem::take(&mut self.first) {
            self.writer.out.push(b',');
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.separate();
        value.serialize(&mut *self.writer)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        self.separate();
        if key.len() <= 16 && plain_short(key.as_bytes()) {
            push_short_quoted::<true>(self.writer.out, key.as_bytes());
        } else {
            write_str(self.writer.out, key);
            self.writer.out.push(b':');
        }
        value.serialize(&mut *self.writer)
    }

    fn finish(self) -> Result<(), Error> {
        self.writer.out.extend_from_slice(self.close);
        Ok(())
    }
}

impl<'w, 'a> ser::Serializer for &'w mut Writer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'w, 'a>;
    type SerializeTuple = Compound<'w, 'a>;
    type SerializeTupleStruct = Compound<'w, 'a>;
    type SerializeTupleVariant = Compound<'w, 'a>;
    type SerializeMap = Compound<'w, 'a>;
    type SerializeStruct = Compound<'w, 'a>;
    type SerializeStructVariant = Compound<'w, 'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out.extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    widen_integers!(serialize_i64(i64): serialize_i8(i8), serialize_i16(i16), serialize_i32(i32));
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        write_i64(self.out, v);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.by_serde_json(v)
    }
    widen_integers!(serialize_u64(u64): serialize_u8(u8), serialize_u16(u16), serialize_u32(u32));
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        write_u64(self.out, v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.by_serde_json(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.by_serde_json(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.by_serde_json(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        self.by_serde_json(v)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.open_variant(variant);
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'w, 'a>, Error> {
        Ok(compound(self, b'[', b"]"))
    }
    fn serialize_tuple(self, _len: usize) -> Result<Compound<'w, 'a>, Error> {
        Ok(compound(self, b'[', b"]"))
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Compound<'w, 'a>, Error> {
        Ok(compound(self, b'[', b"]"))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'w, 'a>, Error> {
        self.open_variant(variant);
        Ok(compound(self, b'[', b"]}"))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'w, 'a>, Error> {
        Ok(compound(self, b'{', b"}"))
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Compound<'w, 'a>, Error> {
        Ok(compound(self, b'{', b"}"))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'w, 'a>, Error> {
        self.open_variant(variant);
        Ok(compound(self, b'{', b"}}"))
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.separate();
        key.serialize(KeyWriter { out: self.writer.out })?;
        self.writer.out.push(b':');
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.writer)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

#[cfg(test)]
mod tests;
