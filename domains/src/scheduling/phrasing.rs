//! How the perturbation layer may rephrase scheduling tasks: each template's
//! alternative phrasings, and the domain's synonyms and distractor sentences.

use crate::{
    perturb::Synonym,
    perturb::lexicon::syn,
    perturb::templates::{P, PR, R, S, SR, V, VR, v},
};
use toolenv_core::phrasing::Template;

/// Meaning-preserving replacements, longest phrases first where they overlap.
pub(super) const SYNONYMS: &[Synonym] = &[
    syn("Book a meeting", &["Schedule a meeting", "Set up a meeting", "Arrange a meeting"]),
    syn("book a meeting", &["schedule a meeting", "set up a meeting", "arrange a meeting"]),
    syn("book the next free slot", &["take the next free slot", "use the next free slot"]),
    syn("free slot", &["open slot", "available slot"]),
    syn("Reschedule the", &["Move the", "Shift the"]),
    syn("Cancel the", &["Call off the"]),
    syn("is taken", &["is already booked", "is occupied"]),
    syn("later that day", &["later on the same day", "later the same day"]),
];

/// Irrelevant sentences a distractor may add (besides the generic ones).
pub(super) const DISTRACTORS: &[&str] = &[
    "I had a dentist appointment on {past_date}, but that has nothing to do with this.",
    "The big conference room projector was finally fixed.",
    "A meeting about 'Onboarding' on {past_date} went well, by the way.",
    "Our team offsite is still being planned; that is a separate matter.",
];

pub(super) const BOOK_MEETING: Template = Template {
    text: "Book a meeting about '{topic}' on {date} at {time}.",
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
};

pub(super) const CONFLICT: Template = Template {
    text: "Book a meeting about '{topic}' on {date} at {time}. If that slot is taken, book the next free slot later that day instead.",
    variants: &[
        v(R, "On {date} at {time}, book a meeting about '{topic}'. If that slot is taken, book the next free slot later that day instead."),
        v(R, "Book a meeting on {date} at {time} about '{topic}'. If that slot is taken, book the next free slot later that day instead."),
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
};

pub(super) const RESCHEDULE: Template = Template {
    text: "Reschedule the '{topic}' meeting on {date} to the first free slot on {new_date}.",
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
};

pub(super) const CANCEL: Template = Template {
    text: "Cancel the '{topic}' meeting on {date}.",
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
};
