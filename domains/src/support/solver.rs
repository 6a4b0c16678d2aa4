//! How the solver plays support tasks: from the task's slots, the tickets it
//! finds and the knowledge-base policy it reads.

use serde_json::{Value, json};

use crate::solver::{GiveUp, Session, Step, Strategy, Usable, accepted, field, kind, list_at, slot, text_at, unknown};
use toolenv_core::Task;

/// The priorities, lowest first, as the tools spell them.
const PRIORITIES: [&str; 4] = ["low", "medium", "high", "urgent"];

impl Strategy for super::State {
    fn solve(task: &Task, s: &mut Session<'_>) -> Step<()> {
        // Every kind but the generated batch of disputes names one customer.
        let customer = task.slot("customer").unwrap_or_default();
        match kind(task) {
            // "{customer} asked for {subject}, and you changed that setting while they were on
            // the phone. Create a ticket …, then close it with a resolution saying what was done."
            "create-close" => {
                let subject = slot(task, "subject")?;
                let description = format!("{customer} asked for this change during a call: {subject}.");
                let id = create(task, s, &description)?;
                let resolution = format!("Done while the customer was on the phone: {subject}. The setting was changed as asked.");
                accepted("close_ticket", s.write("close_ticket", json!({"ticket_id": id, "resolution": resolution}))?).map(drop)
            }
            // "{customer} has sent the photos for the ticket about his damaged package. Raise that
            // ticket's priority to {priority} and add the note '{note}'. Do not close the ticket."
            "update-ticket" => {
                let ticket = open_ticket(s, slot(task, "customer_id")?, &["damage", "package"])?;
                let args =
                    json!({"ticket_id": field(&ticket, "ticket_id"), "priority": slot(task, "priority")?, "note": slot(task, "note")?});
                accepted("update_ticket", s.write("update_ticket", args)?).map(drop)
            }
            // "{customer} is disputing a refund decision in her open ticket. Find the ticket, check
            // the knowledge base for our refund dispute policy, and handle the ticket as it says."
            "escalate-dispute" => {
                let summary = open_ticket(s, slot(task, "customer_id")?, &["dispute", "refund"])?;
                let id = field(&summary, "ticket_id").to_owned();
                let has_amount = |v: &Value| v.pointer("/ticket/description").and_then(Value::as_str).and_then(dollars).is_some();
                let ticket = accepted("get_ticket", s.read_if("get_ticket", json!({"ticket_id": id}), &has_amount)?)?;
                let amount = text_at(&ticket, "/ticket/description").map(dollars)?.unwrap_or_default();
                let policy = policy(s, "refund dispute", "billing", "dispute")?;
                let subject = text_at(&ticket, "/ticket/subject")?.to_owned();
                handle_dispute(s, &id, text_at(&ticket, "/ticket/priority")?, amount, &policy, &subject)
            }
            // "{customer} reports login alerts from a country she has never visited, and the email
            // on her account was changed without her consent. Create a ticket …, then check the
            // knowledge base and handle the ticket as our policy requires."
            "security-breach" => {
                let description = format!(
                    "{customer} reports login alerts from a country she never visited; her account email was changed without her consent."
                );
                let id = create(task, s, &description)?;
                let policy = policy(s, "unrecognized logins email changed account compromise", "security", "compromise")?;
                let priority = slot(task, "priority")?;
                raise_priority(s, &id, priority, &policy)?;
                let tier = escalation_tier(&policy).ok_or_else(|| GiveUp::Stuck(format!("no tier to escalate to in: {policy}")))?;
                let reason = format!(
                    "Suspected security breach ({}): logins the customer does not recognize and an account email change she did not make.",
                    slot(task, "subject")?
                );
                escalate(s, &id, &reason, tier)
            }
            // "{customer} says we refused to refund the {amount} she paid for a smart plug she
            // returned within 30 days. Create a ticket …, then handle it as our refund dispute policy says."
            "small-dispute" => {
                let amount_text = slot(task, "amount")?;
                let amount = dollars(amount_text).ok_or_else(|| GiveUp::Stuck(format!("no amount in '{amount_text}'")))?;
                let description =
                    format!("{customer} disputes our refusal to refund {amount_text} for a smart plug returned within 30 days.");
                let id = create(task, s, &description)?;
                let policy = policy(s, "refund dispute", "billing", "dispute")?;
                handle_dispute(s, &id, slot(task, "priority")?, amount, &policy, slot(task, "subject")?)
            }
            // "{customer} (customer {customer_id}) has an open ticket about '{subject}'. Set its priority to
            // {priority} and add the note '{note}'. Do not close it."
            "note-ticket" => {
                let subject = slot(task, "subject")?.to_lowercase();
                let ticket = open_ticket(s, slot(task, "customer_id")?, &[&subject])?;
                let args =
                    json!({"ticket_id": field(&ticket, "ticket_id"), "priority": slot(task, "priority")?, "note": slot(task, "note")?});
                accepted("update_ticket", s.write("update_ticket", args)?).map(drop)
            }
            // "The issue in ticket {ticket_id} ('{subject}') of {customer} is fixed. Close that ticket …"
            "close-fixed" => {
                let resolution = format!("Fixed: {}. The customer confirmed it works again.", slot(task, "subject")?.to_lowercase());
                accepted("close_ticket", s.write("close_ticket", json!({"ticket_id": slot(task, "ticket_id")?, "resolution": resolution}))?)
                    .map(drop)
            }
            // "{customer} (customer {customer_id}) is disputing a refund decision in an open ticket. …"
            "refund-dispute" => {
                let policy = policy(s, "refund dispute", "billing", "dispute")?;
                dispute_of(s, slot(task, "customer_id")?, &policy)
            }
            // "{customer1} (customer {customer_id1}), … each dispute a refund decision in an open ticket. …"
            "refund-disputes" => {
                let policy = policy(s, "refund dispute", "billing", "dispute")?;
                for name in ["customer_id1", "customer_id2", "customer_id3", "customer_id4"] {
                    if let Some(customer_id) = task.slot(name) {
                        dispute_of(s, customer_id, &policy)?;
                    }
                }
                Ok(())
            }
            // "Which of the tickets of {customer} (customer {customer_id}) that are not closed has the highest priority? …"
            "urgent-question" => {
                let answer = s.read_if("list_open_tickets", json!({"customer_id": slot(task, "customer_id")?}), &|v| {
                    !list_at(v, "/tickets").is_empty()
                })?;
                let listed = accepted("list_open_tickets", answer)?;
                let rank = |t: &Value| PRIORITIES.iter().position(|p| *p == field(t, "priority")).unwrap_or(0);
                let tickets = list_at(&listed, "/tickets");
                let top = tickets.iter().rev().max_by_key(|t| rank(t)).ok_or_else(|| GiveUp::Stuck("no open ticket".into()))?;
                let (id, subject, priority) = (field(top, "ticket_id"), field(top, "subject"), field(top, "priority"));
                s.answer(&format!("{id} has the highest priority ({priority}); its subject is '{subject}'."));
                Ok(())
            }
            // "{customer} (customer {customer_id}) asks us to close ticket {ticket_id} for them. Close it if it is
            // theirs; if it is not, change nothing and tell them why."
            "foreign-close" => {
                let id = slot(task, "ticket_id")?;
                let answer = s.read_if("get_ticket", json!({"ticket_id": id}), &|v| v.pointer("/ticket/customer_id").is_some())?;
                let ticket = accepted("get_ticket", answer)?;
                if text_at(&ticket, "/ticket/customer_id")? == slot(task, "customer_id")? {
                    let resolution = format!("Closed at the request of {customer}.");
                    return accepted("close_ticket", s.write("close_ticket", json!({"ticket_id": id, "resolution": resolution}))?)
                        .map(drop);
                }
                s.answer(&format!("I changed nothing: ticket {id} belongs to another customer, so I cannot close it for you."));
                Ok(())
            }
            _ => Err(unknown(task)),
        }
    }
}

/// Finds a customer's open refund dispute ticket and handles it as the policy says.
fn dispute_of(s: &mut Session<'_>, customer_id: &str, policy: &str) -> Step<()> {
    let summary = open_ticket(s, customer_id, &["dispute", "refund"])?;
    let id = field(&summary, "ticket_id").to_owned();
    let has_amount = |v: &Value| v.pointer("/ticket/description").and_then(Value::as_str).and_then(dollars).is_some();
    let ticket = accepted("get_ticket", s.read_if("get_ticket", json!({"ticket_id": id}), &has_amount)?)?;
    let amount = text_at(&ticket, "/ticket/description").map(dollars)?.unwrap_or_default();
    let subject = text_at(&ticket, "/ticket/subject")?.to_owned();
    handle_dispute(s, &id, text_at(&ticket, "/ticket/priority")?, amount, policy, &subject)
}

/// Creates the task's ticket (its customer, subject and priority); returns its id, read from the reply.
fn create(task: &Task, s: &mut Session<'_>, description: &str) -> Step<String> {
    let args = json!({
        "customer_id": slot(task, "customer_id")?,
        "subject": slot(task, "subject")?,
        "description": description,
        "priority": slot(task, "priority")?,
    });
    let has_id = |v: &Value| v.pointer("/created/ticket_id").is_some_and(Value::is_string);
    let created = accepted("create_ticket", s.write_if("create_ticket", args, &has_id)?)?;
    Ok(text_at(&created, "/created/ticket_id")?.to_owned())
}

/// The customer's open ticket whose subject names one of `words` (or the
/// only open one). The list is read again until it shows one.
fn open_ticket(s: &mut Session<'_>, customer_id: &str, words: &[&str]) -> Step<Value> {
    let find = |v: &Value| -> Option<Value> {
        let tickets = list_at(v, "/tickets");
        let about = |t: &&Value| words.iter().any(|w| field(t, "subject").to_lowercase().contains(w));
        tickets.iter().find(about).or(if tickets.len() == 1 { tickets.first() } else { None }).cloned()
    };
    let answer = s.read_if("list_open_tickets", json!({"customer_id": customer_id}), &|v| find(v).is_some())?;
    find(&accepted("list_open_tickets", answer)?).ok_or_else(|| GiveUp::Stuck(format!("no open ticket of {customer_id} about {words:?}")))
}

/// The body of the best-matching knowledge-base article of a category that
/// is about `topic` (the best match of all when none names it).
fn policy(s: &mut Session<'_>, query: &str, category: &str, topic: &str) -> Step<String> {
    // Every match up to the page size is listed: a shorter list was cut.
    let listed = |v: &Value| {
        let total = v.get("total_matches").and_then(Value::as_u64).unwrap_or(0) as usize;
        !list_at(v, "/articles").is_empty() && list_at(v, "/articles").len() == total.min(5)
    };
    let answer = s.read_if("search_knowledge_base", json!({"query": query, "category": category}), &listed)?;
    let result = accepted("search_knowledge_base", answer)?;
    let articles = list_at(&result, "/articles");
    let about = |a: &&Value| format!("{} {}", field(a, "title"), field(a, "body")).to_lowercase().contains(topic);
    let article = articles.iter().find(about).or(articles.first()).ok_or_else(|| GiveUp::Stuck(format!("no article for '{query}'")))?;
    Ok(field(article, "body").to_owned())
}

/// Handles a refund dispute as the policy says: above its threshold, the
/// priority it names and an escalation to its tier, with the amount in the
/// reason; otherwise approved and closed at tier1, stating the amount.
fn handle_dispute(s: &mut Session<'_>, id: &str, priority: &str, amount: u64, policy: &str, subject: &str) -> Step<()> {
    let threshold = after(policy, "over").and_then(dollars).ok_or_else(|| GiveUp::Stuck(format!("no threshold in: {policy}")))?;
    if amount > threshold {
        raise_priority(s, id, priority, policy)?;
        let tier = escalation_tier(policy).ok_or_else(|| GiveUp::Stuck(format!("no tier to escalate to in: {policy}")))?;
        let reason = format!(
            "Refund dispute over {}: the customer contests a refund of {} we did not grant ({subject}).",
            money(threshold),
            money(amount)
        );
        escalate(s, id, &reason, tier)
    } else {
        let resolution = format!(
            "Refund dispute of {} (not over {}) decided at tier1: refund of {} approved.",
            money(amount),
            money(threshold),
            money(amount)
        );
        accepted("close_ticket", s.write("close_ticket", json!({"ticket_id": id, "resolution": resolution}))?).map(drop)
    }
}

/// Sets the priority the policy asks for, when the ticket has another.
fn raise_priority(s: &mut Session<'_>, id: &str, current: &str, policy: &str) -> Step<()> {
    match required_priority(policy) {
        Some(wanted) if wanted != current => {
            accepted("update_ticket", s.write("update_ticket", json!({"ticket_id": id, "priority": wanted}))?).map(drop)
        }
        _ => Ok(()),
    }
}

fn escalate(s: &mut Session<'_>, id: &str, reason: &str, tier: &str) -> Step<()> {
    match s.write("escalate_ticket", json!({"ticket_id": id, "reason": reason, "escalate_to": tier}))? {
        Usable::Ok(_) => Ok(()),
        rejected => accepted("escalate_ticket", rejected).map(drop),
    }
}

/// The text after the first occurrence of `word` (ignoring case).
fn after<'t>(text: &'t str, word: &str) -> Option<&'t str> {
    let at = text.to_ascii_lowercase().find(&word.to_ascii_lowercase())?;
    text.get(at + word.len()..)
}

/// The tier a policy escalates to: the first `tierN` after "escalate".
fn escalation_tier(policy: &str) -> Option<&'static str> {
    let rest = after(policy, "escalate")?;
    let at = rest.find("tier")?;
    match rest.as_bytes().get(at + 4)? {
        b'1' => Some("tier1"),
        b'2' => Some("tier2"),
        b'3' => Some("tier3"),
        _ => None,
    }
}

/// The priority a policy asks for: the word after "priority to" or "ticket is".
fn required_priority(policy: &str) -> Option<&'static str> {
    ["priority to", "ticket is"].iter().find_map(|lead| {
        let word = after(policy, lead)?.split(|c: char| !c.is_ascii_alphabetic()).find(|w| !w.is_empty())?.to_ascii_lowercase();
        PRIORITIES.into_iter().find(|p| *p == word)
    })
}

/// The first dollar amount in a text, in cents: `$749.00`, `$500`, `$1,200.5`.
fn dollars(text: &str) -> Option<u64> {
    let rest = &text[text.find('$')? + 1..];
    let number: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.').filter(|c| *c != ',').collect();
    let number = number.trim_end_matches('.');
    let (whole, cents) = number.split_once('.').unwrap_or((number, ""));
    let cents = format!("{cents:0<2}");
    Some(whole.parse::<u64>().ok()? * 100 + cents.get(..2)?.parse::<u64>().ok()?)
}

/// Cents as dollars, e.g. `$749.00`.
fn money(cents: u64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_and_amounts_are_read_from_text() {
        assert_eq!(dollars("refuse to refund the $749.00 annual"), Some(74_900));
        assert_eq!(dollars("over $500: do not"), Some(50_000));
        assert_eq!(dollars("$1,200.5."), Some(120_050));
        assert_eq!(dollars("no amount"), None);
        assert_eq!(money(4_500), "$45.00");
        let dispute = "Disputes over $500: do not close the ticket at tier1. Set its priority to high and escalate it to tier2.";
        assert_eq!(escalation_tier(dispute), Some("tier2"));
        assert_eq!(required_priority(dispute), Some("high"));
        assert_eq!(after(dispute, "over").and_then(dollars), Some(50_000));
        let breach = "Tier1 must not reset credentials: make sure the ticket is urgent and escalate it to tier3 (security team).";
        assert_eq!(escalation_tier(breach), Some("tier3"));
        assert_eq!(required_priority(breach), Some("urgent"));
    }
}
