//! Documents as hostile input: every struct of a document the crate reads
//! is read only from an object. serde's derived reader also takes a struct
//! from the array of its field values in order, binding them by position
//! past every field name; these helpers write each object of a document in
//! turn as that array, in the order its fields were written.

#![allow(dead_code)]

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value with its objects' keys in the order written.
enum Json {
    Object(Vec<(String, Json)>),
    Array(Vec<Json>),
    Scalar(serde_json::Value),
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Json::Object(entries))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Scalar(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Scalar(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Scalar(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Scalar(v.into()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Json, E> {
                Ok(Json::Scalar(v.into()))
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Scalar(serde_json::Value::Null))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl Json {
    /// Writes the value, its `target`th object (counting from 0, outermost
    /// first) as the array of its values; `count` counts the objects met.
    fn write(&self, target: usize, count: &mut usize, out: &mut String) {
        match self {
            Json::Object(entries) => {
                let this = *count;
                *count += 1;
                let flat = this == target;
                out.push(if flat { '[' } else { '{' });
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    if !flat {
                        out.push_str(&serde_json::Value::from(key.as_str()).to_string());
                        out.push(':');
                    }
                    value.write(target, count, out);
                }
                out.push(if flat { ']' } else { '}' });
            }
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(target, count, out);
                }
                out.push(']');
            }
            Json::Scalar(value) => out.push_str(&value.to_string()),
        }
    }
}

/// `reads(text)` accepts `text`, and refuses it with any one of its
/// objects (a struct's or a map's) written as the array of its values in
/// order. How many objects `text` has.
pub fn each_object_as_array_is_refused(text: &str, reads: impl Fn(&str) -> bool) -> usize {
    assert!(reads(text), "the document itself is read: {text}");
    let json: Json = serde_json::from_str(text).unwrap();
    let mut objects = 0;
    json.write(usize::MAX, &mut objects, &mut String::new());
    for target in 0..objects {
        let mut out = String::new();
        json.write(target, &mut 0, &mut out);
        assert!(!reads(&out), "read with an object as an array: {out}");
    }
    objects
}
