//! Customer support: tickets, a knowledge base and escalation tiers.
//!
//! The state is `{"customers": {id: {name, plan}}, "tickets": {id: ticket},
//! "knowledge_base": [article]}`. A ticket carries its customer, subject,
//! description, priority (`low` < `medium` < `high` < `urgent`), status
//! (`open`, `in_progress`, `pending_customer`, `escalated`, `closed`), tier
//! (`tier1` < `tier2` < `tier3`), notes, and a resolution and an escalation
//! reason that stay `null` until the ticket is closed or escalated.
//!
//! Rules: tickets belong to a known customer and start `open` at `tier1`;
//! ticket ids are issued in sequence (`T-0001`, `T-0002`, …) after the
//! highest id of the initial state. A closed ticket is final: nothing about
//! it changes again. `update_ticket` changes status, priority or adds a note,
//! but cannot close (that is `close_ticket`, which needs a resolution) or
//! escalate (that is `escalate_ticket`, which needs a reason and a tier higher
//! than the current one). Text is bounded: subjects to 200 characters,
//! descriptions, notes, reasons and resolutions to 2000, a ticket to 50
//! notes. Knowledge-base search matches query words against article titles
//! and bodies, ignoring case, a plural `s` and word endings (`refund` finds
//! `refunded`, `compromised` finds `compromise`), skips words like `the`, and
//! ranks articles by how many query words they match, then by id.

mod generate;
mod phrasing;
mod solver;
mod tasks;
#[cfg(test)]
mod tests;
mod tools;
mod views;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{
    cheats::{Source, Undo},
    perturb::Synonym,
};
use toolenv_core::{DomainError, DomainState, Shared, Task, Tool, diff::Changes, drift::Mapping, echo};

/// Defines a closed set of values spelled the same in the state, the tool
/// schemas and the error messages.
macro_rules! vocabulary {
    ($(#[$doc:meta])* $name:ident { $($(#[$variant_doc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$variant_doc])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every value's spelling, lowest first.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The value as the state and the tools spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// Reads a value, ignoring case and surrounding blanks.
            fn parse(text: &str) -> Option<Self> {
                let wanted = text.trim().to_ascii_lowercase();
                [$($name::$variant),+].into_iter().find(|v| v.as_str() == wanted)
            }
        }
    };
}

vocabulary! {
    /// How urgent a ticket is.
    Priority {
        /// Can wait.
        Low => "low",
        /// The default.
        Medium => "medium",
        /// Needs attention today.
        High => "high",
        /// Needs attention now.
        Urgent => "urgent",
    }
}

vocabulary! {
    /// Where a ticket is in its life.
    Status {
        /// New or reopened, not yet worked on.
        Open => "open",
        /// Being worked on.
        InProgress => "in_progress",
        /// Waiting for the customer.
        PendingCustomer => "pending_customer",
        /// Handed to a higher tier.
        Escalated => "escalated",
        /// Resolved; final.
        Closed => "closed",
    }
}

vocabulary! {
    /// The support level that owns a ticket.
    Tier {
        /// Front-line support, where every ticket starts.
        Tier1 => "tier1",
        /// Specialists (billing, engineering).
        Tier2 => "tier2",
        /// The security team and senior engineers.
        Tier3 => "tier3",
    }
}

vocabulary! {
    /// The topic of a knowledge-base article.
    Category {
        /// Logins, passwords, profile settings.
        Account => "account",
        /// Charges, refunds, invoices.
        Billing => "billing",
        /// Compromised accounts and suspicious activity.
        Security => "security",
        /// Deliveries, damaged and lost packages.
        Shipping => "shipping",
        /// Product features, errors, performance.
        Technical => "technical",
    }
}

/// A customer of the company.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Customer {
    /// Full name.
    pub name: String,
    /// Subscription plan, e.g. `pro`.
    pub plan: String,
}

/// A support ticket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ticket {
    /// The customer who raised it.
    pub customer_id: String,
    /// One line about the problem.
    pub subject: String,
    /// The problem in full.
    pub description: String,
    /// How urgent it is.
    pub priority: Priority,
    /// Where it is in its life.
    pub status: Status,
    /// Who owns it.
    pub tier: Tier,
    /// Agents' notes, oldest first.
    pub notes: Vec<String>,
    /// How it was resolved; `None` until closed.
    pub resolution: Option<String>,
    /// Why it was last escalated; `None` until escalated.
    pub escalation_reason: Option<String>,
}

/// A knowledge-base article: a how-to or a policy agents follow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Article {
    /// Stable id such as `KB-101`.
    pub id: String,
    /// The article's topic.
    pub category: Category,
    /// Its title.
    pub title: String,
    /// Its text.
    pub body: String,
}

/// A support desk: customers, their tickets and the knowledge base.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "StoredState")]
pub struct State {
    /// Customers by id (`C-101`).
    pub customers: Shared<BTreeMap<String, Customer>>,
    /// Tickets by id (`T-0001`).
    pub tickets: Shared<BTreeMap<String, Shared<Ticket>>>,
    /// The knowledge base, in id order.
    pub knowledge_base: Shared<Vec<Article>>,
    /// The number of the last ticket issued; not part of the state's JSON,
    /// rebuilt from the highest ticket id when a state is read.
    #[serde(skip)]
    last_ticket_number: u32,
}

/// The state as its JSON spells it, before the ticket counter is rebuilt.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredState {
    customers: BTreeMap<String, Customer>,
    tickets: BTreeMap<String, Shared<Ticket>>,
    knowledge_base: Vec<Article>,
}

impl TryFrom<StoredState> for State {
    type Error = String;

    /// Checks what the tools rely on: tickets numbered `T-<digits>` of
    /// customers on file, articles with unique ids.
    fn try_from(stored: StoredState) -> Result<Self, String> {
        for (id, ticket) in &stored.tickets {
            if id.strip_prefix("T-").is_none_or(|n| n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit())) {
                return Err(format!("ticket id '{id}' is not T-<digits>"));
            }
            if !stored.customers.contains_key(&ticket.customer_id) {
                return Err(format!("ticket {id} is of customer '{}', who is not on file", ticket.customer_id));
            }
        }
        for (i, article) in stored.knowledge_base.iter().enumerate() {
            if article.id.trim().is_empty() || stored.knowledge_base[..i].iter().any(|a| a.id == article.id) {
                return Err(format!("article id '{}' is blank or not unique", article.id));
            }
        }
        let last_ticket_number = highest_ticket_number(&stored.tickets);
        Ok(Self {
            customers: stored.customers.into(),
            tickets: stored.tickets.into(),
            knowledge_base: stored.knowledge_base.into(),
            last_ticket_number,
        })
    }
}

impl DomainState for State {
    const TOOLS: &'static [Tool<Self>] = tools::TOOLS;
    const DRIFT: Mapping = views::DRIFT;

    fn tasks() -> Vec<Task> {
        tasks::tasks()
    }

    fn changes(initial: &Self, end: &Self) -> Changes {
        let mut changes = Changes::default();
        changes.map("customers", &initial.customers, &end.customers);
        changes.map("tickets", &initial.tickets, &end.tickets);
        changes.list("knowledge_base", &initial.knowledge_base, &end.knowledge_base);
        changes
    }
}

impl crate::perturb::Lexicon for State {
    const SYNONYMS: &'static [Synonym] = phrasing::SYNONYMS;
    const DISTRACTORS: &'static [&'static str] = phrasing::DISTRACTORS;
}

impl crate::cheats::UndoRules for State {
    const UNDO: &'static [Undo] = &[Undo {
        tool: "create_ticket",
        by: "close_ticket",
        args: &[("ticket_id", Source::Result("ticket_id")), ("resolution", Source::Text("Opened by mistake; closing."))],
    }];
}

impl crate::generate::Generator for State {
    fn generate(origin: &crate::generate::Origin, g: crate::generate::Gen) -> Task {
        generate::generate(origin, g)
    }
}

impl State {
    /// Finds a customer; returns the normalized id.
    fn customer(&self, text: &str) -> Result<(String, &Customer), DomainError> {
        let id = text.trim().to_ascii_uppercase();
        match self.customers.get(&id) {
            Some(customer) => Ok((id, customer)),
            None => Err(DomainError::new("UNKNOWN_CUSTOMER", format!("no customer '{}'; customer ids look like C-101", echo(text)))),
        }
    }

    /// Finds a ticket; returns the normalized id.
    fn ticket(&self, text: &str) -> Result<(String, &Ticket), DomainError> {
        let id = text.trim().to_ascii_uppercase();
        match self.tickets.get(&id) {
            Some(ticket) => Ok((id, ticket)),
            None => Err(unknown_ticket(text)),
        }
    }

    /// Finds a ticket that may still change: one that is not closed.
    fn open_ticket_mut(&mut self, text: &str) -> Result<(String, &mut Ticket), DomainError> {
        let id = text.trim().to_ascii_uppercase();
        let Some(ticket) = self.tickets.get_mut(&id) else {
            return Err(unknown_ticket(text));
        };
        if ticket.status == Status::Closed {
            return Err(DomainError::new("TICKET_CLOSED", format!("{id} is closed; a closed ticket cannot be changed")));
        }
        Ok((id, ticket))
    }
}

fn unknown_ticket(text: &str) -> DomainError {
    DomainError::new("UNKNOWN_TICKET", format!("no ticket '{}'; ticket ids look like T-0001 (list_open_tickets lists them)", echo(text)))
}

/// The highest number among ids of the form `T-NNNN` (0 when there are none).
fn highest_ticket_number(tickets: &BTreeMap<String, Shared<Ticket>>) -> u32 {
    tickets.keys().filter_map(|id| id.strip_prefix("T-")?.parse::<u32>().ok()).max().unwrap_or(0)
}
