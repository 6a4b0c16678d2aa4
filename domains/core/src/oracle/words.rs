//! Reading free text as words: lowercase runs of letters and digits, each
//! with the clause it stands in and what it is, dates and times in any
//! common format read as one canonical word, words in quotes marked.
//!
//! A clause ends at `.`, `;`, `:`, `!`, `?`, `,`, a bracket, a dash or a line
//! break (not inside a number, a date or a time), and before a conjunction
//! that opens another (`but`, `so`, `because`, `and`, …). "n't" reads as
//! "not". A date (`2026-04-27`, `April 27, 2026`, `27 Apr`, `2026/04/27`) is
//! the word `@2026-04-27` (no year: the year given); a time (`14:00`, `2 pm`,
//! `2:00 PM`, `14h00`, `noon`) is `@14:00`.

/// What a word is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Letters, or letters and digits.
    Plain,
    /// Digits standing alone: not part of an id (`T-0043`), an amount
    /// (`24.99`, `$45`) or a date or time.
    Number,
    /// Digits that are part of an id or an amount.
    Part,
    /// A date, as `@YYYY-MM-DD`.
    Date,
    /// A time of day, as `@HH:MM`.
    Time,
}

/// One word of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The word, lowercase (`@…` for a date or time).
    pub(crate) text: String,
    /// The clause it stands in, counted from 0.
    pub(crate) clause: u32,
    /// What it is.
    pub(crate) kind: Kind,
    /// Inside quotes: a name's words, never a negation or a hedge.
    pub(crate) quoted: bool,
    /// The sentence it stands in, counted from 0 (`.`, `!`, `?` or a line
    /// break outside quotes ends one).
    pub(crate) sentence: u32,
    /// In a restated question ("You asked whether …", a question quoted
    /// after it): its values are the question's, not the answer's.
    pub(crate) restated: bool,
    /// Where it starts in [`normal`] text.
    pub(crate) start: usize,
}

/// Sentences that restate the question rather than answer it start so.
const RESTATING: [&[&str]; 6] = [
    &["you", "asked"],
    &["you", "wanted", "to", "know"],
    &["your", "question"],
    &["question"],
    &["you", "asked", "me"],
    &["you", "wondered"],
];

/// The text as words are read from: lowercase, "n't" as " not".
pub(crate) fn normal(text: &str) -> String {
    let mut lower = text.to_lowercase();
    if lower.contains("n't") || lower.contains("n\u{2019}t") {
        lower = lower.replace("n't", " not").replace("n\u{2019}t", " not");
    }
    lower
}

/// Words that open a new clause.
const CONJUNCTIONS: [&str; 17] = [
    "but",
    "so",
    "because",
    "since",
    "and",
    "although",
    "though",
    "while",
    "whereas",
    "however",
    "which",
    "therefore",
    "thus",
    "yet",
    "then",
    "hence",
    "as",
];

const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/// A run of letters and digits in the text, with the text before it.
#[derive(Debug)]
struct Piece<'t> {
    text: &'t str,
    /// What separates it from the previous piece (or the text's start).
    before: &'t str,
}

/// Reads a text as words; `year` completes a date written without one.
pub(crate) fn read(text: &str, year: Option<i64>) -> Vec<Word> {
    let lower = normal(text);
    let (pieces, tail) = pieces(&lower);
    let quoted = quoted(&pieces, tail);
    let mut words: Vec<Word> = Vec::with_capacity(pieces.len());
    let mut clause = 0u32;
    // The clauses a parenthesis interrupts: the clause goes on after it.
    let mut outer: Vec<u32> = Vec::new();
    let mut next_clause = 0u32;
    let mut sentence = 0u32;
    let mut restated = false;
    let mut sentence_start = 0usize;
    let mut i = 0;
    while i < pieces.len() {
        let piece = &pieces[i];
        let start = piece.text.as_ptr() as usize - lower.as_ptr() as usize;
        // Inside quotes (a name "Q3: plan", a quoted question) no clause or sentence ends.
        let inside = quoted[i] && i > 0 && quoted[i - 1];
        if i > 0 && !inside {
            if ends_sentence(piece.before) {
                sentence += 1;
                sentence_start = words.len();
                restated = false;
            }
            let opens = piece.before.contains(['(', '[']);
            let closes = piece.before.contains([')', ']']);
            if ends_sentence(piece.before) {
                outer.clear();
                next_clause += 1;
                clause = next_clause;
            } else if closes
                && !opens
                && let Some(back) = outer.pop()
            {
                clause = back;
            } else if ends_clause(piece.before) {
                if opens {
                    outer.push(clause);
                }
                next_clause += 1;
                clause = next_clause;
            }
        }
        if words.len() == sentence_start + 1 || words.len() == sentence_start + 3 {
            // The sentence's first words so far restate the question?
            let first: Vec<&str> = words[sentence_start..].iter().map(|w| w.text.as_str()).chain([piece.text]).collect();
            restated = restated || RESTATING.iter().any(|r| r.len() <= first.len() && r.iter().zip(&first).all(|(a, b)| a == b));
            if restated {
                words[sentence_start..].iter_mut().for_each(|w| w.restated = true);
            }
        }
        if let Some((word, kind, used)) = date_at(&pieces[i..], year).or_else(|| time_at(&pieces[i..])) {
            words.push(Word { text: word, clause, kind, quoted: quoted[i], sentence, restated, start });
            i += used;
            continue;
        }
        let text = piece.text;
        if CONJUNCTIONS.contains(&text) && !quoted[i] && words.last().is_some_and(|w| w.clause == clause) {
            next_clause += 1;
            clause = next_clause;
        }
        let kind = if !text.bytes().all(|b| b.is_ascii_digit()) {
            Kind::Plain
        } else if joined(piece.before) || pieces.get(i + 1).is_some_and(|next| joined_number(next.before, next.text)) {
            Kind::Part
        } else {
            Kind::Number
        };
        words.push(Word { text: text.to_owned(), clause, kind, quoted: quoted[i], sentence, restated, start });
        i += 1;
    }
    words
}

/// The runs of letters and digits of a lowercase text.
fn pieces(text: &str) -> (Vec<Piece<'_>>, &str) {
    let mut out = Vec::new();
    let mut last_end = 0;
    let mut start = None;
    for (at, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(at),
            (false, Some(s)) => {
                out.push(Piece { text: &text[s..at], before: &text[last_end..s] });
                last_end = at;
                start = None;
            }
            _ => {}
        }
    }
    (out, &text[last_end.min(text.len())..])
}

/// Which pieces stand inside quotes (`'…'`, `"…"`, `‘…’`, `“…”`): a quote
/// opens after a separator and closes before one, so `customer's` is no quote.
fn quoted(pieces: &[Piece<'_>], tail: &str) -> Vec<bool> {
    let mut out = vec![false; pieces.len()];
    let mut open: Option<(usize, char)> = None;
    let is_quote = |c: char| matches!(c, '\'' | '"' | '\u{2018}' | '\u{201c}');
    for i in 0..=pieces.len() {
        let before = pieces.get(i).map_or(tail, |p| p.before);
        // A closing quote starts the separator after a word and is not a
        // word's apostrophe (`customer's`).
        if let Some((from, mark)) = open
            && before.trim_start_matches(['.', ',', '!', '?', ';', ':']).starts_with(closing(mark))
            && (i == pieces.len() || before.chars().count() > 1)
        {
            out[from..i].iter_mut().for_each(|q| *q = true);
            open = None;
        }
        if open.is_none()
            && i < pieces.len()
            && (i == 0 || before.chars().count() > 1)
            && let Some(mark) = before.chars().last().filter(|c| is_quote(*c))
        {
            open = Some((i, mark));
        }
    }
    out
}

fn closing(open: char) -> char {
    match open {
        '\u{2018}' => '\u{2019}',
        '\u{201c}' => '\u{201d}',
        other => other,
    }
}

/// Whether a separator ends a sentence.
fn ends_sentence(separator: &str) -> bool {
    separator.chars().any(|c| matches!(c, '.' | '!' | '?' | '\n' | '|'))
}

/// Whether a separator ends a clause.
fn ends_clause(separator: &str) -> bool {
    separator.chars().any(|c| matches!(c, '.' | ';' | ':' | '!' | '?' | ',' | '(' | ')' | '[' | ']' | '\n' | '\u{2014}' | '\u{2013}'))
        || separator.contains(" - ")
}

/// Whether digits after this separator are part of an id or amount before them.
fn joined(separator: &str) -> bool {
    matches!(separator, "-" | "_" | "." | "," | "#" | "/")
        || separator.ends_with('$')
        || separator.ends_with('\u{20ac}')
        || separator.ends_with('\u{a3}')
}

/// Whether a piece after `separator` continues the digits before it into an id or amount.
fn joined_number(separator: &str, next: &str) -> bool {
    matches!(separator, "-" | "_") || (matches!(separator, "." | ",") && next.bytes().all(|b| b.is_ascii_digit()))
}

fn number(text: &str, digits: std::ops::RangeInclusive<usize>) -> Option<u32> {
    (digits.contains(&text.len()) && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok()).flatten()
}

fn month(text: &str) -> Option<u32> {
    if text.len() < 3 {
        return None;
    }
    let at = MONTHS.iter().position(|m| text.starts_with(m))?;
    const FULL: [&str; 12] =
        ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
    (text.len() == 3 || FULL[at].starts_with(text) || text == "sept").then_some(at as u32 + 1)
}

/// A day of the month written `27`, `27th`, `1st`.
fn day(text: &str) -> Option<u32> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &text[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    number(digits, 1..=2).filter(|d| (1..=31).contains(d))
}

fn date_word(year: i64, month: u32, day: u32) -> Option<String> {
    crate::date::Date::from_ymd(year, month, day).map(|d| format!("@{d}"))
}

/// A date starting at the first piece: the word, its kind and how many pieces it takes.
fn date_at(p: &[Piece<'_>], year: Option<i64>) -> Option<(String, Kind, usize)> {
    let text = |i: usize| p.get(i).map(|p| p.text);
    let sep = |i: usize| p.get(i).map_or("", |p| p.before);
    // 2026-04-27, 2026/04/27
    if let (Some(y), Some(m), Some(d)) =
        (number(p[0].text, 4..=4), text(1).and_then(|t| number(t, 1..=2)), text(2).and_then(|t| number(t, 1..=2)))
        && matches!(sep(1), "-" | "/" | ".")
        && sep(2) == sep(1)
    {
        return date_word(i64::from(y), m, d).map(|w| (w, Kind::Date, 3));
    }
    let year_at = |i: usize| -> Option<i64> {
        let s = sep(i);
        (matches!(s.trim(), "" | ",")).then_some(())?;
        text(i).and_then(|t| number(t, 4..=4)).map(i64::from)
    };
    // April 27, 2026 / Apr 27th
    if let (Some(m), Some(d)) = (month(p[0].text), text(1).and_then(day))
        && sep(1).trim().is_empty()
    {
        return match year_at(2) {
            Some(y) => date_word(y, m, d).map(|w| (w, Kind::Date, 3)),
            None => date_word(year?, m, d).map(|w| (w, Kind::Date, 2)),
        };
    }
    // 27 April 2026 / 27th of April
    if let Some(d) = day(p[0].text) {
        let of = usize::from(text(1) == Some("of"));
        if let Some(m) = text(1 + of).and_then(month)
            && sep(1).trim().is_empty()
        {
            return match year_at(2 + of) {
                Some(y) => date_word(y, m, d).map(|w| (w, Kind::Date, 3 + of)),
                None => date_word(year?, m, d).map(|w| (w, Kind::Date, 2 + of)),
            };
        }
    }
    None
}

fn time_word(hour: u32, minute: u32) -> Option<String> {
    (hour < 24 && minute < 60).then(|| format!("@{hour:02}:{minute:02}"))
}

/// `am`, `pm`, `a.m.`: the hour in 24-hour form.
fn meridiem(p: &[Piece<'_>], hour: u32) -> Option<(u32, usize)> {
    let (first, used) = match (p.first()?.text, p.get(1).map(|p| p.text)) {
        ("a" | "p", Some("m")) if p[0].before.trim().is_empty() || p[0].before == "." => (p[0].text, 2),
        ("am" | "pm", _) if p[0].before.trim().is_empty() => (p[0].text, 1),
        _ => return None,
    };
    if !(1..=12).contains(&hour) {
        return None;
    }
    Some((if first.starts_with('p') { hour % 12 + 12 } else { hour % 12 }, used))
}

/// A time starting at the first piece: the word, its kind and how many pieces it takes.
fn time_at(p: &[Piece<'_>]) -> Option<(String, Kind, usize)> {
    if matches!(p[0].text, "noon" | "midday") {
        return time_word(12, 0).map(|w| (w, Kind::Time, 1));
    }
    let text = p[0].text;
    // 14h00, 14h, 2pm, 10am
    let digits = &text[..text.bytes().take_while(u8::is_ascii_digit).count()];
    let rest = &text[digits.len()..];
    if let Some(hour) = number(digits, 1..=2) {
        let split = digits.len();
        match rest {
            "am" | "pm" => {
                return meridiem(&[Piece { text: rest, before: "" }], hour).and_then(|(h, _)| time_word(h, 0)).map(|w| (w, Kind::Time, 1));
            }
            "h" => {
                if let Some(minute) = p.get(1).filter(|n| n.before.is_empty()).and_then(|n| number(n.text, 2..=2)) {
                    return time_word(hour, minute).map(|w| (w, Kind::Time, 2));
                }
                return time_word(hour, 0).map(|w| (w, Kind::Time, 1));
            }
            _ if rest.starts_with('h') && split > 0 => {
                if let Some(minute) = number(&rest[1..], 2..=2) {
                    return time_word(hour, minute).map(|w| (w, Kind::Time, 1));
                }
            }
            _ => {}
        }
    }
    let hour = number(text, 1..=2)?;
    // 9:00am, 2.30pm
    if let Some(next) = p.get(1)
        && matches!(next.before, ":" | ".")
        && next.text.len() == 4
        && let Some(minute) = number(&next.text[..2], 2..=2)
        && let Some((h, _)) = meridiem(&[Piece { text: &next.text[2..], before: "" }], hour)
    {
        return time_word(h, minute).map(|w| (w, Kind::Time, 2));
    }
    // 14:00, 2:00 pm, 2.30 pm
    if let Some(next) = p.get(1)
        && let Some(minute) = number(next.text, 2..=2)
        && matches!(next.before, ":" | ".")
    {
        if let Some((h, used)) = p.get(2..).and_then(|r| meridiem(r, hour)) {
            return time_word(h, minute).map(|w| (w, Kind::Time, 2 + used));
        }
        return (next.before == ":").then(|| time_word(hour, minute)).flatten().map(|w| (w, Kind::Time, 2));
    }
    // 2 pm
    let (h, used) = meridiem(p.get(1..)?, hour)?;
    time_word(h, 0).map(|w| (w, Kind::Time, 1 + used))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<String> {
        read(text, Some(2026)).into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn dates_and_times_in_common_formats_read_as_one_word() {
        for date in ["2026-04-27", "April 27, 2026", "27 April 2026", "Apr 27", "27th of April", "2026/04/27", "april 27th 2026"] {
            assert_eq!(texts(&format!("on {date}.")), ["on", "@2026-04-27"], "{date}");
        }
        for time in ["14:00", "2 pm", "2:00 PM", "2 p.m.", "14h00", "2pm"] {
            assert_eq!(texts(&format!("at {time} sharp")), ["at", "@14:00", "sharp"], "{time}");
        }
        assert_eq!(texts("noon or 9:30"), ["@12:00", "or", "@09:30"]);
        assert_eq!(texts("costs $45.00, order 12"), ["costs", "45", "00", "order", "12"]);
    }

    #[test]
    fn words_know_their_clause_kind_and_quotes() {
        let words = read("I booked nothing: 12:00 is taken by 'Budget not set', so T-0043 waits; 12 left and $4.50 paid", None);
        let clause = |t: &str| words.iter().find(|w| w.text == t).map(|w| w.clause);
        assert_eq!(clause("booked"), Some(0));
        assert_eq!(clause("taken"), clause("@12:00"));
        assert_ne!(clause("taken"), clause("waits"), "so opens a clause");
        assert!(words.iter().find(|w| w.text == "not").is_some_and(|w| w.quoted));
        let kind = |t: &str| words.iter().find(|w| w.text == t).map(|w| w.kind);
        assert_eq!(
            (kind("0043"), kind("12"), kind("4"), kind("50")),
            (Some(Kind::Part), Some(Kind::Number), Some(Kind::Part), Some(Kind::Part))
        );
        assert!(!words.iter().find(|w| w.text == "customer").is_some_and(|w| w.quoted));
        assert!(read("the customer's ticket", None).iter().all(|w| !w.quoted));
    }
}

#[cfg(test)]
mod restated_tests {
    use super::*;

    #[test]
    fn a_restated_question_is_marked() {
        let words = read(
            "You asked: \"Tom Okafor (customer C-112) asks us to close ticket T-0038 for them. Close it if it is theirs; if it is not, change nothing.\"\n\nT-0038 isn't yours, so I left it open.",
            None,
        );
        let marked: Vec<(String, bool, bool, u32)> = words.iter().map(|w| (w.text.clone(), w.restated, w.quoted, w.sentence)).collect();
        assert!(words.iter().filter(|w| w.text == "close").all(|w| w.restated), "{marked:?}");
        assert!(words.iter().find(|w| w.text == "left").is_some_and(|w| !w.restated), "{marked:?}");
    }
}
