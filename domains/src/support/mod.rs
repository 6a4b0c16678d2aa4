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

mod phrasing;
mod solver;
mod views;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::World;
use crate::cheats::{Source, Undo};
use crate::date::Date;
use crate::drift::Mapping;
use crate::json::{Field, Seq};
use crate::oracle::Check;
use crate::perturb::Synonym;
use crate::task::{Call, Task, slots};
use crate::tool::{Args, DomainError, Param, ParamType, ToolSpec, echo};
use crate::world::{Context, DomainState, Reply, Tool};

/// Longest subject, in characters.
const MAX_SUBJECT_CHARS: usize = 200;
/// Longest description, note, escalation reason or resolution, in characters.
const MAX_TEXT_CHARS: usize = 2000;
/// Most notes one ticket holds.
const MAX_NOTES_PER_TICKET: usize = 50;
/// Highest ticket number: ids keep four digits, so they sort in issue order.
const MAX_TICKET_NUMBER: u32 = 9999;
/// Longest knowledge-base query, in characters.
const MAX_QUERY_CHARS: usize = 500;
/// Most articles one search returns.
const MAX_SEARCH_RESULTS: usize = 5;
/// Words a knowledge-base query ignores: they would match nearly every article.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "i", "if", "in", "is", "it", "my", "of", "on",
    "or", "our", "the", "to", "what", "when", "with",
];

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

/// The statuses `update_ticket` may set; closing and escalating have tools of their own.
const SETTABLE_STATUSES: &[&str] = &["open", "in_progress", "pending_customer"];

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
#[serde(from = "StoredState")]
pub struct State {
    /// Customers by id (`C-101`).
    pub customers: BTreeMap<String, Customer>,
    /// Tickets by id (`T-0001`).
    pub tickets: BTreeMap<String, Ticket>,
    /// The knowledge base, in id order.
    pub knowledge_base: Vec<Article>,
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
    tickets: BTreeMap<String, Ticket>,
    knowledge_base: Vec<Article>,
}

impl From<StoredState> for State {
    fn from(stored: StoredState) -> Self {
        let last_ticket_number = highest_ticket_number(&stored.tickets);
        Self { customers: stored.customers, tickets: stored.tickets, knowledge_base: stored.knowledge_base, last_ticket_number }
    }
}

const TICKET_ID: Param = Param::required("ticket_id", ParamType::String, "Ticket id, e.g. T-0001.");

impl DomainState for State {
    const TOOLS: &'static [Tool<Self>] = &[
        Tool::new(
            ToolSpec {
                name: "create_ticket",
                description: "Creates a new support ticket for a customer; it starts open at tier1.",
                mutates_state: true,
                params: &[
                    Param::required("customer_id", ParamType::String, "Customer id, e.g. C-101."),
                    Param::required("subject", ParamType::String, "One line about the problem (at most 200 characters)."),
                    Param::required("description", ParamType::String, "The problem in full (at most 2000 characters)."),
                    Param::required("priority", ParamType::OneOf(Priority::NAMES), "How urgent the ticket is."),
                ],
            },
            |s, args, ctx| s.call("create_ticket", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "update_ticket",
                description: "Updates ticket fields: status, priority, and/or adds a note. Give at least one. \
                              To close use close_ticket; to escalate use escalate_ticket.",
                mutates_state: true,
                params: &[
                    TICKET_ID,
                    Param::optional("status", ParamType::OneOf(SETTABLE_STATUSES), "New status."),
                    Param::optional("priority", ParamType::OneOf(Priority::NAMES), "New priority."),
                    Param::optional("note", ParamType::String, "A note to add to the ticket (at most 2000 characters)."),
                ],
            },
            |s, args, ctx| s.call("update_ticket", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "close_ticket",
                description: "Closes a ticket with a resolution summary. A closed ticket cannot be changed again.",
                mutates_state: true,
                params: &[TICKET_ID, Param::required("resolution", ParamType::String, "How the problem was resolved.")],
            },
            |s, args, ctx| s.call("close_ticket", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "escalate_ticket",
                description: "Escalates a ticket to a higher support tier.",
                mutates_state: true,
                params: &[
                    TICKET_ID,
                    Param::required("reason", ParamType::String, "Why the ticket is escalated."),
                    Param::required(
                        "escalate_to",
                        ParamType::OneOf(Tier::NAMES),
                        "The tier to hand the ticket to; higher than its current tier.",
                    ),
                ],
            },
            |s, args, ctx| s.call("escalate_ticket", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "search_knowledge_base",
                description: "Searches the knowledge base for relevant articles (how-tos and policies), best match first.",
                mutates_state: false,
                params: &[
                    Param::required("query", ParamType::String, "Words to look for in article titles and bodies."),
                    Param::optional("category", ParamType::OneOf(Category::NAMES), "Only articles of this category."),
                ],
            },
            |s, args, ctx| s.call("search_knowledge_base", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "list_open_tickets",
                description: "Lists tickets that are not closed, in id order, with optional filters.",
                mutates_state: false,
                params: &[
                    Param::optional("priority", ParamType::OneOf(Priority::NAMES), "Only tickets of this priority."),
                    Param::optional("customer_id", ParamType::String, "Only tickets of this customer."),
                ],
            },
            |s, args, ctx| s.call("list_open_tickets", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "get_ticket",
                description: "Returns one ticket with its notes, resolution and escalation reason.",
                mutates_state: false,
                params: &[TICKET_ID],
            },
            |s, args, ctx| s.call("get_ticket", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "get_customer",
                description: "Returns a customer's name, plan and tickets.",
                mutates_state: false,
                params: &[Param::required("customer_id", ParamType::String, "Customer id, e.g. C-101.")],
            },
            |s, args, ctx| s.call("get_customer", args, ctx),
        ),
    ];
    const DRIFT: Mapping = views::DRIFT;
    const SYNONYMS: &'static [Synonym] = phrasing::SYNONYMS;
    const DISTRACTORS: &'static [&'static str] = phrasing::DISTRACTORS;
    const UNDO: &'static [Undo] = &[Undo {
        tool: "create_ticket",
        by: "close_ticket",
        args: &[("ticket_id", Source::Result("ticket_id")), ("resolution", Source::Text("Opened by mistake; closing."))],
    }];

    fn tasks() -> Vec<Task> {
        tasks()
    }
}

impl State {
    fn call(&mut self, tool: &str, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
        match tool {
            "create_ticket" => self.create_ticket(args),
            "update_ticket" => self.update_ticket(args),
            "close_ticket" => {
                let (id, ticket) = self.open_ticket_mut(args.str("ticket_id"))?;
                let resolution = text(args, "resolution", "INVALID_RESOLUTION", MAX_TEXT_CHARS)?;
                ticket.status = Status::Closed;
                ticket.resolution = Some(resolution);
                Ok(Reply::wrote(&Field("closed", ticket.view(&id))))
            }
            "escalate_ticket" => {
                let (id, ticket) = self.open_ticket_mut(args.str("ticket_id"))?;
                let to_text = args.str("escalate_to");
                let to = Tier::parse(to_text).ok_or_else(|| invalid_choice("INVALID_TIER", "escalate_to", to_text, Tier::NAMES))?;
                if to <= ticket.tier {
                    let higher: Vec<&str> =
                        Tier::NAMES.iter().copied().filter(|t| Tier::parse(t).is_some_and(|t| t > ticket.tier)).collect();
                    let valid = if higher.is_empty() { "none: it is at the highest tier".to_owned() } else { higher.join(", ") };
                    return Err(DomainError::new(
                        "ESCALATION_NOT_HIGHER",
                        format!("{id} is at {}; escalate_to must be a higher tier ({valid}), got {}", ticket.tier.as_str(), to.as_str()),
                    ));
                }
                let reason = text(args, "reason", "INVALID_REASON", MAX_TEXT_CHARS)?;
                ticket.status = Status::Escalated;
                ticket.tier = to;
                ticket.escalation_reason = Some(reason);
                Ok(Reply::wrote(&Field("escalated", ticket.view(&id))))
            }
            "search_knowledge_base" => self.search_knowledge_base(args),
            "list_open_tickets" => {
                let priority = match args.opt_str("priority") {
                    None => None,
                    Some(p) => Some(Priority::parse(p).ok_or_else(|| invalid_choice("INVALID_PRIORITY", "priority", p, Priority::NAMES))?),
                };
                let customer_id = match args.opt_str("customer_id") {
                    None => None,
                    Some(c) => Some(self.customer(c)?.0),
                };
                let tickets = Seq(|| {
                    self.tickets
                        .iter()
                        .filter(|(_, t)| t.status != Status::Closed)
                        .filter(|(_, t)| priority.is_none_or(|p| t.priority == p))
                        .filter(|(_, t)| customer_id.as_ref().is_none_or(|c| &t.customer_id == c))
                        .map(|(id, t)| t.summary(id))
                });
                Ok(Reply::read(&Field("tickets", tickets)))
            }
            "get_ticket" => {
                let (id, ticket) = self.ticket(args.str("ticket_id"))?;
                Ok(Reply::read(&Field("ticket", ticket.view(&id))))
            }
            "get_customer" => {
                let (id, customer) = self.customer(args.str("customer_id"))?;
                let tickets = Seq(|| self.tickets.iter().filter(|(_, t)| t.customer_id == id).map(|(tid, t)| t.summary(tid)));
                Ok(Reply::read(&Field("customer", CustomerView { customer_id: &id, name: &customer.name, plan: &customer.plan, tickets })))
            }
            _ => Err(DomainError::new("UNKNOWN_TOOL", format!("support has no tool '{}'", echo(tool)))),
        }
    }
}

impl State {
    fn create_ticket(&mut self, args: &Args) -> Result<Reply, DomainError> {
        let (customer_id, _) = self.customer(args.str("customer_id"))?;
        let subject = text(args, "subject", "INVALID_SUBJECT", MAX_SUBJECT_CHARS)?;
        let description = text(args, "description", "INVALID_DESCRIPTION", MAX_TEXT_CHARS)?;
        let priority_text = args.str("priority");
        let priority =
            Priority::parse(priority_text).ok_or_else(|| invalid_choice("INVALID_PRIORITY", "priority", priority_text, Priority::NAMES))?;
        // The counter is authoritative; the scan guards against a state whose
        // tickets were edited by hand, so an id is never issued twice.
        let number = self.last_ticket_number.max(highest_ticket_number(&self.tickets)).saturating_add(1);
        if number > MAX_TICKET_NUMBER {
            return Err(DomainError::new("TICKET_LIMIT", format!("the desk holds at most {MAX_TICKET_NUMBER} tickets")));
        }
        let id = crate::date::numbered_id("T-", number);
        let ticket = Ticket {
            customer_id,
            subject,
            description,
            priority,
            status: Status::Open,
            tier: Tier::Tier1,
            notes: Vec::new(),
            resolution: None,
            escalation_reason: None,
        };
        let reply = Reply::wrote(&Field("created", ticket.view(&id)));
        self.tickets.insert(id, ticket);
        self.last_ticket_number = number;
        Ok(reply)
    }

    fn update_ticket(&mut self, args: &Args) -> Result<Reply, DomainError> {
        // Present-but-blank values are mistakes to report, not absent fields.
        let present = |name: &str| args.get(name).and_then(Value::as_str);
        let (status_text, priority_text, note_text) = (present("status"), present("priority"), present("note"));
        if status_text.is_none() && priority_text.is_none() && note_text.is_none() {
            return Err(DomainError::new("NOTHING_TO_UPDATE", "give at least one of status, priority or note"));
        }
        let (id, ticket) = self.open_ticket_mut(args.str("ticket_id"))?;
        let status = match status_text {
            None => None,
            Some(s) => Some(settable_status(s)?),
        };
        let priority = match priority_text {
            None => None,
            Some(p) => Some(Priority::parse(p).ok_or_else(|| invalid_choice("INVALID_PRIORITY", "priority", p, Priority::NAMES))?),
        };
        let note = match note_text {
            None => None,
            Some(_) => Some(text(args, "note", "INVALID_NOTE", MAX_TEXT_CHARS)?),
        };
        if note.is_some() && ticket.notes.len() >= MAX_NOTES_PER_TICKET {
            return Err(DomainError::new(
                "TOO_MANY_NOTES",
                format!("{id} already has the most notes a ticket holds ({MAX_NOTES_PER_TICKET})"),
            ));
        }
        // Setting a field to the value it has is accepted and changes nothing.
        let changed = status.is_some_and(|s| s != ticket.status) || priority.is_some_and(|p| p != ticket.priority) || note.is_some();
        if let Some(status) = status {
            ticket.status = status;
        }
        if let Some(priority) = priority {
            ticket.priority = priority;
        }
        if let Some(note) = note {
            ticket.notes.push(note);
        }
        let text = crate::json::to_canonical(&Field("updated", ticket.view(&id)));
        Ok(Reply { text, changed })
    }

    fn search_knowledge_base(&self, args: &Args) -> Result<Reply, DomainError> {
        let query = args.str("query").trim();
        if query.chars().count() > MAX_QUERY_CHARS {
            return Err(DomainError::new("QUERY_TOO_LONG", format!("query must be at most {MAX_QUERY_CHARS} characters")));
        }
        let mut query_words: Vec<String> = Vec::new();
        let mut buffer = String::new();
        for_each_word(query, &mut buffer, |w| {
            if !STOP_WORDS.contains(&w) {
                query_words.push(w.to_owned());
            }
        });
        query_words.sort();
        query_words.dedup();
        if query_words.is_empty() {
            return Err(DomainError::new("EMPTY_QUERY", format!("query '{}' has no words to search for", echo(query))));
        }
        let category = match args.opt_str("category") {
            None => None,
            Some(c) => Some(Category::parse(c).ok_or_else(|| invalid_choice("INVALID_CATEGORY", "category", c, Category::NAMES))?),
        };
        // Which query words the article at hand matched so far.
        let mut found = vec![false; query_words.len()];
        let first_letters = FirstLetters::of(&query_words);
        let mut hits: Vec<(usize, &Article)> = self
            .knowledge_base
            .iter()
            .filter(|a| category.is_none_or(|c| a.category == c))
            .filter_map(|article| {
                found.fill(false);
                for text in [&article.title, &article.body] {
                    if text.is_ascii() {
                        mark_ascii_words(text, &query_words, &first_letters, &mut found);
                    } else {
                        for_each_word(text, &mut buffer, |a| {
                            for (q, found) in query_words.iter().zip(found.iter_mut()) {
                                *found = *found || word_matches(q, a);
                            }
                        });
                    }
                }
                let matched = found.iter().filter(|f| **f).count();
                (matched > 0).then_some((matched, article))
            })
            .collect();
        hits.sort_by(|(n1, a1), (n2, a2)| n2.cmp(n1).then_with(|| a1.id.cmp(&a2.id)));
        let articles = Seq(|| {
            hits.iter().take(MAX_SEARCH_RESULTS).map(|&(matched, a)| ArticleHit {
                body: &a.body,
                category: a.category.as_str(),
                id: &a.id,
                matched_words: matched,
                title: &a.title,
            })
        });
        Ok(Reply::read(&SearchResult { articles, category: category.map(Category::as_str), query, total_matches: hits.len() }))
    }

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

impl Ticket {
    /// The ticket in full, as tools return it.
    fn view<'a>(&'a self, id: &'a str) -> TicketView<'a> {
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
    fn summary<'a>(&'a self, id: &'a str) -> TicketSummary<'a> {
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

// Results, written straight to canonical JSON: fields in key order.

#[derive(Serialize)]
struct TicketView<'a> {
    customer_id: &'a str,
    description: &'a str,
    escalation_reason: Option<&'a str>,
    notes: &'a [String],
    priority: &'static str,
    resolution: Option<&'a str>,
    status: &'static str,
    subject: &'a str,
    ticket_id: &'a str,
    tier: &'static str,
}

#[derive(Serialize)]
struct TicketSummary<'a> {
    customer_id: &'a str,
    priority: &'static str,
    status: &'static str,
    subject: &'a str,
    ticket_id: &'a str,
    tier: &'static str,
}

#[derive(Serialize)]
struct CustomerView<'a, T: Serialize> {
    customer_id: &'a str,
    name: &'a str,
    plan: &'a str,
    tickets: T,
}

#[derive(Serialize)]
struct ArticleHit<'a> {
    body: &'a str,
    category: &'static str,
    id: &'a str,
    matched_words: usize,
    title: &'a str,
}

#[derive(Serialize)]
struct SearchResult<'a, A: Serialize> {
    articles: A,
    category: Option<&'static str>,
    query: &'a str,
    total_matches: usize,
}

fn unknown_ticket(text: &str) -> DomainError {
    DomainError::new("UNKNOWN_TICKET", format!("no ticket '{}'; ticket ids look like T-0001 (list_open_tickets lists them)", echo(text)))
}

fn invalid_choice(code: &'static str, field: &str, got: &str, valid: &[&str]) -> DomainError {
    DomainError::new(code, format!("{field} '{}' is not valid; use one of: {}", echo(got), valid.join(", ")))
}

/// Reads a status `update_ticket` may set.
fn settable_status(text: &str) -> Result<Status, DomainError> {
    match Status::parse(text) {
        Some(Status::Closed) => {
            Err(DomainError::new("INVALID_TRANSITION", "update_ticket cannot close a ticket; use close_ticket with a resolution"))
        }
        Some(Status::Escalated) => Err(DomainError::new(
            "INVALID_TRANSITION",
            "update_ticket cannot escalate a ticket; use escalate_ticket with a reason and a tier",
        )),
        Some(status) => Ok(status),
        None => Err(DomainError::new(
            "INVALID_STATUS",
            format!(
                "status '{text}' is not valid; use one of: {} (close_ticket closes, escalate_ticket escalates)",
                SETTABLE_STATUSES.join(", ")
            ),
        )),
    }
}

/// Reads a required text argument: trimmed, not blank, at most `max_chars`.
fn text(args: &Args, field: &str, code: &'static str, max_chars: usize) -> Result<String, DomainError> {
    let value = args.str(field).trim();
    if value.is_empty() {
        return Err(DomainError::new(code, format!("{field} must not be blank")));
    }
    let chars = value.chars().count();
    if chars > max_chars {
        return Err(DomainError::new(code, format!("{field} must be at most {max_chars} characters, got {chars}")));
    }
    Ok(value.to_owned())
}

/// Calls `f` with each word of a text for search: lowercase runs of letters
/// and digits, without a plural `s` (`disputes` → `dispute`, but `access`
/// stays). Words are made in `buffer`, so searching allocates nothing per
/// word of an article.
fn for_each_word(text: &str, buffer: &mut String, mut f: impl FnMut(&str)) {
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        buffer.clear();
        if word.is_ascii() {
            buffer.push_str(word);
            buffer.make_ascii_lowercase();
        } else {
            // Unicode lowercasing depends on context (a final sigma), so it is done on the whole word.
            buffer.push_str(&word.to_lowercase());
        }
        let word = match buffer.strip_suffix('s') {
            Some(stem) if stem.chars().count() >= 3 && !stem.ends_with('s') => stem,
            _ => buffer.as_str(),
        };
        f(word);
    }
}

/// Marks the query words that a word of an ASCII text finds: what
/// [`for_each_word`] and [`word_matches`] decide, read straight off the text's
/// bytes without lowercasing a copy of each word (the query words are
/// lowercase already, so comparing ignoring ASCII case is the same).
fn mark_ascii_words(text: &str, query_words: &[String], first_letters: &FirstLetters, found: &mut [bool]) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // Either way round, a match starts with the same letter, so only
        // words starting with a query word's first letter are read (those
        // letters are letters or digits: query words are made of them).
        if !first_letters.0[usize::from(bytes[i])] || (i > 0 && bytes[i - 1].is_ascii_alphanumeric()) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let word = &bytes[start..i];
        // Without a plural `s`, when what is left has three letters and does not end in `s`.
        let word = match word {
            [stem @ .., before, last] if stem.len() >= 2 && last.eq_ignore_ascii_case(&b's') && !before.eq_ignore_ascii_case(&b's') => {
                &word[..word.len() - 1]
            }
            _ => word,
        };
        let first = word[0].to_ascii_lowercase();
        for (query, found) in query_words.iter().zip(found.iter_mut()) {
            let query = query.as_bytes();
            if *found || query.first() != Some(&first) {
                continue;
            }
            *found = word.get(..query.len()).is_some_and(|start| start.eq_ignore_ascii_case(query))
                || (word.len() >= 4 && query.get(..word.len()).is_some_and(|start| start.eq_ignore_ascii_case(word)));
        }
    }
}

/// The bytes a query word starts with, in either ASCII case: an article
/// word that starts with none of them can match no query word.
struct FirstLetters([bool; 256]);

impl FirstLetters {
    fn of(query_words: &[String]) -> Self {
        let mut letters = [false; 256];
        for &first in query_words.iter().filter_map(|q| q.as_bytes().first()) {
            letters[usize::from(first)] = true;
            letters[usize::from(first.to_ascii_uppercase())] = true;
        }
        Self(letters)
    }
}

/// Whether a query word finds an article word: the article word starts with
/// it (`refund` finds `refunded`), or it starts with an article word of at
/// least four letters (`compromised` finds `compromise`).
fn word_matches(query: &str, article: &str) -> bool {
    article.starts_with(query) || (query.starts_with(article) && article.chars().count() >= 4)
}

/// The highest number among ids of the form `T-NNNN` (0 when there are none).
fn highest_ticket_number(tickets: &BTreeMap<String, Ticket>) -> u32 {
    tickets.keys().filter_map(|id| id.strip_prefix("T-")?.parse::<u32>().ok()).max().unwrap_or(0)
}

fn world(state: Value) -> World {
    World::Support(serde_json::from_value(state).expect("support task states are valid"))
}

/// The support desk every task starts from: six customers, six tickets in
/// every status but one, and a knowledge base whose policies decide between
/// closing and escalating.
fn desk() -> Value {
    json!({
        "customers": {
            "C-101": {"name": "Maria Lopez", "plan": "pro"},
            "C-102": {"name": "James Okafor", "plan": "free"},
            "C-103": {"name": "Priya Nair", "plan": "business"},
            "C-104": {"name": "Tom Becker", "plan": "pro"},
            "C-105": {"name": "Aiko Tanaka", "plan": "pro"},
            "C-106": {"name": "Lena Fischer", "plan": "free"}
        },
        "tickets": {
            "T-0001": {
                "customer_id": "C-102",
                "subject": "Package arrived damaged",
                "description": "Order #58213 arrived with a crushed box and a cracked smart hub casing.",
                "priority": "medium", "status": "in_progress", "tier": "tier1",
                "notes": ["Asked the customer for photos of the damage."],
                "resolution": null, "escalation_reason": null
            },
            "T-0002": {
                "customer_id": "C-101",
                "subject": "Disputed refund for annual plan renewal",
                "description": "Customer disputes our refusal to refund the $749.00 annual Pro renewal charged on 2025-12-20. \
                                She says she cancelled on 2025-12-18, before the renewal date.",
                "priority": "medium", "status": "open", "tier": "tier1",
                "notes": [],
                "resolution": null, "escalation_reason": null
            },
            "T-0003": {
                "customer_id": "C-103",
                "subject": "Cannot export reports to CSV",
                "description": "The export button on the Reports page spins forever for the Q4 sales report.",
                "priority": "medium", "status": "open", "tier": "tier1",
                "notes": [],
                "resolution": null, "escalation_reason": null
            },
            "T-0004": {
                "customer_id": "C-104",
                "subject": "Password reset email never arrives",
                "description": "Requested a password reset three times since Friday; no email arrived.",
                "priority": "medium", "status": "pending_customer", "tier": "tier1",
                "notes": ["Asked the customer to check the spam folder."],
                "resolution": null, "escalation_reason": null
            },
            "T-0005": {
                "customer_id": "C-105",
                "subject": "Charged twice for December",
                "description": "Two charges of $25.00 on 2025-12-01 for the monthly Pro plan.",
                "priority": "low", "status": "closed", "tier": "tier1",
                "notes": [],
                "resolution": "Duplicate charge of $25.00 refunded; reference RF-88213.", "escalation_reason": null
            },
            "T-0006": {
                "customer_id": "C-103",
                "subject": "Dashboard loads slowly",
                "description": "The analytics dashboard takes about 30 seconds to load for everyone at the company.",
                "priority": "high", "status": "escalated", "tier": "tier2",
                "notes": [],
                "resolution": null, "escalation_reason": "Several users of one company report 30-second load times; needs engineering."
            }
        },
        "knowledge_base": [
            {
                "id": "KB-101", "category": "billing", "title": "Refund policy",
                "body": "Monthly plans are refunded in full within 14 days of the charge. Annual plans are refunded pro rata \
                         within 30 days of the renewal. Refunds of hardware need the device back within 30 days of delivery."
            },
            {
                "id": "KB-102", "category": "billing", "title": "Handling refund disputes",
                "body": "A refund dispute is a customer contesting a refund we refused or reduced. Disputes over $500: do not \
                         close the ticket at tier1. Set its priority to high and escalate it to tier2 (billing specialists), \
                         giving the disputed amount in the reason. Disputes of $500 or less are decided by tier1: approve the \
                         refund and close the ticket with a resolution that states the refunded amount."
            },
            {
                "id": "KB-103", "category": "security", "title": "Suspected account compromise",
                "body": "Treat logins the customer does not recognize, password or email changes they did not make, and unknown \
                         API keys as a suspected security breach. Tier1 must not reset credentials or close the ticket: make \
                         sure the ticket is urgent and escalate it to tier3 (security team) at once, describing what the \
                         customer noticed."
            },
            {
                "id": "KB-104", "category": "account", "title": "Resetting a password",
                "body": "Send the customer to the Forgot password link on the login page. Reset emails can take up to 10 minutes \
                         and are sometimes filtered as spam. Tier1 can resend the reset email from the admin console."
            },
            {
                "id": "KB-105", "category": "account", "title": "Changing the account email",
                "body": "Customers change their login email under Settings > Profile; a confirmation link goes to the new \
                         address. Tier1 may change it for them after verifying the last four digits of the card on file. If \
                         the customer did not make a change themselves, follow the account compromise article instead."
            },
            {
                "id": "KB-106", "category": "shipping", "title": "Damaged or lost packages",
                "body": "For a package that arrived damaged, ask for photos, then offer a replacement or a refund. Lost packages \
                         are traced with the carrier for 5 business days before a replacement ships."
            },
            {
                "id": "KB-107", "category": "technical", "title": "Exporting reports",
                "body": "Reports export to CSV from the Reports page. Exports over 100,000 rows are emailed as a link instead of \
                         downloading. A stuck export usually clears after signing out and in again."
            },
            {
                "id": "KB-108", "category": "technical", "title": "Slow pages and outages",
                "body": "If a page is slow or failing for several users of one company, escalate the ticket to tier2 \
                         (engineering) with the affected users and times. Check the status page before escalating."
            },
            {
                "id": "KB-109", "category": "billing", "title": "Duplicate charges",
                "body": "Tier1 refunds a duplicate charge at once and closes the ticket with the refund reference. Refunds reach \
                         the card within 5 business days."
            }
        ]
    })
}

/// The verified support tasks.
pub(crate) fn tasks() -> Vec<Task> {
    let today = Date::from_ymd(2026, 1, 6).expect("valid date");
    vec![
        Task {
            id: "support/create-close/001".into(),
            domain: crate::Domain::Support,
            level: 1,
            template: &phrasing::CREATE_CLOSE,
            slots: slots(&[("customer", "Tom Becker"), ("customer_id", "C-104"), ("subject", "Invoice email change"), ("priority", "low")]),
            today,
            initial: world(desk()),
            reference: vec![
                Call::new(
                    "create_ticket",
                    json!({
                        "customer_id": "C-104",
                        "subject": "Invoice email change",
                        "description": "Customer asked for invoices to be sent to a separate billing address.",
                        "priority": "low"
                    }),
                ),
                Call::new("close_ticket", json!({"ticket_id": "T-0007", "resolution": "Updated the invoice email during the call."})),
            ],
            checks: vec![
                Check::count(
                    "one ticket for C-104 about 'Invoice email change' with priority low",
                    "/tickets",
                    json!({"customer_id": "C-104", "subject": "Invoice email change", "priority": "low"}),
                    1,
                ),
                Check::equals("T-0007 closed with a resolution", "/tickets/T-0007/status", json!("closed")),
                Check::present("T-0007 has a resolution", "/tickets/T-0007/resolution"),
            ],
            alternatives: vec!["/tickets/T-0007"],
            expected: Default::default(),
        },
        Task {
            id: "support/update-ticket/002".into(),
            domain: crate::Domain::Support,
            level: 1,
            template: &phrasing::UPDATE_TICKET,
            slots: slots(&[
                ("customer", "James Okafor"),
                ("customer_id", "C-102"),
                ("priority", "high"),
                ("note", "Photos received; replacement approved"),
            ]),
            today,
            initial: world(desk()),
            reference: vec![
                Call::new("list_open_tickets", json!({"customer_id": "C-102"})),
                Call::new(
                    "update_ticket",
                    json!({"ticket_id": "T-0001", "priority": "high", "note": "Photos received; replacement approved"}),
                ),
            ],
            checks: vec![
                Check::equals("T-0001 priority raised to high", "/tickets/T-0001/priority", json!("high")),
                Check::count(
                    "note 'Photos received; replacement approved' added to T-0001",
                    "/tickets/T-0001/notes",
                    json!("Photos received; replacement approved"),
                    1,
                ),
                Check::equals("T-0001 still in progress, not closed", "/tickets/T-0001/status", json!("in_progress")),
            ],
            alternatives: vec!["/tickets/T-0001/priority", "/tickets/T-0001/notes"],
            expected: Default::default(),
        },
        Task {
            id: "support/escalate-dispute/003".into(),
            domain: crate::Domain::Support,
            level: 2,
            template: &phrasing::ESCALATE_DISPUTE,
            slots: slots(&[("customer", "Maria Lopez"), ("customer_id", "C-101")]),
            today,
            initial: world(desk()),
            reference: vec![
                Call::new("list_open_tickets", json!({"customer_id": "C-101"})),
                Call::new("get_ticket", json!({"ticket_id": "T-0002"})),
                Call::new("search_knowledge_base", json!({"query": "refund dispute policy", "category": "billing"})),
                Call::new("update_ticket", json!({"ticket_id": "T-0002", "priority": "high"})),
                Call::new(
                    "escalate_ticket",
                    json!({
                        "ticket_id": "T-0002",
                        "reason": "Refund dispute over $500: customer contests the refused $749.00 annual renewal refund.",
                        "escalate_to": "tier2"
                    }),
                ),
            ],
            checks: vec![
                Check::equals("T-0002 escalated to tier2", "/tickets/T-0002/tier", json!("tier2")),
                Check::equals("T-0002 escalated, not closed", "/tickets/T-0002/status", json!("escalated")),
                Check::present("T-0002 has an escalation reason", "/tickets/T-0002/escalation_reason"),
                Check::equals("T-0002 priority set to high", "/tickets/T-0002/priority", json!("high")),
            ],
            alternatives: vec![
                "/tickets/T-0002/status",
                "/tickets/T-0002/tier",
                "/tickets/T-0002/escalation_reason",
                "/tickets/T-0002/priority",
                "/tickets/T-0002/notes",
            ],
            expected: Default::default(),
        },
        Task {
            id: "support/security-breach/004".into(),
            domain: crate::Domain::Support,
            level: 2,
            template: &phrasing::SECURITY_BREACH,
            slots: slots(&[
                ("customer", "Aiko Tanaka"),
                ("customer_id", "C-105"),
                ("subject", "Unrecognized logins and email change"),
                ("priority", "urgent"),
            ]),
            today,
            initial: world(desk()),
            reference: vec![
                Call::new(
                    "create_ticket",
                    json!({
                        "customer_id": "C-105",
                        "subject": "Unrecognized logins and email change",
                        "description": "Login alerts from a country the customer never visited; account email changed without her consent.",
                        "priority": "urgent"
                    }),
                ),
                Call::new("search_knowledge_base", json!({"query": "unrecognized logins email changed account compromise"})),
                Call::new(
                    "escalate_ticket",
                    json!({
                        "ticket_id": "T-0007",
                        "reason": "Suspected security breach: unrecognized logins and an email change the customer did not make.",
                        "escalate_to": "tier3"
                    }),
                ),
            ],
            checks: vec![
                Check::count(
                    "one ticket for C-105 about 'Unrecognized logins and email change' with priority urgent",
                    "/tickets",
                    json!({"customer_id": "C-105", "subject": "Unrecognized logins and email change", "priority": "urgent"}),
                    1,
                ),
                Check::equals("T-0007 escalated to tier3", "/tickets/T-0007/tier", json!("tier3")),
                Check::equals("T-0007 escalated, not closed", "/tickets/T-0007/status", json!("escalated")),
                Check::present("T-0007 has an escalation reason", "/tickets/T-0007/escalation_reason"),
            ],
            alternatives: vec!["/tickets/T-0007"],
            expected: Default::default(),
        },
        Task {
            id: "support/small-dispute/005".into(),
            domain: crate::Domain::Support,
            level: 2,
            template: &phrasing::SMALL_DISPUTE,
            slots: slots(&[
                ("customer", "Lena Fischer"),
                ("customer_id", "C-106"),
                ("amount", "$45.00"),
                ("subject", "Refund dispute: returned smart plug"),
                ("priority", "medium"),
            ]),
            today,
            initial: world(desk()),
            reference: vec![
                Call::new(
                    "create_ticket",
                    json!({
                        "customer_id": "C-106",
                        "subject": "Refund dispute: returned smart plug",
                        "description": "Customer disputes our refusal to refund $45.00 for a smart plug returned within 30 days.",
                        "priority": "medium"
                    }),
                ),
                Call::new("search_knowledge_base", json!({"query": "refund dispute"})),
                Call::new(
                    "close_ticket",
                    json!({"ticket_id": "T-0007", "resolution": "Dispute under $500 decided at tier1: refund of $45.00 approved."}),
                ),
            ],
            checks: vec![
                Check::count(
                    "one ticket for C-106 about 'Refund dispute: returned smart plug' with priority medium",
                    "/tickets",
                    json!({"customer_id": "C-106", "subject": "Refund dispute: returned smart plug", "priority": "medium"}),
                    1,
                ),
                Check::equals("T-0007 closed by tier1 with a resolution", "/tickets/T-0007/status", json!("closed")),
                Check::present("T-0007 has a resolution", "/tickets/T-0007/resolution"),
                Check::equals("T-0007 not escalated: stays at tier1", "/tickets/T-0007/tier", json!("tier1")),
            ],
            alternatives: vec!["/tickets/T-0007"],
            expected: Default::default(),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::COLLATERAL_CHECK;
    use crate::agent::{SelfCheck, play};
    use crate::world::testing::Answer;
    use pretty_assertions::assert_eq;

    fn ctx() -> Context {
        Context { today: Date::from_ymd(2026, 1, 6).unwrap() }
    }

    fn call(state: &mut State, tool: &str, args: Value) -> Answer {
        crate::world::testing::call(state, ctx().today, tool, args)
    }

    fn code(result: Answer) -> &'static str {
        result.unwrap_err().code
    }

    fn message(result: Answer) -> String {
        result.unwrap_err().message
    }

    /// The shared desk, as a task state is built.
    fn desk_state() -> State {
        serde_json::from_value(desk()).unwrap()
    }

    fn create(state: &mut State, customer_id: &str, priority: &str) -> Answer {
        call(state, "create_ticket", json!({"customer_id": customer_id, "subject": "S", "description": "D", "priority": priority}))
    }

    /// The names of the checks a list of calls fails on a suite task.
    fn failed(task_id: &str, calls: &[Call]) -> Vec<String> {
        let task = crate::task(task_id).unwrap();
        let episode = play(task, 0, 0, calls);
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
        let updated = call(
            &mut s,
            "update_ticket",
            json!({"ticket_id": "t-0003", "status": "pending_customer", "note": " Asked for the report id. "}),
        )
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
        assert_eq!(
            code(call(&mut s, "close_ticket", json!({"ticket_id": "T-0003", "resolution": "r".repeat(2001)}))),
            "INVALID_RESOLUTION"
        );
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
        let ids = |r: Answer| -> Vec<String> {
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
        let tasks: Vec<&Task> = crate::suite().iter().filter(|t| t.domain == crate::Domain::Support).collect();
        assert_eq!(tasks.len(), 5);
        assert!(tasks.iter().any(|t| t.level == 1) && tasks.iter().any(|t| t.level == 2));
        for task in tasks {
            assert_eq!(SelfCheck::run(task).problems(), Vec::<String>::new(), "{}", task.id);
        }
    }

    #[test]
    fn create_close_fails_when_left_open_or_with_the_wrong_priority() {
        let id = "support/create-close/001";
        assert_eq!(failed(id, &reference_without(id, "close_ticket")), ["T-0007 closed with a resolution", "T-0007 has a resolution"]);
        let mut calls = crate::task(id).unwrap().reference.clone();
        calls[0].arguments["priority"] = json!("medium");
        assert_eq!(failed(id, &calls), ["one ticket for C-104 about 'Invoice email change' with priority low"]);
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
            ["T-0002 escalated to tier2", "T-0002 escalated, not closed", "T-0002 has an escalation reason", COLLATERAL_CHECK]
        );
    }

    #[test]
    fn escalating_a_dispute_to_the_wrong_tier_or_touching_another_ticket_fails() {
        let id = "support/escalate-dispute/003";
        let mut calls = crate::task(id).unwrap().reference.clone();
        calls.last_mut().unwrap().arguments["escalate_to"] = json!("tier3");
        assert_eq!(failed(id, &calls), ["T-0002 escalated to tier2"]);
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
        assert_eq!(failed(id, &closing), ["T-0007 escalated to tier3", "T-0007 escalated, not closed", "T-0007 has an escalation reason"]);
        let mut tier2 = crate::task(id).unwrap().reference.clone();
        tier2.last_mut().unwrap().arguments["escalate_to"] = json!("tier2");
        assert_eq!(failed(id, &tier2), ["T-0007 escalated to tier3"]);
        let mut escalate_then_close = crate::task(id).unwrap().reference.clone();
        escalate_then_close.push(Call::new("close_ticket", json!({"ticket_id": "T-0007", "resolution": "Handed to security."})));
        assert_eq!(failed(id, &escalate_then_close), ["T-0007 escalated, not closed"]);
    }

    #[test]
    fn escalating_a_small_dispute_fails() {
        let id = "support/small-dispute/005";
        let mut escalating = reference_without(id, "close_ticket");
        escalating.push(Call::new("escalate_ticket", json!({"ticket_id": "T-0007", "reason": "Refund dispute.", "escalate_to": "tier2"})));
        assert_eq!(
            failed(id, &escalating),
            ["T-0007 closed by tier1 with a resolution", "T-0007 has a resolution", "T-0007 not escalated: stays at tier1"]
        );
        let mut calls = crate::task(id).unwrap().reference.clone();
        calls.push(Call::new("close_ticket", json!({"ticket_id": "T-0004", "resolution": "Tidying up."})));
        assert_eq!(failed(id, &calls), [COLLATERAL_CHECK]);
    }
}
