//! The performance machinery behind tool calls, apart from the domains: the
//! canonical JSON writer tools write their results with, the argument reader
//! that parses a call's arguments straight into typed values, and the ChaCha8
//! block the fault draws read. Each is tested against the `serde_json` or
//! `rand_chacha` code it replaces.

pub(crate) mod args;
pub(crate) mod chacha;
pub(crate) mod writer;

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
