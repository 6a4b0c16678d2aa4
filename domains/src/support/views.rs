//! What support results look like: the v1 shapes, written straight to
//! canonical JSON (fields in key order), and the v2 shape schema drift
//! switches to.

use serde::Serialize;

use super::Ticket;
use toolenv_core::drift::{Conv, Field, Mapping};

/// The v2 shape: renamed, nested and reformatted fields (see [`toolenv_core::drift`]).
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

impl Ticket {
    /// The ticket in full, as tools return it.
    pub(super) fn view<'a>(&'a self, id: &'a str) -> TicketView<'a> {
        TicketView {
            customer_id: &self.customer_id,
            description: &self.description,
            escalation_reason: self.escalation_reason.as_deref(),
            notes: &self.notes,
            priority: self.priority.as_str(),
            resolution: self.resolution.as_deref(),
            status: self.status.as_str(),
            subject: &self.subject,
            ticket_id: id,
            tier: self.tier.as_str(),
        }
    }

    /// The ticket in one line, as lists return it.
    pub(super) fn summary<'a>(&'a self, id: &'a str) -> TicketSummary<'a> {
        TicketSummary {
            customer_id: &self.customer_id,
            priority: self.priority.as_str(),
            status: self.status.as_str(),
            subject: &self.subject,
            ticket_id: id,
            tier: self.tier.as_str(),
        }
    }
}

#[derive(Serialize)]
pub(super) struct TicketView<'a> {
    pub(super) customer_id: &'a str,
    pub(super) description: &'a str,
    pub(super) escalation_reason: Option<&'a str>,
    pub(super) notes: &'a [String],
    pub(super) priority: &'static str,
    pub(super) resolution: Option<&'a str>,
    pub(super) status: &'static str,
    pub(super) subject: &'a str,
    pub(super) ticket_id: &'a str,
    pub(super) tier: &'static str,
}

#[derive(Serialize)]
pub(super) struct TicketSummary<'a> {
    pub(super) customer_id: &'a str,
    pub(super) priority: &'static str,
    pub(super) status: &'static str,
    pub(super) subject: &'a str,
    pub(super) ticket_id: &'a str,
    pub(super) tier: &'static str,
}

#[derive(Serialize)]
pub(super) struct CustomerView<'a, T: Serialize> {
    pub(super) customer_id: &'a str,
    pub(super) name: &'a str,
    pub(super) plan: &'a str,
    pub(super) tickets: T,
}

#[derive(Serialize)]
pub(super) struct ArticleHit<'a> {
    pub(super) body: &'a str,
    pub(super) category: &'static str,
    pub(super) id: &'a str,
    pub(super) matched_words: usize,
    pub(super) title: &'a str,
}

#[derive(Serialize)]
pub(super) struct SearchResult<'a, A: Serialize> {
    pub(super) articles: A,
    pub(super) category: Option<&'static str>,
    pub(super) query: &'a str,
    pub(super) total_matches: usize,
}
