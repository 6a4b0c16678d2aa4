//! How the perturbation layer may rephrase support tasks: each template's
//! alternative phrasings, and the domain's synonyms and distractor sentences.

use crate::{
    perturb::Synonym,
    perturb::lexicon::syn,
    perturb::templates::{P, PR, R, S, V, v},
};
use toolenv_core::phrasing::Template;

/// Meaning-preserving replacements, longest phrases first where they overlap.
pub(super) const SYNONYMS: &[Synonym] = &[
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

/// Irrelevant sentences a distractor may add (besides the generic ones).
pub(super) const DISTRACTORS: &[&str] = &[
    "The phone queue was unusually long this morning.",
    "We moved to the new help desk on {past_date}, which is unrelated to this case.",
    "Our team lunch was moved again, unrelated to this.",
];

pub(super) const CREATE_CLOSE: Template = Template {
    text: "{customer} (customer {customer_id}) asked for invoices to go to a separate billing email address, and you \
                changed that setting while they were on the phone. Create a ticket for them with the subject \
                '{subject}' and priority {priority}, then close it with a resolution saying what was done.",
    variants: &[
        v(
            R,
            "Create a ticket for {customer} (customer {customer_id}) with priority {priority} and the subject '{subject}', then \
             close it with a resolution saying what was done: they asked for invoices to go to a separate billing email address, and \
             you changed that setting while they were on the phone.",
        ),
        v(
            P,
            "While {customer} (customer {customer_id}) was on the phone, you switched their invoices to a separate billing email address \
             at their request. Open a ticket for them with the subject '{subject}' and priority {priority}, and then close it with \
             a resolution describing what you did.",
        ),
        v(
            P,
            "You already changed the billing setting for {customer} (customer {customer_id}) during the call, so that invoices go \
             to a separate billing email address as they asked. Record this as a ticket with the subject '{subject}' and priority \
             {priority}, then close the ticket with a resolution that says what was done.",
        ),
        v(
            V,
            "{customer} (customer {customer_id}) asked for invoices to go to a separate billing email address, and that setting was \
             changed while they were on the phone. A ticket should be created for them with the subject '{subject}' and priority \
             {priority}, then closed with a resolution saying what was done.",
        ),
        v(
            S,
            "{customer} (customer {customer_id}) asked for invoices to go to a separate billing email address. You changed that setting \
             while they were on the phone. Create a ticket for them with the subject '{subject}' and priority {priority}. Then \
             close it with a resolution saying what was done.",
        ),
    ],
};

pub(super) const UPDATE_TICKET: Template = Template {
    text: "{customer} (customer {customer_id}) has sent the photos for the ticket about his damaged package. Raise that \
                ticket's priority to {priority} and add the note '{note}'. Do not close the ticket: the replacement has \
                not shipped yet.",
    variants: &[
        v(
            R,
            "{customer} (customer {customer_id}) has sent the photos for the ticket about his damaged package. Add the note \
             '{note}' to that ticket and raise its priority to {priority}. Do not close the ticket: the replacement has not \
             shipped yet.",
        ),
        v(
            P,
            "The photos for the damaged-package ticket of {customer} (customer {customer_id}) have arrived. Bump that ticket's \
             priority to {priority} and put the note '{note}' on it. Leave the ticket open, because the replacement has not \
             shipped yet.",
        ),
        v(
            PR,
            "Keep the ticket about the damaged package of {customer} (customer {customer_id}) open, since the replacement has not \
             shipped yet, but add the note '{note}' and raise its priority to {priority}: he has sent the photos.",
        ),
        v(
            V,
            "The photos for the ticket about his damaged package have been sent by {customer} (customer {customer_id}). That \
             ticket's priority should be raised to {priority} and the note '{note}' should be added. The ticket must not be \
             closed: the replacement has not shipped yet.",
        ),
        v(
            S,
            "{customer} (customer {customer_id}) has sent the photos for the ticket about his damaged package, so raise that \
             ticket's priority to {priority} and add the note '{note}', but do not close it, because the replacement has not \
             shipped yet.",
        ),
    ],
};

pub(super) const ESCALATE_DISPUTE: Template = Template {
    text: "{customer} (customer {customer_id}) is disputing a refund decision in her open ticket. Find the ticket, \
                check the knowledge base for our refund dispute policy, and handle the ticket exactly as the policy says.",
    variants: &[
        v(
            R,
            "Check the knowledge base for our refund dispute policy, find the open ticket in which {customer} (customer \
             {customer_id}) is disputing a refund decision, and handle that ticket exactly as the policy says.",
        ),
        v(
            P,
            "In her open ticket, {customer} (customer {customer_id}) disputes a refund decision. Locate that ticket, look up our \
             refund dispute policy in the knowledge base, and follow the policy to the letter when handling the ticket.",
        ),
        v(
            P,
            "{customer} (customer {customer_id}) has an open ticket in which she contests a refund decision. Look the ticket up, \
             read our refund dispute policy in the knowledge base, and do exactly what the policy says with the ticket.",
        ),
        v(
            V,
            "A refund decision is being disputed by {customer} (customer {customer_id}) in her open ticket. The ticket should be \
             found, the knowledge base should be checked for our refund dispute policy, and the ticket should be handled exactly \
             as the policy says.",
        ),
        v(
            S,
            "{customer} (customer {customer_id}) is disputing a refund decision in her open ticket. Find the ticket. Check the \
             knowledge base for our refund dispute policy. Then handle the ticket exactly as the policy says.",
        ),
    ],
};

pub(super) const SECURITY_BREACH: Template = Template {
    text: "{customer} (customer {customer_id}) reports login alerts from a country she has never visited, and the \
                email on her account was changed without her consent. Create a ticket for her with the subject \
                '{subject}' and priority {priority}, then check the knowledge base and handle the ticket as our policy \
                requires.",
    variants: &[
        v(
            R,
            "Create a ticket for {customer} (customer {customer_id}) with priority {priority} and the subject '{subject}': the \
             email on her account was changed without her consent, and she reports login alerts from a country she has never \
             visited. Then check the knowledge base and handle the ticket as our policy requires.",
        ),
        v(
            P,
            "{customer} (customer {customer_id}) has received login alerts from a country she has never been to, and someone \
             changed the email on her account without her consent. Open a ticket for her with the subject '{subject}' and \
             priority {priority}, then consult the knowledge base and deal with the ticket as our policy requires.",
        ),
        v(
            P,
            "Someone changed the email on the account of {customer} (customer {customer_id}) without her consent, and she is \
             getting login alerts from a country she has never visited. Log a ticket for her, subject '{subject}', priority \
             {priority}; then look up our policy in the knowledge base and handle the ticket as it requires.",
        ),
        v(
            V,
            "Login alerts from a country she has never visited are reported by {customer} (customer {customer_id}), and the email \
             on her account was changed without her consent. A ticket should be created for her with the subject '{subject}' and \
             priority {priority}; then the knowledge base should be checked and the ticket handled as our policy requires.",
        ),
        v(
            S,
            "{customer} (customer {customer_id}) reports login alerts from a country she has never visited. The email on her \
             account was also changed without her consent. Create a ticket for her with the subject '{subject}' and priority \
             {priority}. Then check the knowledge base and handle the ticket as our policy requires.",
        ),
    ],
};

pub(super) const SMALL_DISPUTE: Template = Template {
    text: "{customer} (customer {customer_id}) says we refused to refund the {amount} she paid for a smart plug she \
                returned within 30 days. Create a ticket for her with the subject '{subject}' and priority {priority}, \
                then check the knowledge base and handle the ticket as our refund dispute policy says.",
    variants: &[
        v(
            R,
            "Create a ticket with priority {priority} and the subject '{subject}' for {customer} (customer {customer_id}), who \
             says we refused to refund the {amount} she paid for a smart plug she returned within 30 days; then check the \
             knowledge base and handle the ticket as our refund dispute policy says.",
        ),
        v(
            P,
            "According to {customer} (customer {customer_id}), we declined to refund the {amount} she paid for a smart plug that \
             she sent back within 30 days. Open a ticket for her with the subject '{subject}' and priority {priority}, then look \
             in the knowledge base and treat the ticket the way our refund dispute policy says.",
        ),
        v(
            P,
            "We turned down a refund of the {amount} that {customer} (customer {customer_id}) paid for a smart plug, although \
             she returned it within 30 days, she says. Log a ticket for her, subject '{subject}', priority {priority}; then look \
             up our refund dispute policy in the knowledge base and handle the ticket as it says.",
        ),
        v(
            V,
            "{customer} (customer {customer_id}) says a refund of the {amount} she paid for a smart plug she returned within 30 \
             days was refused by us. A ticket should be created for her with the subject '{subject}' and priority {priority}; \
             then the knowledge base should be checked and the ticket handled as our refund dispute policy says.",
        ),
        v(
            S,
            "{customer} (customer {customer_id}) says we refused to refund the {amount} she paid for a smart plug. She returned \
             it within 30 days. Create a ticket for her with the subject '{subject}' and priority {priority}. Then check the \
             knowledge base and handle the ticket as our refund dispute policy says.",
        ),
    ],
};
