//! The scheduling task generator: calendars of two working weeks with
//! near-duplicate topics ("Budget review" and "Budget review prep"), and
//! tasks from one booking (level 1) to a chain of moves, a question about
//! the calendar or a booking that must be refused (level 3).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::phrasing;
use super::tools::SLOTS;
use crate::generate::{Gen, Origin, monday};
use toolenv_core::{Call, Check, Fact, Slot, Task, World, date::Date, phrasing::Template};

/// Topics meetings are about; with [`SUFFIXES`] they make near-duplicates.
const TOPICS: [&str; 40] = [
    "Standup",
    "Sprint planning",
    "Hiring sync",
    "1:1 with Dana",
    "Retro",
    "Client call",
    "Roadmap review",
    "Vendor demo",
    "Budget review",
    "Design review",
    "Security audit",
    "Release planning",
    "Customer interview",
    "Board update",
    "Quarterly review",
    "Team lunch",
    "Onboarding",
    "Architecture sync",
    "Marketing sync",
    "Sales pipeline",
    "Incident review",
    "Product demo",
    "Data review",
    "Legal check-in",
    "Partner call",
    "Training session",
    "Offsite planning",
    "Hiring debrief",
    "Pricing review",
    "Support triage",
    "QA sync",
    "Ops review",
    "Budget sync",
    "Strategy session",
    "Investor call",
    "Launch checklist",
    "Content review",
    "UX research",
    "Finance close",
    "All hands",
];

/// What turns a topic into a near-duplicate of itself.
const SUFFIXES: [&str; 3] = [" prep", " follow-up", " part 2"];

const MOVE: Template = Template::plain("Move the '{topic}' meeting on {date} at {time} to {new_date} at {new_time}.");
const CHAIN_4: Template = Template::plain(
    "Move the meetings '{topic1}', '{topic2}', '{topic3}' and '{topic4}' on {date} to {new_date}: in that order, each to the \
     first slot still free there.",
);
const CHAIN_5: Template = Template::plain(
    "Move the meetings '{topic1}', '{topic2}', '{topic3}', '{topic4}' and '{topic5}' on {date} to {new_date}: in that order, \
     each to the first slot still free there.",
);
const LOOKUP: Template = Template::plain(
    "When is the '{topic}' meeting between {start} and {end}? Answer with its date (YYYY-MM-DD) and start time (HH:MM), and \
     change nothing.",
);
const REFUSE: Template = Template::plain(
    "Book a meeting about '{topic}' on {date} at {time}. Only that slot will do: if it is taken, book nothing, move nothing, \
     and tell me which meeting holds it.",
);

/// Words that say a slot is not free.
const TAKEN: Fact = Fact::Says {
    label: "that the slot is taken",
    any_of: &["taken", "booked", "occupied", "unavailable", "not available", "not free", "conflict", "busy"],
};

type Calendar = BTreeMap<String, BTreeMap<String, String>>;

/// The generated scheduling task of an origin.
pub(super) fn generate(origin: &Origin, mut g: Gen) -> Task {
    let today = monday(&mut g);
    // Two working weeks after today.
    let days: Vec<String> = (1..14).map(|d| today.add_days(d)).filter(|d| d.weekday() < 5).map(|d| d.to_string()).collect();
    let (lo, hi) = match origin.level {
        1 => (0, 3),
        2 => (2, 6),
        _ => (4, 7),
    };
    let mut names: Vec<String> = TOPICS.iter().map(|t| (*t).to_owned()).collect();
    g.shuffle(&mut names);
    let mut calendar = Calendar::new();
    for day in &days {
        let count = g.range(lo, hi) as usize;
        for time in g.sample(&SLOTS, count) {
            let topic = fresh_topic(&mut g, &calendar, &mut names);
            calendar.entry(day.clone()).or_default().insert(time.to_owned(), topic);
        }
    }
    let mut b = Builder { origin: *origin, g, today, days, calendar };
    match origin.level {
        // Cancelling takes two values a random agent can guess now and then
        // (one in a hundred tasks): level 1 moves a meeting, every value given, instead.
        1 => match b.g.weighted(&[60, 40]) {
            0 => b.book(),
            _ => b.move_meeting(),
        },
        2 => match b.g.weighted(&[50, 50]) {
            0 => b.conflict(),
            _ => b.reschedule(),
        },
        _ => match b.g.weighted(&[60, 20, 20]) {
            0 => b.chain(),
            1 => b.lookup(),
            _ => b.refuse(),
        },
    }
}

/// A topic no meeting of the calendar has yet: a fresh one, or (when they
/// run out) a near-duplicate of one.
fn fresh_topic(g: &mut Gen, calendar: &Calendar, names: &mut Vec<String>) -> String {
    let taken = |t: &str| calendar.values().any(|d| d.values().any(|x| x == t));
    while let Some(topic) = names.pop() {
        if !taken(&topic) {
            return topic;
        }
    }
    loop {
        let topic = format!("{}{}", g.pick(&TOPICS), g.pick(&SUFFIXES));
        if !taken(&topic) {
            return topic;
        }
    }
}

struct Builder {
    origin: Origin,
    g: Gen,
    today: Date,
    days: Vec<String>,
    calendar: Calendar,
}

impl Builder {
    fn topics(&self) -> impl Iterator<Item = &String> {
        self.calendar.values().flat_map(|d| d.values())
    }

    fn has_topic(&self, topic: &str) -> bool {
        self.topics().any(|t| t == topic)
    }

    /// A topic for a new meeting.
    fn new_topic(&mut self) -> String {
        loop {
            let base = *self.g.pick(&TOPICS);
            let topic = if self.g.chance(50) { base.to_owned() } else { format!("{base}{}", self.g.pick(&SUFFIXES)) };
            if !self.has_topic(&topic) {
                return topic;
            }
        }
    }

    fn free_slots(&self, day: &str) -> Vec<&'static str> {
        SLOTS.iter().copied().filter(|t| self.calendar.get(day).is_none_or(|d| !d.contains_key(*t))).collect()
    }

    /// A day with at least `min` meetings (adding meetings to one if none has).
    fn busy_day(&mut self, min: usize) -> String {
        let busy: Vec<String> = self.days.iter().filter(|d| self.calendar.get(*d).is_some_and(|m| m.len() >= min)).cloned().collect();
        if !busy.is_empty() {
            return self.g.pick(&busy).clone();
        }
        let day = self.g.pick(&self.days).clone();
        while self.calendar.get(&day).map_or(0, BTreeMap::len) < min {
            let free = self.free_slots(&day);
            let time = *self.g.pick(&free);
            let topic = self.new_topic();
            self.calendar.entry(day.clone()).or_default().insert(time.to_owned(), topic);
        }
        day
    }

    /// Another day than `day` with at least `free` free slots (freeing some if none has).
    fn roomy_day(&mut self, day: &str, free: usize) -> String {
        let roomy: Vec<String> = self.days.iter().filter(|d| *d != day && self.free_slots(d).len() >= free).cloned().collect();
        if !roomy.is_empty() {
            return self.g.pick(&roomy).clone();
        }
        let other: Vec<String> = self.days.iter().filter(|d| *d != day).cloned().collect();
        let new_day = self.g.pick(&other).clone();
        while self.free_slots(&new_day).len() < free {
            let meetings = self.calendar.get_mut(&new_day).expect("a day without free slots has meetings");
            let last = meetings.keys().next_back().cloned().expect("a day without free slots has meetings");
            meetings.remove(&last);
        }
        new_day
    }

    /// A meeting (time, topic) of `day`, at random.
    fn meeting_on(&mut self, day: &str) -> (String, String) {
        let meetings: Vec<(String, String)> = self.calendar[day].iter().map(|(t, x)| (t.clone(), x.clone())).collect();
        self.g.pick(&meetings).clone()
    }

    /// Puts a near-duplicate of `topic` in a free slot of `day` (if it has
    /// one) or of another day; returns where it went.
    fn near_duplicate(&mut self, topic: &str, day: &str) -> Option<(String, String, String)> {
        let suffix = *self.g.pick(&SUFFIXES);
        let twin = format!("{topic}{suffix}");
        if self.has_topic(&twin) {
            return None;
        }
        let mut order = vec![day.to_owned()];
        order.extend(self.days.iter().filter(|d| *d != day).cloned());
        for d in order {
            let free = self.free_slots(&d);
            if let Some(&time) = free.last() {
                self.calendar.entry(d.clone()).or_default().insert(time.to_owned(), twin.clone());
                return Some((d, time.to_owned(), twin));
            }
        }
        None
    }

    fn task(self, kind: &str, template: &'static Template, slots: Vec<Slot>, reference: Vec<Call>, checks: Vec<Check>) -> Task {
        let state = super::State { calendar: self.calendar };
        Task {
            id: self.origin.id(kind),
            domain: crate::registry::SCHEDULING,
            level: self.origin.level,
            template,
            slots,
            today: self.today,
            initial: Arc::new(World::new::<crate::scheduling::State>(state)),
            reference,
            checks,
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        }
    }

    /// Level 1: book a free slot, every value given.
    fn book(mut self) -> Task {
        let day = self.g.pick(&self.days).clone();
        let free = self.free_slots(&day);
        let time = (*self.g.pick(&free)).to_owned();
        let topic = self.new_topic();
        let reference = vec![Call::new("book_meeting", json!({"date": day, "time": time, "topic": topic}))];
        let checks = vec![Check::equals(format!("'{topic}' booked on {day} at {time}"), format!("/calendar/{day}/{time}"), json!(topic))];
        let slots = slots(&[("topic", &topic), ("date", &day), ("time", &time)]);
        self.task("book-meeting", &phrasing::BOOK_MEETING, slots, reference, checks)
    }

    /// Level 1: move a named meeting to a named free slot.
    fn move_meeting(mut self) -> Task {
        let day = self.busy_day(1);
        let (time, topic) = self.meeting_on(&day);
        let new_day = self.roomy_day(&day, 1);
        let free = self.free_slots(&new_day);
        let new_time = (*self.g.pick(&free)).to_owned();
        let reference =
            vec![Call::new("reschedule_meeting", json!({"date": day, "time": time, "new_date": new_day, "new_time": new_time}))];
        let checks = vec![
            Check::equals(format!("'{topic}' moved to {new_day} at {new_time}"), format!("/calendar/{new_day}/{new_time}"), json!(topic)),
            Check::equals(format!("'{topic}' no longer on {day} at {time}"), format!("/calendar/{day}/{time}"), Value::Null),
        ];
        let slots = slots(&[("topic", &topic), ("date", &day), ("time", &time), ("new_date", &new_day), ("new_time", &new_time)]);
        self.task("move-meeting", &MOVE, slots, reference, checks)
    }

    /// Level 2: the slot asked for is taken; the next free one later that day.
    fn conflict(mut self) -> Task {
        // A day with a taken slot that has a free one after it.
        let candidates: Vec<(String, String, String)> = self
            .days
            .iter()
            .flat_map(|d| {
                let free = self.free_slots(d);
                self.calendar.get(d).into_iter().flatten().filter_map(move |(t, _)| {
                    let next = free.iter().find(|f| **f > t.as_str())?;
                    Some((d.clone(), t.clone(), (*next).to_owned()))
                })
            })
            .filter(|(d, t, _)| self.calendar.get(d).is_some_and(|m| m.contains_key(t)))
            .collect();
        let (day, time, next) = if candidates.is_empty() {
            let day = self.g.pick(&self.days).clone();
            let topic = self.new_topic();
            self.calendar.entry(day.clone()).or_default().insert("09:00".into(), topic);
            let next = self.free_slots(&day)[0].to_owned();
            (day, "09:00".to_owned(), next)
        } else {
            self.g.pick(&candidates).clone()
        };
        let holder = self.calendar[&day][&time].clone();
        let topic = self.new_topic();
        let reference = vec![
            Call::new("check_availability", json!({"date": day, "time": time})),
            Call::new("book_meeting", json!({"date": day, "time": next, "topic": topic})),
        ];
        let checks = vec![
            Check::equals(format!("'{topic}' booked at the next free slot, {next}"), format!("/calendar/{day}/{next}"), json!(topic)),
            Check::equals(format!("the existing {time} meeting is kept"), format!("/calendar/{day}/{time}"), json!(holder)),
            Check::count(format!("'{topic}' booked once on {day}"), format!("/calendar/{day}"), json!(topic), 1),
        ];
        let slots = slots(&[("topic", &topic), ("date", &day), ("time", &time)]);
        self.task("conflict", &phrasing::CONFLICT, slots, reference, checks)
    }

    /// Level 2: move a meeting to the first free slot of another day; a
    /// near-duplicate of it may sit on the same day.
    fn reschedule(mut self) -> Task {
        let day = self.busy_day(1);
        let (time, topic) = self.meeting_on(&day);
        let new_day = self.roomy_day(&day, 1);
        let twin = if self.g.chance(50) { self.near_duplicate(&topic, &day) } else { None };
        let new_time = self.free_slots(&new_day)[0].to_owned();
        let reference = vec![
            Call::new("check_calendar", json!({"date": day})),
            Call::new("check_availability", json!({"date": new_day, "time": "09:00"})),
            Call::new("reschedule_meeting", json!({"date": day, "time": time, "new_date": new_day, "new_time": new_time})),
        ];
        let mut checks = vec![
            Check::equals(format!("'{topic}' moved to {new_day} at {new_time}"), format!("/calendar/{new_day}/{new_time}"), json!(topic)),
            Check::equals(format!("'{topic}' no longer on {day} at {time}"), format!("/calendar/{day}/{time}"), Value::Null),
        ];
        if let Some((d, t, twin)) = twin {
            checks.push(Check::equals(format!("'{twin}' kept"), format!("/calendar/{d}/{t}"), json!(twin)));
        }
        let slots = slots(&[("topic", &topic), ("date", &day), ("new_date", &new_day)]);
        self.task("reschedule", &phrasing::RESCHEDULE, slots, reference, checks)
    }

    /// Level 3: move four or five meetings of one day, in order, each to the
    /// first slot still free on another day; a near-duplicate stays.
    fn chain(mut self) -> Task {
        let count = if self.g.chance(30) { 5 } else { 4 };
        let day = self.busy_day(count);
        let mut meetings: Vec<(String, String)> = self.calendar[&day].iter().map(|(t, x)| (t.clone(), x.clone())).collect();
        self.g.shuffle(&mut meetings);
        meetings.truncate(count);
        let new_day = self.roomy_day(&day, count);
        let twin = self.near_duplicate(&meetings[0].1, &day);
        let mut free = self.free_slots(&new_day);
        let mut reference = vec![Call::new("check_calendar", json!({"date": day}))];
        let mut checks = Vec::new();
        for (time, topic) in &meetings {
            let new_time = free.remove(0);
            reference.push(Call::new("check_availability", json!({"date": new_day, "time": "09:00"})));
            reference.push(Call::new("reschedule_meeting", json!({"date": day, "time": time, "new_date": new_day, "new_time": new_time})));
            checks.push(Check::equals(
                format!("'{topic}' moved to {new_day} at {new_time}"),
                format!("/calendar/{new_day}/{new_time}"),
                json!(topic),
            ));
            checks.push(Check::equals(format!("'{topic}' no longer on {day} at {time}"), format!("/calendar/{day}/{time}"), Value::Null));
        }
        if let Some((d, t, twin)) = twin {
            checks.push(Check::equals(format!("'{twin}' kept"), format!("/calendar/{d}/{t}"), json!(twin)));
        }
        let names = ["topic1", "topic2", "topic3", "topic4", "topic5"];
        let mut slots: Vec<Slot> = names.iter().zip(&meetings).map(|(&name, (_, topic))| Slot { name, value: topic.clone() }).collect();
        slots.push(Slot { name: "date", value: day });
        slots.push(Slot { name: "new_date", value: new_day });
        let template = if count == 5 { &CHAIN_5 } else { &CHAIN_4 };
        self.task("reschedule-chain", template, slots, reference, checks)
    }

    /// Level 3: answer when a meeting is, with a near-duplicate on another day.
    fn lookup(mut self) -> Task {
        let (start, end) = (self.days[0].clone(), self.days[self.days.len() - 1].clone());
        // A meeting away from the range's ends, with a near-duplicate on another day.
        let inner: Vec<String> = self.days[1..self.days.len() - 1].iter().filter(|d| self.calendar.contains_key(*d)).cloned().collect();
        let day = if inner.is_empty() { self.busy_day(1) } else { self.g.pick(&inner).clone() };
        let (time, topic) = self.meeting_on(&day);
        let others: Vec<String> =
            self.days[1..self.days.len() - 1].iter().filter(|d| **d != day && !self.free_slots(d).is_empty()).cloned().collect();
        let twin = format!("{topic}{}", self.g.pick(&SUFFIXES));
        let mut facts = vec![
            Fact::Mentions { label: "its date".into(), phrase: day.clone() },
            Fact::Mentions { label: "its start time".into(), phrase: time.clone() },
        ];
        if !others.is_empty() && !self.has_topic(&twin) {
            let twin_day = self.g.pick(&others).clone();
            let twin_time = *self.g.pick(&self.free_slots(&twin_day));
            self.calendar.entry(twin_day.clone()).or_default().insert(twin_time.to_owned(), twin.clone());
            facts.push(Fact::Omits { label: format!("the date of '{twin}'"), phrase: twin_day });
        }
        let reference = vec![Call::new("list_meetings", json!({"start_date": start, "end_date": end}))];
        let example = format!("The '{topic}' meeting is on {day} at {time}.");
        let checks = vec![Check::answer(format!("the answer gives when '{topic}' is"), facts, example)];
        let slots = slots(&[("topic", &topic), ("start", &start), ("end", &end)]);
        self.task("meeting-lookup", &LOOKUP, slots, reference, checks)
    }

    /// Level 3: the one slot asked for is taken: book nothing, say who holds it.
    fn refuse(mut self) -> Task {
        let day = self.busy_day(1);
        let (time, holder) = self.meeting_on(&day);
        let topic = self.new_topic();
        let reference = vec![Call::new("check_availability", json!({"date": day, "time": time}))];
        let example = format!("I booked nothing: {time} on {day} is already taken by '{holder}'.");
        let facts = vec![TAKEN, Fact::Mentions { label: "the meeting holding the slot".into(), phrase: holder.clone() }];
        let checks = vec![
            Check::answer(format!("the answer says '{holder}' holds the slot"), facts, example),
            Check::equals(format!("'{holder}' keeps {time} on {day}"), format!("/calendar/{day}/{time}"), json!(holder)),
        ];
        let slots = slots(&[("topic", &topic), ("date", &day), ("time", &time)]);
        self.task("refuse-booking", &REFUSE, slots, reference, checks)
    }
}

fn slots(pairs: &[(&'static str, &str)]) -> Vec<Slot> {
    toolenv_core::slots(pairs)
}
