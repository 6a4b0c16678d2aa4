//! Tests of the parent module: hearing questions.

use super::*;
use serde_json::json;

fn conversation() -> Conversation {
    let w = |slot, value: &str| Withheld { slot, value: value.to_owned(), entity: Entity::of(slot, value) };
    Conversation {
        withheld: vec![w("date", "2026-03-04"), w("new_date", "2026-03-06"), w("order_id", "O-0012")],
        actions: vec![UserAction {
            tool: "confirm_booking",
            what: "confirm the payment",
            words: &["confirm", "pay", "payment"],
            id_param: "flight_id",
            fixed: json!({"passenger": "Bob"}),
        }],
        verification: None,
    }
}

#[test]
fn entities_are_read_from_values() {
    assert_eq!(Entity::of("date", "2026-01-05"), Entity::Date);
    assert_eq!(Entity::of("time", "9:30"), Entity::Time);
    assert_eq!(Entity::of("order_id", "O-0012"), Entity::Id);
    assert_eq!(Entity::of("quantity", "3"), Entity::Amount);
    assert_eq!(Entity::of("origin", "LON"), Entity::Place);
    assert_eq!(Entity::of("passenger", "Bob"), Entity::Name);
    assert_eq!(Entity::of("note", "please call me back after lunch"), Entity::Text);
}

#[test]
fn tells_only_what_is_named() {
    let c = conversation();
    let h = hear(&c, &[], "What is the new date?");
    assert_eq!(h.heard, Heard::Understood);
    assert_eq!(h.told.keys().copied().collect::<Vec<_>>(), ["new_date"]);
    assert_eq!(h.text, "The new date is 2026-03-06.");
    let h = hear(&c, &[], "Which order is it, and what is the date?");
    assert_eq!(h.told.keys().copied().collect::<Vec<_>>(), ["date", "order_id"]);
    let h = hear(&c, &[], "What are the date and the new date?");
    assert_eq!(h.told.keys().copied().collect::<Vec<_>>(), ["date", "new_date"]);
    let h = hear(&c, &[], "Tell me everything I need to know.");
    assert_eq!(h.heard, Heard::TooBroad);
    assert!(h.told.is_empty());
    // Two withheld dates: "when" alone names neither.
    assert_eq!(hear(&c, &[], "When?").heard, Heard::Unknown);
    assert_eq!(hear(&c, &[], "What is your favourite colour?").heard, Heard::Unknown);
}

#[test]
fn an_entity_word_names_the_only_slot_of_its_kind() {
    let c = Conversation {
        withheld: vec![Withheld { slot: "passenger", value: "Bob".into(), entity: Entity::Name }],
        ..Conversation::default()
    };
    assert_eq!(hear(&c, &[], "Who is travelling?").told.get("passenger").map(String::as_str), Some("Bob"));
    let slots = crate::slots(&[("date", "2026-01-05")]);
    assert_eq!(hear(&c, &slots, "Which date?").heard, Heard::AlreadyGiven);
}

#[test]
fn an_action_takes_the_id_the_question_names() {
    let c = conversation();
    let h = hear(&c, &[], "Please confirm the payment for flight FL-204.");
    assert_eq!(h.action, Some((0, Ok(json!({"passenger": "Bob", "flight_id": "FL-204"})))));
    let h = hear(&c, &[], "Please confirm the payment.");
    assert!(matches!(h.action, Some((0, Err(ref why))) if why.contains("flight")));
}

#[test]
fn a_move_takes_the_last_time_the_question_names() {
    let c = Conversation {
        actions: vec![UserAction {
            tool: "reschedule_meeting",
            what: "approve the move",
            words: &["approve", "approval"],
            id_param: "new_time",
            fixed: json!({"date": "2026-03-04"}),
        }],
        ..Conversation::default()
    };
    let h = hear(&c, &[], "Please approve the move of the 9:00 meeting to 14:00.");
    assert_eq!(h.action, Some((0, Ok(json!({"date": "2026-03-04", "new_time": "14:00"})))));
    let h = hear(&c, &[], "Please approve moving it to 9:30");
    assert_eq!(h.action, Some((0, Ok(json!({"date": "2026-03-04", "new_time": "09:30"})))));
    assert!(matches!(hear(&c, &[], "Please approve the move to FL-1.").action, Some((0, Err(_)))));
}

#[test]
fn a_customer_to_verify_reads_the_code_and_knows_their_id() {
    let mut c = conversation();
    assert!(!hear(&c, &[], "What is the verification code?").read_code);
    c.verification = Some(Verification::new("close_ticket", "close the ticket", "support/x/c2-1-1-0001", "C-104".into()));
    let h = hear(&c, &[], "Please read me the verification code we sent to your phone.");
    assert!(h.read_code && h.heard == Heard::Understood && h.told.is_empty() && h.action.is_none());
    let h = hear(&c, &[], "What is your customer id?");
    assert_eq!(h.told.get("customer_id").map(String::as_str), Some("C-104"));
    // A request that gives the customer id: the user says so.
    let slots = crate::slots(&[("customer_id", "C-104")]);
    let only = Conversation { verification: c.verification.clone(), ..Conversation::default() };
    assert_eq!(hear(&only, &slots, "What is your customer id?").heard, Heard::AlreadyGiven);
    assert_eq!(hear(&only, &[], "What is your customer id?").told.get("customer_id").map(String::as_str), Some("C-104"));
    // The code: six digits, a function of the task and the customer.
    let code = &c.verification.as_ref().unwrap().code;
    assert!(code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit()));
    assert_eq!(*code, Verification::code_of("support/x/c2-1-1-0001", "C-104"));
    assert_ne!(*code, Verification::code_of("support/x/c2-1-1-0001", "C-105"));
    assert_ne!(*code, Verification::code_of("support/x/c2-1-1-0002", "C-104"));
}

#[test]
fn bad_input_gets_a_bounded_clear_answer() {
    let c = conversation();
    for (question, heard) in [
        (String::new(), Heard::Empty),
        ("   ".to_owned(), Heard::Empty),
        ("date ".repeat(1 << 18), Heard::TooLong),
        ("Какая дата встречи?".to_owned(), Heard::Foreign),
        ("会议是哪一天？".to_owned(), Heard::Foreign),
        ("?!".to_owned(), Heard::Foreign),
    ] {
        let h = hear(&c, &[], &question);
        assert_eq!(h.heard, heard, "{}", crate::codec::cut(&question, 40));
        assert!(h.text.len() < 200 && h.told.is_empty() && h.action.is_none());
    }
}

#[test]
fn the_same_question_gets_the_same_answer() {
    let c = conversation();
    let a = hear(&c, &[], "What is the date and the order id?");
    assert_eq!(a, hear(&c, &[], "What is the date and the order id?"));
}
