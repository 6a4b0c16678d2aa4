//! Text reports of a run, shaped like the paper's tables: reliability by
//! agent and ε (Tables 5–6), by λ (Figure 2), by domain (Table 7), fault
//! recovery (Table 8), fault-type ablation (Table 9) and the surface's
//! summary figures (Section 3.3).

use std::fmt::Write as _;

use crate::metrics::{self, Breakdown, EpisodeResult, InfraConvention, PassK};

/// Formats a pass^k as a percentage with its Wilson interval.
fn pct(pass: &PassK) -> String {
    match (pass.value, pass.ci) {
        (Some(value), Some(ci)) => format!("{:.1}% [{:.0}–{:.0}]", value.to_f64() * 100.0, ci.lower * 100.0, ci.upper * 100.0),
        (Some(value), None) => format!("{:.1}%", value.to_f64() * 100.0),
        (None, _) => "n/a".to_owned(),
    }
}

/// The report of a run's episodes, pass^k at `k` (the number of trials).
pub fn render(episodes: &[EpisodeResult], k: u32) -> Result<String, metrics::MetricsError> {
    let conv = InfraConvention::CountAsFailure;
    let mut out = String::new();
    let agents = metrics::breakdown(episodes, Breakdown::Agent, k, conv)?;
    let infra: u64 = agents.iter().map(|a| a.pass_k.infra_errors).sum();
    let _ = writeln!(out, "{} episodes, pass^{k} over tasks with 95% Wilson intervals; infrastructure errors: {infra}", episodes.len());

    for agent in &agents {
        let mine: Vec<&EpisodeResult> = episodes.iter().filter(|e| e.agent == agent.label).collect();
        let _ = writeln!(
            out,
            "\n== agent {} ({} episodes): pass^{k} {}, pass^1 {}",
            agent.label,
            agent.episodes,
            pct(&agent.pass_k),
            pct(&agent.pass_1)
        );
        for (title, by) in [("perturbation ε", Breakdown::Epsilon), ("fault level λ", Breakdown::Lambda), ("domain", Breakdown::Domain)] {
            let rows = metrics::breakdown(mine.iter().copied(), by, k, conv)?;
            if rows.len() < 2 && by != Breakdown::Domain {
                continue;
            }
            let _ = writeln!(out, "  by {title}:");
            let _ = writeln!(out, "    {:<12} {:>8}  {:<22} {:<22} {:>10}", "", "episodes", "pass^1", format!("pass^{k}"), "avg calls");
            for row in rows {
                let calls = row.mean_calls.map_or("-".to_owned(), |c| format!("{c:.1}"));
                let _ = writeln!(
                    out,
                    "    {:<12} {:>8}  {:<22} {:<22} {:>10}",
                    row.label,
                    row.episodes,
                    pct(&row.pass_1),
                    pct(&row.pass_k),
                    calls
                );
            }
        }
        let recovery = metrics::fault_recovery(mine.iter().copied());
        if recovery.injected > 0 {
            let rate = recovery.recovery_rate.value.map_or("n/a".to_owned(), |v| format!("{:.1}%", v * 100.0));
            let extra = recovery.extra_calls_per_fault.map_or("n/a".to_owned(), |v| format!("+{v:.2}"));
            let _ = writeln!(
                out,
                "  fault recovery: {} injected, {} encountered, {} recovered ({rate}), extra calls per fault {extra}",
                recovery.injected, recovery.encountered, recovery.recovered
            );
        }
        let profiles: Vec<&str> = mine.iter().map(|e| e.fault_profile.as_str()).collect();
        if profiles.contains(&"mixed") {
            let _ = writeln!(out, "  fault-type ablation (vs mixed):");
            for row in metrics::ablation(mine.iter().copied(), "mixed", conv) {
                let value = row.pass.rate.value.map_or("n/a".to_owned(), |v| format!("{:.2}%", v * 100.0));
                let delta = row.vs_baseline.map_or(String::new(), |d| format!("{:+.2}%", d * 100.0));
                let _ = writeln!(out, "    {:<24} {:>8} {:>8}", row.fault_profile, value, delta);
            }
        }
        let main_grid: Vec<&EpisodeResult> = mine.iter().copied().filter(|e| !is_ablation(&e.fault_profile)).collect();
        let surface = metrics::reliability_surface(main_grid.iter().copied(), &[k], conv)?;
        if surface.epsilons().len() * surface.lambdas().len() > 1 {
            if let Some(volume) = metrics::surface_volume(&surface) {
                let _ = writeln!(
                    out,
                    "  surface volume V = {:.3} (trapezoid over the measured grid; grid mean {:.3})",
                    volume.trapezoid, volume.grid_mean
                );
            }
            let relative = metrics::relative_reliability(&surface, k);
            let ratios = relative.fault.iter().map(|r| ("R_fault", "λ", r)).chain(relative.prompt.iter().map(|r| ("R_prompt", "ε", r)));
            for (name, axis, r) in ratios.filter(|(_, _, r)| r.level != 0.0) {
                let ratio = r.ratio.map_or("n/a".to_owned(), |v| format!("{:.3}", v.to_f64()));
                let _ = writeln!(out, "  {name}({axis} = {}) = {ratio}", r.level);
            }
        }
    }
    Ok(out)
}

/// Whether a profile name is one of the paper's single-fault ablations.
pub fn is_ablation(profile: &str) -> bool {
    matches!(profile, "timeout-only" | "rate-limit-only" | "partial-response-only" | "mixed")
}
