//! Conversational variants of generated tasks: the same task with some of
//! its slots left out of the description (the simulated user holds them),
//! and, where the task needs one, an action only the user may take (dual
//! control); or with nothing withheld, so that asking needlessly shows.
//!
//! A variant is a pure function of its generated task and origin: its id is
//! the task's with `c` and [`VERSION`] in place of `g` and the generator's
//! version (`travel/cheapest-flight/c3-1-2026-0003`),
//! so the task given in full is always at hand, and the generated tasks
//! themselves are untouched. Of the four origins in a row the first (index
//! ≡ 0 mod 4) withholds nothing; the others withhold one slot, and at
//! levels 2 and 3 the last of them two where the task has two to withhold.
//! Dual control joins every variant that withholds something, when the
//! task's reference solution makes a call only a user would make (confirm
//! a payment, approve a refund, a meeting's booking or its move) or a
//! write that needs the customer verified with a code the user reads from
//! their phone (closing a support ticket). A slot is withheld only if every
//! wrong guess of it fails, judged on the reference as the agent plays it,
//! the user's part taken out.

use serde_json::{Value, json};

use super::{GENERATOR_VERSION, Origin};
use toolenv_core::{
    Call, Task,
    bus::ASK_USER,
    user::{CODE_QUESTION, Conversation, Entity, SEND_CODE, UserAction, VERIFY, Verification, Withheld},
};

/// The actions only a user may take, by the domain tool they call: what
/// the reference solution's call of that tool becomes in a variant with
/// dual control.
const ACTIONS: &[(&str, &str, &[&str], &str)] = &[
    // (tool, what, words asking for it, the parameter naming the record)
    ("confirm_booking", "confirm the payment", &["confirm", "pay", "payment"], "flight_id"),
    ("process_return", "approve the refund", &["approve", "refund"], "order_id"),
    ("reschedule_meeting", "approve the move", &["approve", "approval"], "new_time"),
    ("book_meeting", "approve the booking", &["approve", "approval"], "time"),
];

/// The version of the conversational variants: of the generator and of
/// the rules above (what is withheld, which calls become the user's). A
/// variant's id names it where a generated task's names
/// [`GENERATOR_VERSION`] (`c3-1-2026-0003` stands for `g2-1-2026-0003`), so
/// a change to either gives the variants new ids and a run's variants of an
/// older version are refused, never rebuilt otherwise. Bump it with every
/// change to the variants and with every new generator version.
///
/// Version 3: a slot is withheld only if every wrong guess of it fails;
/// support's verification code; scheduling's approved booking (version 2
/// was the first variants, whose ids named the generator's version).
pub const VERSION: u32 = 3;

/// The id of the conversational variant of a generated task's id.
pub fn id_of(generated: &str) -> String {
    match generated.rsplit_once("/g").and_then(|(head, tail)| Some((head, tail.split_once('-')?.1))) {
        Some((head, rest)) => format!("{head}/c{VERSION}-{rest}"),
        None => generated.to_owned(),
    }
}

/// The version a conversational variant's id names, if it is one.
pub fn version_of(conversational: &str) -> Option<u32> {
    let (_, tail) = conversational.rsplit_once("/c")?;
    tail.split_once('-')?.0.parse().ok()
}

/// The generated task's id a conversational variant's id of this build's
/// [`VERSION`] stands for; `None` for any other id.
pub fn generated_id(conversational: &str) -> Option<String> {
    let (head, tail) = conversational.rsplit_once("/c")?;
    let (version, rest) = tail.split_once('-')?;
    (version.parse() == Ok(VERSION)).then(|| format!("{head}/g{GENERATOR_VERSION}-{rest}"))
}

/// The conversational variant of the task of an origin.
pub fn variant(task: Task, origin: &Origin) -> Task {
    let mut task = task;
    task.id = id_of(&task.id);
    let wanted = match origin.index % 4 {
        0 => 0,
        3 if origin.level >= 2 => 2,
        _ => 1,
    };
    let mut conversation = Conversation::default();
    // The user's part first: what a guess must get past is what the agent itself still says.
    let full = task.reference.clone();
    if wanted > 0 {
        dual_control(&mut task, &mut conversation);
        verification(&mut task, &mut conversation);
    }
    let mut candidates = withholdable(&task);
    // With the user's part nothing is left to withhold: the task without it.
    if candidates.is_empty() && (!conversation.actions.is_empty() || conversation.verification.is_some()) {
        task.reference = full;
        conversation = Conversation::default();
        candidates = withholdable(&task);
    }
    if wanted > 0 && !candidates.is_empty() {
        let first = (origin.index as usize / 4) % candidates.len();
        for k in 0..wanted.min(candidates.len()) {
            let i = candidates[(first + k) % candidates.len()];
            let slot = &mut task.slots[i];
            let entity = Entity::of(slot.name, &slot.value);
            let value = std::mem::replace(&mut slot.value, entity.stand_in(slot.name));
            conversation.withheld.push(Withheld { slot: slot.name, value, entity });
        }
        conversation.withheld.sort_by_key(|w| task.slots.iter().position(|s| s.name == w.slot));
    }
    // A value still in the description (another slot holds it too) is not withheld at all.
    let description = task.description();
    if conversation.withheld.iter().any(|w| description.contains(&w.value)) {
        for w in conversation.withheld.drain(..) {
            if let Some(slot) = task.slots.iter_mut().find(|s| s.name == w.slot) {
                slot.value = w.value;
            }
        }
    }
    task.conversation = Some(conversation);
    task
}

/// The slots of a task that may be withheld, by index: in its template,
/// of an entity an agent cannot paraphrase, with a value no other slot
/// shares, and one the right outcome depends on one to one, so that every
/// wrong guess fails: the reference solution's writes (its requests to the
/// user to act among them) or answer name it,
/// or, for a slot other than a date or a time, its reads do (a read by a
/// key: another key reads other records). A date or a time only read is
/// where a search starts (the next free slot after 10:00 is the next free
/// one after a taken 11:00 too), and the bounds of a range a read covers
/// are covered by a wider guess too: neither is withheld.
fn withholdable(task: &Task) -> Vec<usize> {
    let text = |c: &Call| c.arguments.to_string();
    // A request to the user to act is the agent's write, made by the user.
    let writes = |c: &&Call| c.tool == ASK_USER || task.domain.tool(c.tool).is_some_and(|t| t.mutates_state);
    let written: Vec<String> = task.reference.iter().filter(writes).map(text).chain(task.reference_answer().map(str::to_owned)).collect();
    let read: Vec<String> = task.reference.iter().filter(|c| !writes(c)).map(text).collect();
    (0..task.slots.len())
        .filter(|&i| {
            let slot = &task.slots[i];
            let entity = Entity::of(slot.name, &slot.value);
            let keyed = !matches!(entity, Entity::Date | Entity::Time);
            task.template.text.contains(&format!("{{{}}}", slot.name))
                && (written.iter().any(|u| u.contains(&slot.value)) || keyed && read.iter().any(|u| u.contains(&slot.value)))
                // The bounds of a range a read covers: a wider guess covers it too.
                && !matches!(slot.name, "start" | "end")
                && entity.withholdable()
                && !slot.value.is_empty()
                && task.slots.iter().enumerate().all(|(j, other)| j == i || !other.value.contains(&slot.value))
        })
        .collect()
}

/// The writes that need the customer verified with a code first, by the
/// domain tool they call: (tool, what it does, the parameter naming the
/// record written, where the record's owner is in the state).
const VERIFIED: &[(&str, &str, &str, &str)] = &[("close_ticket", "close the ticket", "ticket_id", "/tickets/{}/customer_id")];

/// Puts the verification of the customer before the reference's one call
/// of a write that needs it (sending the code, asking the user for it,
/// verifying it), and records the verification.
fn verification(task: &mut Task, conversation: &mut Conversation) {
    for &(tool, what, id_param, owner) in VERIFIED {
        let mut calls = task.reference.iter().enumerate().filter(|(_, c)| c.tool == tool);
        let (Some((at, call)), None) = (calls.next(), calls.next()) else { continue };
        let Some(id) = call.arguments.get(id_param).and_then(Value::as_str) else { continue };
        let Some(customer) = task.initial_json().pointer(&owner.replace("{}", id)).and_then(Value::as_str).map(str::to_owned) else {
            continue;
        };
        let verification = Verification::new(tool, what, &task.id, customer);
        let calls = [
            Call::new(SEND_CODE, json!({"customer_id": verification.customer})),
            Call::new(ASK_USER, json!({"question": CODE_QUESTION})),
            Call::new(VERIFY, json!({"customer_id": verification.customer, "code": verification.code})),
        ];
        task.reference.splice(at..at, calls);
        conversation.verification = Some(verification);
        return;
    }
}

/// Turns the reference's calls of tools only a user may call into requests
/// to the user, and records the actions.
fn dual_control(task: &mut Task, conversation: &mut Conversation) {
    for &(tool, what, words, id_param) in ACTIONS {
        // One call of the tool, so that the user knows all its other arguments.
        if task.reference.iter().filter(|c| c.tool == tool).count() != 1 {
            continue;
        }
        let Some(call) = task.reference.iter_mut().find(|c| c.tool == tool) else { continue };
        let Some(id) = call.arguments.get(id_param).and_then(Value::as_str).map(str::to_owned) else { continue };
        let mut fixed = call.arguments.clone();
        if let Some(map) = fixed.as_object_mut() {
            map.remove(id_param);
        }
        *call = Call::new(ASK_USER, json!({"question": format!("Please {what} for {} {id}.", toolenv_core::user::readable(id_param))}));
        conversation.actions.push(UserAction { tool, what, words, id_param, fixed });
    }
}
