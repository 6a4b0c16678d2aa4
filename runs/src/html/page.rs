//! The page around the sections: escaping, numbers tied to their data,
//! the style sheet, and the side-by-side layout of runs.

use std::fmt::Write as _;

use super::RunFigures;
use super::sections::SECTIONS;
use crate::metrics::PassK;

/// Text made safe for HTML and XML, in element content and in quoted attributes.
pub(super) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0 (nor useful in HTML).
            c if c.is_control() && !matches!(c, '\n' | '\t') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// A JSON pointer (RFC 6901) into `{"runs": [RunFigures, …]}`: where a
/// number on the page comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Ptr(String);

impl Ptr {
    /// The figures of the `run`-th run.
    pub(super) fn run(run: usize) -> Ptr {
        Ptr(format!("/runs/{run}"))
    }

    /// A field of the object here.
    pub(super) fn field(&self, name: &str) -> Ptr {
        Ptr(format!("{}/{}", self.0, name.replace('~', "~0").replace('/', "~1")))
    }

    /// An element of the array here.
    pub(super) fn at(&self, index: usize) -> Ptr {
        Ptr(format!("{}/{index}", self.0))
    }

    pub(super) fn as_str(&self) -> &str {
        &self.0
    }
}

/// How a number is written.
#[derive(Debug, Clone, Copy)]
pub(super) enum Fmt {
    /// A fraction as a percentage with this many decimals, e.g. `83.3%`.
    Pct(usize),
    /// As it is, with this many decimals.
    Fixed(usize),
    /// A whole number.
    Count,
    /// US dollars with four decimals.
    Usd,
    /// A signed fraction as percentage points with two decimals, e.g. `+1.25 pp`.
    Points,
}

impl Fmt {
    fn text(self, value: f64) -> String {
        match self {
            Fmt::Pct(d) => format!("{:.d$}%", value * 100.0),
            Fmt::Fixed(d) => format!("{value:.d$}"),
            Fmt::Count => format!("{value:.0}"),
            Fmt::Usd => format!("${value:.4}"),
            Fmt::Points => format!("{:+.2} pp", value * 100.0),
        }
    }

    /// What the written number is multiplied by.
    fn scale(self) -> u32 {
        match self {
            Fmt::Pct(_) | Fmt::Points => 100,
            Fmt::Fixed(_) | Fmt::Count | Fmt::Usd => 1,
        }
    }
}

/// The attributes that tie a written number to its data.
pub(super) fn data_attrs(ptr: &Ptr, fmt: Fmt) -> String {
    let scale = fmt.scale();
    let scale = if scale == 1 { String::new() } else { format!(r#" data-scale="{scale}""#) };
    format!(r#"data-ptr="{}"{scale}"#, esc(ptr.as_str()))
}

/// A number in a table or a sentence, or `n/a` when there is none.
pub(super) fn num(ptr: &Ptr, value: Option<f64>, fmt: Fmt) -> String {
    match value {
        Some(value) => format!(r#"<span class="num" {}>{}</span>"#, data_attrs(ptr, fmt), fmt.text(value)),
        None => format!(r#"<span class="na" data-ptr="{}">n/a</span>"#, esc(ptr.as_str())),
    }
}

/// A difference `value(ptr) − value(minus)`, or `n/a`.
pub(super) fn delta(ptr: &Ptr, minus: &Ptr, value: Option<f64>, fmt: Fmt) -> String {
    match value {
        Some(value) => {
            format!(r#"<span class="num delta" {} data-minus="{}">{}</span>"#, data_attrs(ptr, fmt), esc(minus.as_str()), fmt.text(value))
        }
        None => "<span class=\"na\">n/a</span>".to_owned(),
    }
}

/// A whole number.
pub(super) fn count(ptr: &Ptr, value: u64) -> String {
    num(ptr, Some(value as f64), Fmt::Count)
}

/// pass^k as a percentage with its 95 % Wilson interval; `ptr` is the PassK's.
pub(super) fn pass(ptr: &Ptr, pass: &PassK) -> String {
    let value = num(&ptr.field("value"), pass.as_f64(), Fmt::Pct(1));
    match pass.ci {
        Some(ci) => format!(
            r#"{value} <span class="ci">[{}–{}]</span>"#,
            num(&ptr.field("ci").field("lower"), Some(ci.lower), Fmt::Pct(0)),
            num(&ptr.field("ci").field("upper"), Some(ci.upper), Fmt::Pct(0))
        ),
        None => value,
    }
}

/// A table: a header row and body rows of ready-made cells.
pub(super) fn table(class: &str, head: &[String], rows: &[Vec<String>]) -> String {
    let mut out = format!(r#"<table class="{}"><thead><tr>"#, esc(class));
    for cell in head {
        let _ = write!(out, "<th>{cell}</th>");
    }
    out.push_str("</tr></thead><tbody>");
    for row in rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let tag = if i == 0 { "th" } else { "td" };
            let _ = write!(out, "<{tag}>{cell}</{tag}>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

const STYLE: &str = r#"
:root { color-scheme: light; --ink: #1f2937; --muted: #6b7280; --line: #e5e7eb; --bg: #ffffff; --panel: #f9fafb; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif; color: var(--ink); background: var(--bg); }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 4px; padding-top: 8px; border-top: 2px solid var(--line); }
h3 { font-size: 15px; margin: 12px 0 6px; }
h4 { font-size: 13px; margin: 12px 0 4px; color: var(--muted); font-weight: 600; }
p.about, p.none, .muted { color: var(--muted); margin: 2px 0 10px; }
nav a { margin-right: 12px; color: #2563eb; text-decoration: none; }
code { font-size: 12px; background: var(--panel); padding: 1px 4px; border-radius: 3px; }
.runs { display: grid; gap: 28px; }
.run { min-width: 0; overflow-x: auto; }
.run > h3.runid { font-size: 13px; color: var(--muted); font-weight: 600; margin-top: 4px; }
.agent { display: inline-block; vertical-align: top; max-width: 100%; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px 12px; margin: 0 14px 14px 0; }
.agent svg { display: inline-block; vertical-align: top; margin-right: 16px; }
table { border-collapse: collapse; margin: 6px 0 10px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 10px 3px 0; text-align: right; border-bottom: 1px solid var(--line); white-space: nowrap; }
thead th { color: var(--muted); font-weight: 600; font-size: 12px; }
thead th:first-child { text-align: left; }
tbody th { text-align: left; font-weight: 500; }
.ci { color: var(--muted); font-size: 11px; }
td .ci { display: block; line-height: 1.1; }
.delta { font-weight: 600; }
.na { color: var(--muted); }
svg { display: block; max-width: 100%; height: auto; margin: 4px 0 8px; font-family: inherit; }
svg text { font-size: 11px; fill: var(--ink); }
svg .axis { stroke: #9ca3af; stroke-width: 1; }
svg .grid { stroke: var(--line); stroke-width: 1; }
svg .label { fill: var(--muted); }
dl.counts { display: grid; grid-template-columns: max-content max-content; gap: 2px 14px; margin: 6px 0; }
dl.counts dt { color: var(--muted); }
dl.counts dd { margin: 0; font-variant-numeric: tabular-nums; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
"#;

/// The whole page.
pub(super) fn render(runs: &[RunFigures]) -> String {
    let ids: Vec<&str> = runs.iter().map(|r| r.run.as_str()).collect();
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><meta name="viewport" content="width=device-width, initial-scale=1"/><title>toolenv report: {}</title><style>{STYLE}</style></head>
<body><header><h1>toolenv report: {}</h1>"#,
        esc(&ids.join(" vs ")),
        esc(&ids.join(" vs "))
    );
    for run in runs {
        let _ = write!(out, r#"<p class="about"><b>{}</b>: <code>{}</code></p>"#, esc(&run.run), esc(&run.description));
    }
    let shown: Vec<_> = SECTIONS
        .iter()
        .filter_map(|section| {
            let parts: Vec<Option<String>> = runs.iter().enumerate().map(|(i, run)| (section.render)(runs, i, run)).collect();
            parts.iter().any(Option::is_some).then_some((section, parts))
        })
        .collect();
    out.push_str("<nav>");
    for (section, _) in &shown {
        let _ = write!(out, "<a href=\"#{}\">{}</a>", section.id, esc(section.title));
    }
    out.push_str("</nav></header>");
    let columns = format!("grid-template-columns: repeat({}, minmax(0, 1fr));", runs.len().max(1));
    for (section, parts) in shown {
        let _ = write!(
            out,
            r#"<section id="{}"><h2>{}</h2><p class="about">{}</p><div class="runs" style="{columns}">"#,
            section.id,
            esc(section.title),
            section.about
        );
        for (run, part) in runs.iter().zip(parts) {
            let _ = write!(out, r#"<div class="run"><h3 class="runid">{}</h3>"#, esc(&run.run));
            match part {
                Some(part) => out.push_str(&part),
                None => out.push_str(r#"<p class="none">Not measured in this run.</p>"#),
            }
            out.push_str("</div>");
        }
        out.push_str("</div></section>");
    }
    out.push_str(
        "<footer>Written by toolenv. Every number carries the JSON pointer of its value in the run's figures \
         (<code>data-ptr</code>); rates are pass^k over tasks with 95% Wilson intervals.</footer></body></html>\n",
    );
    out
}
