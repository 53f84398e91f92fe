//! Strict JSON: exactly one value, no duplicate keys (compared after
//! unescaping), bounded depth. Built on serde_json's parser, whose own
//! recursion limit keeps the stack safe however deep the input.

use super::MAX_DEPTH;
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// Why a line is not strict JSON.
#[derive(Debug)]
#[non_exhaustive]
pub enum JsonError {
    /// Not JSON at all, or cut short; `eof` when it ended mid-value.
    Syntax {
        /// The line ended inside a value.
        eof: bool,
    },
    /// One complete value, then more.
    Trailing,
    /// A key twice in one object.
    Duplicate,
    /// Nested deeper than the bound.
    TooDeep,
}

const DUPLICATE: &str = "duplicate key";
const TOO_DEEP: &str = "nested too deep";

/// Parses `text` as exactly one strict JSON value, at most [`MAX_DEPTH`] deep.
pub fn parse(text: &str, duplicates_ok: bool) -> Result<Value, JsonError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let seed = Strict { depth: 0, duplicates_ok };
    let value = seed.deserialize(&mut de).map_err(classify)?;
    de.end().map_err(|_| JsonError::Trailing)?;
    Ok(value)
}

/// Our own errors come back as data errors and only those are formatted to
/// tell which; serde_json's recursion limit (128) lies beyond our bound.
fn classify(e: serde_json::Error) -> JsonError {
    const _: () = assert!(MAX_DEPTH < 128);
    if e.classify() != serde_json::error::Category::Data {
        return JsonError::Syntax { eof: e.is_eof() };
    }
    let text = e.to_string();
    if text.starts_with(DUPLICATE) {
        JsonError::Duplicate
    } else if text.starts_with(TOO_DEEP) {
        JsonError::TooDeep
    } else {
        JsonError::Syntax { eof: false }
    }
}

#[derive(Clone, Copy)]
struct Strict {
    depth: usize,
    duplicates_ok: bool,
}

impl Strict {
    fn deeper<E: serde::de::Error>(self) -> Result<Strict, E> {
        if self.depth >= MAX_DEPTH {
            return Err(E::custom(TOO_DEEP));
        }
        Ok(Strict { depth: self.depth + 1, ..self })
    }
}

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom("non-finite number"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.deeper()?;
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(inner)? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inner = self.deeper()?;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(inner)?;
            if out.insert(key, value).is_some() && !self.duplicates_ok {
                return Err(A::Error::custom(DUPLICATE));
            }
        }
        Ok(Value::Object(out))
    }
}
