//! Calendar dates and times of day, as the domains read and write them
//! (`YYYY-MM-DD`, `HH:MM`). No clock: an episode's "today" is part of its task.

use std::fmt;

/// A proleptic Gregorian calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// Days since 1970-01-01 (negative before).
    days: i64,
}

impl Date {
    /// Builds a date; `None` if it does not exist.
    pub fn from_ymd(year: i64, month: u32, day: u32) -> Option<Self> {
        let valid = (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month);
        valid.then(|| Self { days: days_from_civil(year, month, day) })
    }

    /// Parses `YYYY-MM-DD`; `None` for any other text or a date that does not exist.
    pub fn parse(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
            return None;
        }
        let year = text.get(0..4)?.parse().ok()?;
        let month = text.get(5..7)?.parse().ok()?;
        let day = text.get(8..10)?.parse().ok()?;
        Self::from_ymd(year, month, day)
    }

    /// The date `days` later (earlier when negative).
    pub fn add_days(self, days: i64) -> Self {
        Self { days: self.days + days }
    }

    /// Days from `earlier` to `self`.
    pub fn days_since(self, earlier: Self) -> i64 {
        self.days - earlier.days
    }

    /// Year, month and day.
    pub fn ymd(self) -> (i64, u32, u32) {
        civil_from_days(self.days)
    }

    /// The date as its `Display` writes it, given the text it was
    /// parsed from: that text itself when it already is written so (every
    /// digit a digit: no sign, as agents usually send dates), so no string is made.
    pub fn text_of(self, parsed_from: &str) -> std::borrow::Cow<'_, str> {
        let bytes = parsed_from.as_bytes();
        let written_so = bytes.len() == 10 && [0, 1, 2, 3, 5, 6, 8, 9].iter().all(|&i| bytes[i].is_ascii_digit());
        if written_so {
            debug_assert_eq!(parsed_from, self.to_string());
            std::borrow::Cow::Borrowed(parsed_from)
        } else {
            std::borrow::Cow::Owned(self.to_string())
        }
    }

    /// Day of the week, 0 = Monday … 6 = Sunday.
    pub fn weekday(self) -> u32 {
        (self.days + 3).rem_euclid(7) as u32
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.ymd();
        match u32::try_from(y) {
            // The dates tools meet: written digit by digit, not through the formatting machinery.
            Ok(y) if y <= 9999 => {
                let mut text = [b'-'; 10];
                digits(&mut text[0..4], y);
                digits(&mut text[5..7], m);
                digits(&mut text[8..10], d);
                f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
            }
            _ => write!(f, "{y:04}-{m:02}-{d:02}"),
        }
    }
}

/// Writes the last `out.len()` decimal digits of `n` into `out`, zero-padded.
fn digits(out: &mut [u8], mut n: u32) {
    for byte in out.iter_mut().rev() {
        *byte = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// `prefix` followed by `number` zero-padded to four digits, as
/// `format!("{prefix}{number:04}")` writes it (`R-0007`): record ids.
pub fn numbered_id(prefix: &str, number: u32) -> String {
    if number > 9999 {
        return format!("{prefix}{number}");
    }
    let mut text = [0u8; 4];
    digits(&mut text, number);
    let mut id = String::with_capacity(prefix.len() + 4);
    id.push_str(prefix);
    id.push_str(std::str::from_utf8(&text).unwrap_or_default());
    id
}

/// Parses `HH:MM` (24-hour) into minutes after midnight.
pub fn parse_time(text: &str) -> Option<u32> {
    let (h, m) = text.split_once(':')?;
    if h.len() != 2 || m.len() != 2 {
        return None;
    }
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some(h * 60 + m)
}

/// Formats minutes after midnight as `HH:MM`.
pub fn format_time(minutes: u32) -> String {
    let (hours, minutes) = (minutes / 60, minutes % 60);
    if hours > 99 {
        return format!("{hours:02}:{minutes:02}");
    }
    let mut text = [b':'; 5];
    digits(&mut text[0..2], hours);
    digits(&mut text[3..5], minutes);
    std::str::from_utf8(&text).unwrap_or_default().to_owned()
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's days_from_civil / civil_from_days.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_formats_and_counts() {
        let d = Date::parse("2026-01-05").unwrap();
        assert_eq!(d.to_string(), "2026-01-05");
        assert_eq!(d.weekday(), 0, "2026-01-05 is a Monday");
        assert_eq!(d.add_days(27).to_string(), "2026-02-01");
        assert_eq!(Date::parse("2024-03-01").unwrap().add_days(-1).to_string(), "2024-02-29");
        assert_eq!(Date::parse("2026-02-01").unwrap().days_since(d), 27);
        for text in ["2026-01-05", "0026-01-05", "+026-01-05", "2026-+1-05"] {
            if let Some(date) = Date::parse(text) {
                assert_eq!(date.text_of(text), date.to_string(), "{text}");
            }
        }
        for bad in ["2026-02-29", "2026-13-01", "2026-1-05", "05/01/2026", "2026-01-0x", ""] {
            assert_eq!(Date::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn round_trips_every_day_of_a_span() {
        let start = Date::parse("1999-12-25").unwrap();
        for i in 0..20_000 {
            let d = start.add_days(i);
            assert_eq!(Date::parse(&d.to_string()), Some(d));
        }
    }

    #[test]
    fn digit_by_digit_formatting_matches_the_formatting_machinery() {
        for days in (-800_000..3_000_000).step_by(997) {
            let d = Date { days };
            let (y, m, day) = d.ymd();
            assert_eq!(d.to_string(), format!("{y:04}-{m:02}-{day:02}"), "{days}");
        }
        for minutes in 0..7000 {
            assert_eq!(format_time(minutes), format!("{:02}:{:02}", minutes / 60, minutes % 60));
        }
        for number in [0, 7, 42, 999, 1000, 9999, 10_000, 123_456] {
            assert_eq!(numbered_id("R-", number), format!("R-{number:04}"));
        }
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("09:30"), Some(570));
        assert_eq!(format_time(570), "09:30");
        for bad in ["9:30", "24:00", "12:60", "noon"] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }
}
