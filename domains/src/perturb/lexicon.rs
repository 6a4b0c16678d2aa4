//! Lexicons: meaning-preserving synonyms per domain (for the synonym
//! relation) and irrelevant sentences per domain (for the distractor
//! relation), written for this project.
//!
//! A synonym entry matches its exact text at word boundaries (so `Cancel the`
//! does not match `cancelled`, and `Order` does not match the noun `order`).
//! Entries avoid the words that carry a task's meaning (which address, which
//! tier, open or closed) and the tool vocabulary an agent maps to calls.

use crate::world::Domain;

/// A phrase and the phrases that may replace it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Synonym {
    /// The phrase as it appears in a phrasing.
    pub(crate) from: &'static str,
    /// Its replacements, any of which keeps the meaning.
    pub(crate) to: &'static [&'static str],
}

const fn syn(from: &'static str, to: &'static [&'static str]) -> Synonym {
    Synonym { from, to }
}

const SCHEDULING: &[Synonym] = &[
    syn("Book a meeting", &["Schedule a meeting", "Set up a meeting", "Arrange a meeting"]),
    syn("book a meeting", &["schedule a meeting", "set up a meeting", "arrange a meeting"]),
    syn("book the next free slot", &["take the next free slot", "use the next free slot"]),
    syn("free slot", &["open slot", "available slot"]),
    syn("Reschedule the", &["Move the", "Shift the"]),
    syn("Cancel the", &["Call off the"]),
    syn("is taken", &["is already booked", "is occupied"]),
    syn("later that day", &["later on the same day", "later the same day"]),
];

const TRAVEL: &[Synonym] = &[
    syn("Book the cheapest", &["Reserve the cheapest"]),
    syn("Book flight", &["Reserve flight", "Book a seat on flight"]),
    syn("cheapest", &["least expensive", "lowest-priced"]),
    syn("by mistake", &["in error", "by accident"]),
    syn("needs to fly", &["has to fly", "must fly"]),
    syn("Release that hold", &["Drop that hold", "Remove that hold"]),
    syn("the flight out", &["the outbound flight"]),
    syn("the flight back", &["the return flight"]),
];

const SUPPORT: &[Synonym] = &[
    syn("Create a ticket", &["Open a ticket", "Log a ticket"]),
    syn("customer", &["client"]),
    syn("handle the ticket", &["deal with the ticket", "process the ticket"]),
    syn("asked for", &["requested"]),
    syn("Raise that", &["Increase that", "Bump up that"]),
    syn("add the note", &["attach the note", "append the note"]),
    syn("Do not close", &["Don't close"]),
    syn("has not shipped yet", &["hasn't shipped yet", "is not out yet"]),
    syn("is disputing", &["is contesting", "is challenging"]),
    syn("Find the ticket", &["Locate the ticket", "Look up the ticket"]),
    syn("exactly as", &["precisely as", "strictly as"]),
    syn("without her consent", &["without her permission"]),
    syn("says we", &["tells us we"]),
    syn("reports login alerts", &["mentions login alerts"]),
    syn("check the knowledge base", &["consult the knowledge base", "search the knowledge base"]),
];

const ECOMMERCE: &[Synonym] = &[
    syn("Order", &["Purchase", "Buy"]),
    syn("shipped to", &["sent to", "delivered to"]),
    syn("coupon", &["discount code"]),
    syn("Find the cheapest", &["Look up the cheapest", "Search for the cheapest"]),
    syn("cheapest", &["least expensive", "lowest-priced"]),
    syn("customer", &["client"]),
    syn("Customer", &["Client"]),
    syn("wants to return", &["would like to return"]),
    syn("Refund it to", &["Send the refund to", "Issue the refund to"]),
    syn("original payment method", &["original form of payment"]),
];

/// The synonym lexicon of a domain, longest phrases first where they overlap.
pub(crate) fn synonyms(domain: Domain) -> &'static [Synonym] {
    match domain {
        Domain::Scheduling => SCHEDULING,
        Domain::Travel => TRAVEL,
        Domain::Support => SUPPORT,
        Domain::Ecommerce => ECOMMERCE,
    }
}

/// The marker for a date before the episode's today, filled in when a
/// distractor is used.
pub(crate) const PAST_DATE: &str = "{past_date}";

const GENERIC: &[&str] = &[
    "Thanks in advance; it has been a hectic week.",
    "I am writing this from my phone, so please excuse the brevity.",
    "By the way, the office coffee machine is broken again.",
];

const SCHEDULING_NOISE: &[&str] = &[
    "I had a dentist appointment on {past_date}, but that has nothing to do with this.",
    "The big conference room projector was finally fixed.",
    "A meeting about 'Onboarding' on {past_date} at 16:00 went well, by the way.",
    "Our team offsite is still being planned; that is a separate matter.",
];

const TRAVEL_NOISE: &[&str] = &[
    "My last trip, on {past_date}, went smoothly.",
    "I will sort out the hotel separately.",
    "A colleague flew from BER to VIE on {past_date} for a conference, which is unrelated.",
    "The airport lounge is being renovated this month, not that it matters here.",
];

const SUPPORT_NOISE: &[&str] = &[
    "The phone queue was unusually long this morning.",
    "We moved to the new help desk on {past_date}, which is unrelated to this case.",
    "Our team lunch is on Friday, unrelated to this.",
];

const ECOMMERCE_NOISE: &[&str] = &[
    "The warehouse inventory count took place on {past_date}; it does not affect this.",
    "Our spring catalog is still being designed.",
    "Customer satisfaction scores went up last quarter, by the way.",
];

/// The irrelevant sentences a distractor may add in a domain: the domain's
/// own, then generic ones. None gives an instruction, names a record of any
/// task's state, or mentions a date on or after the episode's today.
pub(crate) fn distractors(domain: Domain) -> impl Iterator<Item = &'static str> {
    let own = match domain {
        Domain::Scheduling => SCHEDULING_NOISE,
        Domain::Travel => TRAVEL_NOISE,
        Domain::Support => SUPPORT_NOISE,
        Domain::Ecommerce => ECOMMERCE_NOISE,
    };
    own.iter().chain(GENERIC).copied()
}
