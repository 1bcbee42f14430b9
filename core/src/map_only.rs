//! Every struct of a document the crate reads is read only from an object.
//!
//! serde's derived `Deserialize` also reads a struct from an array of its
//! field values in order, so `"policy": ["default", true, 0]` would bind
//! values by position, past every field name and `deny_unknown_fields`: a
//! document of another shape, or one edited by hand, would be read as
//! something nobody wrote. Each such struct therefore derives its reader
//! and writer with `remote = "Self"` (as inherent functions, on the
//! struct's own fields and attributes), and the crate's `map_only!` macro
//! gives it the trait impls, whose reader calls that inherent one only for
//! a map.
//!
//! serde gives those inherent functions the struct's visibility, and an
//! inherent function wins over a trait's of the same name: code that
//! writes `Policy::deserialize(d)` reads the outermost struct alone
//! without the check. Readers name the trait
//! (`<Policy as Deserialize>::deserialize(d)`) or go through a generic
//! entry point (`serde_json::from_str`), which always does.
//!
//! Private structs of a document, which are not worth the two impls, are
//! read through [`Obj`], as are the drivers' own documents' (a registry
//! file's tables).

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

/// The `Deserialize` and `Serialize` impls of structs that derive both
/// with `#[serde(remote = "Self")]`: read only from a map, written as
/// derived. Each entry is `Type => "what it is"` (the `expecting` text of
/// the error for anything else); `Type[S]` for a type generic over its
/// strings (a snapshot's, bound by `ReadStr` and `WriteStr`, which must be
/// in scope).
macro_rules! map_only {
    ($($ty:ident $([$s:ident])? => $expecting:literal;)*) => {$(
        impl<'de $(, $s: ReadStr<'de>)?> ::serde::Deserialize<'de> for $ty $(<$s>)? {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                struct MapOnly<T>(::std::marker::PhantomData<T>);
                impl<'de $(, $s: ReadStr<'de>)?> ::serde::de::Visitor<'de> for MapOnly<$ty $(<$s>)?> {
                    type Value = $ty $(<$s>)?;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(
                        self,
                        map: A,
                    ) -> ::std::result::Result<Self::Value, A::Error> {
                        <$ty $(<$s>)?>::deserialize(::serde::de::value::MapAccessDeserializer::new(map))
                    }
                }
                deserializer.deserialize_map(MapOnly(::std::marker::PhantomData))
            }
        }

        impl$(<$s: WriteStr>)? ::serde::Serialize for $ty $(<$s>)? {
            fn serialize<W: ::serde::Serializer>(
                &self,
                serializer: W,
            ) -> ::std::result::Result<W::Ok, W::Error> {
                <$ty $(<$s>)?>::serialize(self, serializer)
            }
        }
    )*};
}
pub(crate) use map_only;

/// `T`, read only from an object (a JSON object, a TOML table): for a
/// document's private structs, which derive their reader, for the same
/// reason as the crate's own (see the module's docs). It reads anything
/// else as an error, never as the struct's fields by position.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Obj<T>(pub T);

impl<T> Obj<T> {
    /// The value read.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapOnly<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for MapOnly<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer.deserialize_map(MapOnly(PhantomData)).map(Obj)
    }
}
