//! The support tasks of the suite, and the desk they start from.

use serde_json::{Value, json};

use super::phrasing;
use toolenv_core::{Call, Check, Fact, Task, World, date::Date, slots};

fn world(state: Value) -> std::sync::Arc<World> {
    std::sync::Arc::new(World::new::<crate::support::State>(serde_json::from_value(state).expect("support task states are valid")))
}

/// The support desk every task starts from: six customers, six tickets in
/// every status but one, and a knowledge base whose policies decide between
/// closing and escalating.
pub(super) fn desk() -> Value {
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

/// What free text about the invoice email names.
const INVOICES: Fact = Fact::Says { label: "the invoices", any_of: &["invoice", "invoices", "billing"] };
/// What a resolution saying what was done states.
const DONE: Fact = Fact::Says { label: "the change made", any_of: &["updated", "changed", "switched", "set", "moved", "done"] };
/// What free text about a refund dispute names.
const DISPUTE: Fact =
    Fact::Says { label: "the dispute", any_of: &["dispute", "disputes", "disputed", "disputing", "contests", "contested", "contesting"] };
/// A refund approved.
const APPROVAL: Fact = Fact::Says {
    label: "the refund approved",
    any_of: &["approved", "approve", "approving", "refunded", "refund issued", "will refund", "granted"],
};
/// The contrary decision: a refusal.
const REFUSAL: Fact = Fact::Never { label: "a refusal", any_of: &["denied", "deny", "declined", "decline", "rejected", "reject"] };
/// What the customer of the security case noticed.
const NOTICED: Fact = Fact::Says { label: "the logins or the email change", any_of: &["login", "logins", "email"] };

/// The verified support tasks.
pub(super) fn tasks() -> Vec<Task> {
    let today = Date::from_ymd(2026, 1, 6).expect("valid date");
    vec![
        Task {
            id: "support/create-close/001".into(),
            domain: crate::registry::SUPPORT,
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
                        "description": "Customer asked for invoices to be sent to a separate billing email address.",
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
                Check::text("T-0007's description names the invoice email", "/tickets/T-0007/description", [INVOICES]),
                Check::text("T-0007's resolution says what was done", "/tickets/T-0007/resolution", [DONE, INVOICES, REFUSAL]),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "support/update-ticket/002".into(),
            domain: crate::registry::SUPPORT,
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
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "support/escalate-dispute/003".into(),
            domain: crate::registry::SUPPORT,
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
                Check::text(
                    "T-0002's escalation reason gives the disputed amount, as KB-102 asks",
                    "/tickets/T-0002/escalation_reason",
                    [DISPUTE, Fact::Amount { cents: 74_900 }],
                ),
                Check::equals("T-0002 priority set to high", "/tickets/T-0002/priority", json!("high")),
            ],
            // A note on the escalated ticket (what was done, say) is the agent's choice.
            alternatives: vec!["/tickets/T-0002/notes"],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "support/security-breach/004".into(),
            domain: crate::registry::SUPPORT,
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
                Check::text("T-0007's description says what the customer noticed", "/tickets/T-0007/description", [NOTICED]),
                Check::text(
                    "T-0007's escalation reason describes what the customer noticed, as KB-103 asks",
                    "/tickets/T-0007/escalation_reason",
                    [NOTICED],
                ),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "support/small-dispute/005".into(),
            domain: crate::registry::SUPPORT,
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
                Check::text("T-0007's description names the refund dispute", "/tickets/T-0007/description", [DISPUTE]),
                Check::text(
                    "T-0007's resolution approves the refund and states the amount, as KB-102 asks",
                    "/tickets/T-0007/resolution",
                    [APPROVAL, Fact::Amount { cents: 4_500 }, REFUSAL],
                ),
                Check::equals("T-0007 not escalated: stays at tier1", "/tickets/T-0007/tier", json!("tier1")),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
    ]
}
