//! A string's shape (`C-104` → `A-9`): what tells values of one kind
//! (ids, names, dates) from others, for the cheats, the answer corpus and
//! the prose corpus alike.

/// A string's shape: each run of uppercase, lowercase, digits or one other
/// character as one symbol (`C-104` → `A-9`, `Tom Becker` → `Aa Aa`).
pub(crate) fn shape(text: &str) -> String {
    let mut out = String::new();
    shape_into(text, &mut out, usize::MAX);
    out
}

/// [`shape`], written into `out`; false (and `out` cut short) when it
/// would be longer than `limit` bytes.
pub(crate) fn shape_into(text: &str, out: &mut String, limit: usize) -> bool {
    out.clear();
    let mut last = None;
    for c in text.chars() {
        let class = if c.is_ascii_digit() {
            '9'
        } else if c.is_uppercase() {
            'A'
        } else if c.is_lowercase() {
            'a'
        } else {
            c
        };
        if !(last == Some(class) && matches!(class, '9' | 'a')) {
            if out.len() + class.len_utf8() > limit {
                return false;
            }
            out.push(class);
            last = Some(class);
        }
    }
    true
}
