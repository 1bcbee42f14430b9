//! Enums whose values have names: one list per enum, used by JSON, text
//! and errors alike.
//!
//! A serde rename beside a hand-written `as_str` is two definitions of one
//! name, and the day they disagree the JSON a tool matches on and the text
//! an operator reads name different things. [`named_enum!`] takes each
//! value's name once and derives `as_str`, `Display`, `Serialize` and
//! `Deserialize` from it.

/// Declares a fieldless enum with one name per value:
///
/// ```text
/// named_enum! {
///     /// Docs.
///     #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
///     pub enum Colour {
///         /// Docs.
///         Red = "red",
///         DarkBlue = "dark_blue",
///     }
/// }
/// ```
///
/// gives `Colour::ALL`, `Colour::as_str`, `Display`, and serde
/// (de)serialization as those names; deserializing any other string is an
/// `unknown variant` error listing the names.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[ $( $name::$variant, )+ ];

            /// The value's name, as JSON and text give it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Names;
                impl ::serde::de::Visitor<'_> for Names {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("a ", stringify!($name), " name"))
                    }
                    fn visit_str<E: ::serde::de::Error>(self, value: &str) -> Result<$name, E> {
                        $name::ALL
                            .iter()
                            .copied()
                            .find(|v| v.as_str() == value)
                            .ok_or_else(|| E::unknown_variant(value, &[ $( $text, )+ ]))
                    }
                }
                deserializer.deserialize_str(Names)
            }
        }

        // The names, as serialized and read: the same one list.
        #[cfg(feature = "schema")]
        impl ::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn schema_id() -> ::std::borrow::Cow<'static, str> {
                concat!(module_path!(), "::", stringify!($name)).into()
            }

            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                ::schemars::json_schema!({
                    "type": "string",
                    "enum": [ $( $text, )+ ],
                })
            }
        }
    };
}

pub(crate) use named_enum;

#[cfg(test)]
mod tests {
    named_enum! {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Sample {
            One = "one",
            TwoWords = "two_words",
        }
    }

    #[test]
    fn one_name_serves_json_text_and_parsing() {
        for v in Sample::ALL {
            let json = serde_json::to_string(v).unwrap();
            assert_eq!(json, format!("\"{}\"", v.as_str()));
            assert_eq!(v.to_string(), v.as_str());
            assert_eq!(serde_json::from_str::<Sample>(&json).unwrap(), *v);
        }
        let e = serde_json::from_str::<Sample>("\"TwoWords\"").unwrap_err();
        assert_eq!(e.classify(), serde_json::error::Category::Data);
        assert!(serde_json::from_str::<Sample>("1").is_err());
    }
}
