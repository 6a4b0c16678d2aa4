//! What support results look like: the v2 shape schema drift switches to.

use crate::drift::{Conv, Field, Mapping};

/// The v2 shape: renamed, nested and reformatted fields (see [`crate::drift`]).
pub(super) const DRIFT: Mapping = Mapping { fields: FIELDS, nested_record: None };

const FIELDS: &[Field] = &[
    Field::renamed("ticket_id", "ticket_ref"),
    Field::renamed("customer_id", "account_id"),
    Field::renamed("customer", "account"),
    Field::renamed("subject", "summary"),
    Field::nested("status", "state", "status"),
    Field::nested("priority", "state", "priority"),
    Field::nested("tier", "escalation", "level").with(Conv::Tier),
    Field::nested("escalation_reason", "escalation", "reason"),
    Field::renamed("name", "display_name"),
    Field::nested("plan", "subscription", "plan"),
    Field::renamed("id", "article_id"),
    Field::renamed("body", "content"),
    Field::nested("matched_words", "relevance", "matched_words"),
    Field::renamed("total_matches", "total"),
];
