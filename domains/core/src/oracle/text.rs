//! Content checks on free text: what a resolution, a reason or a note must
//! say, judged deterministically.
//!
//! A text is read as lowercase words (letters and digits; everything else
//! separates words). A phrase is found when its words appear in a row; a
//! required phrase counts only when none of the two words before it negates
//! it ("not approved", "no refund", "wasn't approved"). An amount is found in
//! any common format: `$45`, `45.00`, `USD 45`, `45 dollars`, `1,200.50`,
//! `45,00`. A placeholder (no word of two letters or more besides words like
//! "n/a", "none", "tbd") never passes.

use serde::Serialize;
use serde_json::{Value, json};

/// Words that negate the phrase right after them (within two words); "n't"
/// is read as "not".
const NEGATIONS: [&str; 7] = ["not", "no", "never", "cannot", "without", "nor", "neither"];

/// Words that alone make a text a placeholder.
const PLACEHOLDERS: [&str; 9] = ["n", "a", "na", "none", "tbd", "todo", "xxx", "test", "placeholder"];

/// One thing free text must (or must not) say.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fact {
    /// At least one of the phrases, not negated: a decision, a reason.
    Says {
        /// What the phrases stand for ("approval").
        label: &'static str,
        /// The phrases, any of which states it.
        any_of: &'static [&'static str],
    },
    /// An amount of money, in any common format.
    Amount {
        /// The amount in cents.
        cents: i64,
    },
    /// None of the phrases: the contrary decision.
    Never {
        /// What the phrases stand for ("denial").
        label: &'static str,
        /// The phrases, none of which may appear (negated or not).
        any_of: &'static [&'static str],
    },
    /// A value of the task's own (a flight number, a topic, a time), its
    /// words in a row and not negated: what an answer must name.
    Mentions {
        /// What the value is ("the cheapest flight").
        label: String,
        /// The value.
        phrase: String,
    },
    /// A value that must not appear at all: a near-duplicate record the
    /// answer must not name instead of (or besides) the right one.
    Omits {
        /// What the value is ("the dearer flight").
        label: String,
        /// The value.
        phrase: String,
    },
}

impl Fact {
    /// A fact as the verdict names it.
    fn describe(&self) -> String {
        match self {
            Fact::Says { label, any_of } => format!("says {label} ({})", any_of.join(" / ")),
            Fact::Amount { cents } => format!("states the amount {}.{:02}", cents / 100, cents % 100),
            Fact::Never { label, any_of } => format!("never says {label} ({})", any_of.join(" / ")),
            Fact::Mentions { label, phrase } => format!("names {label} ({phrase})"),
            Fact::Omits { label, phrase } => format!("never names {label} ({phrase})"),
        }
    }

    /// Whether `words` (of one text) satisfy the fact.
    fn holds(&self, words: &[String], amounts: &[i64]) -> bool {
        match self {
            Fact::Says { any_of, .. } => any_of.iter().any(|phrase| find(words, phrase).any(|at| !negated(words, at))),
            Fact::Amount { cents } => amounts.contains(cents),
            Fact::Never { any_of, .. } => !any_of.iter().any(|phrase| find(words, phrase).next().is_some()),
            Fact::Mentions { phrase, .. } => find(words, phrase).any(|at| !negated(words, at)),
            Fact::Omits { phrase, .. } => find(words, phrase).next().is_none(),
        }
    }
}

/// Judges a text against facts: (passed, what was found).
pub(crate) fn judge(text: Option<&str>, facts: &[Fact]) -> (bool, Value) {
    let Some(text) = text else {
        return (false, json!({"text": Value::Null, "missing": expected(facts)}));
    };
    let words = words(text);
    if is_placeholder(&words) {
        return (false, json!({"text": text, "placeholder": true}));
    }
    let amounts = amounts(text);
    let missing: Vec<String> = facts.iter().filter(|f| !f.holds(&words, &amounts)).map(Fact::describe).collect();
    (missing.is_empty(), json!({"text": text, "missing": missing}))
}

/// What the facts ask for, as the verdict shows it.
pub(crate) fn expected(facts: &[Fact]) -> Value {
    Value::from(facts.iter().map(Fact::describe).collect::<Vec<_>>())
}

fn words(text: &str) -> Vec<String> {
    // "wasn't" is "was not"; a lone "t" (of "T-0043", say) negates nothing.
    let mut text = text.to_lowercase();
    if text.contains("n't") || text.contains("n\u{2019}t") {
        text = text.replace("n't", " not").replace("n\u{2019}t", " not");
    }
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_owned).collect()
}

fn is_placeholder(words: &[String]) -> bool {
    !words.iter().any(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2 && !PLACEHOLDERS.contains(&w.as_str()))
}

/// Where a phrase's words start in `words`.
fn find<'a>(words: &'a [String], phrase: &str) -> impl Iterator<Item = usize> + 'a {
    let phrase: Vec<String> = self::words(phrase);
    (0..words.len()).filter(move |&i| !phrase.is_empty() && words[i..].starts_with(&phrase))
}

fn negated(words: &[String], at: usize) -> bool {
    words[at.saturating_sub(2)..at].iter().any(|w| NEGATIONS.contains(&w.as_str()))
}

/// Every amount written in the text, in cents.
fn amounts(text: &str) -> Vec<i64> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || (i > 0 && bytes[i - 1].is_ascii_digit()) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || matches!(bytes[i], b',' | b'.')) {
            i += 1;
        }
        let token = text[start..i].trim_end_matches(['.', ',']);
        found.extend(parse_amount(token));
    }
    found
}

/// `1,200.50` → 120050; `45,00` → 4500; `45` → 4500.
fn parse_amount(token: &str) -> Option<i64> {
    let (whole, cents) = match token.rfind(['.', ',']) {
        Some(at) if token.len() - at - 1 == 2 => (&token[..at], &token[at + 1..]),
        _ => (token, "00"),
    };
    let groups: Vec<&str> = whole.split([',', '.']).collect();
    let grouped = groups.len() == 1 || groups[1..].iter().all(|g| g.len() == 3);
    if !grouped || groups.iter().any(|g| g.is_empty()) {
        return None;
    }
    let whole: i64 = groups.concat().parse().ok()?;
    whole.checked_mul(100)?.checked_add(cents.parse().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const APPROVAL: Fact = Fact::Says { label: "approval", any_of: &["approved", "approve", "refund issued"] };
    const DENIAL: Fact = Fact::Never { label: "denial", any_of: &["denied", "deny", "refused", "rejected"] };

    fn passes(text: &str, facts: &[Fact]) -> bool {
        judge(Some(text), facts).0
    }

    #[test]
    fn a_decision_counts_only_when_not_negated() {
        let facts = [APPROVAL, Fact::Amount { cents: 4500 }, DENIAL];
        assert!(passes("Dispute under $500 decided at tier1: refund of $45.00 approved.", &facts));
        assert!(passes("APPROVED the refund, USD 45, per KB-102", &facts));
        assert!(passes("We approve a 45 dollars refund for the customer.", &facts));
        assert!(!passes("Refund request denied; customer informed.", &facts));
        assert!(!passes("Refund of $45.00 not approved by tier1.", &facts));
        assert!(!passes("The $45.00 refund wasn't approved.", &facts));
        assert!(!passes("The $45.00 refund WASN\u{2019}T approved.", &facts));
        assert!(!passes("Refund approved for the customer.", &facts), "the amount is missing");
        assert!(!passes("Refund of $45.00 approved, earlier denied.", &facts), "the contrary decision is there too");
    }

    #[test]
    fn an_id_before_a_phrase_does_not_negate_it() {
        let named = [Fact::Mentions { label: "the ticket's subject".into(), phrase: "Two-factor reset".into() }];
        assert!(passes("T-0043 Two-factor reset is the urgent one.", &named), "the t of T-0043 is not n't");
        assert!(!passes("It isn't Two-factor reset.", &named));
    }

    #[test]
    fn placeholders_and_missing_text_fail() {
        for text in ["n/a", ".", "", "  ", "none", "TBD", "x y", "-- 42"] {
            assert!(!passes(text, &[]), "{text:?}");
        }
        assert!(!judge(None, &[]).0);
        assert!(passes("Customer informed by phone.", &[]));
        assert!(passes("too tight", &[]));
    }

    #[test]
    fn amounts_are_read_in_common_formats() {
        assert_eq!(amounts("$45.00, 45,00 and 1,200.50; 749 or 3."), vec![4500, 4500, 120050, 74900, 300]);
        assert_eq!(amounts("ticket T-0007 on 2026-01-06"), vec![700, 202600, 100, 600]);
        assert_eq!(parse_amount("1,20,0"), None);
    }

    #[test]
    fn the_verdict_shows_what_was_required_and_found() {
        let (passed, found) = judge(Some("Refund request denied; customer informed."), &[APPROVAL, DENIAL]);
        assert!(!passed);
        assert_eq!(found["missing"].as_array().map(Vec::len), Some(2));
        assert_eq!(expected(&[Fact::Amount { cents: 4500 }]), json!(["states the amount 45.00"]));
    }
}
