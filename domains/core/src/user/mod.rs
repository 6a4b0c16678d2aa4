//! The simulated user of a conversational task: the person who holds what
//! the description leaves out and who alone can do some things (confirm a
//! payment), answering `ask_user` questions by rule, the same way every time.
//!
//! The user recognises what a question is about from its words: a withheld
//! slot is named when every word of its name (an `_id` suffix and digits
//! aside) appears in the question, or when the question uses a word of the
//! slot's entity type ("when" for a date, "how much" for an amount, "who"
//! for a name) and no other withheld slot has that type. It tells exactly
//! the slots the question names, never more: asked for "everything" it asks
//! back which detail is wanted. A request for one of its actions (its
//! words: "confirm", "pay") makes it act, on the id the question names.
//! Asked for a verification code ("code"), it reads its phone: a call of
//! its own ([`READ_CODE`]) whose result the episode knows (see
//! [`Verification`]); asked for its customer id when a write needs it
//! verified, it tells it.
//! Bad input (empty, longer than [`MAX_QUESTION_BYTES`], mostly non-Latin
//! letters) gets a short answer that says what was wrong. Every answer is
//! bounded: it is built from the task's own values, never from the
//! question's text.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

/// The agent id and role of the user's own tool calls.
pub const USER: &str = "user";
/// Most bytes of a question the user reads; a longer one is refused with a clear answer.
pub const MAX_QUESTION_BYTES: usize = 2048;

/// The kind of value a slot holds, as the user recognises questions about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Entity {
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// A time of day, `HH:MM`.
    Time,
    /// An identifier: letters and digits (`O-0012`, `C-201`).
    Id,
    /// A number: a quantity or an amount of money.
    Amount,
    /// A place: an airport or city code.
    Place,
    /// A person's or a thing's name.
    Name,
    /// Free text.
    Text,
}

impl Entity {
    /// The entity of a slot's value (its name decides places).
    pub fn of(slot: &str, value: &str) -> Entity {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let parts: Vec<&str> = value.split('-').collect();
        if parts.len() == 3 && parts[0].len() == 4 && parts.iter().all(|p| digits(p)) {
            Entity::Date
        } else if value.split_once(':').is_some_and(|(h, m)| digits(h) && digits(m) && h.len() <= 2 && m.len() == 2) {
            Entity::Time
        } else if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            Entity::Amount
        } else if matches!(slot, "origin" | "dest" | "destination") {
            Entity::Place
        } else if value.bytes().any(|b| b.is_ascii_digit()) && value.bytes().any(|b| b.is_ascii_alphabetic()) && !value.contains(' ') {
            Entity::Id
        } else if value.split(' ').count() <= 3 && value.starts_with(|c: char| c.is_ascii_uppercase()) {
            Entity::Name
        } else {
            Entity::Text
        }
    }

    /// Words that ask about a value of this kind without naming the slot.
    fn words(self) -> &'static [&'static str] {
        match self {
            Entity::Date => &["date", "day", "when"],
            Entity::Time => &["time", "hour", "when"],
            Entity::Id => &["id", "number", "reference"],
            Entity::Amount => &["amount", "much", "many", "quantity"],
            Entity::Place => &["where", "city", "airport"],
            Entity::Name => &["name", "who", "whom"],
            Entity::Text => &[],
        }
    }

    /// Whether a slot of this entity may be withheld: a value an agent can
    /// neither read from the state nor paraphrase (free text can be).
    pub fn withholdable(self) -> bool {
        self != Entity::Text
    }

    /// The words standing for a withheld value of this kind in a description.
    pub fn stand_in(self, slot: &str) -> String {
        match self {
            Entity::Date => "a day I will tell you".to_owned(),
            Entity::Time => "a time I will tell you".to_owned(),
            _ => format!("the {} I will tell you", readable(slot)),
        }
    }
}

/// A slot's name as words: `order_id` → `order id`, `topic1` → `topic`.
pub fn readable(slot: &str) -> String {
    slot.split('_').map(|w| w.trim_end_matches(|c: char| c.is_ascii_digit())).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Most bytes of a user's answer supplied from outside (an LLM user) that
/// a turn keeps; a longer one is cut there, at a character boundary.
pub const MAX_ANSWER_BYTES: usize = 2048;

/// Capitalised words that start a sentence or stand for someone without
/// being a name: never read as one.
const NOT_NAMES: &[&str] = &[
    "a", "actually", "an", "and", "are", "as", "at", "but", "by", "for", "from", "he", "her", "hi", "his", "hello", "hmm", "i", "i'd",
    "i'll", "i'm", "in", "is", "it", "it's", "its", "just", "let", "me", "my", "no", "of", "oh", "ok", "okay", "on", "or", "our", "please",
    "she", "so", "sure", "thanks", "thank", "that", "the", "their", "there", "they", "this", "to", "um", "was", "we", "well", "what",
    "yeah", "yes", "you", "your",
];

impl Entity {
    /// The values of this kind a free text says, in the order it says
    /// them, as written: a date `YYYY-MM-DD`, a time `H:MM`, an id (letters
    /// and digits), an amount (digits, a `$` dropped), a place code (three
    /// capital letters), a name (up to three capitalised words in a row,
    /// common sentence openers aside). Free text has none. A deterministic
    /// reading, for what an answer supplied from outside actually says.
    pub fn values_in(self, text: &str) -> Vec<String> {
        self.values_of(text, None)
    }

    /// [`Entity::values_in`], names read as `name_words` words each (the
    /// first capitalised, the others any words but common short ones) when given.
    fn values_of(self, text: &str, name_words: Option<usize>) -> Vec<String> {
        let words: Vec<(&str, bool)> = text
            .split_whitespace()
            .map(|raw| {
                let word = raw.trim_start_matches(['"', '\'', '(', '[', '$', '*', '`']).trim_end_matches(|c: char| !c.is_alphanumeric());
                // A name stops at punctuation after a word.
                (word, word.len() < raw.len() && !raw.ends_with(char::is_alphanumeric))
            })
            .filter(|(word, _)| !word.is_empty() && word.len() <= 64)
            .collect();
        if self == Entity::Name {
            return names_in(&words, name_words);
        }
        words
            .into_iter()
            .map(|(word, _)| word)
            .filter(|word| match self {
                Entity::Place => word.len() == 3 && word.bytes().all(|b| b.is_ascii_uppercase()),
                Entity::Text | Entity::Name => false,
                kind => Entity::of("", word) == kind,
            })
            .map(str::to_owned)
            .collect()
    }
}

/// The names of a text's words (each with whether punctuation ended it):
/// runs that start with a capitalised word, of up to three capitalised
/// words, or of `length` words of any case.
fn names_in(words: &[(&str, bool)], length: Option<usize>) -> Vec<String> {
    let wordy =
        |w: &str| w.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '\'') && !NOT_NAMES.contains(&w.to_lowercase().as_str());
    let capital = |w: &str| {
        wordy(w)
            && w.starts_with(|c: char| c.is_ascii_uppercase())
            && w.chars().all(|c| !c.is_numeric())
            && !w.chars().all(|c| c.is_uppercase() || !c.is_alphabetic())
    };
    let max = length.unwrap_or(3).max(1);
    let mut names = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    for &(word, stops) in words {
        let goes_on = if run.is_empty() {
            capital(word)
        } else if length.is_some() {
            wordy(word)
        } else {
            capital(word)
        };
        if goes_on && run.len() < max {
            run.push(word);
        } else if !run.is_empty() {
            names.push(run.join(" "));
            run.clear();
            if capital(word) {
                run.push(word);
            }
        }
        if (stops || run.len() == max) && !run.is_empty() {
            names.push(run.join(" "));
            run.clear();
        }
    }
    if !run.is_empty() {
        names.push(run.join(" "));
    }
    names
}

/// What a supplied answer says for each withheld slot in `named` (the slots
/// the question named): the slots of one entity, in the task's slot order,
/// take that entity's values in the order the answer says them (a name
/// read as many words as the slot's value has); a slot the answer says
/// nothing of its kind for is left out. Pure, so a recorded answer reads
/// the same in a replay.
pub fn told_in(conversation: &Conversation, named: &[&str], answer: &str) -> BTreeMap<&'static str, String> {
    let mut told = BTreeMap::new();
    let mut values: BTreeMap<(Entity, usize), std::vec::IntoIter<String>> = BTreeMap::new();
    // A customer to verify holds their id too, when the question named it (see `hear`).
    let customer =
        conversation.verification.as_ref().filter(|_| named.contains(&CUSTOMER_ID)).map(|v| (CUSTOMER_ID, Entity::Id, &v.customer));
    let holds = conversation.withheld.iter().map(|w| (w.slot, w.entity, &w.value)).chain(customer);
    for (slot, entity, value) in holds.filter(|(slot, _, _)| named.contains(slot)) {
        let length = value.split_whitespace().count();
        let said = values
            .entry((entity, length))
            .or_insert_with(|| entity.values_of(answer, (entity == Entity::Name).then_some(length)).into_iter());
        if let Some(value) = said.next() {
            told.insert(slot, value);
        }
    }
    told
}

/// A slot the description leaves out and the user holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Withheld {
    /// The slot's name.
    pub slot: &'static str,
    /// Its true value.
    pub value: String,
    /// The kind of value it is.
    pub entity: Entity,
}

/// Something only the user can do (dual control): a call of a domain tool
/// that the agent may not make itself, made by the user when asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserAction {
    /// The domain tool the user calls.
    pub tool: &'static str,
    /// What the user does, as a phrase: `confirm the payment`.
    pub what: &'static str,
    /// Words any of which in a question asks for the action.
    pub words: &'static [&'static str],
    /// The tool's parameter that takes the id the question names.
    pub id_param: &'static str,
    /// The call's other arguments, which the user knows (a JSON object).
    pub fixed: Value,
}

/// The agent's tool that sends a one-time code to a customer's phone.
pub const SEND_CODE: &str = "send_verification_code";
/// The agent's tool that verifies a customer with the code they read out.
pub const VERIFY: &str = "verify_customer";
/// The user's own tool that reads the code on their phone (never the agent's).
pub const READ_CODE: &str = "read_verification_code";
/// The slot name under which the user tells the code it read.
pub const CODE_SLOT: &str = "verification_code";
/// Most wrong codes [`VERIFY`] takes in an episode: after them it refuses
/// every code, so guessing cannot get through.
pub const MAX_CODE_ATTEMPTS: usize = 3;
/// How an agent asks the user for the code (the reference's and the solver's words).
pub const CODE_QUESTION: &str = "Please read me the verification code we sent to your phone.";
/// Words any of which in a question asks the user to read the code.
const CODE_WORDS: &[&str] = &["code", "otp", "passcode"];

/// A write that needs the customer verified first (dual control where the
/// information flows from the state through the user): the agent sends a
/// code ([`SEND_CODE`]), asks the user for it, the user reads it on their
/// phone ([`READ_CODE`], a recorded call of the user's) and tells it, and
/// the agent verifies it ([`VERIFY`]); until then the write is refused.
/// The code is a pure function of the task and the customer
/// ([`Verification::code_of`]), which no domain tool returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verification {
    /// The domain tool whose calls need the customer verified.
    pub tool: &'static str,
    /// What the write does, as a phrase: `close the ticket`.
    pub what: &'static str,
    /// The customer the user is: the owner of what the write changes.
    pub customer: String,
    /// The code sent to the customer's phone.
    pub code: String,
}

impl Verification {
    /// The verification of `customer` in the task `task_id`.
    pub fn new(tool: &'static str, what: &'static str, task_id: &str, customer: String) -> Self {
        let code = Self::code_of(task_id, &customer);
        Self { tool, what, customer, code }
    }

    /// The six-digit code a customer's phone gets in a task: FNV-1a of the
    /// task's id and the customer's, the same on every platform.
    pub fn code_of(task_id: &str, customer: &str) -> String {
        let hash = format!("{task_id}\u{0}{customer}")
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        format!("{:06}", hash % 1_000_000)
    }
}

/// What a conversational task's user holds: the withheld slots and the
/// actions only the user may take. A conversation with neither is a task
/// given in full, where asking is needless.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Conversation {
    /// The slots the description leaves out, in the task's slot order.
    pub withheld: Vec<Withheld>,
    /// The actions only the user may take.
    pub actions: Vec<UserAction>,
    /// The write that needs the customer verified with a code, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
}

impl Conversation {
    /// The withheld slot of a name.
    pub fn withheld(&self, slot: &str) -> Option<&Withheld> {
        self.withheld.iter().find(|w| w.slot == slot)
    }

    /// The user action that calls `tool`, if the agent may not call it.
    pub fn action_on(&self, tool: &str) -> Option<&UserAction> {
        self.actions.iter().find(|a| a.tool == tool)
    }
}

/// How the user heard a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Heard {
    /// It named withheld slots (and they were told), or asked for an action.
    Understood,
    /// It named a slot the description already gives.
    AlreadyGiven,
    /// It named nothing the user knows.
    Unknown,
    /// It named nothing in particular ("tell me everything").
    TooBroad,
    /// It was empty.
    Empty,
    /// It was longer than [`MAX_QUESTION_BYTES`].
    TooLong,
    /// It was not in English.
    Foreign,
}

/// The user's answer to one question, before any action is played.
#[derive(Debug, Clone, PartialEq)]
pub struct Hearing {
    /// How the question was heard.
    pub heard: Heard,
    /// The text of the answer (without the action's outcome).
    pub text: String,
    /// The withheld slots told, by name.
    pub told: BTreeMap<&'static str, String>,
    /// The action asked for: its index in the conversation and the call's arguments,
    /// or why it cannot be made.
    pub action: Option<(usize, Result<Value, String>)>,
    /// Whether it was asked to read the verification code on its phone
    /// (the episode plays the reading: only it knows whether a code was sent).
    pub read_code: bool,
}

/// The slot the user tells its customer id under, when a write needs it verified.
pub const CUSTOMER_ID: &str = "customer_id";

/// Words that ask for every detail at once, naming none.
const BROAD: &[&str] = &["everything", "all", "details", "anything", "missing", "else"];

/// The user's answer to `question`: pure, so the same question gets the
/// same answer in every episode of the task.
pub fn hear(conversation: &Conversation, slots: &[crate::Slot], question: &str) -> Hearing {
    let plain = |heard: Heard, text: &str| Hearing { heard, text: text.to_owned(), told: BTreeMap::new(), action: None, read_code: false };
    if question.len() > MAX_QUESTION_BYTES {
        return plain(
            Heard::TooLong,
            &format!(
                "Your message is too long for me ({} bytes; I read at most {MAX_QUESTION_BYTES}). Please ask about one detail.",
                question.len()
            ),
        );
    }
    if question.trim().is_empty() {
        return plain(Heard::Empty, "Your question is empty. Please ask me about one detail of my request.");
    }
    let letters = question.chars().filter(|c| c.is_alphabetic()).count();
    let foreign = question.chars().filter(|c| c.is_alphabetic() && !c.is_ascii()).count();
    if letters == 0 || foreign * 3 > letters {
        return plain(Heard::Foreign, "Sorry, I only understand questions in English. Please ask again in English.");
    }
    let words: Vec<String> =
        question.split(|c: char| !c.is_ascii_alphanumeric() && c != '\'').filter(|w| !w.is_empty()).map(str::to_ascii_lowercase).collect();
    let has = |w: &str| words.iter().any(|x| x == w);

    let mut told = BTreeMap::new();
    let mut texts = Vec::new();
    let mut holds: Vec<(&'static str, Entity, &str)> = conversation.withheld.iter().map(|w| (w.slot, w.entity, w.value.as_str())).collect();
    // A customer to verify knows their customer id, unless the request gives it.
    if let Some(v) = &conversation.verification
        && !slots.iter().any(|s| s.name == CUSTOMER_ID)
    {
        holds.push((CUSTOMER_ID, Entity::Id, v.customer.as_str()));
    }
    for w in named(&holds.iter().map(|&(slot, entity, _)| (slot, entity)).collect::<Vec<_>>(), &words) {
        let (slot, _, value) = holds[w];
        texts.push(format!("The {} is {value}.", readable(slot)));
        told.insert(slot, value.to_owned());
    }
    let read_code = conversation.verification.is_some() && CODE_WORDS.iter().any(|w| has(w));
    let action = conversation.actions.iter().position(|a| a.words.iter().any(|w| has(w))).map(|i| {
        let action = &conversation.actions[i];
        let arguments = match value_in(question, action.id_param) {
            Some(id) => {
                let mut arguments = action.fixed.clone();
                if let Some(map) = arguments.as_object_mut() {
                    map.insert(action.id_param.to_owned(), Value::from(id));
                }
                Ok(arguments)
            }
            None => Err(format!("Which one should I {}? Tell me its {}.", action.what, readable(action.id_param))),
        };
        (i, arguments)
    });
    if !told.is_empty() || action.is_some() || read_code {
        return Hearing { heard: Heard::Understood, text: texts.join(" "), told, action, read_code };
    }
    let given: Vec<(&'static str, Entity)> = slots
        .iter()
        .filter(|s| conversation.withheld(s.name).is_none())
        .map(|s| (s.name, Entity::of(s.name, &s.value)))
        .filter(|(_, e)| e.withholdable())
        .collect();
    if !named(&given, &words).is_empty() {
        return plain(Heard::AlreadyGiven, "That is already in my request; I have nothing to add to it.");
    }
    if BROAD.iter().any(|w| has(w)) {
        return plain(
            Heard::TooBroad,
            "Please ask me about one specific detail (a date, a time, an id, an amount or a name) and I will tell you.",
        );
    }
    plain(Heard::Unknown, "I don't know that; I can only tell you the details of my own request.")
}

/// The indices of the slots of `candidates` a question (its lowercase
/// words) names: by every word of the slot's name, or by a word of its
/// entity when no other candidate has that entity. A slot whose name's
/// words are a strict part of another named slot's (`date` in `new date`)
/// counts only if its last word is said more often than the longer names
/// that hold it ("the date and the new date" names both).
fn named(candidates: &[(&'static str, Entity)], words: &[String]) -> Vec<usize> {
    let has = |w: &str| words.iter().any(|x| x == w);
    let count = |w: &str| words.iter().filter(|x| *x == w).count();
    let name_words =
        |slot: &str| -> Vec<String> { readable(slot).split(' ').filter(|w| *w != "id" && !w.is_empty()).map(str::to_owned).collect() };
    let by_name: Vec<bool> = candidates.iter().map(|(slot, _)| name_words(slot).iter().all(|w| has(w))).collect();
    let hits: Vec<usize> = (0..candidates.len())
        .filter(|&i| {
            let (_, entity) = candidates[i];
            by_name[i] || (candidates.iter().filter(|(_, e)| *e == entity).count() == 1 && entity.words().iter().any(|w| has(w)))
        })
        .collect();
    hits.iter()
        .copied()
        .filter(|&i| {
            let mine = name_words(candidates[i].0);
            let longer = hits
                .iter()
                .filter(|&&j| {
                    let theirs = name_words(candidates[j].0);
                    j != i && by_name[j] && theirs.len() > mine.len() && mine.iter().all(|w| theirs.contains(w))
                })
                .count();
            longer == 0 || mine.last().is_some_and(|w| count(w) > longer)
        })
        .collect()
}

/// The value of an action's parameter a question names: for a time (a
/// parameter named `…time`) the last `HH:MM` in it (where a move goes is
/// said last: "from 09:00 to 14:00"), otherwise the first id.
fn value_in(question: &str, param: &str) -> Option<String> {
    if !param.ends_with("time") {
        return id_in(question);
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    question
        .split(|c: char| !(c.is_ascii_digit() || c == ':'))
        .rfind(|t| t.split_once(':').is_some_and(|(h, m)| digits(h) && h.len() <= 2 && digits(m) && m.len() == 2))
        .map(|t| if t.len() == 4 { format!("0{t}") } else { t.to_owned() })
}

/// The first token of a question that looks like an id: letters and
/// digits (with `-` or `_`), as written.
fn id_in(question: &str) -> Option<String> {
    question
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .map(|t| t.trim_matches(|c| c == '-' || c == '_'))
        .find(|t| t.len() <= 64 && t.bytes().any(|b| b.is_ascii_digit()) && t.bytes().any(|b| b.is_ascii_alphabetic()))
        .map(str::to_owned)
}

#[cfg(test)]
mod answer_tests;
#[cfg(test)]
mod tests;
