//! A static results site of many runs (`toolenv site RUN… --out DIR`):
//! `index.html` with a leaderboard per suite, generator version and k, each
//! run's report page (`runs/RUN.html`, the report of [`super::render`]),
//! and comparisons (`compare/RUN-vs-BASE.html`, each run of a leaderboard
//! beside its first). Self-contained like the report: no script, nothing
//! fetched; links are relative, so the directory can be served or opened as
//! files.
//!
//! Runs of different suites or generator versions measure different tasks,
//! and pass^k of different k (trials per task) are different figures, so
//! neither is ever ranked together: each (suite, generator version, k) has a
//! leaderboard of its own.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::RunFigures;
use super::markup::esc;
use crate::metrics::{InfraConvention, PassK};
use crate::report::counted;

/// One run for the site: its figures, and the suite its tasks come from
/// with their generator version (`toolenv_domains::generate::suite_of`).
#[derive(Debug, Clone)]
pub struct SiteRun {
    /// The run's figures, as its report page shows them.
    pub figures: RunFigures,
    /// The suite, e.g. `paper`, `standard`, `generated:7:20`.
    pub suite: String,
    /// The generator version of its generated tasks; 0 for the paper's.
    pub generator_version: u32,
}

/// One file of the site: its path under the site's directory, and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct SitePage {
    /// A relative path with `/` separators, e.g. `runs/run-0001.html`.
    pub path: String,
    /// The page.
    pub html: String,
}

const STYLE: &str = r#"
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif; color: #1f2937; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 4px; padding-top: 8px; border-top: 2px solid #e5e7eb; }
p.about { color: #6b7280; margin: 2px 0 10px; }
a { color: #2563eb; text-decoration: none; }
table { border-collapse: collapse; margin: 6px 0 10px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 12px 3px 0; text-align: right; border-bottom: 1px solid #e5e7eb; white-space: nowrap; }
thead th { color: #6b7280; font-weight: 600; font-size: 12px; }
td.agent, td.run, thead th.left { text-align: left; }
.ci { color: #6b7280; font-size: 11px; display: block; line-height: 1.1; }
.na { color: #6b7280; }
footer { margin-top: 40px; color: #6b7280; font-size: 12px; }
"#;

/// The pages of the site of `runs`: the index, a report page per run, and
/// a comparison of each run with the first of its leaderboard.
pub fn site(runs: &[SiteRun]) -> Vec<SitePage> {
    let mut groups: BTreeMap<Board, Vec<&SiteRun>> = BTreeMap::new();
    for run in runs {
        groups.entry((run.suite.as_str(), run.generator_version, run.figures.report.k)).or_default().push(run);
    }
    let mut pages = vec![SitePage { path: "index.html".to_owned(), html: index(&groups) }];
    for run in runs {
        pages.push(SitePage { path: run_page(&run.figures.run), html: super::render(std::slice::from_ref(&run.figures)) });
    }
    for members in groups.values() {
        let Some((base, rest)) = members.split_first() else { continue };
        for run in rest {
            let figures = [run.figures.clone(), base.figures.clone()];
            pages.push(SitePage { path: compare_page(&run.figures.run, &base.figures.run), html: super::render(&figures) });
        }
    }
    pages
}

fn run_page(run: &str) -> String {
    format!("runs/{}.html", file_name(run))
}

fn compare_page(run: &str, base: &str) -> String {
    format!("compare/{}-vs-{}.html", file_name(run), file_name(base))
}

/// A run id as a file name: letters, digits, `-` and `_` kept, anything else `_`.
fn file_name(run: &str) -> String {
    run.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// One leaderboard row: an agent of a run.
struct Row<'a> {
    run: &'a SiteRun,
    agent: &'a str,
    episodes: u64,
    pass_1: &'a PassK,
    pass_k: &'a PassK,
    volume: Option<f64>,
    cost_per_100: Option<f64>,
}

/// A leaderboard's key: the suite, the generator version and k.
type Board<'a> = (&'a str, u32, u32);

fn index(groups: &BTreeMap<Board, Vec<&SiteRun>>) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><meta name="viewport" content="width=device-width, initial-scale=1"/><title>toolenv results</title><style>{STYLE}</style></head>
<body><header><h1>toolenv results</h1><p class="about">{} in {}. Agents are ranked by pass^k, then pass^1 (equal figures, equal rank), within one suite, generator version and k only: runs of different versions measure different tasks, and pass^k of different k are different figures, so neither is ever ranked together.</p></header>"#,
        counted(groups.values().map(Vec::len).sum::<usize>() as u64, "run"),
        counted(groups.len() as u64, "leaderboard")
    );
    for ((suite, version, k), members) in groups {
        let id = format!("board-{}-v{version}-k{k}", file_name(suite));
        // One site is built under one convention; each board says which.
        let convention = members.first().map(|run| run.figures.report.convention).unwrap_or_default();
        let (name, says) = match convention {
            InfraConvention::CountAsFailure => ("count_as_failure", "infrastructure errors count as failed trials"),
            InfraConvention::Exclude => ("exclude", "infrastructure errors are left out of the rates (--exclude-infra-errors)"),
        };
        let _ = write!(
            out,
            r#"<section id="{id}" data-suite="{}" data-generator-version="{version}" data-k="{k}" data-convention="{name}"><h2>Suite {}, generator version {version}, k = {k}</h2><p class="about">Rates: {says}.</p>"#,
            esc(suite),
            esc(suite)
        );
        let mut rows: Vec<Row> = members
            .iter()
            .flat_map(|run| {
                run.figures.report.agents.iter().map(move |agent| Row {
                    run,
                    agent: &agent.agent,
                    episodes: agent.overall.episodes,
                    pass_1: &agent.overall.pass_1,
                    pass_k: &agent.overall.pass_k,
                    volume: agent.surface_volume.as_ref().map(|v| v.trapezoid),
                    cost_per_100: agent.usage.cost_per_100_episodes_usd,
                })
            })
            .collect();
        rows.sort_by(|a, b| rank_order(b, a));
        out.push_str(
            r#"<table><thead><tr><th>#</th><th class="left">agent</th><th class="left">run</th><th>k</th><th>pass^1</th><th>pass^k</th><th>surface volume</th><th>cost / 100 episodes</th><th>episodes</th></tr></thead><tbody>"#,
        );
        let mut rank = 0;
        for (i, row) in rows.iter().enumerate() {
            // Competition ranking: a row whose figures equal the one above shares its rank (1, 2, 2, 4).
            if i == 0 || rank_order(&rows[i - 1], row).is_ne() {
                rank = i + 1;
            }
            let run = &row.run.figures.run;
            let _ = write!(
                out,
                r#"<tr data-agent="{}" data-run="{}"><td data-field="rank" data-value="{rank}">{rank}</td><td class="agent">{}</td><td class="run"><a href="{}">{}</a></td><td data-field="k" data-value="{}">{}</td>{}{}{}{}<td data-field="episodes" data-value="{}">{}</td></tr>"#,
                esc(row.agent),
                esc(run),
                esc(row.agent),
                esc(&run_page(run)),
                esc(run),
                row.run.figures.report.k,
                row.run.figures.report.k,
                rate_cell("pass_1", row.pass_1),
                rate_cell("pass_k", row.pass_k),
                number_cell("volume", row.volume, |v| format!("{v:.3}")),
                number_cell("cost", row.cost_per_100, |v| format!("${v:.2}")),
                row.episodes,
                row.episodes
            );
        }
        out.push_str("</tbody></table>");
        if members.len() > 1 {
            out.push_str(r#"<p class="about">Comparisons with the first run of this leaderboard: "#);
            let base = &members[0].figures.run;
            for run in &members[1..] {
                let run = &run.figures.run;
                let _ = write!(out, r#"<a href="{}">{} vs {}</a> "#, esc(&compare_page(run, base)), esc(run), esc(base));
            }
            out.push_str("</p>");
        }
        out.push_str("</section>");
    }
    out.push_str(
        "<footer>Written by toolenv. pass^1 and pass^k are over tasks (the unbiased estimator), with 95% Wilson intervals; \
         the surface volume is the normalized trapezoid integral of R(j, ε, λ) over j ∈ {1, k} and the measured ε and λ \
         (n/a with fewer than two (ε, λ) cells, or a point undefined); cost per 100 episodes is over the episodes that reported a cost (n/a when none did).</footer></body></html>\n",
    );
    out
}

/// The leaderboard's order of two rows: by pass^k, then pass^1 (a rate that is n/a below any value).
fn rank_order(a: &Row, b: &Row) -> std::cmp::Ordering {
    let key = |p: &PassK| p.as_f64().unwrap_or(-1.0);
    key(a.pass_k).total_cmp(&key(b.pass_k)).then(key(a.pass_1).total_cmp(&key(b.pass_1)))
}

fn rate_cell(name: &str, rate: &PassK) -> String {
    match rate.as_f64() {
        None => format!(r#"<td class="na" data-field="{name}">n/a</td>"#),
        Some(value) => {
            let ci = rate
                .ci
                .as_ref()
                .map(|ci| format!(r#"<span class="ci">{:.1}–{:.1}</span>"#, ci.lower * 100.0, ci.upper * 100.0))
                .unwrap_or_default();
            format!(r#"<td data-field="{name}" data-value="{value}">{:.1}%{ci}</td>"#, value * 100.0)
        }
    }
}

fn number_cell(name: &str, value: Option<f64>, show: impl Fn(f64) -> String) -> String {
    match value {
        None => format!(r#"<td class="na" data-field="{name}">n/a</td>"#),
        Some(value) => format!(r#"<td data-field="{name}" data-value="{value}">{}</td>"#, show(value)),
    }
}
