//! The page is well-formed XML (so the SVG is too), has its sections, and
//! every number on it is the value its `data-ptr` names in the figures.

use serde_json::Value;
use toolenv_core::chaos::FaultKind;

use super::*;
use crate::{
    metrics::tests::episode,
    metrics::{EpisodeOutcome, KindCounts, TokenUsage},
};

/// A grid of two agents over ε {0, 0.1} × λ {0, 0.2}, 3 trials, two
/// domains, plus an ablation at λ 0.2, with faults, usage and an infeasible
/// episode; the second agent's label needs escaping.
fn grid() -> Vec<EpisodeResult> {
    let mut out = Vec::new();
    for (agent, skill) in [("reference", 3u32), ("naive <b>&\"x'", 1)] {
        for (epsilon, lambda, profile) in
            [(0.0, 0.0, "0.0"), (0.1, 0.0, "0.0"), (0.0, 0.2, "0.2"), (0.1, 0.2, "0.2"), (0.2, 0.2, "timeout-only"), (0.2, 0.2, "mixed")]
        {
            for (t, task) in ["travel/x/001", "travel/y/002", "support/z/003"].into_iter().enumerate() {
                for trial in 0..3u32 {
                    let passes = (trial + t as u32) % 4 < skill + u32::from(lambda == 0.0);
                    let mut e = episode(task, trial, if passes { EpisodeOutcome::Passed } else { EpisodeOutcome::Failed });
                    e.agent = agent.to_owned();
                    e.epsilon = epsilon;
                    e.lambda = lambda;
                    e.fault_profile = profile.to_owned();
                    e.calls = 3 + trial + t as u32;
                    e.feasible = Some(!(trial == 2 && t == 2 && lambda > 0.0));
                    if lambda > 0.0 {
                        e.fault_stats = metrics::FaultCounts { injected: 2, encountered: 2, recovered: 1 + trial % 2, extra_calls: 2 };
                        let recovered = 1 + trial % 2;
                        let counts = KindCounts {
                            hits: 2,
                            injected: 2,
                            encountered: 2,
                            retried: recovered,
                            recovered,
                            extra_calls: 2,
                            answered_after: recovered,
                        };
                        e.faults_by_kind.insert(if trial == 0 { FaultKind::SoftRateLimit } else { FaultKind::TransientTimeout }, counts);
                    }
                    if agent == "reference" {
                        e.tokens = Some(TokenUsage { input: 1000 + u64::from(trial), output: 200 });
                        e.cost_usd = Some(0.0125);
                    }
                    out.push(e);
                }
            }
        }
    }
    out
}

fn figures_of(run: &str, episodes: &[EpisodeResult]) -> RunFigures {
    figures(
        run,
        "toolenv run --grid paper <&>",
        episodes,
        3,
        episodes.len() as u64 + 2,
        InfraConvention::CountAsFailure,
        Population::AllEpisodes,
    )
    .unwrap()
}

/// The number a JSON value stands for: a number, or an exact ratio {num, den}.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::Object(map) => Some(map.get("num")?.as_f64()? / map.get("den")?.as_f64()?),
        _ => None,
    }
}

/// The number written in a text such as `83.3%`, `$0.0125`, `+1.25 pp`,
/// with its count of decimals.
fn written(text: &str) -> (f64, i32) {
    let digits: String = text.chars().filter(|c| c.is_ascii_digit() || matches!(c, '.' | '-')).collect();
    let decimals = digits.split_once('.').map_or(0, |(_, d)| d.len() as i32);
    (digits.parse().unwrap_or_else(|_| panic!("no number in {text:?}")), decimals)
}

/// Checks every `data-ptr` of the page against `data`; returns how many numbers it checked.
fn check_numbers(html: &str, data: &Value) -> usize {
    let doc = roxmltree::Document::parse_with_options(html, roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() })
        .unwrap_or_else(|e| panic!("the page is not well-formed: {e}"));
    let mut checked = 0;
    for node in doc.descendants().filter(|n| n.has_attribute("data-ptr")) {
        let ptr = node.attribute("data-ptr").unwrap();
        let text: String = node.descendants().filter(|n| n.is_text()).map(|n| n.text().unwrap()).collect();
        if text == "n/a" {
            // The value is null: the pointer resolves (never into a null object's missing field).
            let target = data.pointer(ptr).unwrap_or_else(|| panic!("{ptr}: the page says n/a, and the pointer does not resolve"));
            assert!(target.is_null(), "{ptr}: the page says n/a, the figures say {target}");
            continue;
        }
        let target = data.pointer(ptr).unwrap_or_else(|| panic!("{ptr} is not in the figures"));
        let mut value = number(target).unwrap_or_else(|| panic!("{ptr} is not a number: {target}"));
        if let Some(minus) = node.attribute("data-minus") {
            value -= number(data.pointer(minus).unwrap_or_else(|| panic!("{minus} is not in the figures"))).unwrap();
        }
        let scale: f64 = node.attribute("data-scale").map_or(1.0, |s| s.parse().unwrap());
        let (shown, decimals) = written(&text);
        let tolerance = 0.5 * 10f64.powi(-decimals) + 1e-9;
        assert!((shown - value * scale).abs() <= tolerance, "{ptr}: the page says {text}, the figures say {}", value * scale);
        checked += 1;
    }
    // No figure is written without its pointer: every decimal percentage is
    // inside an element that has one (hover titles repeat them).
    for text in doc.descendants().filter(|n| n.is_text()) {
        let value = text.text().unwrap_or_default();
        if has_decimal_percentage(value) {
            let tied = text.ancestors().any(|a| a.has_attribute("data-ptr") || a.has_tag_name("title") || a.has_tag_name("style"));
            assert!(tied, "{value:?} is written without the figure it comes from");
        }
    }
    checked
}

/// Whether a text has a number like `12.5%` in it.
fn has_decimal_percentage(text: &str) -> bool {
    text.split('%').rev().skip(1).any(|before| {
        let number: String = before.chars().rev().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        number.contains('.') && number.starts_with(|c: char| c.is_ascii_digit())
    })
}

fn text_of(html: &str, id: &str) -> String {
    let doc = roxmltree::Document::parse_with_options(html, roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() }).unwrap();
    let node = doc.descendants().find(|n| n.attribute("id") == Some(id)).unwrap_or_else(|| panic!("no element #{id}"));
    node.descendants().filter(|n| n.is_text()).map(|n| n.text().unwrap()).collect()
}

#[test]
fn every_number_on_the_page_is_the_figure_it_points_to() {
    let episodes = grid();
    let runs = [figures_of("run-0001", &episodes)];
    let html = render(&runs);
    let data = serde_json::json!({ "runs": runs });
    assert!(has_decimal_percentage("pass^2 12.5% [3–40]") && !has_decimal_percentage("(95% Wilson intervals)"));
    let checked = check_numbers(&html, &data);
    assert!(checked > 200, "only {checked} numbers on the page");

    // Key cells say what the text report says.
    let text = crate::report::render(&episodes, 3, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap();
    let pass_k = text_of(&html, "r0-a1-pass-k");
    let pass_k = pass_k.split(' ').next().unwrap();
    assert!(text.contains(&format!("== agent reference (54 episodes): pass^3 {pass_k}")), "{pass_k} not in\n{text}");
    assert_eq!(text_of(&html, "r0-planned"), (episodes.len() + 2).to_string());
    assert_eq!(text_of(&html, "r0-infeasible"), "8");
    assert!(text.contains("infeasible episodes (no agent could pass): 8"), "{text}");

    // Each section is there, with its figures.
    for section in ["overview", "surface", "pass-k", "domains", "recovery", "ablation", "usage", "validity"] {
        assert!(html.contains(&format!(r#"<section id="{section}">"#)), "no section {section}");
    }
    assert!(!html.contains(r#"<section id="comparison">"#), "one run has nothing to compare");
    assert_eq!(html.matches(r#"class="heatmap""#).count(), 4, "pass^k and pass^1 maps for each of two agents");
    assert_eq!(html.matches(r#"class="lines""#).count(), 2);
    // Nothing from outside: no script, no external reference.
    for banned in ["<script", "src=", "href=\"http", "@import", "url("] {
        assert!(!html.contains(banned), "the page has {banned}");
    }
}

#[test]
fn text_is_escaped() {
    let html = render(&[figures_of("run-<1>", &grid())]);
    assert!(html.contains("naive &lt;b&gt;&amp;&quot;x&#39;"), "the label is escaped");
    assert!(!html.contains("<b>&"), "no raw markup from data");
    assert!(html.contains("toolenv run --grid paper &lt;&amp;&gt;"));
    assert!(html.contains("run-&lt;1&gt;"));
}

#[test]
fn two_runs_side_by_side_with_their_differences() {
    let first = grid();
    // The second run: the reference agent passes everything.
    let mut second = grid();
    for e in second.iter_mut().filter(|e| e.agent == "reference") {
        e.outcome = EpisodeOutcome::Passed;
    }
    let runs = [figures_of("run-0001", &first), figures_of("run-0002", &second)];
    let html = render(&runs);
    let data = serde_json::json!({ "runs": runs });
    let checked = check_numbers(&html, &data);
    assert!(checked > 400, "only {checked} numbers on the page");
    assert!(html.contains(r#"<section id="comparison">"#));
    assert!(html.contains("grid-template-columns: repeat(2, minmax(0, 1fr));"));
    // reference is the second agent by name order ("naive …" < "reference").
    assert_eq!(text_of(&html, "r1-a1-pass-k").split(' ').next().unwrap(), "100.0%");
    let before = runs[0].report.agents[1].overall.pass_k.as_f64().unwrap();
    assert_eq!(text_of(&html, "r1-a1-delta-pass_k"), format!("{:+.2} pp", (1.0 - before) * 100.0));
}

/// The figures of the grid's episodes of the first `k` trials, as a run of k trials.
fn figures_with_trials(run: &str, episodes: &[EpisodeResult], k: u32) -> RunFigures {
    let mine: Vec<EpisodeResult> = episodes.iter().filter(|e| e.trial < k).cloned().collect();
    let planned = mine.len() as u64;
    figures(run, "", &mine, k, planned, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap()
}

/// The k of the pass^k a pointer of the page names: pass^1, the run's pass^k, or a curve's pass^j.
fn k_of(ptr: &str, data: &Value) -> u32 {
    let parts: Vec<&str> = ptr.split('/').collect();
    match parts.as_slice() {
        ["", "runs", run, "report", "agents", _, "overall", figure, "value"] => match *figure {
            "pass_1" => 1,
            "pass_k" => data.pointer(&format!("/runs/{run}/report/k")).and_then(Value::as_u64).unwrap() as u32,
            other => panic!("{ptr}: not a pass^k ({other})"),
        },
        ["", "runs", _, "curves", _, "overall", j, "value"] => j.parse::<u32>().unwrap() + 1,
        _ => panic!("{ptr}: not an overall pass^k"),
    }
}

/// Checks the page's numbers, and that every difference on it is of two figures of one k; returns how many.
fn differences_of_one_k(html: &str, data: &Value) -> usize {
    check_numbers(html, data);
    let doc = roxmltree::Document::parse_with_options(html, roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() }).unwrap();
    let mut differences = 0;
    for node in doc.descendants().filter(|n| n.has_attribute("data-minus")) {
        let (ptr, minus) = (node.attribute("data-ptr").unwrap(), node.attribute("data-minus").unwrap());
        assert_eq!(k_of(ptr, data), k_of(minus, data), "{ptr} − {minus}: a difference of pass^k of different k");
        differences += 1;
    }
    differences
}

#[test]
fn runs_of_different_k_are_never_subtracted_across_k() {
    let episodes = grid();
    // One trial against three: pass^1 is compared, pass^3 has no pass^3 to be compared with.
    let runs = [figures_with_trials("run-0001", &episodes, 1), figures_with_trials("run-0002", &episodes, 3)];
    let html = render(&runs);
    let data = serde_json::json!({ "runs": runs });
    assert_eq!(differences_of_one_k(&html, &data), 2, "pass^1 of each agent");
    for a in 0..2 {
        assert_eq!(text_of(&html, &format!("r1-a{a}-delta-pass_k")), "n/a (k differs: 1 vs 3)");
        assert!(text_of(&html, &format!("r1-a{a}-delta-pass_1")).ends_with(" pp"));
    }
    assert!(text_of(&html, "r1-k-differs").starts_with("k differs: 1 vs 3"));

    // Two trials against three, either way round: pass^k is compared at k = 2, each run's from its own episodes.
    for (first, second) in [(2, 3), (3, 2)] {
        let runs = [figures_with_trials("run-0001", &episodes, first), figures_with_trials("run-0002", &episodes, second)];
        let html = render(&runs);
        let data = serde_json::json!({ "runs": runs });
        assert_eq!(differences_of_one_k(&html, &data), 4, "pass^1 and pass^2 of each agent");
        assert!(html.contains("<th>pass^2</th>"), "the common k is in the heading");
        assert!(text_of(&html, "r1-k-differs").starts_with(&format!("k differs: {first} vs {second}")));
        for (a, agent) in runs[1].report.agents.iter().enumerate() {
            let pass_2 = |k: u32| {
                let mine: Vec<EpisodeResult> = episodes.iter().filter(|e| e.trial < k && e.agent == agent.agent).cloned().collect();
                metrics::pass_hat_k(mine.iter(), 2, InfraConvention::CountAsFailure).unwrap().as_f64().unwrap()
            };
            let expected = (pass_2(second) - pass_2(first)) * 100.0;
            let shown = text_of(&html, &format!("r1-a{a}-delta-pass_k"));
            assert_eq!(shown, format!("{expected:+.2} pp"), "{}", agent.agent);
        }
    }

    // Runs of one k are compared at it, as before.
    let runs = [figures_with_trials("run-0001", &episodes, 3), figures_with_trials("run-0002", &episodes, 3)];
    let html = render(&runs);
    assert_eq!(differences_of_one_k(&html, &serde_json::json!({ "runs": runs })), 4);
    assert!(html.contains("<th>pass^3</th>") && !html.contains("k differs"));
}

#[test]
fn a_single_configuration_has_no_surface_and_one_point_curves() {
    let episodes = crate::metrics::tests::task("travel/x/001", 1, 1);
    let runs = [figures("run-0009", "", &episodes, 1, 1, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap()];
    let html = render(&runs);
    assert!(check_numbers(&html, &serde_json::json!({ "runs": runs })) > 5);
    for absent in ["surface", "recovery", "ablation", "usage"] {
        assert!(!html.contains(&format!(r#"<section id="{absent}">"#)), "{absent} has nothing to show");
    }
    assert_eq!(text_of(&html, "r0-a0-pass-1").split(' ').next().unwrap(), "100.0%");
}

#[test]
fn a_run_with_no_episode_recorded_still_renders() {
    let runs = [figures("run-0010", "interrupted", &[], 2, 8, InfraConvention::Exclude, Population::FeasibleOnly).unwrap()];
    let html = render(&runs);
    check_numbers(&html, &serde_json::json!({ "runs": runs }));
    assert_eq!(text_of(&html, "r0-planned"), "8");
    assert_eq!(text_of(&html, "r0-recorded"), "0");
    assert!(html.contains("Planned but not recorded: <span class=\"num\" data-ptr=\"/runs/0/report/counts/not_recorded\">8</span>"));
    assert!(html.contains("left out of every rate") && html.contains("feasible episodes only"));
}

#[test]
fn conversational_figures_have_their_section_and_agree_with_the_text_report() {
    let suite: toolenv_domains::generate::Suite = "conversational:2026:2".parse().unwrap();
    let mut episodes = Vec::new();
    for task in suite.tasks(None, Some(1)) {
        let withholds = !task.conversation.as_ref().unwrap().withheld.is_empty();
        let original = toolenv_domains::generate::conversation::generated_id(&task.id).unwrap();
        for trial in 0..3u32 {
            let mut e = episode(&task.id, trial, if withholds && trial == 2 { EpisodeOutcome::Failed } else { EpisodeOutcome::Passed });
            e.user_turns = u32::from(withholds || trial == 0);
            episodes.push(e);
            episodes.push(episode(&original, trial, EpisodeOutcome::Passed));
        }
    }
    let run = figures_of("run-1", &episodes);
    let html = render(std::slice::from_ref(&run));
    let data = serde_json::json!({ "runs": [run] });
    assert!(html.contains(r#"<section id="conversation">"#));
    assert!(check_numbers(&html, &data) > 20);
    let c = data.pointer("/runs/0/report/agents/0/conversation").expect("conversation figures");
    // 4 domains: one task each withholding (asked 3 of 3), one in full (asked 1 of 3).
    assert_eq!((c["recall"]["successes"].as_u64(), c["recall"]["total"].as_u64()), (Some(12), Some(12)));
    assert_eq!((c["precision"]["successes"].as_u64(), c["precision"]["total"].as_u64()), (Some(8), Some(12)));
    let text = crate::report::render(&episodes, 3, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap();
    assert!(text.contains("clarification recall 100.0% (12/12)") && text.contains("precision 66.7% (8/12)"), "{text}");
    assert!(text.contains("given in full"), "{text}");
}

#[test]
fn answers_an_llm_judge_ruled_on_have_their_section_and_agree_with_the_text_report() {
    let mut episodes = grid();
    // Three episodes of the first agent ruled on by one judge, one by another.
    for (e, judge) in episodes.iter_mut().zip(["model a", "model a", "model b", "model a"]) {
        e.answer_judge = Some(judge.to_owned());
    }
    let run = figures_of("run-1", &episodes);
    let html = render(std::slice::from_ref(&run));
    let data = serde_json::json!({ "runs": [run] });
    assert!(html.contains(r#"<section id="answer-judges">"#));
    check_numbers(&html, &data);
    let agent = episodes[0].agent.as_str();
    let judges = data.pointer("/runs/0/report/agents").unwrap().as_array().unwrap().iter().find(|a| a["agent"] == agent).unwrap();
    assert_eq!(judges["answer_judges"], serde_json::json!({"model a": 3, "model b": 1}));
    let text = crate::report::render(&episodes, 3, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap();
    assert!(text.contains("answers judged by model a: 3 episodes") && text.contains("answers judged by model b: 1 episode "), "{text}");
    // Without a judge: no section, no line, no JSON field.
    let plain = figures_of("run-2", &grid());
    assert!(!render(std::slice::from_ref(&plain)).contains(r#"id="answer-judges""#));
    assert!(serde_json::to_value(&plain).unwrap().pointer("/report/agents/0/answer_judges").is_none());
}
