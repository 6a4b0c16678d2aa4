//! The support task generator: a desk of dozens of customers and tickets
//! in every status, the knowledge base whose policies decide (with more
//! articles at level 3), and near-duplicate tickets (another customer's
//! dispute, the same customer's other tickets); tasks from one update
//! (level 1) to several disputes under the tiered refund policy, questions
//! about a customer's tickets and requests that must be refused (level 3).

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use serde_json::{Value, json};

use crate::generate::{Gen, Origin, monday};
use toolenv_core::{Call, Check, Fact, Shared, Slot, Task, World, date::Date, phrasing::Template, slots};

const FIRST: [&str; 20] = [
    "Maria", "James", "Priya", "Tom", "Aiko", "Lena", "Omar", "Sofia", "Jonas", "Chen", "Amara", "Lucas", "Nadia", "Pavel", "Grace",
    "Hugo", "Ines", "Kofi", "Mei", "Ravi",
];
const LAST: [&str; 16] = [
    "Lopez", "Okafor", "Nair", "Becker", "Tanaka", "Fischer", "Haddad", "Rossi", "Berg", "Wang", "Diallo", "Silva", "Petrova", "Novak",
    "Kim", "Moreau",
];
const PLANS: [&str; 3] = ["free", "pro", "business"];
/// Subjects of tickets that are not about refunds.
const SUBJECTS: [&str; 16] = [
    "Cannot export reports to CSV",
    "Password reset email never arrives",
    "Dashboard loads slowly",
    "Package arrived damaged",
    "Mobile app crashes on start",
    "Two-factor codes not received",
    "Team seat limit reached",
    "Webhook deliveries failing",
    "Calendar sync stopped",
    "Cannot upload attachments",
    "Search results are empty",
    "Wrong time zone in emails",
    "API key rotation question",
    "Missing invoice for November",
    "Cannot invite a colleague",
    "Dark mode resets after login",
];
/// What a disputed refund was for.
const ITEMS: [&str; 10] = [
    "annual plan renewal",
    "smart plug",
    "monthly Pro plan",
    "smart hub",
    "extra team seats",
    "annual Business renewal",
    "wireless camera",
    "storage add-on",
    "premium support add-on",
    "door sensor kit",
];
const STATUSES: [&str; 5] = ["open", "in_progress", "pending_customer", "escalated", "closed"];
const PRIORITIES: [&str; 4] = ["low", "medium", "high", "urgent"];

/// The knowledge base of a generated desk: the paper desk's, with
/// [`EXTRA_ARTICLES`] at level 3. Built once; every task shares it.
fn knowledge_base(level: u8) -> Shared<Vec<super::Article>> {
    static BASES: LazyLock<[Shared<Vec<super::Article>>; 2]> = LazyLock::new(|| {
        let mut articles = super::tasks::desk()["knowledge_base"].take();
        let base = serde_json::from_value(articles.clone()).expect("the paper desk's articles are valid");
        if let Some(kb) = articles.as_array_mut() {
            for (i, (category, title, body)) in EXTRA_ARTICLES.iter().enumerate() {
                kb.push(json!({"id": format!("KB-{}", 110 + i), "category": category, "title": title, "body": body}));
            }
        }
        [base, serde_json::from_value(articles).expect("the extra articles are valid")]
    });
    BASES[usize::from(level == 3)].clone()
}

/// Articles beside the policies, for a realistic knowledge base at level 3.
const EXTRA_ARTICLES: [(&str, &str, &str); 6] = [
    ("technical", "Mobile app crashes", "Reinstall the app and clear its cache. Crashes on start are often an outdated operating system."),
    (
        "account",
        "Two-factor authentication",
        "Codes come by text message or an authenticator app; a customer can switch methods in Settings.",
    ),
    ("account", "Team seats and roles", "Admins add seats under Billing > Seats. Each seat has one role: admin, editor or viewer."),
    ("technical", "Webhooks", "Webhook deliveries are retried for 24 hours; a failing endpoint is paused after 100 failures."),
    ("technical", "Calendar integrations", "Calendar sync runs every 15 minutes; reconnect the calendar when the token expires."),
    ("shipping", "Delivery times", "Orders ship within 2 business days; delivery takes 3 to 5 business days in most regions."),
];

const NOTE_TICKET: Template = Template::plain(
    "{customer} (customer {customer_id}) has an open ticket about '{subject}'. Set its priority to {priority} and add the note \
     '{note}'. Do not close it.",
);
const CLOSE_FIXED: Template = Template::plain(
    "The issue in ticket {ticket_id} ('{subject}') of {customer} is fixed. Close that ticket with a resolution saying it is fixed.",
);
const DISPUTE: Template = Template::plain(
    "{customer} (customer {customer_id}) is disputing a refund decision in an open ticket. Find the ticket, check the knowledge \
     base for our refund dispute policy, and handle the ticket exactly as the policy says.",
);
const DISPUTES_3: Template = Template::plain(
    "{customer1} (customer {customer_id1}), {customer2} (customer {customer_id2}) and {customer3} (customer {customer_id3}) \
     each dispute a refund decision in an open ticket. Check the knowledge base for our refund dispute policy, then handle each \
     of those tickets exactly as it says.",
);
const DISPUTES_4: Template = Template::plain(
    "{customer1} (customer {customer_id1}), {customer2} (customer {customer_id2}), {customer3} (customer {customer_id3}) and \
     {customer4} (customer {customer_id4}) each dispute a refund decision in an open ticket. Check the knowledge base for our \
     refund dispute policy, then handle each of those tickets exactly as it says.",
);
const URGENT_QUESTION: Template = Template::plain(
    "Which of the tickets of {customer} (customer {customer_id}) that are not closed has the highest priority? Answer with its \
     ticket id and subject, and change nothing.",
);
const FOREIGN_CLOSE: Template = Template::plain(
    "{customer} (customer {customer_id}) asks us to close ticket {ticket_id} for them. Close it if it is theirs; if it is not, \
     change nothing and tell them why.",
);

/// Free text about a refund dispute names it.
const DISPUTED: Fact =
    Fact::Says { label: "the dispute", any_of: &["dispute", "disputes", "disputed", "disputing", "contests", "contested", "contesting"] };
/// A refund approved.
const APPROVAL: Fact = Fact::Says {
    label: "the refund approved",
    any_of: &["approved", "approve", "approving", "refunded", "refund issued", "will refund", "granted"],
};
/// The contrary decision.
const REFUSAL: Fact = Fact::Never { label: "a refusal", any_of: &["denied", "deny", "declined", "decline", "rejected", "reject"] };
/// A resolution saying the issue is fixed.
const FIXED: Fact =
    Fact::Says { label: "that the issue is fixed", any_of: &["fixed", "resolved", "solved", "works again", "working again"] };
/// An answer saying the ticket is someone else's.
const NOT_THEIRS: Fact = Fact::Says {
    label: "that the ticket belongs to another customer",
    any_of: &["another customer", "different customer", "someone else", "belongs to", "not theirs", "not yours", "not their"],
};

/// The policy threshold of KB-102, in cents.
const THRESHOLD_CENTS: i64 = 50_000;

/// The generated support task of an origin.
pub(super) fn generate(origin: &Origin, mut g: Gen) -> Task {
    let today = monday(&mut g).add_days(1);
    let (customers, tickets) = match origin.level {
        1 => (g.range(6, 10), g.range(8, 12)),
        2 => (g.range(10, 16), g.range(14, 22)),
        _ => (g.range(20, 30), g.range(30, 45)),
    };
    let mut b = Builder { origin: *origin, g, today, customers: Vec::new(), tickets: Vec::new() };
    for _ in 0..customers {
        b.customer();
    }
    for _ in 0..tickets {
        let c = b.g.below(b.customers.len());
        let subject = (*b.g.pick(&SUBJECTS)).to_owned();
        let status = *b.g.pick(&STATUSES);
        b.ticket(c, &subject, status, None);
    }
    match origin.level {
        1 => match b.g.weighted(&[55, 45]) {
            0 => b.note_ticket(),
            _ => b.close_fixed(),
        },
        2 => b.dispute(),
        _ => match b.g.weighted(&[66, 17, 17]) {
            0 => b.disputes(),
            1 => b.urgent_question(),
            _ => b.foreign_close(),
        },
    }
}

struct Customer {
    id: String,
    name: String,
    plan: &'static str,
}

struct Builder {
    origin: Origin,
    g: Gen,
    today: Date,
    customers: Vec<Customer>,
    /// Tickets in id order.
    tickets: Vec<Value>,
}

impl Builder {
    fn customer(&mut self) {
        loop {
            let name = format!("{} {}", self.g.pick(&FIRST), self.g.pick(&LAST));
            if !self.customers.iter().any(|c| c.name == name) {
                let id = format!("C-{}", 101 + self.customers.len());
                let plan = *self.g.pick(&PLANS);
                self.customers.push(Customer { id, name, plan });
                return;
            }
        }
    }

    /// Adds a ticket; returns its id.
    fn ticket(&mut self, customer: usize, subject: &str, status: &str, description: Option<String>) -> String {
        let id = format!("T-{:04}", self.tickets.len() + 1);
        let priority = *self.g.pick(&PRIORITIES);
        let tier = if status == "escalated" { "tier2" } else { "tier1" };
        let description = description.unwrap_or_else(|| format!("The customer reports: {}.", subject.to_lowercase()));
        let resolution = (status == "closed").then(|| "Resolved with the customer; confirmed working.".to_owned());
        let reason = (status == "escalated").then(|| "Needs a specialist at tier2.".to_owned());
        self.tickets.push(json!({
            "customer_id": self.customers[customer].id,
            "subject": subject,
            "description": description,
            "priority": priority,
            "status": status,
            "tier": tier,
            "notes": [],
            "resolution": resolution,
            "escalation_reason": reason,
        }));
        id
    }

    fn get(&self, id: &str) -> &Value {
        &self.tickets[id[2..].parse::<usize>().unwrap_or(1) - 1]
    }

    fn set(&mut self, id: &str, field: &str, value: Value) {
        let i = id[2..].parse::<usize>().unwrap_or(1) - 1;
        self.tickets[i][field] = value;
    }

    /// Closes every ticket of a customer that is not closed whose subject
    /// names one of `words`, so the one a task adds is the only such one.
    fn close_matching(&mut self, customer: usize, words: &[&str]) {
        let id = self.customers[customer].id.clone();
        for t in &mut self.tickets {
            let subject = t["subject"].as_str().unwrap_or_default().to_lowercase();
            if t["customer_id"] == id.as_str() && t["status"] != "closed" && words.iter().any(|w| subject.contains(w)) {
                t["status"] = json!("closed");
                t["tier"] = json!("tier1");
                t["escalation_reason"] = Value::Null;
                t["resolution"] = json!("Resolved with the customer; confirmed working.");
            }
        }
    }

    /// A refund dispute ticket for a customer; returns (id, amount in cents).
    fn dispute_ticket(&mut self, customer: usize, over: bool) -> (String, i64) {
        self.close_matching(customer, &["dispute", "refund"]);
        let item = *self.g.pick(&ITEMS);
        let dollars = if over { self.g.range(501, 1500) } else { self.g.range(20, 500) };
        let cents = i64::from(dollars) * 100;
        let subject = format!("Disputed refund for {item}");
        let description = format!("Customer disputes our refusal to refund the ${dollars}.00 charged for the {item}.");
        let status = if self.g.chance(70) { "open" } else { "in_progress" };
        let id = self.ticket(customer, &subject, status, Some(description));
        (id, cents)
    }

    /// How a dispute ticket is handled under KB-102: its reference calls
    /// (after the ticket is found and the policy read) and checks.
    fn handle_dispute(&self, id: &str, cents: i64) -> (Vec<Call>, Vec<Check>) {
        let amount = format!("${}.{:02}", cents / 100, cents % 100);
        let subject = self.get(id)["subject"].as_str().unwrap_or_default().to_owned();
        if cents > THRESHOLD_CENTS {
            let mut calls = Vec::new();
            if self.get(id)["priority"] != "high" {
                calls.push(Call::new("update_ticket", json!({"ticket_id": id, "priority": "high"})));
            }
            let reason = format!("Refund dispute over $500.00: the customer contests a refund of {amount} we did not grant ({subject}).");
            calls.push(Call::new("escalate_ticket", json!({"ticket_id": id, "reason": reason, "escalate_to": "tier2"})));
            let checks = vec![
                Check::equals(format!("{id} escalated to tier2"), format!("/tickets/{id}/tier"), json!("tier2")),
                Check::equals(format!("{id} escalated, not closed"), format!("/tickets/{id}/status"), json!("escalated")),
                Check::text(
                    format!("{id}'s escalation reason gives the disputed amount, as KB-102 asks"),
                    format!("/tickets/{id}/escalation_reason"),
                    [DISPUTED, Fact::Amount { cents }],
                ),
                Check::equals(format!("{id} priority set to high"), format!("/tickets/{id}/priority"), json!("high")),
            ];
            (calls, checks)
        } else {
            let resolution = format!("Refund dispute of {amount} (not over $500.00) decided at tier1: refund of {amount} approved.");
            let calls = vec![Call::new("close_ticket", json!({"ticket_id": id, "resolution": resolution}))];
            let checks = vec![
                Check::equals(format!("{id} closed by tier1 with a resolution"), format!("/tickets/{id}/status"), json!("closed")),
                Check::text(
                    format!("{id}'s resolution approves the refund and states the amount, as KB-102 asks"),
                    format!("/tickets/{id}/resolution"),
                    [APPROVAL, Fact::Amount { cents }, REFUSAL],
                ),
                Check::equals(format!("{id} not escalated: stays at tier1"), format!("/tickets/{id}/tier"), json!("tier1")),
            ];
            (calls, checks)
        }
    }

    fn dispute_calls(&self, customer: usize, id: &str) -> Vec<Call> {
        vec![
            Call::new("list_open_tickets", json!({"customer_id": self.customers[customer].id})),
            Call::new("get_ticket", json!({"ticket_id": id})),
        ]
    }

    fn policy_call() -> Call {
        Call::new("search_knowledge_base", json!({"query": "refund dispute", "category": "billing"}))
    }

    /// Another customer's dispute, a near-duplicate no task asks about.
    fn decoy_dispute(&mut self, not: &[usize]) {
        let others: Vec<usize> = (0..self.customers.len()).filter(|c| !not.contains(c)).collect();
        if let Some(&c) = others.get(self.g.below(others.len())) {
            let over = self.g.chance(50);
            self.dispute_ticket(c, over);
        }
    }

    fn task(self, kind: &str, template: &'static Template, slots: Vec<Slot>, reference: Vec<Call>, checks: Vec<Check>) -> Task {
        // Customers built as records, tickets read from JSON, the knowledge base shared.
        let customers = self.customers.into_iter().map(|c| (c.id, super::Customer { name: c.name, plan: c.plan.to_owned() }));
        let tickets: BTreeMap<String, Shared<super::Ticket>> = (self.tickets.into_iter().enumerate())
            .map(|(i, t)| (format!("T-{:04}", i + 1), serde_json::from_value(t).expect("generated tickets are valid")))
            .collect();
        let state = super::State {
            customers: customers.collect::<BTreeMap<_, _>>().into(),
            last_ticket_number: super::highest_ticket_number(&tickets),
            tickets: tickets.into(),
            knowledge_base: knowledge_base(self.origin.level),
        };
        // A note on a handled ticket (what was done, say) is the agent's choice.
        let alternatives = vec!["/tickets/*/notes"];
        Task {
            id: self.origin.id(kind),
            domain: crate::registry::SUPPORT,
            level: self.origin.level,
            template,
            slots,
            today: self.today,
            initial: Arc::new(World::new::<crate::support::State>(state)),
            reference,
            checks,
            alternatives: if kind == "note-ticket" { vec![] } else { alternatives },
            expected: Default::default(),
            conversation: None,
        }
    }

    fn who(&self, c: usize) -> (String, String) {
        (self.customers[c].name.clone(), self.customers[c].id.clone())
    }

    /// Level 1: set a priority and add a note on a named ticket.
    fn note_ticket(mut self) -> Task {
        let c = self.g.below(self.customers.len());
        let subject = (*self.g.pick(&SUBJECTS)).to_owned();
        let words: Vec<String> = vec![subject.to_lowercase()];
        let word_refs: Vec<&str> = words.iter().map(String::as_str).collect();
        self.close_matching(c, &word_refs);
        let id = self.ticket(c, &subject, "open", None);
        // The same subject on another customer's ticket.
        let other = (c + 1) % self.customers.len();
        self.ticket(other, &subject, "open", None);
        let current = self.get(&id)["priority"].as_str().unwrap_or("low").to_owned();
        let priority = loop {
            let p = *self.g.pick(&PRIORITIES);
            if p != current {
                break p;
            }
        };
        let note = format!("Customer called back on {}; investigating", self.today);
        let (name, cid) = self.who(c);
        let reference = vec![
            Call::new("list_open_tickets", json!({"customer_id": cid})),
            Call::new("update_ticket", json!({"ticket_id": id, "priority": priority, "note": note})),
        ];
        let checks = vec![
            Check::equals(format!("{id} priority set to {priority}"), format!("/tickets/{id}/priority"), json!(priority)),
            Check::count(format!("note '{note}' added to {id}"), format!("/tickets/{id}/notes"), json!(note), 1),
            Check::equals(format!("{id} still open, not closed"), format!("/tickets/{id}/status"), json!("open")),
        ];
        let slots = slots(&[("customer", &name), ("customer_id", &cid), ("subject", &subject), ("priority", priority), ("note", &note)]);
        self.task("note-ticket", &NOTE_TICKET, slots, reference, checks)
    }

    /// Level 1: close a named ticket with a resolution saying it is fixed.
    fn close_fixed(mut self) -> Task {
        let c = self.g.below(self.customers.len());
        let subject = (*self.g.pick(&SUBJECTS)).to_owned();
        let id = self.ticket(c, &subject, "in_progress", None);
        let (name, _) = self.who(c);
        let resolution = format!("Fixed: {}. The customer confirmed it works again.", subject.to_lowercase());
        let reference = vec![Call::new("close_ticket", json!({"ticket_id": id, "resolution": resolution}))];
        let checks = vec![
            Check::equals(format!("{id} closed"), format!("/tickets/{id}/status"), json!("closed")),
            Check::text(format!("{id}'s resolution says the issue is fixed"), format!("/tickets/{id}/resolution"), [FIXED, REFUSAL]),
        ];
        let slots = slots(&[("ticket_id", &id), ("subject", &subject), ("customer", &name)]);
        self.task("close-fixed", &CLOSE_FIXED, slots, reference, checks)
    }

    /// Level 2: one dispute, over or under the policy's threshold, with
    /// another customer's dispute beside it.
    fn dispute(mut self) -> Task {
        let c = self.g.below(self.customers.len());
        let over = self.g.chance(50);
        let (id, cents) = self.dispute_ticket(c, over);
        self.decoy_dispute(&[c]);
        let mut reference = self.dispute_calls(c, &id);
        reference.push(Self::policy_call());
        let (calls, checks) = self.handle_dispute(&id, cents);
        reference.extend(calls);
        let (name, cid) = self.who(c);
        let slots = slots(&[("customer", &name), ("customer_id", &cid)]);
        self.task("refund-dispute", &DISPUTE, slots, reference, checks)
    }

    /// Level 3: three or four disputes under the tiered policy, over and under
    /// its threshold, with another customer's dispute beside them.
    fn disputes(mut self) -> Task {
        let count = if self.g.chance(35) { 4 } else { 3 };
        let chosen = self.g.sample(&(0..self.customers.len()).collect::<Vec<_>>(), count);
        let mut disputes = Vec::new();
        for (i, &c) in chosen.iter().enumerate() {
            // At least one on each side of the threshold.
            let over = match i {
                0 => true,
                1 => false,
                _ => self.g.chance(50),
            };
            disputes.push((c, self.dispute_ticket(c, over)));
        }
        self.decoy_dispute(&chosen);
        let mut reference = vec![Self::policy_call()];
        let mut checks = Vec::new();
        for (c, (id, cents)) in &disputes {
            reference.extend(self.dispute_calls(*c, id));
            let (calls, more) = self.handle_dispute(id, *cents);
            reference.extend(calls);
            checks.extend(more);
        }
        let names =
            [("customer1", "customer_id1"), ("customer2", "customer_id2"), ("customer3", "customer_id3"), ("customer4", "customer_id4")];
        let mut slots = Vec::new();
        for (&(n, i), (c, _)) in names.iter().zip(&disputes) {
            let (name, cid) = self.who(*c);
            slots.push(Slot { name: n, value: name });
            slots.push(Slot { name: i, value: cid });
        }
        let template = if count == 4 { &DISPUTES_4 } else { &DISPUTES_3 };
        self.task("refund-disputes", template, slots, reference, checks)
    }

    /// Level 3: which of a customer's tickets not closed has the highest
    /// priority (one is urgent or high; the others are lower).
    fn urgent_question(mut self) -> Task {
        let c = self.g.below(self.customers.len());
        let cid = self.customers[c].id.clone();
        // Every other ticket of the customer not closed is at most medium.
        for t in &mut self.tickets {
            if t["customer_id"] == cid.as_str() && t["status"] != "closed" && (t["priority"] == "high" || t["priority"] == "urgent") {
                t["priority"] = json!("medium");
            }
        }
        let mut subjects = self.g.sample(&SUBJECTS, 3);
        let top = subjects.remove(0);
        let second = subjects.remove(0);
        let top_id = self.ticket(c, top, "open", None);
        let top_priority = if self.g.chance(50) { "urgent" } else { "high" };
        self.set(&top_id, "priority", json!(top_priority));
        let second_id = self.ticket(c, second, "in_progress", None);
        self.set(&second_id, "priority", json!("medium"));
        // A closed ticket of the customer more urgent still, and another customer's urgent one.
        let closed = self.ticket(c, subjects[0], "closed", None);
        self.set(&closed, "priority", json!("urgent"));
        let other = (c + 1) % self.customers.len();
        let decoy = self.ticket(other, subjects[0], "open", None);
        self.set(&decoy, "priority", json!("urgent"));
        let (name, _) = self.who(c);
        let reference = vec![Call::new("list_open_tickets", json!({"customer_id": cid}))];
        // Two words between the id and the subject: a word right after "T-0043" reads as negated ("t", as in
        // "n't"), and so does an id right after a subject ending "not received".
        let example = format!("{top_id} has the highest priority ({top_priority}); its subject is '{top}'.");
        let facts = vec![
            Fact::Mentions { label: "the ticket id".into(), phrase: top_id.clone() },
            Fact::Mentions { label: "its subject".into(), phrase: top.to_owned() },
            Fact::Omits { label: "the closed ticket".into(), phrase: closed.clone() },
            Fact::Omits { label: "another customer's ticket".into(), phrase: decoy.clone() },
        ];
        let checks = vec![Check::answer(format!("the answer names {top_id} ('{top}')"), facts, example)];
        let slots = slots(&[("customer", &name), ("customer_id", &cid)]);
        self.task("urgent-question", &URGENT_QUESTION, slots, reference, checks)
    }

    /// Level 3: a customer asks to close another customer's ticket: refuse.
    fn foreign_close(mut self) -> Task {
        let c = self.g.below(self.customers.len());
        let owner = (c + 1 + self.g.below(self.customers.len() - 1)) % self.customers.len();
        let subject = (*self.g.pick(&SUBJECTS)).to_owned();
        let id = self.ticket(owner, &subject, "open", None);
        let (name, cid) = self.who(c);
        let reference = vec![Call::new("get_ticket", json!({"ticket_id": id}))];
        let example = format!("I changed nothing: ticket {id} belongs to another customer, so I cannot close it for you.");
        let facts = vec![NOT_THEIRS];
        let checks = vec![
            Check::answer(format!("the answer says {id} is another customer's"), facts, example),
            Check::equals(format!("{id} stays open"), format!("/tickets/{id}/status"), json!("open")),
        ];
        let slots = slots(&[("customer", &name), ("customer_id", &cid), ("ticket_id", &id)]);
        self.task("foreign-close", &FOREIGN_CLOSE, slots, reference, checks)
    }
}
