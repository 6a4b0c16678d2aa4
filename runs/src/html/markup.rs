//! The building blocks the page, its sections and its figures share:
//! escaping, numbers tied to their data (a JSON pointer per number, written
//! as `data-ptr`), and tables. Imports point one way: the page, the sections
//! and the SVG figures use this module, which uses none of them.

use std::fmt::Write as _;

use super::RunFigures;
use crate::metrics::PassK;
use crate::report::AgentSummary;

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

/// `n/a` with the reason there is no figure, e.g. `n/a (k differs: 1 vs 3)`;
/// tied to no data, as it shows none.
pub(super) fn na(reason: &str) -> String {
    format!(r#"<span class="na">n/a ({})</span>"#, esc(reason))
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

/// The pointer of an agent's summary.
pub(super) fn agent_ptr(run: usize, agent: usize) -> Ptr {
    Ptr::run(run).field("report").field("agents").at(agent)
}

/// A table row per agent that has one (`row` gets the agent's pointer and summary).
pub(super) fn agent_rows(run: &RunFigures, i: usize, row: impl Fn(Ptr, &AgentSummary) -> Option<Vec<String>>) -> Vec<Vec<String>> {
    run.report.agents.iter().enumerate().filter_map(|(a, agent)| row(agent_ptr(i, a), agent)).collect()
}
