//! Map keys: what serde_json writes as a key (a string, or a char, a unit
//! variant or an integer in quotes); anything else is an error.

use serde::ser::{self, Serialize};

use super::{Error, write_i64, write_str, write_u64};

/// A map key: a string, or what serde_json writes as one (a char, a unit
/// variant, an integer in quotes). The core's maps are keyed by strings.
pub(super) struct KeyWriter<'a> {
    pub(super) out: &'a mut Vec<u8>,
}

impl KeyWriter<'_> {
    fn quoted(self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), Error> {
        self.out.push(b'"');
        write(self.out);
        self.out.push(b'"');
        Ok(())
    }
}

fn key_must_be_a_string() -> Error {
    Error("key must be a string".to_owned())
}

impl ser::Serializer for KeyWriter<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.serialize_str(if v { "true" } else { "false" })
    }
    widen_integers!(serialize_i64(i64): serialize_i8(i8), serialize_i16(i16), serialize_i32(i32));
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.quoted(|out| write_i64(out, v))
    }
    widen_integers!(serialize_u64(u64): serialize_u8(u8), serialize_u16(u16), serialize_u32(u32));
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.quoted(|out| write_u64(out, v))
    }
    fn serialize_f32(self, _v: f32) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_f64(self, _v: f64) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_a_string())
    }
}
