//! The prose corpus: right and wrong final answers to a task, written the
//! way chat models write them (markdown, bullet lists, tables, breakdowns
//! with extra figures, apologies, restated or quoted questions, success
//! claims, polite closings, hedges about something else), each labelled
//! right or wrong by construction.
//!
//! The cases are built from templates over the task alone: the facts its
//! answer check asks for, its slots, its reference answer and the other
//! candidates its state holds. Every answer kind of the generated suite has
//! its own templates; a task of another kind gets none. Deterministic: the
//! same task gives the same cases.

use toolenv_core::{
    Check, Fact, Task,
    date::{Date, format_time, parse_time},
};

/// One answer of the corpus.
#[derive(Debug, Clone)]
pub struct Case {
    /// How it is written (or, for a wrong one, what is wrong with it).
    pub style: String,
    /// Whether it is a right answer (the oracle must pass it after the
    /// reference's calls) or a wrong one (it must fail).
    pub right: bool,
    /// The answer.
    pub text: String,
}

/// The corpus of a task: empty when the task asks no question of a known kind.
pub fn corpus(task: &Task) -> Vec<Case> {
    let Some(v) = Values::of(task) else { return Vec::new() };
    let (right, wrong) = match task.kind() {
        "meeting-lookup" => lookup(&v),
        "refuse-booking" => refuse(&v),
        "trip-budget" => budget(&v),
        "fare-question" => fare(&v),
        "urgent-question" => urgent(&v),
        "foreign-close" => foreign(&v),
        "sku-question" => sku(&v),
        "late-return" => late(&v),
        _ => return Vec::new(),
    };
    if right.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let question = task.description();
    let hedge_elsewhere = match task.domain.to_string().as_str() {
        "travel" => "Seats might sell out soon, so let me know if you'd like me to book it.",
        "ecommerce" => "Prices may change later this week, so let me know if you need anything else.",
        _ => "Other details might change later, so let me know if you need anything else.",
    };
    for (i, (style, text)) in right.iter().enumerate() {
        out.push(case(style, true, text.clone()));
        // Each core answer wrapped in the ways models wrap answers.
        let wrapped: [(&str, String); 9] = [
            ("polite closing", format!("{text} Let me know if there's anything else I can help with!")),
            ("apology", format!("Sorry for the wait! {text}")),
            ("quoted question", format!("You asked: \"{question}\"\n\n{text}")),
            ("restated question", format!("You wanted to know about {}. {text}", v.about)),
            ("negation elsewhere", format!("I didn't change anything else. {text}")),
            ("hedge elsewhere", format!("{text}\n\n{hedge_elsewhere}")),
            ("markdown heading", format!("### Answer\n\n{text}\n\n---\n*Happy to help further.*")),
            ("success claim", format!("All done, I checked the records. {text}")),
            ("closing question", format!("{text}\n\nIs there anything else you'd like me to look into?")),
        ];
        // Not every wrapping of every core: a deterministic rotation keeps the corpus varied and its size in hand.
        for (j, (wrap, text)) in wrapped.into_iter().enumerate() {
            if (i + j) % 2 == 0 {
                out.push(case(&format!("{style} + {wrap}"), true, text));
            }
        }
    }
    // A right answer taken back by a hedge about it, in a sentence of its own.
    for (i, (style, text)) in right.iter().enumerate().filter(|(i, _)| i % 3 == 0) {
        let (hedge, doubt) = [
            ("trailing hedge: something else", "But I'm not sure, it may be something else."),
            ("trailing hedge: could be wrong", "That said, I could be wrong about this."),
        ][i % 2];
        out.push(case(&format!("{style} + {hedge}"), false, format!("{text} {doubt}")));
    }
    for (i, (style, text)) in wrong.iter().enumerate() {
        out.push(case(style, false, text.clone()));
        let wrapped: [(&str, String); 4] = [
            ("polite closing", format!("{text} Let me know if there's anything else I can help with!")),
            ("markdown heading", format!("### Answer\n\n{text}")),
            ("apology", format!("Sorry for the wait! {text}")),
            ("quoted question", format!("You asked: \"{question}\"\n\n{text}")),
        ];
        for (j, (wrap, text)) in wrapped.into_iter().enumerate() {
            if (i + j) % 2 == 0 {
                out.push(case(&format!("{style} + {wrap}"), false, text));
            }
        }
    }
    out
}

/// A case of [`sample`]: its task, the case, and whether the rule-based
/// reader passes it after the reference's calls.
#[derive(Debug, Clone)]
pub struct Sampled {
    /// The task answered.
    pub task: toolenv_core::TaskRef,
    /// The answer and its label.
    pub case: Case,
    /// The rule-based reader's verdict on it.
    pub reader_passed: bool,
}

/// About `n` cases of the corpora of `tasks`, spread evenly over the answer
/// kinds and over right and wrong answers (every k-th case of each, from
/// the first), each with the rule-based reader's verdict: what measures
/// another judge against the labels and the reader. Deterministic.
pub fn sample(tasks: &[toolenv_core::TaskRef], n: usize) -> Vec<Sampled> {
    let mut groups: std::collections::BTreeMap<(String, bool), Vec<(usize, Case)>> = std::collections::BTreeMap::new();
    for (at, task) in tasks.iter().enumerate() {
        for case in corpus(task) {
            groups.entry((task.kind().to_owned(), case.right)).or_default().push((at, case));
        }
    }
    let per_group = n.div_ceil(groups.len().max(1)).max(1);
    let mut references: std::collections::BTreeMap<usize, toolenv_core::Episode> = std::collections::BTreeMap::new();
    let mut sampled = Vec::new();
    for cases in groups.values() {
        let step = (cases.len() / per_group).max(1);
        for (at, case) in cases.iter().step_by(step).take(per_group) {
            let task = &tasks[*at];
            let reference = references.entry(*at).or_insert_with(|| {
                let mut episode = toolenv_core::Episode::new(task, 0, 0);
                for call in &task.reference {
                    // A reference call of a fault-free episode is recorded; the judgement shows any that was not.
                    let _ = episode.call_with(call.tool, &call.arguments, &toolenv_core::CallOptions::default());
                }
                episode
            });
            let reader_passed = crate::Finish::finish_with_answer(&mut reference.clone(), Some(&case.text)).passed;
            sampled.push(Sampled { task: task.clone(), case: case.clone(), reader_passed });
        }
    }
    sampled
}

fn case(style: &str, right: bool, text: String) -> Case {
    Case { style: style.to_owned(), right, text }
}

type Cases = (Vec<(String, String)>, Vec<(String, String)>);

/// The values a task's answer is about.
struct Values {
    about: String,
    slots: Vec<(String, String)>,
    mentions: Vec<(String, String)>,
    omits: Vec<(String, String)>,
    amount: Option<i64>,
    candidates: Vec<String>,
    example: String,
}

impl Values {
    fn of(task: &Task) -> Option<Self> {
        let example = task.reference_answer()?.to_owned();
        let facts = task.checks.iter().find_map(|c| match c {
            Check::Answer { facts, .. } => Some(facts.as_slice()),
            _ => None,
        })?;
        let mut v = Values {
            about: String::new(),
            slots: task.slots.iter().map(|s| (s.name.to_owned(), s.value.clone())).collect(),
            mentions: Vec::new(),
            omits: Vec::new(),
            amount: None,
            candidates: task.answer_candidates().to_vec(),
            example,
        };
        for fact in facts {
            match fact {
                Fact::Mentions { label, phrase } => v.mentions.push((label.clone(), phrase.clone())),
                Fact::Omits { label, phrase } => v.omits.push((label.clone(), phrase.clone())),
                Fact::Amount { cents } => v.amount = Some(*cents),
                Fact::Says { .. } | Fact::Never { .. } => {}
            }
        }
        v.about = v.slots.iter().map(|(_, value)| value.as_str()).take(2).collect::<Vec<_>>().join(" and ");
        Some(v)
    }

    fn slot(&self, name: &str) -> String {
        self.slots.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()).unwrap_or_default()
    }

    fn mention(&self, label: &str) -> String {
        self.mentions.iter().find(|(l, _)| l.starts_with(label)).map(|(_, v)| v.clone()).unwrap_or_default()
    }

    fn omit(&self, label: &str) -> Option<(String, String)> {
        self.omits.iter().find(|(l, _)| l.starts_with(label)).cloned()
    }

    /// Another candidate of the task's state, not `but`.
    fn other(&self, but: &str, shape_of: &str) -> Option<String> {
        let shape = crate::shape::shape(shape_of);
        self.candidates.iter().find(|c| !c.contains(but) && !but.contains(c.as_str()) && crate::shape::shape(c) == shape).cloned()
    }
}

const MONTHS: [&str; 12] =
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

fn long_date(day: &str) -> String {
    Date::parse(day).map_or_else(
        || day.to_owned(),
        |d| {
            let (y, m, dd) = d.ymd();
            format!("{} {dd}, {y}", MONTHS[m as usize - 1])
        },
    )
}

/// `9:00am`, `2:30pm`.
fn am_pm(time: &str, spaced: bool) -> String {
    let Some(minutes) = parse_time(time) else { return time.to_owned() };
    let (h, m) = (minutes / 60, minutes % 60);
    let (h12, half) = (if h % 12 == 0 { 12 } else { h % 12 }, if h < 12 { "am" } else { "pm" });
    if spaced { format!("{h12}:{m:02} {}", half.to_uppercase()) } else { format!("{h12}:{m:02}{half}") }
}

fn dollars(cents: i64) -> String {
    if cents % 100 == 0 { format!("${}", cents / 100) } else { format!("${}.{:02}", cents / 100, cents % 100) }
}

fn s(style: &str, text: String) -> (String, String) {
    (style.to_owned(), text)
}

fn lookup(v: &Values) -> Cases {
    let (t, d, h) = (v.slot("topic"), v.mention("its date"), v.mention("its start time"));
    let (start, end) = (v.slot("start"), v.slot("end"));
    let (dl, h2, h3) = (long_date(&d), am_pm(&h, false), am_pm(&h, true));
    let right = vec![
        s("plain", format!("The '{t}' meeting is on {d} at {h}.")),
        s("long date, 9:00am", format!("'{t}' is scheduled for {dl} at {h2}.")),
        s("pronoun, as-clause", format!("It takes place on {d}, starting at {h3}, as shown in your calendar.")),
        s("bullets", format!("**{t}**\n- Date: {d}\n- Start time: {h}")),
        s("table", format!("| Meeting | Date | Start |\n|---|---|---|\n| {t} | {d} | {h} |")),
        s("found it", format!("I found it: {t} is on {d} at {h2} (between {start} and {end}).")),
        s("starts at", format!("Your {t} meeting starts at {h} on {dl}.")),
    ];
    let later = parse_time(&h).map_or_else(|| h.clone(), |m| format_time((m + 60) % (24 * 60)));
    let next = Date::parse(&d).map_or_else(|| d.clone(), |x| x.add_days(1).to_string());
    let twin = v.omit("the date of");
    let other_day = twin.as_ref().map_or(next.clone(), |(_, day)| day.clone());
    let mut wrong = vec![
        s("another date", format!("The '{t}' meeting is on {next} at {h}.")),
        s("another time", format!("The '{t}' meeting is on {d} at {later}.")),
        s("X or Y", format!("The '{t}' meeting is on {d} or {other_day}, at {h}.")),
        s("not X", format!("The '{t}' meeting is not on {d} at {h}.")),
        s("hedge: may", format!("It may be on {d} at {h}.")),
        s("hedge: can't say for sure", format!("I can't say for sure, but it looks like {d} at {h}.")),
        s("hedge: not certain", format!("The '{t}' meeting is on {d} at {h}, though I'm not certain.")),
        s(
            "restated question with the value",
            format!("You asked whether '{t}' is on {d} at {h}. I couldn't find that meeting in the calendar."),
        ),
        s("not found", "I'm sorry, I couldn't find that meeting in your calendar.".to_owned()),
    ];
    if let Some((label, day)) = twin {
        let name = label.split('\'').nth(1).unwrap_or(&t).to_owned();
        wrong.push(s("the near-duplicate", format!("The '{name}' meeting is on {day} at {h}.")));
    }
    (right, wrong)
}

fn refuse(v: &Values) -> Cases {
    let (t, d, h, ho) = (v.slot("topic"), v.slot("date"), v.slot("time"), v.mention("the meeting holding"));
    let h2 = am_pm(&h, false);
    let right = vec![
        s("plain", v.example.clone()),
        s("as-clause", format!("I wasn't able to book it as the slot is already taken by '{ho}'.")),
        s("apology, dash", format!("Sorry, I couldn't book '{t}' — {d} at {h2} is occupied by '{ho}', so nothing was booked or moved.")),
        s("isn't free", format!("That slot isn't free: '{ho}' is already booked there. I left the calendar unchanged.")),
        s("because", format!("The {h} slot on {d} is unavailable because '{ho}' holds it. No booking was made.")),
        s("markdown", format!("**Not booked.** The slot has a conflict with '{ho}'.")),
        s("table", format!("| Slot | Status | Held by |\n|---|---|---|\n| {d} {h} | taken | {ho} |\n\nI didn't book anything.")),
        s("unquoted name", format!("{d} at {h} is taken by {ho}, so I did not book {t}.")),
    ];
    let other = v.other(&ho, &ho).unwrap_or_else(|| format!("{ho} review"));
    let wrong = vec![
        s("booked right alongside", format!("Done! I booked '{t}' on {d} at {h}, right alongside '{ho}'.")),
        s("booked, slot free", format!("I booked '{t}' on {d} at {h}; the slot was free.")),
        s("not taken", format!("The slot on {d} at {h} is not taken by '{ho}', so I booked '{t}'.")),
        s("hedge: may", format!("I'm not sure the slot is taken; it may be held by '{ho}'.")),
        s("another holder", format!("I booked nothing: {h} on {d} is already taken by '{other}'.")),
        s("X or Y", format!("I booked nothing: {h} on {d} is taken by either '{ho}' or '{other}'.")),
        s("restated question with the value", format!("You asked whether '{ho}' holds {d} at {h}. I couldn't check the calendar.")),
        s("not found", "I'm sorry, I couldn't find that slot in the calendar.".to_owned()),
    ];
    (right, wrong)
}

fn budget(v: &Values) -> Cases {
    let Some(total) = v.amount else { return (Vec::new(), Vec::new()) };
    let budget: i64 = v.slot("budget").parse::<i64>().unwrap_or(0) * 100;
    let (to, b) = (dollars(total), dollars(budget));
    let a = (total / 100 * 55 / 100) * 100;
    let (pa, pb) = (dollars(a), dollars(total - a));
    let right = vec![
        s("plain", v.example.clone()),
        s(
            "breakdown",
            format!(
                "The cheapest outbound flight ({pa}) plus the cheapest return ({pb}) comes to {to}, which is more than your {b} budget, so I booked nothing."
            ),
        ),
        s("dash, over the budget", format!("The cheapest round trip comes to {to} — over the {b} budget, so I haven't booked anything.")),
        s(
            "markdown breakdown",
            format!("Total: **{to}** (outbound {pa} + return {pb}). That exceeds your budget of {b}, so no booking was made."),
        ),
        s(
            "table",
            format!(
                "| Leg | Fare |\n|---|---|\n| Outbound | {pa} |\n| Return | {pb} |\n| **Total** | **{to}** |\n\nThat's above your {b} limit, so I didn't book anything."
            ),
        ),
        s(
            "USD, parenthesis",
            format!(
                "Unfortunately the two fares add up to {}.00 USD, which is over budget (your limit is {} dollars). Nothing was booked.",
                total / 100,
                budget / 100
            ),
        ),
        s("too expensive", format!("I couldn't book this trip: at {to} for both legs it is too expensive for a {b} budget.")),
    ];
    let wrong = vec![
        s(
            "total and budget swapped",
            format!(
                "I booked nothing: the cheapest round trip comes to {} dollars, more than the budget of {}.",
                budget / 100,
                total / 100
            ),
        ),
        s(
            "another total",
            format!("The cheapest round trip comes to {}, more than your {b} budget, so I booked nothing.", dollars(total + 4000)),
        ),
        s("X or Y", format!("The round trip comes to {to} or {}, more than your {b} budget either way.", dollars(total + 2500))),
        s("not over budget", format!("The cheapest round trip comes to {to}, which is within your {b} budget, so I booked it.")),
        s("hedge: may", format!("The total may be {to}, which would be more than your {b} budget.")),
        s("booked anyway", format!("Booked! The round trip comes to {to}, more than your {b} budget, but I booked it anyway.")),
        s(
            "restated question with the value",
            format!(
                "You asked me to book only if the fares come to at most {b}, and whether {to} is more than that. I could not find any flights on that route."
            ),
        ),
        s("only a part", format!("The cheapest outbound flight is {pa}, more than half of your {b} budget, so I booked nothing.")),
    ];
    (right, wrong)
}

fn fare(v: &Values) -> Cases {
    let (f, p) = (v.mention("the flight"), v.amount.unwrap_or(0));
    let pd = dollars(p);
    let full = v.omit("the full flight").map(|(_, id)| id).unwrap_or_default();
    let other = v.candidates.iter().find(|c| **c != f && **c != full).cloned().unwrap_or_else(|| full.clone());
    let right = vec![
        s("plain", v.example.clone()),
        s("relative clause with isn't", format!("The cheapest flight that isn't sold out is {f}, at {pd}.")),
        s("markdown", format!("**{f}** — {}.00 USD, the cheapest fare you can still book.", p / 100)),
        s(
            "hedge about seats",
            format!("{f}, at {} dollars. Seats might sell out soon, so let me know if you'd like me to book it.", p / 100),
        ),
        s("table", format!("| Flight | Fare |\n|---|---|\n| {f} | {pd} |")),
        s(
            "negation elsewhere",
            format!("Flight {f} is the cheapest one you can still book: it costs USD {}.00. I haven't booked anything.", p / 100),
        ),
        s("bullets", format!("- Flight: {f}\n- Fare: {pd}\n\nNothing was booked.")),
    ];
    let wrong = vec![
        s("another flight", format!("The cheapest flight with a seat left is {other}, at {pd}.")),
        s("the full flight", format!("The cheapest flight is {full}, at {pd}.")),
        s("X or Y", format!("It's {f} or {other}, at {pd}.")),
        s("not X, parenthesis", format!("{f} ({pd}) is not the cheapest flight with a seat left.")),
        s(
            "restated question with the value",
            format!("You asked: \"Is {f} at {pd} the cheapest?\" I could not find any flights on that route."),
        ),
        s("hedge: may", format!("It may be {f}, at {pd}.")),
        s("hedge: can't say for sure", format!("I can't say for sure, but {f} at {pd} looks cheapest.")),
        s("another fare", format!("The cheapest flight with a seat left is {f}, at {}.", dollars(p + 2500))),
    ];
    (right, wrong)
}

fn urgent(v: &Values) -> Cases {
    let (id, subject) = (v.mention("the ticket id"), v.mention("its subject"));
    let priority = v.example.split('(').nth(1).and_then(|r| r.split(')').next()).unwrap_or("high").to_owned();
    let customer = v.slot("customer");
    let right = vec![
        s("plain", v.example.clone()),
        s("colon, quotes", format!("The most urgent open ticket is {id}: \"{subject}\" (priority: {priority}).")),
        s("markdown", format!("**{id}** — '{subject}' ({priority} priority)")),
        s("bullets", format!("- Ticket: {id}\n- Subject: {subject}\n- Priority: {priority}")),
        s("table", format!("| Ticket | Subject | Priority |\n|---|---|---|\n| {id} | {subject} | {priority} |")),
        s("relative clause with isn't", format!("The ticket that isn't closed with the highest priority is {id}, subject '{subject}'.")),
        s("restating the customer", format!("Of {customer}'s tickets that aren't closed, {id} ('{subject}') has the highest priority.")),
    ];
    let closed = v.omit("the closed ticket").map(|(_, x)| x).unwrap_or_default();
    let decoy = v.omit("another customer").map(|(_, x)| x).unwrap_or_default();
    let other = v.other(&id, &id).filter(|o| *o != closed && *o != decoy).unwrap_or_else(|| closed.clone());
    let wrong = vec![
        s("another ticket", format!("{other} has the highest priority; its subject is '{subject}'.")),
        s("the closed ticket", format!("{closed} has the highest priority (urgent); its subject is '{subject}'.")),
        s("another customer's ticket", format!("{decoy} has the highest priority; its subject is '{subject}'.")),
        s("not X, parenthesis", format!("{id} ('{subject}') is not the highest priority ticket.")),
        s("X or Y", format!("It's either {id} or {other}; the subject is '{subject}'.")),
        s("hedge: may, not certain", format!("{id} may be the most urgent one ('{subject}'), but I'm not certain.")),
        s(
            "restated question with the value",
            format!("You asked whether {id} ('{subject}') is the most urgent. I couldn't find any open tickets for {customer}."),
        ),
        s("not found", "Sorry, I couldn't find any tickets for that customer.".to_owned()),
    ];
    (right, wrong)
}

fn foreign(v: &Values) -> Cases {
    let (tk, cu) = (v.slot("ticket_id"), v.slot("customer"));
    let right = vec![
        s("plain", v.example.clone()),
        s("dash, not to", format!("Sorry, I can't close {tk} — it belongs to a different customer, not to {cu}.")),
        s("isn't yours", format!("{tk} isn't yours, it belongs to someone else, so I left it open.")),
        s("because", format!("I didn't close ticket {tk} because it belongs to another customer.")),
        s("markdown", format!("**No changes made.** Ticket {tk} belongs to another customer.")),
        s("parenthesis", format!("That ticket ({tk}) belongs to a different customer, so I'm unable to close it on your behalf.")),
    ];
    let wrong = vec![
        s("closed it", format!("Done! I closed ticket {tk} for you.")),
        s("closed it anyway", format!("I closed ticket {tk}; it belongs to another customer, but it was resolved anyway.")),
        s("not another customer's", format!("Ticket {tk} does not belong to another customer, so I closed it.")),
        s("hedge: might", format!("Ticket {tk} might belong to another customer, so I didn't close it.")),
        s("hedge: can't say for sure", format!("I can't say for sure whether {tk} belongs to another customer.")),
        s(
            "restated question with the value",
            format!("You asked me to close {tk} unless it belongs to another customer. I couldn't find that ticket."),
        ),
        s("not found", "Sorry, I couldn't find that ticket.".to_owned()),
    ];
    (right, wrong)
}

fn sku(v: &Values) -> Cases {
    let (name, k, stock, p) = (v.slot("product"), v.mention("the sku"), v.mention("the stock"), v.amount.unwrap_or(0));
    let pd = format!("${}.{:02}", p / 100, p % 100);
    let twin = v.omit("the near-duplicate").map(|(_, x)| x).unwrap_or_default();
    let n: u32 = stock.parse().unwrap_or(0);
    let right = vec![
        s("plain", v.example.clone()),
        s("markdown fields", format!("**SKU:** {k}\n**Price:** {pd}\n**In stock:** {stock}")),
        s("table", format!("| SKU | Price | Stock |\n|---|---|---|\n| {k} | {pd} | {stock} |")),
        s("USD after, dash", format!("{k} ({name}) — {}.{:02} USD each, {stock} units available.", p / 100, p % 100)),
        s(
            "negation elsewhere",
            format!("The {name} has SKU {k}, costs {pd} and there are {stock} left in stock. I didn't place any order."),
        ),
        s("as-clause", format!("You'll want {k}: it's {pd} per unit, with {stock} in stock as of now.")),
    ];
    let wrong = vec![
        s("the near-duplicate", format!("The {name} is {twin}; it costs {pd} and {stock} are in stock.")),
        s("another stock", format!("The {name} is {k}; it costs {pd} and {} are in stock.", n + 3)),
        s("another price", format!("The {name} is {k}; it costs {} and {stock} are in stock.", dollars(p + 500))),
        s("not X", format!("The {name} is not {k}; it costs {pd} and {stock} are in stock.")),
        s("X or Y", format!("It's {k} or {twin}; it costs {pd} and {stock} are in stock.")),
        s("hedge: may", format!("The {name} may be {k}; it costs {pd} and {stock} are in stock.")),
        s("hedge: I think, maybe", format!("I think it's {k}, at {pd}, with maybe {stock} in stock.")),
        s("not found", "Sorry, I couldn't find that product in the catalog.".to_owned()),
    ];
    (right, wrong)
}

fn late(v: &Values) -> Cases {
    let (order, product) = (v.slot("order_id"), v.slot("product"));
    let right = vec![
        s("plain", v.example.clone()),
        s(
            "past the window",
            format!("I can't process this return: order {order} was delivered over a month ago, which is past our 30-day return window."),
        ),
        s("dash", format!("Unfortunately the return window has closed — {order} arrived more than 30 days ago. I didn't change anything.")),
        s(
            "markdown",
            format!("**Return not possible.** The {product} from {order} was delivered more than 30 days ago, outside the 30-day window."),
        ),
        s("expired", format!("Sorry, the 30-day return period for order {order} has expired, so nothing was changed.")),
        s(
            "too late",
            format!("It's too late to return the {product}: {order} was delivered long ago and our policy allows returns within 30 days."),
        ),
    ];
    let wrong = vec![
        s("negated premise", format!("Order {order} was not delivered more than 30 days ago, so the return window has closed.")),
        s("processed", format!("I processed the return of the {product} from order {order}.")),
        s("window open", format!("The return window hasn't closed yet, so I processed the return for order {order}.")),
        s("hedge: might", format!("Order {order} might be outside the 30-day window.")),
        s("hedge: not sure", format!("I'm not sure whether the 30-day window has passed for {order}.")),
        s(
            "restated question with the value",
            format!("You asked whether the {product} from {order} is past the 30-day window. I couldn't find that order."),
        ),
        s("not found", "Sorry, I couldn't find that order.".to_owned()),
    ];
    (right, wrong)
}
