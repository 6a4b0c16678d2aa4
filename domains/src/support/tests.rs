//! Unit tests of the support tools and tasks.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::tasks::desk;
use super::tools::{FirstLetters, MAX_NOTES_PER_TICKET, for_each_word, mark_ascii_words, word_matches};
use super::{Category, Customer, Priority, State, Status, Tier};
use crate::agent::play_calls;
use crate::selfcheck::SelfCheck;
use toolenv_core::{COLLATERAL_CHECK, Call, Context, DomainError, DomainState, Task, date::Date};

fn ctx() -> Context {
    Context { today: Date::from_ymd(2026, 1, 6).unwrap() }
}

fn call(state: &mut State, tool: &str, args: Value) -> Result<Value, DomainError> {
    toolenv_core::testing::call(state, ctx().today, tool, args)
}

fn code(result: Result<Value, DomainError>) -> &'static str {
    result.unwrap_err().code
}

fn message(result: Result<Value, DomainError>) -> String {
    result.unwrap_err().message
}

/// The shared desk, as a task state is built.
fn desk_state() -> State {
    serde_json::from_value(desk()).unwrap()
}

fn create(state: &mut State, customer_id: &str, priority: &str) -> Result<Value, DomainError> {
    call(state, "create_ticket", json!({"customer_id": customer_id, "subject": "S", "description": "D", "priority": priority}))
}

/// The names of the checks a list of calls fails on a suite task.
fn failed(task_id: &str, calls: &[Call]) -> Vec<String> {
    let task = crate::task(task_id).unwrap();
    let episode = play_calls(task, 0, 0, calls);
    episode.verdict().unwrap().failures().map(|c| c.name.clone()).collect()
}

fn reference_without(task_id: &str, tool: &str) -> Vec<Call> {
    crate::task(task_id).unwrap().reference.iter().filter(|c| c.tool != tool).cloned().collect()
}

#[test]
fn state_round_trips_and_rejects_unknown_fields() {
    let state = desk_state();
    assert_eq!(serde_json::to_value(&state).unwrap(), desk());
    let mut bad = desk();
    bad["tickets"]["T-0001"]["owner"] = json!("x");
    assert!(serde_json::from_value::<State>(bad).is_err());
    let mut bad = desk();
    bad["extra"] = json!({});
    assert!(serde_json::from_value::<State>(bad).is_err());
    let mut bad = desk();
    bad["tickets"]["T-0001"]["tier"] = json!("tier4");
    assert!(serde_json::from_value::<State>(bad).is_err());
}

#[test]
fn vocabularies_match_their_serde_names() {
    for (i, name) in Priority::NAMES.iter().enumerate() {
        let value = Priority::parse(name).unwrap();
        assert_eq!(serde_json::to_value(value).unwrap(), json!(name));
        assert_eq!(Priority::NAMES.iter().position(|n| *n == value.as_str()), Some(i));
    }
    for name in Status::NAMES {
        assert_eq!(serde_json::to_value(Status::parse(name).unwrap()).unwrap(), json!(name));
    }
    for name in Category::NAMES {
        assert_eq!(serde_json::to_value(Category::parse(name).unwrap()).unwrap(), json!(name));
    }
    assert_eq!(Tier::NAMES, ["tier1", "tier2", "tier3"]);
    assert!(Tier::Tier1 < Tier::Tier2 && Tier::Tier2 < Tier::Tier3);
    assert_eq!(Priority::parse(" High "), Some(Priority::High));
}

#[test]
fn create_ticket_starts_open_at_tier1_with_the_next_id() {
    let mut s = State::default();
    s.customers.insert("C-1".into(), Customer { name: "N".into(), plan: "free".into() });
    let created = call(
        &mut s,
        "create_ticket",
        json!({"customer_id": "c-1", "subject": " Login fails ", "description": "Cannot log in.", "priority": "High"}),
    )
    .unwrap();
    assert_eq!(
        created,
        json!({"created": {
            "ticket_id": "T-0001", "customer_id": "C-1", "subject": "Login fails", "description": "Cannot log in.",
            "priority": "high", "status": "open", "tier": "tier1", "notes": [], "resolution": null, "escalation_reason": null
        }})
    );
    assert_eq!(create(&mut s, "C-1", "low").unwrap()["created"]["ticket_id"], json!("T-0002"));
}

#[test]
fn ids_continue_after_the_initial_states_highest() {
    let mut state = desk();
    state["tickets"].as_object_mut().unwrap().retain(|id, _| id.as_str() <= "T-0003");
    let mut s: State = serde_json::from_value(state).unwrap();
    assert_eq!(create(&mut s, "C-101", "low").unwrap()["created"]["ticket_id"], json!("T-0004"));
    assert_eq!(create(&mut s, "C-101", "low").unwrap()["created"]["ticket_id"], json!("T-0005"));
    // The counter is not part of the state's JSON.
    assert_eq!(serde_json::to_value(&s).unwrap().as_object().unwrap().len(), 3);
    let mut s = desk_state();
    assert_eq!(create(&mut s, "C-101", "low").unwrap()["created"]["ticket_id"], json!("T-0007"));
}

#[test]
fn create_ticket_rules() {
    fn with(subject: &str, description: &str, priority: &str, customer: &str) -> Value {
        json!({"customer_id": customer, "subject": subject, "description": description, "priority": priority})
    }
    let mut s = desk_state();
    let before = s.clone();
    assert_eq!(code(call(&mut s, "create_ticket", with("S", "D", "low", "C-999"))), "UNKNOWN_CUSTOMER");
    assert_eq!(code(call(&mut s, "create_ticket", with(" ", "D", "low", "C-101"))), "INVALID_SUBJECT");
    assert_eq!(code(call(&mut s, "create_ticket", with(&"x".repeat(201), "D", "low", "C-101"))), "INVALID_SUBJECT");
    assert_eq!(code(call(&mut s, "create_ticket", with("S", "", "low", "C-101"))), "INVALID_DESCRIPTION");
    assert_eq!(code(call(&mut s, "create_ticket", with("S", &"é".repeat(2001), "low", "C-101"))), "INVALID_DESCRIPTION");
    assert_eq!(
        call(&mut s, "create_ticket", with("S", "D", "critical", "C-101")).unwrap_err(),
        DomainError::new("INVALID_PRIORITY", "priority 'critical' is not valid; use one of: low, medium, high, urgent")
    );
    assert_eq!(s, before);
    assert!(call(&mut s, "create_ticket", with(&"x".repeat(200), &"é".repeat(2000), "urgent", "C-101")).is_ok());
}

#[test]
fn ticket_ids_stop_at_four_digits() {
    let mut state = desk();
    state["tickets"]["T-9999"] = state["tickets"]["T-0001"].clone();
    let mut s: State = serde_json::from_value(state).unwrap();
    assert_eq!(code(create(&mut s, "C-101", "low")), "TICKET_LIMIT");
}

#[test]
fn update_ticket_changes_status_priority_and_notes() {
    let mut s = desk_state();
    let updated =
        call(&mut s, "update_ticket", json!({"ticket_id": "t-0003", "status": "pending_customer", "note": " Asked for the report id. "}))
            .unwrap();
    assert_eq!(updated["updated"]["status"], json!("pending_customer"));
    assert_eq!(updated["updated"]["priority"], json!("medium"));
    assert_eq!(s.tickets["T-0003"].notes, ["Asked for the report id."]);
    call(&mut s, "update_ticket", json!({"ticket_id": "T-0003", "priority": "urgent", "status": null})).unwrap();
    assert_eq!(s.tickets["T-0003"].priority, Priority::Urgent);
    assert_eq!(s.tickets["T-0003"].status, Status::PendingCustomer);
    // An escalated ticket can still be worked on by its new tier.
    call(&mut s, "update_ticket", json!({"ticket_id": "T-0006", "status": "in_progress"})).unwrap();
    assert_eq!((s.tickets["T-0006"].status, s.tickets["T-0006"].tier), (Status::InProgress, Tier::Tier2));
}

#[test]
fn update_ticket_needs_something_to_update() {
    let mut s = desk_state();
    assert_eq!(code(call(&mut s, "update_ticket", json!({"ticket_id": "T-0003"}))), "NOTHING_TO_UPDATE");
    assert_eq!(code(call(&mut s, "update_ticket", json!({"ticket_id": "T-0003", "note": null}))), "NOTHING_TO_UPDATE");
}

#[test]
fn update_ticket_cannot_close_or_escalate() {
    let mut s = desk_state();
    let closing = call(&mut s, "update_ticket", json!({"ticket_id": "T-0003", "status": "closed"}));
    assert_eq!(closing.clone().unwrap_err().code, "INVALID_TRANSITION");
    assert!(message(closing).contains("close_ticket"));
    let escalating = call(&mut s, "update_ticket", json!({"ticket_id": "T-0003", "status": "escalated"}));
    assert_eq!(escalating.clone().unwrap_err().code, "INVALID_TRANSITION");
    assert!(message(escalating).contains("escalate_ticket"));
    assert_eq!(s, desk_state());
}

#[test]
fn update_ticket_rejects_bad_values_before_changing_anything() {
    let mut s = desk_state();
    let bad_status = call(&mut s, "update_ticket", json!({"ticket_id": "T-0003", "priority": "high", "status": "resolved"}));
    assert_eq!(bad_status.clone().unwrap_err().code, "INVALID_STATUS");
    assert!(message(bad_status).contains("open, in_progress, pending_customer"));
    assert_eq!(code(call(&mut s, "update_ticket", json!({"ticket_id": "T-0003", "priority": "asap"}))), "INVALID_PRIORITY");
    assert_eq!(code(call(&mut s, "update_ticket", json!({"ticket_id": "T-0003", "status": " "}))), "INVALID_STATUS");
    assert_eq!(code(call(&mut s, "update_ticket", json!({"ticket_id": "T-0003", "priority": "high", "note": "  "}))), "INVALID_NOTE");
    assert_eq!(code(call(&mut s, "update_ticket", json!({"ticket_id": "T-0003", "note": "n".repeat(2001)}))), "INVALID_NOTE");
    assert_eq!(code(call(&mut s, "update_ticket", json!({"ticket_id": "T-0099", "note": "n"}))), "UNKNOWN_TICKET");
    // Called directly, without the episode's rollback: still nothing changed.
    assert_eq!(s, desk_state());
}

#[test]
fn a_ticket_holds_at_most_fifty_notes() {
    let mut s = desk_state();
    for i in 0..MAX_NOTES_PER_TICKET {
        call(&mut s, "update_ticket", json!({"ticket_id": "T-0003", "note": format!("note {i}")})).unwrap();
    }
    assert_eq!(code(call(&mut s, "update_ticket", json!({"ticket_id": "T-0003", "note": "one more"}))), "TOO_MANY_NOTES");
    assert!(call(&mut s, "update_ticket", json!({"ticket_id": "T-0003", "priority": "low"})).is_ok());
}

#[test]
fn closed_is_final() {
    let mut s = desk_state();
    let before = s.clone();
    assert_eq!(code(call(&mut s, "update_ticket", json!({"ticket_id": "T-0005", "note": "n"}))), "TICKET_CLOSED");
    assert_eq!(code(call(&mut s, "update_ticket", json!({"ticket_id": "T-0005", "status": "open"}))), "TICKET_CLOSED");
    assert_eq!(code(call(&mut s, "close_ticket", json!({"ticket_id": "T-0005", "resolution": "again"}))), "TICKET_CLOSED");
    assert_eq!(
        code(call(&mut s, "escalate_ticket", json!({"ticket_id": "T-0005", "reason": "r", "escalate_to": "tier2"}))),
        "TICKET_CLOSED"
    );
    assert_eq!(s, before);
    // Reading a closed ticket is fine.
    assert_eq!(call(&mut s, "get_ticket", json!({"ticket_id": "T-0005"})).unwrap()["ticket"]["status"], json!("closed"));
}

#[test]
fn close_ticket_needs_a_resolution() {
    let mut s = desk_state();
    assert_eq!(code(call(&mut s, "close_ticket", json!({"ticket_id": "T-0003", "resolution": " "}))), "INVALID_RESOLUTION");
    assert_eq!(code(call(&mut s, "close_ticket", json!({"ticket_id": "T-0003", "resolution": "r".repeat(2001)}))), "INVALID_RESOLUTION");
    assert_eq!(code(call(&mut s, "close_ticket", json!({"ticket_id": "T-0042", "resolution": "r"}))), "UNKNOWN_TICKET");
    let closed = call(&mut s, "close_ticket", json!({"ticket_id": "T-0006", "resolution": "Cache fixed."})).unwrap();
    assert_eq!(closed["closed"]["status"], json!("closed"));
    assert_eq!(closed["closed"]["resolution"], json!("Cache fixed."));
    assert_eq!(closed["closed"]["tier"], json!("tier2"), "closing keeps the tier");
}

#[test]
fn escalation_goes_to_a_higher_tier_with_a_reason() {
    let mut s = desk_state();
    let escalate = |s: &mut State, id: &str, to: &str, reason: &str| {
        call(s, "escalate_ticket", json!({"ticket_id": id, "reason": reason, "escalate_to": to}))
    };
    let same = escalate(&mut s, "T-0003", "tier1", "r");
    assert_eq!(same.clone().unwrap_err().code, "ESCALATION_NOT_HIGHER");
    assert!(message(same).contains("tier2, tier3"));
    assert_eq!(code(escalate(&mut s, "T-0006", "tier2", "r")), "ESCALATION_NOT_HIGHER");
    let bad = escalate(&mut s, "T-0003", "tier9", "r");
    assert_eq!(bad.clone().unwrap_err().code, "INVALID_TIER");
    assert!(message(bad).contains("tier1, tier2, tier3"));
    assert_eq!(code(escalate(&mut s, "T-0003", "tier2", " ")), "INVALID_REASON");
    assert_eq!(code(escalate(&mut s, "T-0077", "tier2", "r")), "UNKNOWN_TICKET");
    assert_eq!(s, desk_state());

    let done = escalate(&mut s, "T-0003", "Tier2", "Export job stuck for one report.").unwrap();
    assert_eq!(
        (&done["escalated"]["status"], &done["escalated"]["tier"], &done["escalated"]["escalation_reason"]),
        (&json!("escalated"), &json!("tier2"), &json!("Export job stuck for one report."))
    );
    escalate(&mut s, "T-0003", "tier3", "Data loss suspected.").unwrap();
    assert_eq!(s.tickets["T-0003"].escalation_reason.as_deref(), Some("Data loss suspected."));
    let top = escalate(&mut s, "T-0003", "tier3", "r");
    assert!(message(top).contains("highest tier"));
}

#[test]
fn ascii_word_marking_agrees_with_the_general_word_matching() {
    let words = [
        "Refunds",
        "refund",
        "REFUNDED",
        "dispute",
        "Disputes",
        "access",
        "ACCESS",
        "pass",
        "plans",
        "plan",
        "planning",
        "car",
        "cars",
        "cart",
        "bus",
        "buses",
        "gas",
        "its",
        "yes",
        "s",
        "ss",
        "sss",
        "ab",
        "abs",
        "abcs",
        "x9",
        "2fa",
        "compromised",
        "Compromise",
        "ok",
        "the",
        "Σ",
    ];
    let seps = [" ", ", ", "-", "'", "\n", "!? "];
    let mut buffer = String::new();
    for (i, first) in words.iter().enumerate() {
        let queries: Vec<String> = {
            let mut q = Vec::new();
            let text = format!("{first} {}", words[(i * 7 + 3) % words.len()]);
            for_each_word(&text, &mut buffer, |w| q.push(w.to_owned()));
            q
        };
        for (j, second) in words.iter().enumerate() {
            let text = format!("{first}{}{second}{}{}", seps[j % seps.len()], seps[i % seps.len()], words[(i + j) % words.len()]);
            if !text.is_ascii() {
                continue;
            }
            let mut general = vec![false; queries.len()];
            for_each_word(&text, &mut buffer, |a| {
                for (q, found) in queries.iter().zip(general.iter_mut()) {
                    *found = *found || word_matches(q, a);
                }
            });
            let mut ascii = vec![false; queries.len()];
            mark_ascii_words(&text, &queries, &FirstLetters::of(&queries), &mut ascii);
            assert_eq!(ascii, general, "{queries:?} in {text:?}");
        }
    }
}

#[test]
fn search_ranks_by_matched_words_then_id() {
    let mut s = desk_state();
    let ids =
        |r: Value| -> Vec<String> { r["articles"].as_array().unwrap().iter().map(|a| a["id"].as_str().unwrap().to_owned()).collect() };
    let r = call(&mut s, "search_knowledge_base", json!({"query": "Refund disputes"})).unwrap();
    // KB-102 matches both words; the others match "refund" only, in id order.
    assert_eq!(ids(r.clone()), ["KB-102", "KB-101", "KB-106", "KB-109"]);
    assert_eq!(r["articles"][0]["matched_words"], json!(2));
    assert_eq!(r["total_matches"], json!(4));
    let r = call(&mut s, "search_knowledge_base", json!({"query": "the LOGIN email changed"})).unwrap();
    assert_eq!(ids(r)[0], "KB-103");
    let r = call(&mut s, "search_knowledge_base", json!({"query": "refunded", "category": "shipping"})).unwrap();
    assert_eq!(ids(r), ["KB-106"], "a word ending finds the stem");
    let r = call(&mut s, "search_knowledge_base", json!({"query": "compromised"})).unwrap();
    assert_eq!(ids(r), ["KB-103", "KB-105"]);
    assert!(word_matches("plan", "planning") && word_matches("planning", "plan"));
    assert!(!word_matches("cart", "car"), "a stem needs four letters");
    let r = call(&mut s, "search_knowledge_base", json!({"query": "quantum teleportation"})).unwrap();
    assert_eq!(r["articles"], json!([]));
}

#[test]
fn search_filters_by_category() {
    let mut s = desk_state();
    let r = call(&mut s, "search_knowledge_base", json!({"query": "escalate ticket", "category": "technical"})).unwrap();
    assert_eq!(r["articles"].as_array().unwrap().iter().map(|a| a["id"].clone()).collect::<Vec<_>>(), [json!("KB-108")]);
    let r = call(&mut s, "search_knowledge_base", json!({"query": "escalate ticket", "category": "security"})).unwrap();
    assert_eq!(r["articles"][0]["id"], json!("KB-103"));
    let bad = call(&mut s, "search_knowledge_base", json!({"query": "refund", "category": "refunds"}));
    assert_eq!(
        bad.unwrap_err(),
        DomainError::new(
            "INVALID_CATEGORY",
            "category 'refunds' is not valid; use one of: account, billing, security, shipping, technical"
        )
    );
}

#[test]
fn search_needs_a_query() {
    let mut s = desk_state();
    assert_eq!(code(call(&mut s, "search_knowledge_base", json!({"query": "  "}))), "EMPTY_QUERY");
    assert_eq!(code(call(&mut s, "search_knowledge_base", json!({"query": "how do I?"}))), "EMPTY_QUERY");
    assert_eq!(code(call(&mut s, "search_knowledge_base", json!({"query": "a".repeat(501)}))), "QUERY_TOO_LONG");
}

#[test]
fn list_open_tickets_filters_in_id_order() {
    let mut s = desk_state();
    let ids = |r: Result<Value, DomainError>| -> Vec<String> {
        r.unwrap()["tickets"].as_array().unwrap().iter().map(|t| t["ticket_id"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(ids(call(&mut s, "list_open_tickets", json!({}))), ["T-0001", "T-0002", "T-0003", "T-0004", "T-0006"]);
    assert_eq!(ids(call(&mut s, "list_open_tickets", json!({"customer_id": "C-103"}))), ["T-0003", "T-0006"]);
    assert_eq!(ids(call(&mut s, "list_open_tickets", json!({"priority": "high"}))), ["T-0006"]);
    assert_eq!(ids(call(&mut s, "list_open_tickets", json!({"customer_id": "C-105"}))), Vec::<String>::new());
    assert_eq!(code(call(&mut s, "list_open_tickets", json!({"priority": "p1"}))), "INVALID_PRIORITY");
    assert_eq!(code(call(&mut s, "list_open_tickets", json!({"customer_id": "C-999"}))), "UNKNOWN_CUSTOMER");
}

#[test]
fn get_customer_lists_all_their_tickets() {
    let mut s = desk_state();
    let r = call(&mut s, "get_customer", json!({"customer_id": "C-105"})).unwrap();
    assert_eq!(
        r,
        json!({"customer": {"customer_id": "C-105", "name": "Aiko Tanaka", "plan": "pro", "tickets": [{
            "ticket_id": "T-0005", "customer_id": "C-105", "subject": "Charged twice for December",
            "priority": "low", "status": "closed", "tier": "tier1"
        }]}})
    );
    assert_eq!(code(call(&mut s, "get_customer", json!({"customer_id": ""}))), "UNKNOWN_CUSTOMER");
    assert_eq!(code(call(&mut s, "get_ticket", json!({"ticket_id": "T-"}))), "UNKNOWN_TICKET");
}

#[test]
fn tools_are_the_papers_and_declare_their_choices() {
    let names: Vec<&str> = State::TOOLS.iter().map(|t| t.spec.name).collect();
    assert_eq!(
        names,
        [
            "create_ticket",
            "update_ticket",
            "close_ticket",
            "escalate_ticket",
            "search_knowledge_base",
            "list_open_tickets",
            "get_ticket",
            "get_customer"
        ]
    );
    let escalate = State::TOOLS.iter().find(|t| t.spec.name == "escalate_ticket").unwrap().spec.parameters_schema();
    assert_eq!(escalate["properties"]["escalate_to"]["enum"], json!(["tier1", "tier2", "tier3"]));
    let update = State::TOOLS.iter().find(|t| t.spec.name == "update_ticket").unwrap().spec.parameters_schema();
    assert_eq!(update["required"], json!(["ticket_id"]));
    assert_eq!(update["properties"]["status"]["enum"], json!(["open", "in_progress", "pending_customer"]));
}

#[test]
fn every_support_task_passes_its_self_check() {
    let tasks: Vec<&Task> = crate::suite().iter().filter(|t| t.domain == crate::registry::SUPPORT).collect();
    assert_eq!(tasks.len(), 5);
    assert!(tasks.iter().any(|t| t.level == 1) && tasks.iter().any(|t| t.level == 2));
    for task in tasks {
        assert_eq!(SelfCheck::run(task).problems(), Vec::<String>::new(), "{}", task.id);
    }
}

#[test]
fn create_close_fails_when_left_open_or_with_the_wrong_priority() {
    let id = "support/create-close/001";
    assert_eq!(
        failed(id, &reference_without(id, "close_ticket")),
        ["T-0007 closed with a resolution", "T-0007's resolution says what was done", COLLATERAL_CHECK]
    );
    let mut calls = crate::task(id).unwrap().reference.clone();
    calls[0].arguments["priority"] = json!("medium");
    assert_eq!(failed(id, &calls), ["one ticket for C-104 about 'Invoice email change' with priority low", COLLATERAL_CHECK]);
    // A second ticket for the same request is a stray change.
    let mut calls = crate::task(id).unwrap().reference.clone();
    calls.insert(0, calls[0].clone());
    calls[1].arguments["subject"] = json!("Invoice address");
    assert_eq!(failed(id, &calls), [COLLATERAL_CHECK]);
}

#[test]
fn update_fails_when_the_ticket_is_closed_or_another_is_touched() {
    let id = "support/update-ticket/002";
    let mut closing = crate::task(id).unwrap().reference.clone();
    closing.push(Call::new("close_ticket", json!({"ticket_id": "T-0001", "resolution": "Replacement approved."})));
    assert_eq!(failed(id, &closing), ["T-0001 still in progress, not closed", COLLATERAL_CHECK]);
    let mut other = crate::task(id).unwrap().reference.clone();
    other.push(Call::new("update_ticket", json!({"ticket_id": "T-0004", "priority": "high"})));
    assert_eq!(failed(id, &other), [COLLATERAL_CHECK]);
    let priority_only = vec![Call::new("update_ticket", json!({"ticket_id": "T-0001", "priority": "high"}))];
    assert_eq!(failed(id, &priority_only), ["note 'Photos received; replacement approved' added to T-0001"]);
}

#[test]
fn closing_a_dispute_that_policy_escalates_fails() {
    let id = "support/escalate-dispute/003";
    let mut closing = reference_without(id, "escalate_ticket");
    closing.push(Call::new("close_ticket", json!({"ticket_id": "T-0002", "resolution": "Refund refused per policy."})));
    let failures = failed(id, &closing);
    assert_eq!(
        failures,
        [
            "T-0002 escalated to tier2",
            "T-0002 escalated, not closed",
            "T-0002's escalation reason gives the disputed amount, as KB-102 asks",
            COLLATERAL_CHECK
        ]
    );
}

#[test]
fn escalating_a_dispute_to_the_wrong_tier_or_touching_another_ticket_fails() {
    let id = "support/escalate-dispute/003";
    let mut calls = crate::task(id).unwrap().reference.clone();
    calls.last_mut().unwrap().arguments["escalate_to"] = json!("tier3");
    assert_eq!(failed(id, &calls), ["T-0002 escalated to tier2", COLLATERAL_CHECK]);
    assert_eq!(failed(id, &reference_without(id, "update_ticket")), ["T-0002 priority set to high"]);
    let mut calls = crate::task(id).unwrap().reference.clone();
    calls.push(Call::new("update_ticket", json!({"ticket_id": "T-0003", "note": "Checked while handling T-0002."})));
    assert_eq!(failed(id, &calls), [COLLATERAL_CHECK]);
    // A note on the ticket being handled is part of handling it.
    let mut calls = crate::task(id).unwrap().reference.clone();
    calls.push(Call::new("update_ticket", json!({"ticket_id": "T-0002", "note": "Escalated per KB-102."})));
    assert_eq!(failed(id, &calls), Vec::<String>::new());
}

#[test]
fn closing_a_security_breach_fails() {
    let id = "support/security-breach/004";
    let mut closing = reference_without(id, "escalate_ticket");
    closing.push(Call::new("close_ticket", json!({"ticket_id": "T-0007", "resolution": "Reset the account email."})));
    assert_eq!(
        failed(id, &closing),
        [
            "T-0007 escalated to tier3",
            "T-0007 escalated, not closed",
            "T-0007's escalation reason describes what the customer noticed, as KB-103 asks",
            COLLATERAL_CHECK
        ]
    );
    let mut tier2 = crate::task(id).unwrap().reference.clone();
    tier2.last_mut().unwrap().arguments["escalate_to"] = json!("tier2");
    assert_eq!(failed(id, &tier2), ["T-0007 escalated to tier3", COLLATERAL_CHECK]);
    let mut escalate_then_close = crate::task(id).unwrap().reference.clone();
    escalate_then_close.push(Call::new("close_ticket", json!({"ticket_id": "T-0007", "resolution": "Handed to security."})));
    assert_eq!(failed(id, &escalate_then_close), ["T-0007 escalated, not closed", COLLATERAL_CHECK]);
}

#[test]
fn escalating_a_small_dispute_fails() {
    let id = "support/small-dispute/005";
    let mut escalating = reference_without(id, "close_ticket");
    escalating.push(Call::new("escalate_ticket", json!({"ticket_id": "T-0007", "reason": "Refund dispute.", "escalate_to": "tier2"})));
    assert_eq!(
        failed(id, &escalating),
        [
            "T-0007 closed by tier1 with a resolution",
            "T-0007's resolution approves the refund and states the amount, as KB-102 asks",
            "T-0007 not escalated: stays at tier1",
            COLLATERAL_CHECK
        ]
    );
    let mut calls = crate::task(id).unwrap().reference.clone();
    calls.push(Call::new("close_ticket", json!({"ticket_id": "T-0004", "resolution": "Tidying up."})));
    assert_eq!(failed(id, &calls), [COLLATERAL_CHECK]);
}

#[test]
fn a_copied_desk_shares_the_collections_it_does_not_write() {
    let initial = desk_state();
    let mut copy = initial.clone();
    assert!(std::ptr::eq(&*initial.tickets, &*copy.tickets), "a copy copies no records");
    create(&mut copy, "C-101", "high").unwrap();
    assert!(!std::ptr::eq(&*initial.tickets, &*copy.tickets), "the written collection is copied");
    assert!(std::ptr::eq(&*initial.knowledge_base, &*copy.knowledge_base));
    assert!(std::ptr::eq(&*initial.customers, &*copy.customers));
    assert_eq!(copy.tickets.len(), initial.tickets.len() + 1);
    for (id, ticket) in initial.tickets.iter() {
        assert!(std::ptr::eq(&**ticket, &*copy.tickets[id]), "{id}: a copied collection shares its records");
    }
    copy.tickets.values_mut().next().unwrap().subject.push_str(" (edited)");
    let (first, _) = initial.tickets.iter().next().unwrap();
    assert!(!std::ptr::eq(&*initial.tickets[first], &*copy.tickets[first]), "the written record is copied");
    assert_ne!(initial.tickets[first].subject, copy.tickets[first].subject);
    assert_eq!(State::changes(&initial, &initial.clone()), toolenv_core::diff::Changes::default());
}
