//! How the perturbation layer may rephrase travel tasks: each template's
//! alternative phrasings, and the domain's synonyms and distractor sentences.

use crate::{
    perturb::Synonym,
    perturb::lexicon::syn,
    perturb::templates::{P, PR, R, S, SR, V, VR, v},
};
use toolenv_core::phrasing::Template;

/// Meaning-preserving replacements, longest phrases first where they overlap.
pub(super) const SYNONYMS: &[Synonym] = &[
    syn("Book the cheapest", &["Reserve the cheapest"]),
    syn("Book flight", &["Reserve flight", "Book a seat on flight"]),
    syn("cheapest", &["least expensive", "lowest-priced"]),
    syn("by mistake", &["in error", "by accident"]),
    syn("needs to fly", &["has to fly", "must fly"]),
    syn("Release that hold", &["Drop that hold", "Remove that hold"]),
    syn("the flight out", &["the outbound flight"]),
    syn("the flight back", &["the return flight"]),
];

/// Irrelevant sentences a distractor may add (besides the generic ones).
pub(super) const DISTRACTORS: &[&str] = &[
    "My last trip, on {past_date}, went smoothly.",
    "I will sort out the hotel separately.",
    "A colleague flew from BER to VIE on {past_date} for a conference, which is unrelated.",
    "The airport lounge is being renovated this month, not that it matters here.",
];

pub(super) const CHEAPEST_FLIGHT: Template = Template {
    text: "Book the cheapest flight from {origin} to {dest} on {date} for {passenger}.",
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
};

pub(super) const DIRECT_BOOKING: Template = Template {
    text: "Book flight {flight_id} from {origin} to {dest} on {date} for {passenger}.",
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
};

pub(super) const CHEAPEST_FLIGHT_003: Template = Template {
    text: "Book the cheapest available flight from {origin} to {dest} on {date} for {passenger}.",
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
        v(S, "Book a flight for {passenger}. The route is {origin} to {dest}, on {date}. Pick the cheapest flight with seats available."),
    ],
};

pub(super) const CANCEL_TRIP: Template = Template {
    text: "Cancel {passenger}'s round trip from {origin} to {dest}: the flight out on {date} and the flight back on {return_date}.",
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
};

pub(super) const CHANGE_HOLD: Template = Template {
    text: "Flight {held_flight} was held by mistake for {passenger}, who needs to fly from {origin} to {dest} on {date} instead. \
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
};
