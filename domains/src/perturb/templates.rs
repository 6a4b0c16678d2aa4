//! Template banks: for each canonical task template of the suite, alternative
//! phrasings written for this project, each tagged with the structural
//! relations it embodies (reordering, paraphrase, voice, split/merge).
//!
//! Every alternative names exactly the slots of its canonical template (each
//! at least once), writes dates as `on {date}` so relative dates read well,
//! and keeps every instruction of the original: what to do, to which record,
//! under which condition. Slot values are filled in later, so an alternative
//! can only change wording and order, never a value.

use super::Relation;

/// One alternative phrasing of a template.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Variant {
    /// The structural relations this phrasing applies to the canonical one.
    pub(crate) tags: &'static [Relation],
    /// The phrasing, with `{slot}` placeholders.
    pub(crate) text: &'static str,
}

/// The alternatives of one canonical template.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frame {
    /// The canonical template, exactly as the task has it.
    pub(crate) canonical: &'static str,
    /// Its alternatives.
    pub(crate) variants: &'static [Variant],
}

const R: &[Relation] = &[Relation::Reordering];
const P: &[Relation] = &[Relation::Paraphrase];
const V: &[Relation] = &[Relation::Voice];
const S: &[Relation] = &[Relation::SplitMerge];
const VR: &[Relation] = &[Relation::Voice, Relation::Reordering];
const PR: &[Relation] = &[Relation::Paraphrase, Relation::Reordering];
const SR: &[Relation] = &[Relation::SplitMerge, Relation::Reordering];

const fn v(tags: &'static [Relation], text: &'static str) -> Variant {
    Variant { tags, text }
}

/// The frame of a canonical template, if the bank has one.
pub(crate) fn frame(template: &str) -> Option<&'static Frame> {
    FRAMES.iter().find(|f| f.canonical == template)
}

/// Every frame, in suite order.
pub(crate) const FRAMES: &[Frame] = &[
    // scheduling/book-meeting/001, 002
    Frame {
        canonical: "Book a meeting about '{topic}' on {date} at {time}.",
        variants: &[
            v(R, "Book a meeting on {date} at {time} about '{topic}'."),
            v(R, "On {date} at {time}, book a meeting about '{topic}'."),
            v(R, "At {time} on {date}, book a meeting about '{topic}'."),
            v(P, "Please put a meeting about '{topic}' in the calendar on {date} at {time}."),
            v(P, "Could you set up a '{topic}' meeting on {date} at {time}?"),
            v(P, "I need a meeting on the topic '{topic}', on {date}, starting at {time}. Please book it."),
            v(PR, "On {date}, starting at {time}, I need a meeting about '{topic}' in the calendar."),
            v(V, "A meeting about '{topic}' should be booked on {date} at {time}."),
            v(V, "A meeting about '{topic}' needs to be booked on {date} at {time}."),
            v(VR, "On {date} at {time}, a meeting about '{topic}' should be booked."),
            v(S, "Book a meeting about '{topic}'. It should be on {date} at {time}."),
            v(S, "Book a meeting about '{topic}'. Make it on {date}. The start time is {time}."),
            v(SR, "Book a meeting on {date}. It starts at {time}. The topic is '{topic}'."),
        ],
    },
    // scheduling/conflict/003
    Frame {
        canonical: "Book a meeting about '{topic}' on {date} at {time}. If that slot is taken, book the next free slot later that day instead.",
        variants: &[
            v(
                R,
                "On {date} at {time}, book a meeting about '{topic}'. If that slot is taken, book the next free slot later that day instead.",
            ),
            v(
                R,
                "Book a meeting on {date} at {time} about '{topic}'. If that slot is taken, book the next free slot later that day instead.",
            ),
            v(
                P,
                "Please schedule a meeting about '{topic}' on {date} at {time}; if that time is already booked, take the next free slot \
                 later on the same day.",
            ),
            v(
                P,
                "Set up a '{topic}' meeting on {date} at {time}. Should that slot be occupied, use the first free slot after it on the \
                 same day.",
            ),
            v(
                PR,
                "If the slot at {time} on {date} is already taken, use the next free slot later that day instead; either way, book a \
                 meeting about '{topic}'.",
            ),
            v(
                V,
                "A meeting about '{topic}' should be booked on {date} at {time}. If that slot is already taken, the next free slot \
                 later that day should be booked instead.",
            ),
            v(S, "Book a meeting about '{topic}' on {date} at {time}, or, if that slot is taken, at the next free slot later that day."),
            v(
                S,
                "Book a meeting about '{topic}'. Aim for {time} on {date}. If that slot is taken, book the next free slot later that \
                 day instead.",
            ),
        ],
    },
    // scheduling/reschedule/004
    Frame {
        canonical: "Reschedule the '{topic}' meeting on {date} to the first free slot on {new_date}.",
        variants: &[
            v(R, "For the '{topic}' meeting on {date}: reschedule it to the first free slot on {new_date}."),
            v(R, "Take the first free slot on {new_date} and reschedule the '{topic}' meeting on {date} to it."),
            v(P, "Move the '{topic}' meeting on {date} to the earliest free slot on {new_date}."),
            v(P, "Please shift the '{topic}' meeting from its slot on {date} to the first open slot on {new_date}."),
            v(PR, "Find the first free slot on {new_date} and move the '{topic}' meeting on {date} there."),
            v(V, "The '{topic}' meeting on {date} should be moved to the first free slot on {new_date}."),
            v(V, "The '{topic}' meeting on {date} needs to be rescheduled to the first free slot on {new_date}."),
            v(S, "There is a '{topic}' meeting on {date}. Reschedule it to the first free slot on {new_date}."),
            v(S, "Find the '{topic}' meeting on {date}. Move it to the first free slot on {new_date}."),
        ],
    },
    // scheduling/cancel/005
    Frame {
        canonical: "Cancel the '{topic}' meeting on {date}.",
        variants: &[
            v(R, "On {date}, cancel the '{topic}' meeting."),
            v(P, "Please call off the '{topic}' meeting on {date}."),
            v(P, "Remove the '{topic}' meeting on {date} from the calendar."),
            v(PR, "On {date}, the '{topic}' meeting is not happening any more; take it off the calendar."),
            v(V, "The '{topic}' meeting on {date} should be cancelled."),
            v(V, "The '{topic}' meeting on {date} needs to be cancelled."),
            v(S, "There is a '{topic}' meeting on {date}. Cancel it."),
            v(SR, "Look at the calendar on {date}. Cancel the '{topic}' meeting there."),
        ],
    },
    // travel/cheapest-flight/001
    Frame {
        canonical: "Book the cheapest flight from {origin} to {dest} on {date} for {passenger}.",
        variants: &[
            v(R, "Book the cheapest flight on {date} from {origin} to {dest} for {passenger}."),
            v(R, "For {passenger}, book the cheapest flight from {origin} to {dest} on {date}."),
            v(R, "On {date}, book the cheapest flight from {origin} to {dest} for {passenger}."),
            v(P, "{passenger} needs a flight from {origin} to {dest} on {date}; book the cheapest one."),
            v(P, "Please get {passenger} a seat on the lowest-priced flight from {origin} to {dest} on {date}."),
            v(PR, "Find the cheapest flight on {date} from {origin} to {dest} and book it for {passenger}."),
            v(V, "The cheapest flight from {origin} to {dest} on {date} should be booked for {passenger}."),
            v(V, "{passenger} should be booked on the cheapest flight from {origin} to {dest} on {date}."),
            v(VR, "On {date}, {passenger} should be booked on the cheapest flight from {origin} to {dest}."),
            v(S, "{passenger} is flying from {origin} to {dest} on {date}. Book the cheapest flight."),
            v(S, "Book a flight for {passenger}. The route is {origin} to {dest}, on {date}. Pick the cheapest flight."),
        ],
    },
    // travel/direct-booking/002
    Frame {
        canonical: "Book flight {flight_id} from {origin} to {dest} on {date} for {passenger}.",
        variants: &[
            v(R, "For {passenger}, book flight {flight_id} from {origin} to {dest} on {date}."),
            v(R, "Book flight {flight_id} for {passenger}: from {origin} to {dest} on {date}."),
            v(P, "Please reserve a seat for {passenger} on flight {flight_id} from {origin} to {dest} on {date}."),
            v(P, "{passenger} wants to fly from {origin} to {dest} on flight {flight_id} on {date}; book it."),
            v(PR, "On {date}, {passenger} takes flight {flight_id} from {origin} to {dest}; please book that seat."),
            v(V, "Flight {flight_id} from {origin} to {dest} on {date} should be booked for {passenger}."),
            v(V, "{passenger} should be booked on flight {flight_id} from {origin} to {dest} on {date}."),
            v(S, "{passenger} needs flight {flight_id}. It goes from {origin} to {dest} on {date}. Book it."),
            v(SR, "Book a seat for {passenger}. The flight is {flight_id}, on {date}, from {origin} to {dest}."),
        ],
    },
    // travel/cheapest-flight/003
    Frame {
        canonical: "Book the cheapest available flight from {origin} to {dest} on {date} for {passenger}.",
        variants: &[
            v(R, "Book the cheapest available flight on {date} from {origin} to {dest} for {passenger}."),
            v(R, "For {passenger}, book the cheapest available flight from {origin} to {dest} on {date}."),
            v(R, "On {date}, book the cheapest available flight from {origin} to {dest} for {passenger}."),
            v(P, "{passenger} needs a flight from {origin} to {dest} on {date}; book the cheapest one that still has seats."),
            v(P, "Please get {passenger} a seat on the lowest-priced flight with seats left from {origin} to {dest} on {date}."),
            v(PR, "Find the cheapest flight with free seats on {date} from {origin} to {dest} and book it for {passenger}."),
            v(V, "The cheapest available flight from {origin} to {dest} on {date} should be booked for {passenger}."),
            v(V, "{passenger} should be booked on the cheapest available flight from {origin} to {dest} on {date}."),
            v(VR, "On {date}, {passenger} should be booked on the cheapest available flight from {origin} to {dest}."),
            v(S, "{passenger} is flying from {origin} to {dest} on {date}. Book the cheapest flight that still has seats."),
            v(
                S,
                "Book a flight for {passenger}. The route is {origin} to {dest}, on {date}. Pick the cheapest flight with seats available.",
            ),
        ],
    },
    // travel/cancel-trip/004
    Frame {
        canonical: "Cancel {passenger}'s round trip from {origin} to {dest}: the flight out on {date} and the flight back on {return_date}.",
        variants: &[
            v(R, "Cancel {passenger}'s round trip from {origin} to {dest}: the flight back on {return_date} and the flight out on {date}."),
            v(
                R,
                "Cancel the round trip of {passenger} from {origin} to {dest}: the flight out on {date} and the flight back on {return_date}.",
            ),
            v(
                P,
                "{passenger} is no longer taking the round trip from {origin} to {dest}; cancel the outbound flight on {date} and the \
                 return flight on {return_date}.",
            ),
            v(
                P,
                "Please cancel both flights of {passenger}'s round trip from {origin} to {dest}: outbound on {date}, return on {return_date}.",
            ),
            v(
                PR,
                "Cancel both legs of {passenger}'s round trip between {origin} and {dest}, the return on {return_date} and the outbound \
                 flight from {origin} on {date}.",
            ),
            v(
                V,
                "{passenger}'s round trip from {origin} to {dest} should be cancelled: the flight out on {date} and the flight back on \
                 {return_date}.",
            ),
            v(
                V,
                "Both flights of {passenger}'s round trip from {origin} to {dest} need to be cancelled: the one out on {date} and the one \
                 back on {return_date}.",
            ),
            v(
                S,
                "Cancel {passenger}'s flight from {origin} to {dest} on {date}. Also cancel the flight back from {dest} to {origin} on \
                 {return_date}.",
            ),
            v(
                S,
                "{passenger} had a round trip from {origin} to {dest}. Cancel the flight out on {date}. Cancel the flight back on \
                 {return_date}.",
            ),
        ],
    },
    // travel/change-hold/005
    Frame {
        canonical: "Flight {held_flight} was held by mistake for {passenger}, who needs to fly from {origin} to {dest} on {date} instead. \
                    Release that hold and book {passenger} on the cheapest flight that day.",
        variants: &[
            v(
                R,
                "{passenger} needs to fly from {origin} to {dest} on {date}, but flight {held_flight} was held by mistake instead. \
                 Release that hold and book {passenger} on the cheapest flight that day.",
            ),
            v(
                R,
                "Release the hold on flight {held_flight}, which was placed by mistake for {passenger}, and book {passenger} on the \
                 cheapest flight from {origin} to {dest} on {date} instead.",
            ),
            v(
                P,
                "The hold on flight {held_flight} for {passenger} was a mistake: {passenger} actually needs to travel from {origin} to \
                 {dest} on {date}. Drop that hold and put {passenger} on the cheapest {origin} to {dest} flight of that day.",
            ),
            v(
                P,
                "Someone held flight {held_flight} for {passenger} by mistake; the trip {passenger} needs is {origin} to {dest} on {date}. \
                 Remove that hold, then book {passenger} on the lowest-priced flight that day.",
            ),
            v(
                V,
                "Flight {held_flight} was held by mistake for {passenger}, who needs to fly from {origin} to {dest} on {date} instead. \
                 That hold should be released, and {passenger} should be booked on the cheapest flight that day.",
            ),
            v(
                VR,
                "A hold should be released: flight {held_flight} was held for {passenger} by mistake. {passenger} should be booked on \
                 the cheapest flight from {origin} to {dest} on {date} instead.",
            ),
            v(
                S,
                "Flight {held_flight} was held by mistake for {passenger}, who needs to fly from {origin} to {dest} on {date} instead, \
                 so release that hold and book {passenger} on the cheapest flight that day.",
            ),
            v(
                S,
                "Flight {held_flight} was held by mistake for {passenger}. {passenger} needs to fly from {origin} to {dest} on {date} \
                 instead. Release that hold. Then book {passenger} on the cheapest flight that day.",
            ),
        ],
    },
    // support/create-close/001
    Frame {
        canonical: "{customer} (customer {customer_id}) asked for invoices to go to a separate billing address, and you \
                    changed that setting while they were on the phone. Create a ticket for them with the subject \
                    '{subject}' and priority {priority}, then close it with a resolution saying what was done.",
        variants: &[
            v(
                R,
                "Create a ticket for {customer} (customer {customer_id}) with priority {priority} and the subject '{subject}', then \
                 close it with a resolution saying what was done: they asked for invoices to go to a separate billing address, and \
                 you changed that setting while they were on the phone.",
            ),
            v(
                P,
                "While {customer} (customer {customer_id}) was on the phone, you switched their invoices to a separate billing address \
                 at their request. Open a ticket for them with the subject '{subject}' and priority {priority}, and then close it with \
                 a resolution describing what you did.",
            ),
            v(
                P,
                "You already changed the billing setting for {customer} (customer {customer_id}) during the call, so that invoices go \
                 to a separate billing address as they asked. Record this as a ticket with the subject '{subject}' and priority \
                 {priority}, then close the ticket with a resolution that says what was done.",
            ),
            v(
                V,
                "{customer} (customer {customer_id}) asked for invoices to go to a separate billing address, and that setting was \
                 changed while they were on the phone. A ticket should be created for them with the subject '{subject}' and priority \
                 {priority}, then closed with a resolution saying what was done.",
            ),
            v(
                S,
                "{customer} (customer {customer_id}) asked for invoices to go to a separate billing address. You changed that setting \
                 while they were on the phone. Create a ticket for them with the subject '{subject}' and priority {priority}. Then \
                 close it with a resolution saying what was done.",
            ),
        ],
    },
    // support/update-ticket/002
    Frame {
        canonical: "{customer} (customer {customer_id}) has sent the photos for the ticket about his damaged package. Raise that \
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
    },
    // support/escalate-dispute/003
    Frame {
        canonical: "{customer} (customer {customer_id}) is disputing a refund decision in her open ticket. Find the ticket, \
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
    },
    // support/security-breach/004
    Frame {
        canonical: "{customer} (customer {customer_id}) reports login alerts from a country she has never visited, and the \
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
    },
    // support/small-dispute/005
    Frame {
        canonical: "{customer} (customer {customer_id}) says we refused to refund the {amount} she paid for a smart plug she \
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
    },
    // ecommerce/simple-order/001
    Frame {
        canonical: "Order {quantity} of the {product} ({sku}) for customer {customer}, shipped to their home address.",
        variants: &[
            v(R, "For customer {customer}, order {quantity} of the {product} ({sku}), shipped to their home address."),
            v(R, "Order {quantity} of the {product} ({sku}), shipped to the home address of customer {customer}."),
            v(P, "Customer {customer} wants {quantity} of the {product} ({sku}) delivered to their home address; place that order."),
            v(
                P,
                "Please place an order of {quantity} units of the {product} ({sku}) for customer {customer} and ship it to their home address.",
            ),
            v(V, "{quantity} of the {product} ({sku}) should be ordered for customer {customer} and shipped to their home address."),
            v(VR, "For customer {customer}, {quantity} of the {product} ({sku}) should be ordered and shipped to their home address."),
            v(S, "Place an order for customer {customer}. It is for {quantity} of the {product} ({sku}). Ship it to their home address."),
        ],
    },
    // ecommerce/cheapest-coupon/002
    Frame {
        canonical: "Find the cheapest {kind} and order one for customer {customer}, shipped to their {label} address, \
                    with coupon {coupon}.",
        variants: &[
            v(R, "For customer {customer}, find the cheapest {kind} and order one with coupon {coupon}, shipped to their {label} address."),
            v(
                R,
                "Using coupon {coupon}, find the cheapest {kind} and order one for customer {customer}, shipped to their {label} address.",
            ),
            v(
                P,
                "Customer {customer} wants the lowest-priced {kind}: order one, apply coupon {coupon}, and ship it to their {label} address.",
            ),
            v(
                P,
                "Look up the cheapest {kind} and place an order of one for customer {customer} with coupon {coupon}, delivered to their {label} address.",
            ),
            v(
                V,
                "The cheapest {kind} should be found and one ordered for customer {customer}, shipped to their {label} address, with coupon {coupon}.",
            ),
            v(S, "Find the cheapest {kind}. Order one for customer {customer}. Ship it to their {label} address and use coupon {coupon}."),
        ],
    },
    // ecommerce/cheapest-coupon/003
    Frame {
        canonical: "Find the cheapest {kind} and order one for customer {customer}, shipped to their home address. \
                    They have two coupons, {coupon_a} and {coupon_b}; an order takes only one, so use the one that is valid.",
        variants: &[
            v(
                R,
                "Customer {customer} has two coupons, {coupon_a} and {coupon_b}; an order takes only one, so use the one that is \
                 valid. Find the cheapest {kind} and order one for them, shipped to their home address.",
            ),
            v(
                R,
                "Find the cheapest {kind} and order one for customer {customer}, shipped to their home address. They have two coupons, \
                 {coupon_b} and {coupon_a}; an order takes only one, so use the one that is valid.",
            ),
            v(
                P,
                "Order the lowest-priced {kind}, one unit, for customer {customer} and ship it to their home address. They hold two \
                 coupons, {coupon_a} and {coupon_b}, but only one can go on an order, so apply whichever is valid.",
            ),
            v(
                P,
                "Customer {customer} wants a single unit of the cheapest {kind}, delivered to their home address. They hold the \
                 coupons {coupon_a} and {coupon_b}, and since an order accepts just one, apply the valid one.",
            ),
            v(
                V,
                "The cheapest {kind} should be found and one ordered for customer {customer}, shipped to their home address. Two \
                 coupons, {coupon_a} and {coupon_b}, are held by them; only one can be used per order, so the valid one should be used.",
            ),
            v(
                S,
                "Find the cheapest {kind}. Order one for customer {customer}, shipped to their home address. They have two coupons: \
                 {coupon_a} and {coupon_b}. An order takes only one, so use the one that is valid.",
            ),
        ],
    },
    // ecommerce/simple-order/004
    Frame {
        canonical: "Order {quantity} {product} ({sku}) for customer {customer} with coupon {coupon}, shipped to their work address.",
        variants: &[
            v(R, "For customer {customer}, order {quantity} {product} ({sku}) with coupon {coupon}, shipped to their work address."),
            v(R, "Order {quantity} {product} ({sku}) for customer {customer}, shipped to their work address, with coupon {coupon}."),
            v(
                P,
                "Customer {customer} wants {quantity} {product} ({sku}) sent to their work address; place the order with coupon {coupon}.",
            ),
            v(
                P,
                "Please place an order for customer {customer}: {quantity} {product} ({sku}), coupon {coupon}, delivered to their work address.",
            ),
            v(
                V,
                "{quantity} {product} ({sku}) should be ordered for customer {customer} with coupon {coupon} and shipped to their work address.",
            ),
            v(
                S,
                "Place an order for customer {customer}: {quantity} {product} ({sku}). Apply coupon {coupon}. Ship it to their work address.",
            ),
        ],
    },
    // ecommerce/return/005
    Frame {
        canonical: "Customer {customer} wants to return the {product} from their recent order because {reason}. \
                    Refund it to the original payment method.",
        variants: &[
            v(
                R,
                "Because {reason}, customer {customer} wants to return the {product} from their recent order. Refund it to the original payment method.",
            ),
            v(
                P,
                "The {product} from the recent order of customer {customer} is going back because {reason}; process the return and \
                 refund the original payment method.",
            ),
            v(
                P,
                "Customer {customer} would like to send back the {product} from their recent order, as {reason}. Refund it to the \
                 original payment method.",
            ),
            v(
                V,
                "A return should be processed for the {product} from the recent order of customer {customer}, because {reason}. The \
                 refund should go to the original payment method.",
            ),
            v(
                S,
                "Customer {customer} wants to return the {product} from their recent order because {reason}, with the refund going to \
                 the original payment method.",
            ),
        ],
    },
];
