//! The text report, `report --json` and the HTML page of one real run agree
//! on every number: a run with faults (λ), perturbations (ε), MAS-FIRE
//! profiles and one trial.

use crate::support::start;
use serde_json::Value;
use toolenv_agents::Builtin;
use toolenv_client::run_plan;
use toolenv_core::masfire::MasProfile;
use toolenv_runs::metrics::{InfraConvention, NO_LEVEL, Population};
use toolenv_runs::{Grid, html, report};

/// A percentage as the text report writes it (`85.0%`).
fn pct(value: &Value) -> String {
    format!("{:.1}%", ratio(value).expect("a rate") * 100.0)
}

/// An exact ratio `{num, den}` or a plain number, as f64.
fn ratio(value: &Value) -> Option<f64> {
    match value {
        Value::Object(map) => Some(map.get("num")?.as_f64()? / map.get("den")?.as_f64()?),
        other => other.as_f64(),
    }
}

/// Every `data-ptr` number of the page against the figures; returns how many it checked.
fn html_numbers_match(page: &str, figures: &Value) -> usize {
    let mut checked = 0;
    for tag in page.split("data-ptr=\"").skip(1) {
        let (ptr, rest) = tag.split_once('"').unwrap();
        let (attrs, rest) = rest.split_once('>').unwrap();
        let shown = rest.split('<').next().unwrap();
        let target = figures.pointer(ptr);
        if shown == "n/a" {
            assert!(target.is_none_or(Value::is_null), "{ptr}: the page says n/a, the JSON {target:?}");
            continue;
        }
        let Some(mut value) = target.and_then(ratio) else { panic!("{ptr}: the page says {shown}, the JSON {target:?}") };
        if let Some(minus) = attrs.split("data-minus=\"").nth(1).and_then(|a| a.split('"').next()) {
            value -= figures.pointer(minus).and_then(ratio).unwrap();
        }
        let scale: f64 = attrs.split("data-scale=\"").nth(1).and_then(|a| a.split('"').next()).map_or(1.0, |s| s.parse().unwrap());
        let digits: String = shown.chars().filter(|c| c.is_ascii_digit() || matches!(c, '.' | '-')).collect();
        let decimals = digits.split_once('.').map_or(0, |(_, d)| d.len() as i32);
        let number: f64 = digits.parse().unwrap_or_else(|_| panic!("{ptr}: no number in {shown:?}"));
        assert!((number - value * scale).abs() <= 0.5 * 10f64.powi(-decimals) + 1e-9, "{ptr}: the page says {shown}, the JSON {value}");
        checked += 1;
    }
    checked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_json_and_html_give_the_same_figures_for_a_run_with_faults_perturbations_and_mas_fire() {
    let (server, client) = start().await;
    let mas = MasProfile::presets()[0].label();
    let grid = Grid {
        epsilons: vec![0.0, 0.2],
        fault_profiles: vec!["0.0".into(), "0.2".into(), mas.clone()],
        seed: 5,
        time_scale: Some(0.0),
        ..Grid::single(vec![Builtin::TeamClosedLoop.name().to_owned(), Builtin::ReferenceNoRetry.name().to_owned()])
    };
    grid.validate(|_| false).unwrap();
    let plan = grid.plan(toolenv_domains::suite().iter().map(|t| t.id.as_str()));
    let results = run_plan(&client, &plan, 16, &toolenv_agents::builtin::agent, |_, _, _| {}).await;
    assert!(results.iter().all(|r| !r.is_infra_error()), "{:?}", results.iter().find(|r| r.is_infra_error()));
    server.shutdown().await.unwrap();

    let (conv, population) = (InfraConvention::CountAsFailure, Population::AllEpisodes);
    let text = report::render(&results, 1, conv, population).unwrap();
    let figures = html::figures("run-0001", "test", &results, 1, results.len() as u64, conv, population).unwrap();
    let page = html::render(std::slice::from_ref(&figures));
    let data = serde_json::json!({ "runs": [figures] });
    let json = serde_json::to_value(report::summary(&results, 1, results.len() as u64, conv, population).unwrap()).unwrap();
    assert_eq!(json, data["runs"][0]["report"], "the page's figures are `report --json`'s");
    assert!(!json.to_string().contains("NaN") && !text.contains("NaN"), "no level is written NaN");

    let agents = json["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    for (a, agent) in agents.iter().enumerate() {
        let name = agent["agent"].as_str().unwrap();
        let overall = &agent["overall"];
        let head = format!("== agent {name} ({} episodes): pass^1 {}", overall["episodes"], pct(&overall["pass_1"]["value"]));
        assert!(text.contains(&head), "{head}\n{text}");
        // Every row of every grouping, with its label and pass^1.
        for by in ["by_epsilon", "by_lambda", "by_domain"] {
            for row in agent[by].as_array().unwrap() {
                let label = row["label"].as_str().unwrap();
                let line = format!("    {label:<12} {:>8}  {}", row["episodes"].as_u64().unwrap(), pct(&row["pass_1"]["value"]));
                assert!(text.contains(&line), "{by} {line:?} not in\n{text}");
            }
        }
        // The MAS-FIRE profile has no λ: one row says so, with no level.
        let no_level: Vec<_> = agent["by_lambda"].as_array().unwrap().iter().filter(|r| r["label"] == NO_LEVEL).collect();
        assert_eq!((no_level.len(), &no_level[0]["level"]), (1, &Value::Null), "{}", agent["by_lambda"]);
        // One surface volume, over the main grid only (2 ε × 2 λ cells).
        let volume = agent["surface_volume"]["trapezoid"].as_f64().expect("a volume");
        assert!(text.contains(&format!("surface volume V = {volume:.3} ")), "V = {volume:.3} not in\n{text}");
        assert_eq!(agent["surface_volume"]["points"], 4, "k = 1 over 2 ε × 2 λ");
        let shown = page.split(&format!(r#"data-ptr="/runs/0/report/agents/{a}/surface_volume/trapezoid">"#)).nth(1);
        assert_eq!(shown.and_then(|s| s.split('<').next()), Some(format!("{volume:.3}").as_str()));
        // RS_f of the MAS-FIRE profile, for the team that ran it.
        for score in agent["mas_fire"]["robustness"].as_array().into_iter().flatten() {
            let rs = score["score"].as_object().map_or("n/a".to_owned(), |_| pct(&score["score"]));
            let line = format!("    {:<48} {:>6} {rs:>8}", score["fault_profile"].as_str().unwrap(), score["tasks"].as_u64().unwrap());
            assert!(text.contains(&line), "{line:?} not in\n{text}");
        }
    }
    assert!(agents.iter().any(|a| a["mas_fire"]["robustness"][0]["fault_profile"] == mas.as_str()), "{json}");
    let checked = html_numbers_match(&page, &data);
    assert!(checked > 100, "only {checked} numbers on the page");
}
