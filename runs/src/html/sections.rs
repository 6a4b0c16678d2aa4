//! The sections of the HTML report, in page order. Each renders one run's
//! part (or `None` when the run has nothing to show there); the page puts
//! the runs side by side. Add a figure by appending a [`Section`].

use std::fmt::Write as _;

use super::markup::{Fmt, Ptr, agent_ptr, agent_rows, count, delta, esc, na, num, pass, table};
use super::svg::{self, BarGroup, Cell, Series};
use super::{AgentCurves, RunFigures};
use crate::{
    metrics::{BreakdownRow, Surface},
    report::AgentSummary,
};

/// One section of the page.
#[derive(Debug)]
pub(super) struct Section {
    /// The anchor id.
    pub(super) id: &'static str,
    /// The heading.
    pub(super) title: &'static str,
    /// What it shows (trusted HTML).
    pub(super) about: &'static str,
    /// One run's part: (all runs, this run's index, this run).
    pub(super) render: fn(&[RunFigures], usize, &RunFigures) -> Option<String>,
}

/// The sections in page order; append new ones at the end.
pub(super) const SECTIONS: &[Section] = &[
    Section {
        id: "overview",
        title: "Overview",
        about: "Episodes by outcome, and each agent's pass^1 and pass^k over tasks (95% Wilson intervals), its ceiling and mean tool calls per episode.",
        render: overview,
    },
    Section {
        id: "comparison",
        title: "Comparison with the first run",
        about: "Each agent that both runs have: its rates here, in the first run, and the difference in percentage points. \
                pass^k is compared at one k only: runs of different trial counts at the smaller k (each run's pass^j from its own \
                episodes), or not at all (n/a) when that is 1, which the pass^1 columns already compare.",
        render: comparison,
    },
    Section {
        id: "surface",
        title: "Reliability surface R(ε, λ)",
        about: "pass^k of each (perturbation ε, fault level λ) cell of the main grid (ablation profiles left out), per agent: green is reliable, red is not.",
        render: surface,
    },
    Section {
        id: "pass-k",
        title: "pass^k over k",
        about: "How consistency decays with the number of trials that must all pass: pass^j for j = 1..k, over all the agent's episodes (thick) and per (ε, λ) cell.",
        render: pass_curves,
    },
    Section {
        id: "domains",
        title: "By domain (Table 7)",
        about: "pass^1 and pass^k per domain, with the mean number of tool calls per episode.",
        render: domains,
    },
    Section {
        id: "recovery",
        title: "Fault recovery (Table 8)",
        about: "Faults injected and met, how many the agent got past with a later fault-free call of the same tool, and what that cost in extra calls.",
        render: recovery,
    },
    Section {
        id: "ablation",
        title: "Fault-type ablation (Table 9, Figure 5)",
        about: "The pooled pass rate under one fault type at a time, against all of them mixed.",
        render: ablation,
    },
    Section {
        id: "usage",
        title: "Tokens and cost (Table 10)",
        about: "What the agents reported spending with their finish calls.",
        render: usage,
    },
    Section {
        id: "validity",
        title: "Validity",
        about: "What the rates stand on: infrastructure errors (always counted), episodes no agent could have passed under their fault schedule (the ceiling), and episodes planned but never recorded.",
        render: validity,
    },
    Section {
        id: "conversation",
        title: "Conversation",
        about: "Conversational tasks, whose description leaves slots to a simulated user: how often the agent asked when something was withheld (recall) and kept quiet when nothing was (precision), its turns with the user, and pass^k beside the same tasks given in full.",
        render: super::conversation::conversation,
    },
    Section {
        id: "answer-judges",
        title: "Answer judges",
        about: "Answers given in prose that an LLM judge ruled on (--answer-judge llm), per agent and judge; the rule-based reader, the default, or the typed fields judged every other answer.",
        render: answer_judges,
    },
];

fn answer_judges(_: &[RunFigures], i: usize, run: &RunFigures) -> Option<String> {
    let rows: Vec<Vec<String>> = run
        .report
        .agents
        .iter()
        .enumerate()
        .flat_map(|(a, agent)| {
            let p = agent_ptr(i, a).field("answer_judges");
            agent.answer_judges.iter().map(move |(judge, n)| vec![esc(&agent.agent), esc(judge), count(&p.field(judge), *n)])
        })
        .collect();
    (!rows.is_empty()).then(|| table("answer-judges", &["agent", "judge", "episodes"].map(str::to_owned), &rows))
}

/// A labelled box per agent.
fn agent_box(agent: &AgentSummary, body: &str) -> String {
    format!(r#"<div class="agent"><h3>{}</h3>{body}</div>"#, esc(&agent.agent))
}

/// Content with an id, for tests and links.
fn with_id(id: &str, html: &str) -> String {
    format!(r#"<span id="{}">{html}</span>"#, esc(id))
}

fn overview(_: &[RunFigures], i: usize, run: &RunFigures) -> Option<String> {
    let report = &run.report;
    let counts = Ptr::run(i).field("report").field("counts");
    let c = &report.counts;
    let mut out = String::from(r#"<dl class="counts">"#);
    for (name, field, value) in [
        ("planned", "planned", c.planned),
        ("recorded", "recorded", c.recorded),
        ("passed", "passed", c.passed),
        ("failed", "failed", c.failed),
        ("infrastructure errors", "infra_errors", c.infra_errors),
        ("infeasible", "infeasible", c.infeasible),
    ] {
        let _ = write!(out, "<dt>{name}</dt><dd>{}</dd>", with_id(&format!("r{i}-{field}"), &count(&counts.field(field), value)));
    }
    out.push_str("</dl>");
    let k = report.k;
    let head =
        ["agent", "episodes", "pass^1", &format!("pass^{k}"), &format!("ceiling ^{k}"), "avg calls", "surface volume"].map(str::to_owned);
    let rows: Vec<Vec<String>> = report
        .agents
        .iter()
        .enumerate()
        .map(|(a, agent)| {
            let ptr = agent_ptr(i, a);
            let overall = ptr.field("overall");
            vec![
                esc(&agent.agent),
                count(&overall.field("episodes"), agent.overall.episodes),
                with_id(&format!("r{i}-a{a}-pass-1"), &pass(&overall.field("pass_1"), &agent.overall.pass_1)),
                with_id(&format!("r{i}-a{a}-pass-k"), &pass(&overall.field("pass_k"), &agent.overall.pass_k)),
                ceiling(&overall.field("ceiling_k"), &agent.overall.ceiling_k),
                num(&overall.field("mean_calls"), agent.overall.mean_calls, Fmt::Fixed(1)),
                // Without a volume the n/a points at the null `surface_volume`, a pointer that resolves.
                match agent.surface_volume {
                    Some(volume) => num(&ptr.field("surface_volume").field("trapezoid"), Some(volume.trapezoid), Fmt::Fixed(3)),
                    None => num(&ptr.field("surface_volume"), None, Fmt::Fixed(3)),
                },
            ]
        })
        .collect();
    out.push_str(&table("agents", &head, &rows));
    Some(out)
}

fn ceiling(ptr: &Ptr, ceiling: &Option<crate::metrics::PassK>) -> String {
    match ceiling {
        Some(c) => num(&ptr.field("value"), c.as_f64(), Fmt::Pct(1)),
        None => r#"<span class="na">unknown</span>"#.to_owned(),
    }
}

/// pass^j of agent `a` of run `i` (its pointer and value): the report's
/// `field` (`pass_1` or `pass_k`) when it is pass^j, else the other one
/// when that is, else for 1 < j < k the pass^j curve computed from the same
/// episodes; `None` when the run has fewer than j trials.
fn pass_at(run: &RunFigures, i: usize, a: usize, field: &str, j: u32) -> Option<(Ptr, Option<f64>)> {
    let overall = &run.report.agents.get(a)?.overall;
    let ptr = agent_ptr(i, a).field("overall");
    let k = run.report.k;
    let (first, second) = if field == "pass_1" { ("pass_1", "pass_k") } else { ("pass_k", "pass_1") };
    for name in [first, second] {
        let (of, value) = if name == "pass_1" { (1, &overall.pass_1) } else { (k, &overall.pass_k) };
        if of == j {
            return Some((ptr.field(name).field("value"), value.as_f64()));
        }
    }
    if j == 0 || j > k {
        return None;
    }
    let point = run.curves.get(a)?.overall.get(j as usize - 1)?;
    Some((Ptr::run(i).field("curves").at(a).field("overall").at(j as usize - 1).field("value"), point.as_f64()))
}

fn comparison(runs: &[RunFigures], i: usize, run: &RunFigures) -> Option<String> {
    if runs.len() < 2 {
        return None;
    }
    let base = &runs[0];
    if i == 0 {
        return Some(r#"<p class="muted">The baseline: the other runs are compared with this one.</p>"#.to_owned());
    }
    // pass^k of different k are different figures: compare at the smaller k
    // (both runs have at least that many trials), or, when that is 1 and
    // the pass^1 columns compare it already, say why there is no difference.
    let (k, base_k) = (run.report.k, base.report.k);
    let common = k.min(base_k);
    let differs = format!("k differs: {base_k} vs {k}");
    let at = if k == base_k || common > 1 { Some(common) } else { None };
    let head = match at {
        Some(j) => ["agent", "pass^1", "first run", "Δ", &format!("pass^{j}"), "first run", "Δ"].map(str::to_owned),
        None => ["agent", "pass^1", "first run", "Δ", "pass^k", "first run", "Δ"].map(str::to_owned),
    };
    let mut rows = Vec::new();
    for (a, agent) in run.report.agents.iter().enumerate() {
        let Some(b) = base.report.agents.iter().position(|x| x.agent == agent.agent) else { continue };
        let mut row = vec![esc(&agent.agent)];
        let compared = |field: &str, j: u32, row: &mut Vec<String>| match (pass_at(run, i, a, field, j), pass_at(base, 0, b, field, j)) {
            (Some((p, here)), Some((q, there))) => {
                row.push(num(&p, here, Fmt::Pct(1)));
                row.push(num(&q, there, Fmt::Pct(1)));
                let d = here.zip(there).map(|(x, y)| x - y);
                row.push(with_id(&format!("r{i}-a{a}-delta-{field}"), &delta(&p, &q, d, Fmt::Points)));
            }
            _ => row.extend([na(&differs), na(&differs), with_id(&format!("r{i}-a{a}-delta-{field}"), &na(&differs))]),
        };
        compared("pass_1", 1, &mut row);
        match at {
            Some(j) => compared("pass_k", j, &mut row),
            None => {
                // Each run's own pass^k, labelled with its k, and no difference.
                let (p, q) = (agent_ptr(i, a).field("overall"), agent_ptr(0, b).field("overall"));
                let other = &base.report.agents[b].overall;
                row.push(format!("pass^{k} {}", num(&p.field("pass_k").field("value"), agent.overall.pass_k.as_f64(), Fmt::Pct(1))));
                row.push(format!("pass^{base_k} {}", num(&q.field("pass_k").field("value"), other.pass_k.as_f64(), Fmt::Pct(1))));
                row.push(with_id(&format!("r{i}-a{a}-delta-pass_k"), &na(&differs)));
            }
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Some(r#"<p class="none">No agent in common with the first run.</p>"#.to_owned());
    }
    let mut out = table("comparison", &head, &rows);
    if k != base_k {
        let note = match at {
            Some(j) => format!(
                "{differs} (first run vs this one): pass^k is compared at the common k = {j}, each run's pass^{j} computed from its \
                 own episodes; each run's own pass^k is in the overview."
            ),
            None => format!(
                "{differs} (first run vs this one): pass^{base_k} and pass^{k} are different figures, so they have no difference; \
                 the common k is 1, compared in the pass^1 columns."
            ),
        };
        let _ = write!(out, r#"<p class="muted" id="r{i}-k-differs">{}</p>"#, esc(&note));
    }
    Some(out)
}

/// Levels as axis labels.
fn labels(levels: &[f64]) -> Vec<String> {
    levels.iter().map(f64::to_string).collect()
}

/// The heat map of one k of a surface whose pointer is `ptr`.
fn heat_map(surface: &Surface, ptr: &Ptr, k: u32, title: &str) -> String {
    let (epsilons, lambdas) = (surface.epsilons(), surface.lambdas());
    let position = |levels: &[f64], x: f64| levels.iter().position(|l| l.total_cmp(&x).is_eq() || (*l == 0.0 && x == 0.0));
    let cells: Vec<Cell> = surface
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.point.k == k)
        .filter_map(|(n, p)| {
            Some(Cell {
                row: position(&epsilons, p.point.epsilon)?,
                column: position(&lambdas, p.point.lambda)?,
                value: p.pass.as_f64(),
                ptr: ptr.field("points").at(n).field("pass").field("value"),
            })
        })
        .collect();
    svg::heat_map(title, "ε", &labels(&epsilons), "λ", &labels(&lambdas), &cells)
}

fn surface(_: &[RunFigures], i: usize, run: &RunFigures) -> Option<String> {
    let k = run.report.k;
    let mut out = String::new();
    for (a, agent) in run.report.agents.iter().enumerate() {
        let s = &agent.surface;
        if s.epsilons().len() * s.lambdas().len() < 2 {
            continue;
        }
        let ptr = agent_ptr(i, a);
        let mut body = heat_map(s, &ptr.field("surface"), k, &format!("R({k}, ε, λ): pass^{k} per cell"));
        if k > 1 {
            body.push_str(&heat_map(s, &ptr.field("surface"), 1, "R(1, ε, λ): pass^1 per cell"));
        }
        let mut facts = Vec::new();
        if let Some(volume) = agent.surface_volume {
            facts.push(format!(
                "surface volume V = {}",
                num(&ptr.field("surface_volume").field("trapezoid"), Some(volume.trapezoid), Fmt::Fixed(3))
            ));
        }
        let relative = ptr.field("relative");
        for (name, axis, field, list) in
            [("R_fault", "λ", "fault", &agent.relative.fault), ("R_prompt", "ε", "prompt", &agent.relative.prompt)]
        {
            for (n, r) in list.iter().enumerate().filter(|(_, r)| r.level != 0.0) {
                let value = num(&relative.field(field).at(n).field("ratio"), r.ratio.map(|r| r.to_f64()), Fmt::Fixed(3));
                facts.push(format!("{name}({axis} = {}) = {value}", r.level));
            }
        }
        if !facts.is_empty() {
            let _ = write!(body, r#"<p class="muted">{}</p>"#, facts.join("; "));
        }
        out.push_str(&agent_box(agent, &body));
    }
    (!out.is_empty()).then_some(out)
}

fn pass_curves(_: &[RunFigures], i: usize, run: &RunFigures) -> Option<String> {
    let k = run.report.k;
    let mut out = String::new();
    for (a, (agent, curves)) in run.report.agents.iter().zip(&run.curves).enumerate() {
        let ptr = Ptr::run(i).field("curves").at(a);
        out.push_str(&agent_box(agent, &curve_body(curves, &ptr, k)));
    }
    (!out.is_empty()).then_some(out)
}

fn curve_body(curves: &AgentCurves, ptr: &Ptr, k: u32) -> String {
    let mut series = vec![Series {
        label: "all episodes".to_owned(),
        points: curves
            .overall
            .iter()
            .enumerate()
            .map(|(j, p)| (j as u32 + 1, p.as_f64(), ptr.field("overall").at(j).field("value")))
            .collect(),
        emphasis: true,
    }];
    let cells = &curves.cells;
    if cells.epsilons().len() * cells.lambdas().len() > 1 {
        for epsilon in cells.epsilons() {
            for lambda in cells.lambdas() {
                let points: Vec<_> = cells
                    .points
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.point.epsilon.total_cmp(&epsilon).is_eq() && p.point.lambda.total_cmp(&lambda).is_eq())
                    .map(|(n, p)| (p.point.k, p.pass.as_f64(), ptr.field("cells").field("points").at(n).field("pass").field("value")))
                    .collect();
                if !points.is_empty() {
                    series.push(Series { label: format!("ε = {epsilon}, λ = {lambda}"), points, emphasis: false });
                }
            }
        }
    }
    let mut body = svg::line_chart(&format!("pass^j for j = 1..{k}"), "k (trials that must all pass)", k, &series);
    let head: Vec<String> = std::iter::once(String::new()).chain((1..=k).map(|j| format!("pass^{j}"))).collect();
    let rows: Vec<Vec<String>> = series
        .iter()
        .map(|s| std::iter::once(esc(&s.label)).chain(s.points.iter().map(|(_, v, p)| num(p, *v, Fmt::Pct(1)))).collect())
        .collect();
    body.push_str(&table("curves", &head, &rows));
    body
}

/// Rows of a breakdown as a table with ceilings and mean calls.
fn breakdown_table(rows: &[BreakdownRow], ptr: &Ptr, k: u32, id_prefix: &str) -> String {
    let head = ["", "episodes", "pass^1", &format!("pass^{k}"), &format!("ceiling ^{k}"), "avg calls"].map(str::to_owned);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .enumerate()
        .map(|(n, row)| {
            let p = ptr.at(n);
            vec![
                esc(&row.label),
                count(&p.field("episodes"), row.episodes),
                pass(&p.field("pass_1"), &row.pass_1),
                pass(&p.field("pass_k"), &row.pass_k),
                ceiling(&p.field("ceiling_k"), &row.ceiling_k),
                with_id(&format!("{id_prefix}-{}-calls", row.label), &num(&p.field("mean_calls"), row.mean_calls, Fmt::Fixed(1))),
            ]
        })
        .collect();
    table("breakdown", &head, &cells)
}

fn domains(_: &[RunFigures], i: usize, run: &RunFigures) -> Option<String> {
    let k = run.report.k;
    let mut out = String::new();
    for (a, agent) in run.report.agents.iter().enumerate() {
        let ptr = agent_ptr(i, a).field("by_domain");
        let groups: Vec<BarGroup> = agent
            .by_domain
            .iter()
            .enumerate()
            .map(|(n, row)| BarGroup {
                label: row.label.clone(),
                bars: vec![
                    (row.pass_1.as_f64(), ptr.at(n).field("pass_1").field("value")),
                    (row.pass_k.as_f64(), ptr.at(n).field("pass_k").field("value")),
                ],
            })
            .collect();
        let pass_k = format!("pass^{k}");
        let mut body = svg::bar_chart("pass rates by domain", &["pass^1", &pass_k], &groups);
        body.push_str(&breakdown_table(&agent.by_domain, &ptr, k, &format!("r{i}-a{a}-domain")));
        out.push_str(&agent_box(agent, &body));
    }
    (!out.is_empty()).then_some(out)
}

fn recovery(_: &[RunFigures], i: usize, run: &RunFigures) -> Option<String> {
    let mut out = String::new();
    for (a, agent) in run.report.agents.iter().enumerate() {
        let r = &agent.recovery;
        if r.injected == 0 && r.encountered == 0 {
            continue;
        }
        let ptr = agent_ptr(i, a).field("recovery");
        // The kinds' table below has the same counts, which sum to these.
        let head =
            ["", "calls met", "injected", "encountered", "recovered", "extra calls", "retried", "recovery rate", "extra calls per fault"]
                .map(str::to_owned);
        let rate = ptr.field("recovery_rate");
        let rate = format!(
            "{}{}",
            num(&rate.field("value"), r.recovery_rate.value, Fmt::Pct(1)),
            r.recovery_rate.ci.map_or(String::new(), |ci| format!(
                r#" <span class="ci">[{}–{}]</span>"#,
                num(&rate.field("ci").field("lower"), Some(ci.lower), Fmt::Pct(0)),
                num(&rate.field("ci").field("upper"), Some(ci.upper), Fmt::Pct(0))
            ))
        );
        let totals = vec![
            "all faults".to_owned(),
            count(&ptr.field("hits"), r.hits),
            count(&ptr.field("injected"), r.injected),
            count(&ptr.field("encountered"), r.encountered),
            count(&ptr.field("recovered"), r.recovered),
            count(&ptr.field("extra_calls"), r.extra_calls),
            count(&ptr.field("retried"), r.retried),
            with_id(&format!("r{i}-a{a}-recovery-rate"), &rate),
            num(&ptr.field("extra_calls_per_fault"), r.extra_calls_per_fault, Fmt::Fixed(2)),
        ];
        let mut body = table("recovery", &head, &[totals]);
        let groups: Vec<BarGroup> = vec![BarGroup {
            label: "recovered / encountered".to_owned(),
            bars: vec![(r.recovery_rate.value, ptr.field("recovery_rate").field("value"))],
        }];
        body.push_str(&svg::bar_chart("recovery rate", &["recovery rate"], &groups));
        let head = ["fault kind", "calls met", "injected", "encountered", "recovered", "extra calls", "retried"].map(str::to_owned);
        let rows: Vec<Vec<String>> = r
            .by_kind
            .iter()
            .map(|(kind, c)| {
                let p = ptr.field("by_kind").field(kind);
                vec![
                    esc(kind),
                    count(&p.field("hits"), c.hits.into()),
                    count(&p.field("injected"), c.injected.into()),
                    count(&p.field("encountered"), c.encountered.into()),
                    count(&p.field("recovered"), c.recovered.into()),
                    count(&p.field("extra_calls"), c.extra_calls.into()),
                    count(&p.field("retried"), c.retried.into()),
                ]
            })
            .collect();
        if !rows.is_empty() {
            body.push_str("<h4>by fault kind</h4>");
            body.push_str(&table("by-kind", &head, &rows));
        }
        out.push_str(&agent_box(agent, &body));
    }
    (!out.is_empty()).then_some(out)
}

fn ablation(_: &[RunFigures], i: usize, run: &RunFigures) -> Option<String> {
    let mut out = String::new();
    for (a, agent) in run.report.agents.iter().enumerate() {
        if agent.ablation.is_empty() {
            continue;
        }
        let ptr = agent_ptr(i, a).field("ablation");
        let groups: Vec<BarGroup> = agent
            .ablation
            .iter()
            .enumerate()
            .map(|(n, row)| BarGroup {
                label: row.fault_profile.clone(),
                bars: vec![(row.pass.rate.value, ptr.at(n).field("pass").field("rate").field("value"))],
            })
            .collect();
        let mut body = svg::bar_chart("pooled pass rate by fault profile", &["pass rate"], &groups);
        let head = ["fault profile", "episodes", "pass rate", "vs mixed"].map(str::to_owned);
        let rows: Vec<Vec<String>> = agent
            .ablation
            .iter()
            .enumerate()
            .map(|(n, row)| {
                let p = ptr.at(n);
                vec![
                    esc(&row.fault_profile),
                    count(&p.field("pass").field("rate").field("total"), row.pass.rate.total),
                    with_id(
                        &format!("r{i}-a{a}-ablation-{}", row.fault_profile),
                        &num(&p.field("pass").field("rate").field("value"), row.pass.rate.value, Fmt::Pct(2)),
                    ),
                    match row.vs_baseline {
                        Some(d) => num(&p.field("vs_baseline"), Some(d), Fmt::Points),
                        None => "<span class=\"na\">-</span>".to_owned(),
                    },
                ]
            })
            .collect();
        body.push_str(&table("ablation", &head, &rows));
        out.push_str(&agent_box(agent, &body));
    }
    (!out.is_empty()).then_some(out)
}

fn usage(_: &[RunFigures], i: usize, run: &RunFigures) -> Option<String> {
    let head = ["agent", "episodes with tokens", "input tokens", "output tokens", "episodes with cost", "cost", "cost per 100 episodes"]
        .map(str::to_owned);
    let rows = agent_rows(run, i, |ptr, agent| {
        let (p, u) = (ptr.field("usage"), &agent.usage);
        (u.episodes_with_tokens > 0 || u.episodes_with_cost > 0).then(|| {
            vec![
                esc(&agent.agent),
                count(&p.field("episodes_with_tokens"), u.episodes_with_tokens),
                num(&p.field("input_tokens"), u.input_tokens.map(|t| t as f64), Fmt::Count),
                num(&p.field("output_tokens"), u.output_tokens.map(|t| t as f64), Fmt::Count),
                count(&p.field("episodes_with_cost"), u.episodes_with_cost),
                num(&p.field("cost_usd"), u.cost_usd, Fmt::Usd),
                num(&p.field("cost_per_100_episodes_usd"), u.cost_per_100_episodes_usd, Fmt::Usd),
            ]
        })
    });
    if rows.is_empty() {
        return None;
    }
    let mut out = table("usage", &head, &rows);
    // Table 10's further columns: per episode, the LLM agents' protocol figures, the ratios.
    let head = [
        "agent",
        "episodes",
        "tokens per episode",
        "calls per episode",
        "model turns per episode",
        "calls written as text",
        "protocol errors",
        "context full",
        "tokens ratio",
        "cost ratio",
    ]
    .map(str::to_owned);
    let cost = Ptr::run(i).field("report").field("cost");
    let rows: Vec<Vec<String>> = run
        .report
        .cost
        .iter()
        .enumerate()
        .map(|(r, row)| {
            let p = cost.field(&r.to_string());
            let llm = |name: &str, value: u32| {
                if row.llm_episodes == 0 { na("not an LLM agent") } else { count(&p.field("llm").field(name), u64::from(value)) }
            };
            vec![
                esc(&row.agent),
                count(&p.field("episodes"), row.episodes),
                num(&p.field("tokens_per_episode"), row.tokens_per_episode, Fmt::Fixed(0)),
                num(&p.field("calls_per_episode"), row.calls_per_episode, Fmt::Fixed(1)),
                num(&p.field("turns_per_episode"), row.turns_per_episode, Fmt::Fixed(1)),
                llm("text_form_calls", row.llm.text_form_calls),
                llm("protocol_errors", row.llm.protocol_errors),
                llm("context_exhausted", row.llm.context_exhausted),
                num(&p.field("tokens_ratio"), row.tokens_ratio, Fmt::Fixed(2)),
                num(&p.field("cost_ratio"), row.cost_ratio, Fmt::Fixed(2)),
            ]
        })
        .collect();
    if !rows.is_empty() {
        out.push_str(&table("cost", &head, &rows));
    }
    Some(out)
}

fn validity(_: &[RunFigures], i: usize, run: &RunFigures) -> Option<String> {
    let report = &run.report;
    let counts = Ptr::run(i).field("report").field("counts");
    let convention = match report.convention {
        crate::metrics::InfraConvention::CountAsFailure => "counted as failed trials",
        crate::metrics::InfraConvention::Exclude => "left out of every rate",
    };
    let population = match report.population {
        crate::metrics::Population::AllEpisodes => "all episodes (infeasible ones count as failures)",
        crate::metrics::Population::FeasibleOnly => "feasible episodes only",
    };
    let mut out = format!(
        r#"<p>Infrastructure errors: {} ({convention}). Infeasible episodes: {}. Planned but not recorded: {}. Rates are over {population}.</p>"#,
        count(&counts.field("infra_errors"), report.counts.infra_errors),
        count(&counts.field("infeasible"), report.counts.infeasible),
        count(&counts.field("not_recorded"), report.counts.not_recorded),
    );
    let k = report.k;
    let head =
        ["agent", "infra errors", "infeasible", "pass^1", "ceiling ^1", &format!("pass^{k}"), &format!("ceiling ^{k}")].map(str::to_owned);
    let rows: Vec<Vec<String>> = report
        .agents
        .iter()
        .enumerate()
        .map(|(a, agent)| {
            let (p, o) = (agent_ptr(i, a).field("overall"), &agent.overall);
            vec![
                esc(&agent.agent),
                count(&p.field("pass_k").field("infra_errors"), o.pass_k.infra_errors),
                with_id(&format!("r{i}-a{a}-infeasible"), &count(&p.field("infeasible"), o.infeasible)),
                num(&p.field("pass_1").field("value"), o.pass_1.as_f64(), Fmt::Pct(1)),
                ceiling(&p.field("ceiling_1"), &o.ceiling_1),
                num(&p.field("pass_k").field("value"), o.pass_k.as_f64(), Fmt::Pct(1)),
                ceiling(&p.field("ceiling_k"), &o.ceiling_k),
            ]
        })
        .collect();
    out.push_str(&table("validity", &head, &rows));
    Some(out)
}
