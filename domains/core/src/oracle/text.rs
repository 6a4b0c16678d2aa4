//! Content checks on free text: what a resolution, a reason, a note or a
//! final answer must say, judged deterministically.
//!
//! A text is read as lowercase words in clauses (see [`super::words`]). A
//! phrase is found when its words appear in a row; a required phrase counts
//! only when asserted: no negation stands in its own clause ("not approved",
//! "I booked nothing", "is not already taken by …", "wasn't approved"), words
//! in quotes and names the check knows (a ticket's subject "… not received")
//! aside. A contrary phrase ([`Fact::Never`], [`Fact::Omits`]) fails
//! anywhere, negated or not. An amount is found in any common format: `$45`,
//! `45.00`, `USD 45`, `45 dollars`, `1,200.50`, `45,00`; a date or a time in
//! any common format too. A placeholder (no word of two letters or more
//! besides words like "n/a", "none", "tbd") never passes. A final answer is
//! also held to what it commits to (see [`super::answer`]).

use serde_json::{Value, json};

use super::words::{self, Kind, Word};
use crate::check::Fact;

/// Words that negate what their clause states before them or right after
/// ("I booked nothing"); "n't" is read as "not".
const NEGATIONS: [&str; 11] = ["not", "no", "never", "cannot", "nor", "neither", "nothing", "nobody", "none", "nowhere", "unable"];

/// Verbs that start another statement: a negation before one does not
/// reach past it ("the flight that isn't sold out is AF-1021").
const COPULAS: [&str; 4] = ["is", "are", "was", "were"];

/// Words that give an amount next to them the role of a limit, not of what
/// the answer states ("the budget of 295", "your $265 budget").
const LIMITS: [&str; 3] = ["budget", "limit", "maximum"];

/// Words that negate only the phrase right after them ("without approval").
const LOCAL_NEGATIONS: [&str; 1] = ["without"];

/// How far after a phrase a negation still reaches in its clause (further
/// on it is another statement's: "a country the customer never visited").
const AFTER: usize = 2;

/// Words that alone make a text a placeholder.
const PLACEHOLDERS: [&str; 9] = ["n", "a", "na", "none", "tbd", "todo", "xxx", "test", "placeholder"];

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

    /// Whether a text read as `text` satisfies the fact.
    fn holds(&self, text: &Read<'_>) -> bool {
        match self {
            // Asserted somewhere, and no statement of several words of it
            // negated ("was not delivered more than 30 days ago, so the return window has closed").
            Fact::Says { any_of, .. } => {
                any_of.iter().any(|phrase| text.asserts(phrase)) && !any_of.iter().any(|phrase| phrase.contains(' ') && text.denies(phrase))
            }
            Fact::Amount { cents } => text.states_amount(*cents),
            Fact::Never { any_of, .. } => !any_of.iter().any(|phrase| text.find(phrase).next().is_some()),
            Fact::Mentions { phrase, .. } => text.asserts(phrase),
            Fact::Omits { phrase, .. } => text.find(phrase).next().is_none(),
        }
    }
}

/// A text read for judging: its words, which of them are names (where no
/// negation is read), its amounts, and the year a date without one is in.
pub(crate) struct Read<'t> {
    pub(crate) words: Vec<Word>,
    /// Per word: inside a name the check knows, or in quotes.
    pub(crate) named: Vec<bool>,
    pub(crate) amounts: Vec<i64>,
    /// Per amount of `amounts`: the word it starts at.
    pub(crate) amount_words: Vec<usize>,
    pub(crate) year: Option<i64>,
    pub(crate) text: &'t str,
}

impl<'t> Read<'t> {
    /// Reads `text`; `names` are values whose words are never read as a
    /// negation (a subject "Package not received").
    pub(crate) fn new<'n>(text: &'t str, year: Option<i64>, names: impl IntoIterator<Item = &'n str>) -> Self {
        let words = words::read(text, year);
        let mut named: Vec<bool> = words.iter().map(|w| w.quoted).collect();
        let found = money_at(&words::normal(text));
        let amount_words = found.iter().map(|(_, _, at)| words.iter().position(|w| w.start >= *at).unwrap_or(words.len())).collect();
        let amounts = found.into_iter().map(|(cents, _, _)| cents).collect();
        let mut read = Read { words, named: Vec::new(), amounts, amount_words, year, text };
        for name in names {
            let len = words::read(name, year).len();
            let starts: Vec<usize> = read.find(name).collect();
            for at in starts {
                named[at..at + len].iter_mut().for_each(|n| *n = true);
            }
        }
        read.named = named;
        read
    }

    /// Where a phrase's words start.
    pub(crate) fn find(&self, phrase: &str) -> std::vec::IntoIter<usize> {
        let phrase: Vec<String> = words::read(phrase, self.year).into_iter().map(|w| w.text).collect();
        self.find_words(&phrase)
    }

    /// Where a phrase, given as its words, starts.
    pub(crate) fn find_words<S: AsRef<str>>(&self, phrase: &[S]) -> std::vec::IntoIter<usize> {
        let Some(first) = phrase.first() else { return Vec::new().into_iter() };
        let words = &self.words;
        (0..words.len())
            .filter(|&i| words[i].text == first.as_ref() && self.matches_at(i, phrase).is_some())
            .collect::<Vec<_>>()
            .into_iter()
    }

    /// How many words the phrase takes from `at`: its words in a row, an
    /// amount between two of them skipped ("over the $485 budget").
    pub(crate) fn matches_at<S: AsRef<str>>(&self, at: usize, phrase: &[S]) -> Option<usize> {
        let mut i = at;
        for (k, p) in phrase.iter().enumerate() {
            if k > 0 {
                while self.words.get(i).is_some_and(|w| w.text != p.as_ref() && matches!(w.kind, Kind::Part | Kind::Number))
                    && i < at + phrase.len() + 2
                {
                    i += 1;
                }
            }
            if self.words.get(i)?.text != p.as_ref() {
                return None;
            }
            i += 1;
        }
        Some(i - at)
    }

    /// Whether the text states the amount: not inside a restated question,
    /// not as a limit ("the budget of 295").
    fn states_amount(&self, cents: i64) -> bool {
        self.amounts.iter().zip(&self.amount_words).any(|(c, &at)| {
            if *c != cents {
                return false;
            }
            let Some(word) = self.words.get(at) else { return true };
            let clause = word.clause;
            let near = |i: usize| self.words.get(i).filter(|w| w.clause == clause).is_some_and(|w| LIMITS.contains(&w.text.as_str()));
            let before = (at.saturating_sub(2)..at).any(near);
            let after = (at + 1..at + 4).filter(|&i| self.words.get(i).is_some_and(|w| w.kind == Kind::Plain)).take(1).any(near);
            !word.restated && !before && !after
        })
    }

    /// Whether the phrase appears negated, outside a restated question.
    fn denies(&self, phrase: &str) -> bool {
        let words: Vec<String> = words::read(phrase, self.year).into_iter().map(|w| w.text).collect();
        self.find_words(&words).any(|at| !self.words[at].restated && self.negated(at, self.matches_at(at, &words).unwrap_or(1)))
    }

    /// Whether the phrase appears asserted: in a clause with no negation
    /// besides its own words and names.
    pub(crate) fn asserts(&self, phrase: &str) -> bool {
        let words: Vec<String> = words::read(phrase, self.year).into_iter().map(|w| w.text).collect();
        self.find_words(&words).any(|at| !self.words[at].restated && !self.negated(at, self.matches_at(at, &words).unwrap_or(1)))
    }

    /// Whether a negation of the phrase's clause reaches the phrase at `at`:
    /// one before it with no other statement between ("is"), or one right
    /// after it, words of a parenthesis aside.
    pub(crate) fn negated(&self, at: usize, len: usize) -> bool {
        let clause = self.words[at].clause;
        let free = |i: usize| !self.named.get(i).copied().unwrap_or(false);
        let before = (0..at).any(|i| {
            let w = &self.words[i];
            let negation = NEGATIONS.contains(&w.text.as_str()) || (i + 2 >= at && LOCAL_NEGATIONS.contains(&w.text.as_str()));
            negation
                && w.clause == clause
                && free(i)
                && !(i + 1..at).any(|j| self.words[j].clause == clause && COPULAS.contains(&self.words[j].text.as_str()) && free(j))
        });
        let after = (at + len..self.words.len()).filter(|&i| self.words[i].clause == clause).take(AFTER);
        before || after.into_iter().any(|i| NEGATIONS.contains(&self.words[i].text.as_str()) && free(i))
    }

    fn is_placeholder(&self) -> bool {
        !self.words.iter().any(|w| w.text.chars().filter(|c| c.is_alphabetic()).count() >= 2 && !PLACEHOLDERS.contains(&w.text.as_str()))
    }
}

/// Judges a text against facts: (passed, what was found). `names` are the
/// values whose words are never read as negations.
pub(crate) fn judge(text: Option<&str>, facts: &[Fact]) -> (bool, Value) {
    judge_read(text, facts, None, |_| None)
}

/// [`judge`], with the year of dates written without one and a further
/// judgement of the read text (a final answer's commitment): what it found
/// wrong, if anything, as a key and a value of the verdict.
pub(crate) fn judge_read(
    text: Option<&str>,
    facts: &[Fact],
    year: Option<i64>,
    further: impl FnOnce(&Read<'_>) -> Option<(&'static str, Value)>,
) -> (bool, Value) {
    judge_named(text, facts, year, &[], further)
}

/// [`judge_read`] with further names never read as negations.
pub(crate) fn judge_named(
    text: Option<&str>,
    facts: &[Fact],
    year: Option<i64>,
    names: &[&str],
    further: impl FnOnce(&Read<'_>) -> Option<(&'static str, Value)>,
) -> (bool, Value) {
    let Some(text) = text else {
        return (false, json!({"text": Value::Null, "missing": expected(facts)}));
    };
    let phrases = facts.iter().filter_map(|f| match f {
        Fact::Mentions { phrase, .. } => Some(phrase.as_str()),
        _ => None,
    });
    let read = Read::new(text, year, phrases.chain(names.iter().copied()));
    if read.is_placeholder() {
        return (false, json!({"text": text, "placeholder": true}));
    }
    let missing: Vec<String> = facts.iter().filter(|f| !f.holds(&read)).map(Fact::describe).collect();
    let mut passed = missing.is_empty();
    let mut found = json!({"text": text, "missing": missing});
    if let Some((key, value)) = further(&read) {
        passed = false;
        found[key] = value;
    }
    (passed, found)
}

/// What the facts ask for, as the verdict shows it.
pub(crate) fn expected(facts: &[Fact]) -> Value {
    Value::from(facts.iter().map(Fact::describe).collect::<Vec<_>>())
}

/// Every amount written in the text, in cents.
#[cfg(test)]
pub(crate) fn amounts(text: &str) -> Vec<i64> {
    money(text).into_iter().map(|(cents, _)| cents).collect()
}

/// Every amount written in the text, in cents, and whether it is marked as
/// money: a currency sign or word next to it, or two decimals.
pub(crate) fn money(text: &str) -> Vec<(i64, bool)> {
    money_at(text).into_iter().map(|(cents, marked, _)| (cents, marked)).collect()
}

/// [`money`], with where each amount starts in the text.
pub(crate) fn money_at(text: &str) -> Vec<(i64, bool, usize)> {
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
        let before = text[..start].trim_end().to_ascii_lowercase();
        let after = text[start + token.len()..].trim_start().to_ascii_lowercase();
        let decimals = token.rfind(['.', ',']).is_some_and(|at| token.len() - at - 1 == 2);
        let marked = decimals
            || ["$", "\u{20ac}", "\u{a3}", "usd", "eur", "gbp"].iter().any(|m| before.ends_with(m))
            || ["dollar", "usd", "eur", "euro", "gbp", "pound", "$", "\u{20ac}"].iter().any(|m| after.starts_with(m));
        found.extend(parse_amount(token).map(|cents| (cents, marked, start)));
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
