//! The page around the sections: the style sheet, the header and its
//! navigation, and the side-by-side layout of runs.

use std::fmt::Write as _;

use super::RunFigures;
use super::markup::esc;
use super::sections::SECTIONS;

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
