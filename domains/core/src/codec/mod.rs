//! Low-level pieces apart from the domains: the ChaCha8 block the fault
//! draws read (tested against the `rand_chacha` code it replaces) and
//! cutting text on a character boundary. The canonical JSON writer is
//! `json/writer/`; the argument reader, `tool/args.rs`.

pub(crate) mod chacha;

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
