//! The support tools: one handler per tool, each a pure transition of the
//! desk, and the knowledge-base word matching.

use serde_json::Value;

use super::views::{ArticleHit, CustomerView, SearchResult};
use super::{Article, Category, Priority, State, Status, Ticket, Tier, highest_ticket_number};
use toolenv_core::{
    Args, Context, DomainError, Param, ParamType, Reply, Tool, ToolSpec, echo,
    json::{Field, Seq},
};

/// Longest subject, in characters.
const MAX_SUBJECT_CHARS: usize = 200;
/// Longest description, note, escalation reason or resolution, in characters.
const MAX_TEXT_CHARS: usize = 2000;
/// Most notes one ticket holds.
pub(super) const MAX_NOTES_PER_TICKET: usize = 50;
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

/// The statuses `update_ticket` may set; closing and escalating have tools of their own.
const SETTABLE_STATUSES: &[&str] = &["open", "in_progress", "pending_customer"];

const TICKET_ID: Param = Param::required("ticket_id", ParamType::String, "Ticket id, e.g. T-0001.");

/// The tools, in the order agents see them.
pub(super) const TOOLS: &[Tool<State>] = &[
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
        create_ticket,
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
        update_ticket,
    ),
    Tool::new(
        ToolSpec {
            name: "close_ticket",
            description: "Closes a ticket with a resolution summary. A closed ticket cannot be changed again.",
            mutates_state: true,
            params: &[TICKET_ID, Param::required("resolution", ParamType::String, "How the problem was resolved.")],
        },
        close_ticket,
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
        escalate_ticket,
    ),
    Tool::read(
        ToolSpec {
            name: "search_knowledge_base",
            description: "Searches the knowledge base for relevant articles (how-tos and policies), best match first.",
            mutates_state: false,
            params: &[
                Param::required("query", ParamType::String, "Words to look for in article titles and bodies."),
                Param::optional("category", ParamType::OneOf(Category::NAMES), "Only articles of this category."),
            ],
        },
        search_knowledge_base,
    ),
    Tool::read(
        ToolSpec {
            name: "list_open_tickets",
            description: "Lists tickets that are not closed, in id order, with optional filters.",
            mutates_state: false,
            params: &[
                Param::optional("priority", ParamType::OneOf(Priority::NAMES), "Only tickets of this priority."),
                Param::optional("customer_id", ParamType::String, "Only tickets of this customer."),
            ],
        },
        list_open_tickets,
    ),
    Tool::read(
        ToolSpec {
            name: "get_ticket",
            description: "Returns one ticket with its notes, resolution and escalation reason.",
            mutates_state: false,
            params: &[TICKET_ID],
        },
        get_ticket,
    ),
    Tool::read(
        ToolSpec {
            name: "get_customer",
            description: "Returns a customer's name, plan and tickets.",
            mutates_state: false,
            params: &[Param::required("customer_id", ParamType::String, "Customer id, e.g. C-101.")],
        },
        get_customer,
    ),
];

fn create_ticket(s: &mut State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let (customer_id, _) = s.customer(args.str("customer_id"))?;
    let subject = text(args, "subject", "INVALID_SUBJECT", MAX_SUBJECT_CHARS)?;
    let description = text(args, "description", "INVALID_DESCRIPTION", MAX_TEXT_CHARS)?;
    let priority_text = args.str("priority");
    let priority =
        Priority::parse(priority_text).ok_or_else(|| invalid_choice("INVALID_PRIORITY", "priority", priority_text, Priority::NAMES))?;
    // The counter is authoritative; the scan guards against a state whose
    // tickets were edited by hand, so an id is never issued twice.
    let number = s.last_ticket_number.max(highest_ticket_number(&s.tickets)).saturating_add(1);
    if number > MAX_TICKET_NUMBER {
        return Err(DomainError::new("TICKET_LIMIT", format!("the desk holds at most {MAX_TICKET_NUMBER} tickets")));
    }
    let id = toolenv_core::date::numbered_id("T-", number);
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
    s.tickets.insert(id, ticket.into());
    s.last_ticket_number = number;
    Ok(reply)
}

fn update_ticket(s: &mut State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    // Present-but-blank values are mistakes to report, not absent fields.
    let present = |name: &str| args.get(name).and_then(Value::as_str);
    let (status_text, priority_text, note_text) = (present("status"), present("priority"), present("note"));
    if status_text.is_none() && priority_text.is_none() && note_text.is_none() {
        return Err(DomainError::new("NOTHING_TO_UPDATE", "give at least one of status, priority or note"));
    }
    let (id, ticket) = s.open_ticket_mut(args.str("ticket_id"))?;
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
        return Err(DomainError::new("TOO_MANY_NOTES", format!("{id} already has the most notes a ticket holds ({MAX_NOTES_PER_TICKET})")));
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
    let text = toolenv_core::json::to_canonical(&Field("updated", ticket.view(&id)));
    Ok(Reply { text, changed })
}

fn close_ticket(s: &mut State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let (id, ticket) = s.open_ticket_mut(args.str("ticket_id"))?;
    let resolution = text(args, "resolution", "INVALID_RESOLUTION", MAX_TEXT_CHARS)?;
    ticket.status = Status::Closed;
    ticket.resolution = Some(resolution);
    Ok(Reply::wrote(&Field("closed", ticket.view(&id))))
}

fn escalate_ticket(s: &mut State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let (id, ticket) = s.open_ticket_mut(args.str("ticket_id"))?;
    let to_text = args.str("escalate_to");
    let to = Tier::parse(to_text).ok_or_else(|| invalid_choice("INVALID_TIER", "escalate_to", to_text, Tier::NAMES))?;
    if to <= ticket.tier {
        let higher: Vec<&str> = Tier::NAMES.iter().copied().filter(|t| Tier::parse(t).is_some_and(|t| t > ticket.tier)).collect();
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

fn search_knowledge_base(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
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
    let mut hits: Vec<(usize, &Article)> = s
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

fn list_open_tickets(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let priority = match args.opt_str("priority") {
        None => None,
        Some(p) => Some(Priority::parse(p).ok_or_else(|| invalid_choice("INVALID_PRIORITY", "priority", p, Priority::NAMES))?),
    };
    let customer_id = match args.opt_str("customer_id") {
        None => None,
        Some(c) => Some(s.customer(c)?.0),
    };
    let tickets = Seq(|| {
        s.tickets
            .iter()
            .filter(|(_, t)| t.status != Status::Closed)
            .filter(|(_, t)| priority.is_none_or(|p| t.priority == p))
            .filter(|(_, t)| customer_id.as_ref().is_none_or(|c| &t.customer_id == c))
            .map(|(id, t)| t.summary(id))
    });
    Ok(Reply::read(&Field("tickets", tickets)))
}

fn get_ticket(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let (id, ticket) = s.ticket(args.str("ticket_id"))?;
    Ok(Reply::read(&Field("ticket", ticket.view(&id))))
}

fn get_customer(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let (id, customer) = s.customer(args.str("customer_id"))?;
    let tickets = Seq(|| s.tickets.iter().filter(|(_, t)| t.customer_id == id).map(|(tid, t)| t.summary(tid)));
    Ok(Reply::read(&Field("customer", CustomerView { customer_id: &id, name: &customer.name, plan: &customer.plan, tickets })))
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
pub(super) fn for_each_word(text: &str, buffer: &mut String, mut f: impl FnMut(&str)) {
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
pub(super) fn mark_ascii_words(text: &str, query_words: &[String], first_letters: &FirstLetters, found: &mut [bool]) {
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
pub(super) struct FirstLetters([bool; 256]);

impl FirstLetters {
    pub(super) fn of(query_words: &[String]) -> Self {
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
pub(super) fn word_matches(query: &str, article: &str) -> bool {
    article.starts_with(query) || (query.starts_with(article) && article.chars().count() >= 4)
}
