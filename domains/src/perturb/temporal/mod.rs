//! Dates and times as people write them: the formats the date-format
//! relation renders, the relative phrases the relative-time relation renders,
//! and the parsers that read every one of them back.
//!
//! Every rendering has a parser here, and the tests check that each rendering
//! parses back to the value it came from, so a perturbed description can
//! always be checked against the task's slots.

use toolenv_core::date::{Date, format_time};

const MONTHS: [&str; 12] =
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const NUMBER_WORDS: [&str; 21] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
];

/// A way of writing a calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DateStyle {
    /// `2026-01-05`, the canonical form.
    Iso,
    /// `January 5, 2026`.
    MonthDayYear,
    /// `5 January 2026`.
    DayMonthYear,
    /// `Jan 5, 2026`.
    ShortMonthDayYear,
    /// `Monday, January 5, 2026`.
    WeekdayMonthDayYear,
    /// `Monday 5 January 2026`.
    WeekdayDayMonthYear,
    /// `the 5th of January 2026`.
    OrdinalOfMonthYear,
    /// `5 Jan 2026`.
    DayShortMonthYear,
    /// `2026/01/05`.
    SlashYmd,
}

impl DateStyle {
    /// The styles the date-format relation may choose (all but the canonical one).
    pub(crate) const VARIED: [DateStyle; 8] = [
        DateStyle::MonthDayYear,
        DateStyle::DayMonthYear,
        DateStyle::ShortMonthDayYear,
        DateStyle::WeekdayMonthDayYear,
        DateStyle::WeekdayDayMonthYear,
        DateStyle::OrdinalOfMonthYear,
        DateStyle::DayShortMonthYear,
        DateStyle::SlashYmd,
    ];

    /// The style's pattern, as recorded in a perturbation's parameters.
    pub(crate) fn pattern(self) -> &'static str {
        match self {
            DateStyle::Iso => "YYYY-MM-DD",
            DateStyle::MonthDayYear => "Month D, YYYY",
            DateStyle::DayMonthYear => "D Month YYYY",
            DateStyle::ShortMonthDayYear => "Mon D, YYYY",
            DateStyle::WeekdayMonthDayYear => "Weekday, Month D, YYYY",
            DateStyle::WeekdayDayMonthYear => "Weekday D Month YYYY",
            DateStyle::OrdinalOfMonthYear => "the Dth of Month YYYY",
            DateStyle::DayShortMonthYear => "D Mon YYYY",
            DateStyle::SlashYmd => "YYYY/MM/DD",
        }
    }

    /// Writes `date` in this style.
    pub(crate) fn render(self, date: Date) -> String {
        let (y, m, d) = date.ymd();
        let month = MONTHS[m as usize - 1];
        let short = &month[..3];
        let weekday = WEEKDAYS[date.weekday() as usize];
        match self {
            DateStyle::Iso => date.to_string(),
            DateStyle::MonthDayYear => format!("{month} {d}, {y}"),
            DateStyle::DayMonthYear => format!("{d} {month} {y}"),
            DateStyle::ShortMonthDayYear => format!("{short} {d}, {y}"),
            DateStyle::WeekdayMonthDayYear => format!("{weekday}, {month} {d}, {y}"),
            DateStyle::WeekdayDayMonthYear => format!("{weekday} {d} {month} {y}"),
            DateStyle::OrdinalOfMonthYear => format!("the {} of {month} {y}", ordinal(d)),
            DateStyle::DayShortMonthYear => format!("{d} {short} {y}"),
            DateStyle::SlashYmd => format!("{y:04}/{m:02}/{d:02}"),
        }
    }
}

/// A way of writing a time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeStyle {
    /// `09:00`, the canonical 24-hour form.
    H24,
    /// `9:00 AM`.
    Meridiem,
    /// `9 AM` (`9:30 AM` when the minutes are not zero).
    ShortMeridiem,
    /// `9:00 am`.
    LowerMeridiem,
    /// `9am` (`9:30am` when the minutes are not zero).
    CompactMeridiem,
}

impl TimeStyle {
    /// The styles the date-format relation may choose for a time.
    pub(crate) const VARIED: [TimeStyle; 4] =
        [TimeStyle::Meridiem, TimeStyle::ShortMeridiem, TimeStyle::LowerMeridiem, TimeStyle::CompactMeridiem];

    /// The style's pattern, as recorded in a perturbation's parameters.
    pub(crate) fn pattern(self) -> &'static str {
        match self {
            TimeStyle::H24 => "HH:MM",
            TimeStyle::Meridiem => "H:MM AM",
            TimeStyle::ShortMeridiem => "H AM",
            TimeStyle::LowerMeridiem => "H:MM am",
            TimeStyle::CompactMeridiem => "Ham",
        }
    }

    /// Writes `minutes` after midnight in this style.
    pub(crate) fn render(self, minutes: u32) -> String {
        let (h, m) = (minutes / 60, minutes % 60);
        let h12 = if h % 12 == 0 { 12 } else { h % 12 };
        let (upper, lower) = if h < 12 { ("AM", "am") } else { ("PM", "pm") };
        match self {
            TimeStyle::H24 => format_time(minutes),
            TimeStyle::Meridiem => format!("{h12}:{m:02} {upper}"),
            TimeStyle::ShortMeridiem if m == 0 => format!("{h12} {upper}"),
            TimeStyle::ShortMeridiem => format!("{h12}:{m:02} {upper}"),
            TimeStyle::LowerMeridiem => format!("{h12}:{m:02} {lower}"),
            TimeStyle::CompactMeridiem if m == 0 => format!("{h12}{lower}"),
            TimeStyle::CompactMeridiem => format!("{h12}:{m:02}{lower}"),
        }
    }
}

/// A relative date phrase and how it sits in a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RelativeDate {
    /// The phrase, e.g. `in 3 days`.
    pub(crate) text: String,
    /// Whether the phrase replaces a preceding "on" (`on {date}` →
    /// `tomorrow`) rather than following it (`on the 8th`).
    pub(crate) absorbs_on: bool,
}

/// Every relative phrase for `date` that resolves to it from `today`, in a
/// fixed order. Empty unless `date` is after `today`.
///
/// The phrases and their meaning (see [`parse_relative`]): `tomorrow`, `the
/// day after tomorrow`, `in N days`, `N days from today` (N in digits or
/// words), `a week from today`, `a week from tomorrow`, `two weeks from
/// today`, `this coming <weekday>` and `the first <weekday> after today` (the
/// first such weekday after today), `<weekday> the <Nth>` and `the <Nth>`
/// (the first date after today with that day of the month). "Next Monday" is
/// left out on purpose: people disagree on which Monday it means.
pub(crate) fn relative_forms(date: Date, today: Date) -> Vec<RelativeDate> {
    let days = date.days_since(today);
    if days < 1 {
        return Vec::new();
    }
    let adverb = |text: String| RelativeDate { text, absorbs_on: true };
    let noun = |text: String| RelativeDate { text, absorbs_on: false };
    let mut forms = Vec::new();
    match days {
        1 => forms.push(adverb("tomorrow".into())),
        2 => forms.push(adverb("the day after tomorrow".into())),
        7 => forms.push(adverb("a week from today".into())),
        8 => forms.push(adverb("a week from tomorrow".into())),
        14 => forms.push(adverb("two weeks from today".into())),
        _ => {}
    }
    if days >= 2 {
        forms.push(adverb(format!("in {days} days")));
        forms.push(adverb(format!("{days} days from today")));
        if let Some(word) = NUMBER_WORDS.get(days as usize) {
            forms.push(adverb(format!("in {word} days")));
            forms.push(adverb(format!("{word} days from today")));
        }
    }
    let weekday = WEEKDAYS[date.weekday() as usize];
    if days <= 7 {
        forms.push(adverb(format!("this coming {weekday}")));
        forms.push(noun(format!("the first {weekday} after today")));
    }
    let (_, _, day) = date.ymd();
    forms.push(noun(format!("{weekday} the {}", ordinal(day))));
    forms.push(noun(format!("the {}", ordinal(day))));
    // Keep only what reads back as exactly this date (e.g. "the 31st" may
    // first fall in a later month than `date`).
    forms.retain(|f| parse_relative(&f.text, today) == Some((date, f.text.len())));
    forms
}

/// The date a relative phrase at the start of `text` means, seen from
/// `today`, and the phrase's length in bytes. The phrase may start with a
/// capital letter (at the start of a sentence).
pub(crate) fn parse_relative(text: &str, today: Date) -> Option<(Date, usize)> {
    let exact = parse_relative_exact(text, today);
    let mut chars = text.chars();
    let lowered = match chars.next() {
        Some(c) if c.is_ascii_uppercase() => parse_relative_exact(&format!("{}{}", c.to_ascii_lowercase(), chars.as_str()), today),
        _ => None,
    };
    match (exact, lowered) {
        (Some(a), Some(b)) => Some(if b.1 > a.1 { b } else { a }),
        (a, b) => a.or(b),
    }
}

fn parse_relative_exact(text: &str, today: Date) -> Option<(Date, usize)> {
    let mut best: Option<(Date, usize)> = None;
    let mut consider = |found: Option<(Date, usize)>| {
        if let Some((date, len)) = found
            && boundary_after(text, len)
            && best.is_none_or(|(_, l)| len > l)
        {
            best = Some((date, len));
        }
    };
    let fixed = [
        ("today", 0),
        ("tomorrow", 1),
        ("the day after tomorrow", 2),
        ("a week from today", 7),
        ("a week from tomorrow", 8),
        ("two weeks from today", 14),
    ];
    for (phrase, days) in fixed {
        consider(text.starts_with(phrase).then(|| (today.add_days(days), phrase.len())));
    }
    // "in N days", "N days from today"
    consider(parse_in_days(text, today));
    consider(parse_days_from_today(text, today));
    for prefix in ["this coming ", "the first "] {
        let mut cur = Cursor::new(text);
        let found = (|| {
            cur.lit(prefix)?;
            let weekday = cur.weekday()?;
            if prefix == "the first " {
                cur.lit(" after today")?;
            }
            let date = (1..=7).map(|d| today.add_days(d)).find(|d| d.weekday() == weekday)?;
            Some((date, cur.pos))
        })();
        consider(found);
    }
    // "<weekday> the <Nth>" and "the <Nth>"
    let mut cur = Cursor::new(text);
    let weekday = cur.weekday();
    let found = (|| {
        if weekday.is_some() {
            cur.lit(" ")?;
        }
        cur.lit("the ")?;
        let day = cur.ordinal()?;
        let date = (1..=62).map(|d| today.add_days(d)).find(|d| d.ymd().2 == day)?;
        (weekday.is_none_or(|w| date.weekday() == w)).then_some((date, cur.pos))
    })();
    consider(found);
    best
}

fn parse_in_days(text: &str, today: Date) -> Option<(Date, usize)> {
    let mut cur = Cursor::new(text);
    cur.lit("in ")?;
    let n = cur.count()?;
    cur.lit(" days")?;
    Some((today.add_days(i64::from(n)), cur.pos))
}

fn parse_days_from_today(text: &str, today: Date) -> Option<(Date, usize)> {
    let mut cur = Cursor::new(text);
    let n = cur.count()?;
    cur.lit(" days from today")?;
    Some((today.add_days(i64::from(n)), cur.pos))
}

/// The absolute date written at the start of `text` in any [`DateStyle`],
/// and its length in bytes; the longest reading wins. A weekday that does not
/// match the date makes the reading invalid.
pub(crate) fn parse_date(text: &str) -> Option<(Date, usize)> {
    let mut best: Option<(Date, usize)> = None;
    let attempts: [fn(&mut Cursor) -> Option<Date>; 5] = [iso_or_slash, month_first, day_first, ordinal_of, weekday_prefixed];
    for attempt in attempts {
        let mut cur = Cursor::new(text);
        if let Some(date) = attempt(&mut cur)
            && boundary_after(text, cur.pos)
            && best.is_none_or(|(_, l)| cur.pos > l)
        {
            best = Some((date, cur.pos));
        }
    }
    best
}

fn iso_or_slash(cur: &mut Cursor) -> Option<Date> {
    let y = cur.digits(4, 4)?;
    let sep = cur.peek()?;
    if sep != '-' && sep != '/' {
        return None;
    }
    cur.pos += 1;
    let m = cur.digits(2, 2)?;
    cur.lit(if sep == '-' { "-" } else { "/" })?;
    let d = cur.digits(2, 2)?;
    Date::from_ymd(i64::from(y), m, d)
}

/// `January 5, 2026` and `Jan 5, 2026`.
fn month_first(cur: &mut Cursor) -> Option<Date> {
    let m = cur.month()?;
    cur.lit(" ")?;
    let d = cur.digits(1, 2)?;
    cur.lit(", ")?;
    let y = cur.digits(4, 4)?;
    Date::from_ymd(i64::from(y), m, d)
}

/// `5 January 2026` and `5 Jan 2026`.
fn day_first(cur: &mut Cursor) -> Option<Date> {
    let d = cur.digits(1, 2)?;
    cur.lit(" ")?;
    let m = cur.month()?;
    cur.lit(" ")?;
    let y = cur.digits(4, 4)?;
    Date::from_ymd(i64::from(y), m, d)
}

/// `the 5th of January 2026`.
fn ordinal_of(cur: &mut Cursor) -> Option<Date> {
    cur.lit("the ")?;
    let d = cur.ordinal()?;
    cur.lit(" of ")?;
    let m = cur.month()?;
    cur.lit(" ")?;
    let y = cur.digits(4, 4)?;
    Date::from_ymd(i64::from(y), m, d)
}

/// `Monday, January 5, 2026` and `Monday 5 January 2026`.
fn weekday_prefixed(cur: &mut Cursor) -> Option<Date> {
    let weekday = cur.weekday()?;
    let date = if cur.lit(", ").is_some() {
        month_first(cur)?
    } else {
        cur.lit(" ")?;
        day_first(cur)?
    };
    (date.weekday() == weekday).then_some(date)
}

/// The time of day written at the start of `text` (`09:00`, `9:00 AM`, `9 AM`,
/// `9:00 am`, `9am`), as minutes after midnight, and its length in bytes.
pub(crate) fn parse_clock(text: &str) -> Option<(u32, usize)> {
    let mut cur = Cursor::new(text);
    let start_digits = cur.pos;
    let h = cur.digits(1, 2)?;
    let hour_len = cur.pos - start_digits;
    let minutes = if cur.lit(":").is_some() { Some(cur.digits(2, 2)?) } else { None };
    let after_number = cur.pos;
    let meridiem = {
        let spaced = cur.lit(" ").is_some();
        let found = ["AM", "PM", "am", "pm"].into_iter().find(|m| text[cur.pos..].starts_with(m));
        match found {
            Some(m) if boundary_after(text, cur.pos + 2) && (spaced || m.starts_with(['a', 'p'])) => {
                cur.pos += 2;
                Some(m.eq_ignore_ascii_case("pm"))
            }
            _ => {
                cur.pos = after_number;
                None
            }
        }
    };
    let value = match meridiem {
        None => {
            // Without AM/PM only the canonical HH:MM is a time.
            let m = minutes?;
            (hour_len == 2 && h < 24 && m < 60).then_some(h * 60 + m)?
        }
        Some(pm) => {
            let m = minutes.unwrap_or(0);
            if !(1..=12).contains(&h) || m >= 60 {
                return None;
            }
            (h % 12 + if pm { 12 } else { 0 }) * 60 + m
        }
    };
    boundary_after(text, cur.pos).then_some((value, cur.pos))
}

/// Every mention of a date in `text` (absolute in any [`DateStyle`], or
/// relative to `today`), left to right, as (start, end, date).
pub(crate) fn scan_dates(text: &str, today: Option<Date>) -> Vec<(usize, usize, Date)> {
    scan(text, |rest| {
        let absolute = parse_date(rest);
        let relative = today.and_then(|t| parse_relative(rest, t));
        match (absolute, relative) {
            (Some(a), Some(r)) => Some(if r.1 > a.1 { r } else { a }),
            (a, r) => a.or(r),
        }
    })
}

/// Every mention of a time of day in `text`, left to right, as (start, end,
/// minutes after midnight).
pub(crate) fn scan_times(text: &str) -> Vec<(usize, usize, u32)> {
    scan(text, parse_clock)
}

fn scan<T>(text: &str, parse: impl Fn(&str) -> Option<(T, usize)>) -> Vec<(usize, usize, T)> {
    let mut found = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        if boundary_before(text, pos)
            && let Some((value, len)) = parse(&text[pos..])
        {
            found.push((pos, pos + len, value));
            pos += len;
            continue;
        }
        pos += text[pos..].chars().next().map_or(1, char::len_utf8);
    }
    found
}

/// `1st`, `2nd`, `3rd`, `4th`, … `11th`, `21st`.
pub(crate) fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Whether a word may start at `pos`: the character before is not a letter or digit.
pub(crate) fn boundary_before(text: &str, pos: usize) -> bool {
    text[..pos].chars().next_back().is_none_or(|c| !c.is_alphanumeric())
}

/// Whether a word may end at `pos`: the character after is not a letter or digit.
pub(crate) fn boundary_after(text: &str, pos: usize) -> bool {
    text.get(pos..).is_some_and(|rest| rest.chars().next().is_none_or(|c| !c.is_alphanumeric()))
}

/// A tiny hand-written parser over a string.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Self { text, pos: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn lit(&mut self, literal: &str) -> Option<()> {
        self.rest().starts_with(literal).then(|| self.pos += literal.len())
    }

    /// Between `min` and `max` ASCII digits (as many as there are, up to `max`).
    fn digits(&mut self, min: usize, max: usize) -> Option<u32> {
        let len = self.rest().bytes().take(max).take_while(u8::is_ascii_digit).count();
        if len < min || self.rest().as_bytes().get(len).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        let value = self.rest()[..len].parse().ok()?;
        self.pos += len;
        Some(value)
    }

    /// A month's full name or its three-letter abbreviation, as 1–12.
    fn month(&mut self) -> Option<u32> {
        for (i, name) in MONTHS.iter().enumerate() {
            for candidate in [*name, &name[..3]] {
                if self.rest().starts_with(candidate) && boundary_after(self.rest(), candidate.len()) {
                    self.pos += candidate.len();
                    return Some(i as u32 + 1);
                }
            }
        }
        None
    }

    /// A weekday's full name, as 0 = Monday … 6 = Sunday.
    fn weekday(&mut self) -> Option<u32> {
        let (i, name) = WEEKDAYS.iter().enumerate().find(|(_, name)| self.rest().starts_with(**name))?;
        boundary_after(self.rest(), name.len()).then(|| {
            self.pos += name.len();
            i as u32
        })
    }

    /// `5th`, `21st`: a day of the month with its matching suffix.
    fn ordinal(&mut self) -> Option<u32> {
        let start = self.pos;
        let n = self.digits(1, 2)?;
        let suffix = ordinal(n);
        if self.text[start..].starts_with(&suffix) && boundary_after(self.text, start + suffix.len()) {
            self.pos = start + suffix.len();
            Some(n)
        } else {
            self.pos = start;
            None
        }
    }

    /// A count of days: digits, or a number word from "two" to "twenty".
    fn count(&mut self) -> Option<u32> {
        if let Some(n) = self.digits(1, 3) {
            return Some(n);
        }
        let (n, word) = NUMBER_WORDS.iter().enumerate().skip(2).rev().find(|(_, w)| self.rest().starts_with(**w))?;
        boundary_after(self.rest(), word.len()).then(|| {
            self.pos += word.len();
            n as u32
        })
    }
}

#[cfg(test)]
mod tests;
