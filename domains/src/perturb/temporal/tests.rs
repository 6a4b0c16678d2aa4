//! Tests of the parent module.

use super::*;
use pretty_assertions::assert_eq;

fn date(text: &str) -> Date {
    Date::parse(text).unwrap()
}

#[test]
fn every_date_style_renders_as_expected_and_parses_back() {
    let d = date("2026-01-05");
    let rendered: Vec<String> = DateStyle::VARIED.iter().map(|s| s.render(d)).collect();
    assert_eq!(
        rendered,
        [
            "January 5, 2026",
            "5 January 2026",
            "Jan 5, 2026",
            "Monday, January 5, 2026",
            "Monday 5 January 2026",
            "the 5th of January 2026",
            "5 Jan 2026",
            "2026/01/05"
        ]
    );
    let start = date("2025-11-20");
    for i in 0..800 {
        let d = start.add_days(i);
        for style in [DateStyle::Iso].into_iter().chain(DateStyle::VARIED) {
            let text = style.render(d);
            assert_eq!(parse_date(&text), Some((d, text.len())), "{text}");
            assert_eq!(parse_date(&format!("{text}, then")), Some((d, text.len())), "{text}");
        }
    }
}

#[test]
fn bad_dates_do_not_parse() {
    for bad in [
        "Tuesday, January 5, 2026",
        "February 30, 2026",
        "2026-1-05",
        "January 5 2026",
        "the 5st of January 2026",
        "Janu 5, 2026",
        "20260-01-05",
    ] {
        assert_eq!(parse_date(bad), None, "{bad}");
    }
}

#[test]
fn every_time_style_renders_as_expected_and_parses_back() {
    let rendered: Vec<String> = TimeStyle::VARIED.iter().map(|s| s.render(9 * 60)).collect();
    assert_eq!(rendered, ["9:00 AM", "9 AM", "9:00 am", "9am"]);
    assert_eq!(TimeStyle::ShortMeridiem.render(14 * 60 + 30), "2:30 PM");
    assert_eq!(TimeStyle::Meridiem.render(12 * 60), "12:00 PM");
    assert_eq!(TimeStyle::Meridiem.render(5), "12:05 AM");
    for minutes in (0..24 * 60).step_by(5) {
        for style in [TimeStyle::H24].into_iter().chain(TimeStyle::VARIED) {
            let text = style.render(minutes);
            assert_eq!(parse_clock(&format!("{text}.")), Some((minutes, text.len())), "{text}");
        }
    }
    for bad in ["9:00", "9", "13 PM", "0 AM", "24:00", "9 AMish", "10:60 am"] {
        assert_eq!(parse_clock(bad), None, "{bad}");
    }
}

#[test]
fn relative_forms_resolve_to_exactly_their_date() {
    let today = date("2025-12-29"); // a Monday
    let forms = |d: &str| relative_forms(date(d), today).into_iter().map(|f| f.text).collect::<Vec<_>>();
    assert_eq!(forms("2025-12-30"), ["tomorrow", "this coming Tuesday", "the first Tuesday after today", "Tuesday the 30th", "the 30th"]);
    assert_eq!(
        forms("2026-01-05"),
        [
            "a week from today",
            "in 7 days",
            "7 days from today",
            "in seven days",
            "seven days from today",
            "this coming Monday",
            "the first Monday after today",
            "Monday the 5th",
            "the 5th"
        ]
    );
    assert!(forms("2025-12-29").is_empty(), "today itself is not rendered relatively");
    assert!(forms("2025-12-01").is_empty());
    for i in 1..90 {
        for today in [date("2025-12-29"), date("2026-01-02"), date("2024-02-27")] {
            let d = today.add_days(i);
            let forms = relative_forms(d, today);
            assert!(forms.len() >= 2, "{d}: {forms:?}");
            for form in forms {
                assert_eq!(parse_relative(&form.text, today), Some((d, form.text.len())), "{}", form.text);
                assert_eq!(parse_date(&form.text), None, "a relative form is not an absolute date: {}", form.text);
            }
        }
    }
    assert_eq!(parse_relative("Tuesday the 5th", today), None, "the weekday must agree");
    assert_eq!(parse_relative("This coming Monday,", today), Some((date("2026-01-05"), 18)));
    assert_eq!(parse_relative("Tomorrow", today), Some((date("2025-12-30"), 8)));
}

#[test]
fn scanning_finds_every_mention_in_order() {
    let today = date("2025-12-29");
    let text = "On Jan 8, 2026 at 9 AM, or the day after tomorrow at 14:00 (not 2026-01-09), or tomorrow.";
    let dates: Vec<String> = scan_dates(text, Some(today)).into_iter().map(|(_, _, d)| d.to_string()).collect();
    assert_eq!(dates, ["2026-01-08", "2025-12-31", "2026-01-09", "2025-12-30"]);
    let times: Vec<u32> = scan_times(text).into_iter().map(|(_, _, t)| t).collect();
    assert_eq!(times, [540, 840]);
    assert_eq!(scan_dates("x2026-01-05", None), []);
}
