//! Enums with names: one list gives the variants, their names, `ALL` and
//! parsing, so a new variant cannot be added without its name, or left out
//! of `ALL` or of parsing.

/// Declares a fieldless enum from one list of `Variant = "name"` lines and
/// derives from that list `ALL` (every variant, in order), `name()`,
/// `parse()` (the inverse of `name()`) and `doc()` (the variant's
/// documentation, which is all a variant may carry).
///
/// Two variants with one name are a compile error (the second arm of
/// `parse` would be unreachable, which the workspace denies).
///
/// ```
/// toolenv_core::named_enum! {
///     /// A colour.
///     #[derive(Debug, Clone, Copy, PartialEq, Eq)]
///     pub enum Colour {
///         /// Red.
///         Red = "red",
///         /// Dark blue.
///         DarkBlue = "dark-blue",
///     }
/// }
/// assert_eq!(Colour::ALL, [Colour::Red, Colour::DarkBlue]);
/// assert_eq!(Colour::DarkBlue.name(), "dark-blue");
/// assert_eq!(Colour::parse("red"), Some(Colour::Red));
/// assert_eq!(Colour::parse("Red"), None);
/// assert_eq!(Colour::DarkBlue.doc(), "Dark blue.");
/// ```
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $enum:ident {
            $( $(#[doc = $doc:literal])* $variant:ident = $name:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $enum {
            $( $(#[doc = $doc])* $variant, )+
        }

        impl $enum {
            /// Every value, in the order they are declared.
            pub const ALL: [$enum; [$($name),+].len()] = [$($enum::$variant),+];

            /// The value's name, e.g. in a command line, a report or the wire.
            pub const fn name(self) -> &'static str {
                match self {
                    $( $enum::$variant => $name, )+
                }
            }

            /// What the value means: its documentation, in one line.
            pub fn doc(self) -> &'static str {
                match self {
                    $( $enum::$variant => concat!($($doc),*).trim_ascii(), )+
                }
            }

            /// The value a name stands for, as [`Self::name`] writes it.
            pub fn parse(name: &str) -> ::std::option::Option<Self> {
                match name {
                    $( $name => ::std::option::Option::Some($enum::$variant), )+
                    _ => ::std::option::Option::None,
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::named_enum! {
        /// A test enum.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Sample {
            /// First.
            One = "one",
            /// Second, with a name unlike its variant.
            TwoWords = "TWO_WORDS",
        }
    }

    #[test]
    fn names_parse_back_and_all_lists_every_variant_once() {
        assert_eq!(Sample::ALL, [Sample::One, Sample::TwoWords]);
        for value in Sample::ALL {
            assert_eq!(Sample::parse(value.name()), Some(value));
        }
        assert_eq!(Sample::TwoWords.name(), "TWO_WORDS");
        assert_eq!(Sample::parse("TwoWords"), None, "the name, not the variant, parses");
        assert_eq!(Sample::parse(""), None);
        assert_eq!(Sample::TwoWords.doc(), "Second, with a name unlike its variant.");
    }
}
