//! A borrowed MessagePack tree over `rmp`'s marker and number decoding.
//!
//! `rmpv` needs `std`; the loader must not. This builds a small tree whose
//! strings and binaries borrow from the input, with limits that keep
//! hostile input from costing more than its own size: nesting is bounded,
//! and no container reserves more slots than there are bytes left (every
//! element takes at least one).

use alloc::vec::Vec;
use rmp::Marker;
use rmp::decode::{Bytes, RmpRead, read_marker};

/// Deepest nesting accepted. AMDGPU metadata nests four deep
/// (root → kernels → kernel → args → arg → language version).
pub const MAX_DEPTH: usize = 16;

/// A decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Nil,
    Bool(bool),
    /// Any non-negative integer.
    Uint(u64),
    /// A negative integer.
    Int(i64),
    F32(f32),
    F64(f64),
    Str(&'a str),
    Bin(&'a [u8]),
    Array(Vec<Value<'a>>),
    Map(Vec<(Value<'a>, Value<'a>)>),
    Ext(i8, &'a [u8]),
}

impl<'a> Value<'a> {
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Uint(v) => Some(v),
            _ => None,
        }
    }

    /// A boolean, or an integer 0/1 (LLVM writes some flags as integers,
    /// e.g. `.uniform_work_group_size: 1`).
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            Value::Uint(0) => Some(false),
            Value::Uint(1) => Some(true),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value<'a>]> {
        match self {
            Value::Array(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(Value<'a>, Value<'a>)]> {
        match self {
            Value::Map(v) => Some(v),
            _ => None,
        }
    }

    /// The value of string key `key` in a map (first match).
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }
}

/// Why a byte string is not one MessagePack value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MsgpackError {
    /// The input ended inside a value, at this byte offset.
    Truncated { offset: usize },
    /// Marker 0xc1, which MessagePack never uses.
    ReservedMarker { offset: usize },
    /// A string that is not UTF-8.
    BadUtf8 { offset: usize },
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep { offset: usize },
    /// Non-zero bytes after the value.
    TrailingBytes { offset: usize },
}

impl core::fmt::Display for MsgpackError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            MsgpackError::Truncated { offset } => {
                write!(f, "msgpack ends inside a value (byte {offset})")
            }
            MsgpackError::ReservedMarker { offset } => {
                write!(f, "msgpack uses the reserved marker 0xc1 at byte {offset}")
            }
            MsgpackError::BadUtf8 { offset } => {
                write!(f, "msgpack string at byte {offset} is not UTF-8")
            }
            MsgpackError::TooDeep { offset } => write!(
                f,
                "msgpack nests deeper than {MAX_DEPTH} levels at byte {offset}"
            ),
            MsgpackError::TrailingBytes { offset } => {
                write!(
                    f,
                    "non-zero bytes follow the msgpack value at byte {offset}"
                )
            }
        }
    }
}

struct Reader<'a> {
    all: &'a [u8],
    rd: Bytes<'a>,
}

impl<'a> Reader<'a> {
    fn offset(&self) -> usize {
        self.all.len() - self.rd.remaining_slice().len()
    }

    fn truncated(&self) -> MsgpackError {
        MsgpackError::Truncated {
            offset: self.offset(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], MsgpackError> {
        let rest = self.rd.remaining_slice();
        if n > rest.len() {
            return Err(self.truncated());
        }
        let (head, tail) = rest.split_at(n);
        self.rd = Bytes::new(tail);
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, MsgpackError> {
        let t = self.truncated();
        self.rd.read_data_u8().map_err(|_| t)
    }
    fn u16(&mut self) -> Result<u16, MsgpackError> {
        let t = self.truncated();
        self.rd.read_data_u16().map_err(|_| t)
    }
    fn u32(&mut self) -> Result<u32, MsgpackError> {
        let t = self.truncated();
        self.rd.read_data_u32().map_err(|_| t)
    }
    fn u64(&mut self) -> Result<u64, MsgpackError> {
        let t = self.truncated();
        self.rd.read_data_u64().map_err(|_| t)
    }

    fn str(&mut self, len: usize) -> Result<Value<'a>, MsgpackError> {
        let at = self.offset();
        let b = self.take(len)?;
        core::str::from_utf8(b)
            .map(Value::Str)
            .map_err(|_| MsgpackError::BadUtf8 { offset: at })
    }

    fn ext(&mut self, len: usize) -> Result<Value<'a>, MsgpackError> {
        let ty = self.u8()? as i8;
        Ok(Value::Ext(ty, self.take(len)?))
    }

    fn array(&mut self, len: usize, depth: usize) -> Result<Value<'a>, MsgpackError> {
        let mut v = Vec::with_capacity(len.min(self.rd.remaining_slice().len()));
        for _ in 0..len {
            v.push(self.value(depth + 1)?);
        }
        Ok(Value::Array(v))
    }

    fn map(&mut self, len: usize, depth: usize) -> Result<Value<'a>, MsgpackError> {
        let mut v = Vec::with_capacity(len.min(self.rd.remaining_slice().len() / 2));
        for _ in 0..len {
            let k = self.value(depth + 1)?;
            let val = self.value(depth + 1)?;
            v.push((k, val));
        }
        Ok(Value::Map(v))
    }

    fn value(&mut self, depth: usize) -> Result<Value<'a>, MsgpackError> {
        let at = self.offset();
        if depth > MAX_DEPTH {
            return Err(MsgpackError::TooDeep { offset: at });
        }
        let marker =
            read_marker(&mut self.rd).map_err(|_| MsgpackError::Truncated { offset: at })?;
        Ok(match marker {
            Marker::FixPos(v) => Value::Uint(u64::from(v)),
            Marker::FixNeg(v) => Value::Int(i64::from(v)),
            Marker::Null => Value::Nil,
            Marker::True => Value::Bool(true),
            Marker::False => Value::Bool(false),
            Marker::U8 => Value::Uint(u64::from(self.u8()?)),
            Marker::U16 => Value::Uint(u64::from(self.u16()?)),
            Marker::U32 => Value::Uint(u64::from(self.u32()?)),
            Marker::U64 => Value::Uint(self.u64()?),
            Marker::I8 => int(i64::from(self.u8()? as i8)),
            Marker::I16 => int(i64::from(self.u16()? as i16)),
            Marker::I32 => int(i64::from(self.u32()? as i32)),
            Marker::I64 => int(self.u64()? as i64),
            Marker::F32 => Value::F32(f32::from_bits(self.u32()?)),
            Marker::F64 => Value::F64(f64::from_bits(self.u64()?)),
            Marker::FixStr(n) => self.str(usize::from(n))?,
            Marker::Str8 => {
                let n = self.u8()?;
                self.str(usize::from(n))?
            }
            Marker::Str16 => {
                let n = self.u16()?;
                self.str(usize::from(n))?
            }
            Marker::Str32 => {
                let n = self.u32()?;
                self.str(n as usize)?
            }
            Marker::Bin8 => {
                let n = self.u8()?;
                Value::Bin(self.take(usize::from(n))?)
            }
            Marker::Bin16 => {
                let n = self.u16()?;
                Value::Bin(self.take(usize::from(n))?)
            }
            Marker::Bin32 => {
                let n = self.u32()?;
                Value::Bin(self.take(n as usize)?)
            }
            Marker::FixArray(n) => self.array(usize::from(n), depth)?,
            Marker::Array16 => {
                let n = self.u16()?;
                self.array(usize::from(n), depth)?
            }
            Marker::Array32 => {
                let n = self.u32()?;
                self.array(n as usize, depth)?
            }
            Marker::FixMap(n) => self.map(usize::from(n), depth)?,
            Marker::Map16 => {
                let n = self.u16()?;
                self.map(usize::from(n), depth)?
            }
            Marker::Map32 => {
                let n = self.u32()?;
                self.map(n as usize, depth)?
            }
            Marker::FixExt1 => self.ext(1)?,
            Marker::FixExt2 => self.ext(2)?,
            Marker::FixExt4 => self.ext(4)?,
            Marker::FixExt8 => self.ext(8)?,
            Marker::FixExt16 => self.ext(16)?,
            Marker::Ext8 => {
                let n = self.u8()?;
                self.ext(usize::from(n))?
            }
            Marker::Ext16 => {
                let n = self.u16()?;
                self.ext(usize::from(n))?
            }
            Marker::Ext32 => {
                let n = self.u32()?;
                self.ext(n as usize)?
            }
            Marker::Reserved => return Err(MsgpackError::ReservedMarker { offset: at }),
        })
    }
}

/// Signed encodings may carry non-negative values; keep one representation.
fn int(v: i64) -> Value<'static> {
    if v >= 0 {
        Value::Uint(v as u64)
    } else {
        Value::Int(v)
    }
}

/// Decodes one value; only NUL padding may follow it.
pub fn decode(bytes: &[u8]) -> Result<Value<'_>, MsgpackError> {
    let mut r = Reader {
        all: bytes,
        rd: Bytes::new(bytes),
    };
    let v = r.value(0)?;
    let at = r.offset();
    if r.rd.remaining_slice().iter().any(|&b| b != 0) {
        return Err(MsgpackError::TrailingBytes { offset: at });
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_strings_and_containers() {
        // {"a": [1, -2, true, nil], "b": "xy"} written by hand from the
        // MessagePack spec's marker table.
        let bytes = [
            0x82, 0xa1, b'a', 0x94, 0x01, 0xfe, 0xc3, 0xc0, 0xa1, b'b', 0xa2, b'x', b'y',
        ];
        let v = decode(&bytes).unwrap();
        let a = v.get("a").unwrap().as_array().unwrap();
        assert_eq!(
            a,
            &[
                Value::Uint(1),
                Value::Int(-2),
                Value::Bool(true),
                Value::Nil
            ]
        );
        assert_eq!(v.get("b").unwrap().as_str(), Some("xy"));
    }

    #[test]
    fn wide_lengths_and_numbers() {
        // str16 "hi", u16 0x1234, i8 5 (non-negative in a signed marker)
        let bytes = [0x93, 0xda, 0, 2, b'h', b'i', 0xcd, 0x12, 0x34, 0xd0, 5];
        let v = decode(&bytes).unwrap();
        assert_eq!(
            v.as_array().unwrap(),
            &[Value::Str("hi"), Value::Uint(0x1234), Value::Uint(5)]
        );
    }

    #[test]
    fn hostile_inputs_are_errors() {
        // array32 claiming 4 billion elements in 5 bytes
        assert_eq!(
            decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]),
            Err(MsgpackError::Truncated { offset: 5 })
        );
        assert_eq!(
            decode(&[0xc1]),
            Err(MsgpackError::ReservedMarker { offset: 0 })
        );
        assert_eq!(
            decode(&[0xa2, 0xff, 0xfe]),
            Err(MsgpackError::BadUtf8 { offset: 1 })
        );
        let deep = [0x91u8; 64];
        assert!(matches!(decode(&deep), Err(MsgpackError::TooDeep { .. })));
        assert_eq!(
            decode(&[0x01, 0x02]),
            Err(MsgpackError::TrailingBytes { offset: 1 })
        );
        assert_eq!(decode(&[0x01, 0, 0]), Ok(Value::Uint(1)));
        assert_eq!(decode(&[]), Err(MsgpackError::Truncated { offset: 0 }));
    }
}
