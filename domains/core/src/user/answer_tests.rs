//! Tests of the parent module: reading a supplied answer.

use super::*;

fn conversation() -> Conversation {
    let w = |slot, value: &str| Withheld { slot, value: value.to_owned(), entity: Entity::of(slot, value) };
    Conversation {
        withheld: vec![
            w("date", "2026-03-04"),
            w("new_date", "2026-03-06"),
            w("order_id", "O-0012"),
            w("origin", "LON"),
            w("passenger", "Bob"),
            w("quantity", "3"),
            w("time", "9:30"),
        ],
        ..Conversation::default()
    }
}

#[test]
fn values_are_read_by_kind_in_order() {
    let text = "Sure! It's order O-0012 (not O-0099), on 2026-03-04, then 2026-03-06 at 9:30, from LON: 3 items, $12.50 each. The passenger is Bob Smith, and Alice pays.";
    assert_eq!(Entity::Date.values_in(text), ["2026-03-04", "2026-03-06"]);
    assert_eq!(Entity::Time.values_in(text), ["9:30"]);
    assert_eq!(Entity::Id.values_in(text), ["O-0012", "O-0099"]);
    assert_eq!(Entity::Amount.values_in(text), ["3", "12.50"]);
    assert_eq!(Entity::Place.values_in(text), ["LON"]);
    assert_eq!(Entity::Name.values_in(text), ["Bob Smith", "Alice"]);
    assert!(Entity::Text.values_in(text).is_empty());
    for empty in ["", "   ", "Какая дата?", "I don't know."] {
        assert!([Entity::Date, Entity::Id, Entity::Name, Entity::Place].iter().all(|e| e.values_in(empty).is_empty()), "{empty}");
    }
}

#[test]
fn told_takes_each_named_slot_from_what_the_answer_says() {
    let c = conversation();
    // The truth for the first date, a wrong one for the second, nothing for the order.
    let told = told_in(&c, &["date", "new_date", "order_id"], "The date is 2026-03-04 and the new date 2026-03-09.");
    assert_eq!(told.get("date").map(String::as_str), Some("2026-03-04"));
    assert_eq!(told.get("new_date").map(String::as_str), Some("2026-03-09"));
    assert!(!told.contains_key("order_id"));
    // Only named slots are told, whatever else the answer says.
    let told = told_in(&c, &["passenger"], "It is Bob, travelling from LON on 2026-03-04.");
    assert_eq!(told.into_iter().collect::<Vec<_>>(), [("passenger", "Bob".to_owned())]);
    assert!(told_in(&c, &[], "2026-03-04").is_empty());
    // A customer to verify tells their id when the question named it.
    let c = Conversation { verification: Some(Verification::new("close_ticket", "close the ticket", "t", "C-201".into())), ..c };
    assert_eq!(
        told_in(&c, &["order_id", CUSTOMER_ID], "Order O-0012, customer C-201.").get(CUSTOMER_ID).map(String::as_str),
        Some("C-201")
    );
    assert!(!told_in(&c, &["order_id"], "Order O-0012, customer C-201.").contains_key(CUSTOMER_ID));
}
