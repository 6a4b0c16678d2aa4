//! The results site: a leaderboard per suite and generator version (runs of
//! different versions never in one table), rows ranked by pass^k with the
//! figures' own values, a report page per run and comparisons within a
//! leaderboard only.

use super::*;
use crate::metrics::Outcome;
use crate::metrics::tests::episode;

/// Episodes of `agent` on two tasks × 2 trials, passing `passes` of each task's trials.
fn episodes(agent: &str, passes: [u32; 2]) -> Vec<EpisodeResult> {
    let mut out = Vec::new();
    for (task, passes) in ["travel/x/001", "support/z/003"].into_iter().zip(passes) {
        for trial in 0..2u32 {
            let mut e = episode(task, trial, if trial < passes { Outcome::Passed } else { Outcome::Failed });
            e.agent = agent.to_owned();
            if agent == "solver" {
                e.cost_usd = Some(0.02);
            }
            out.push(e);
        }
    }
    out
}

fn run(id: &str, suite: &str, version: u32, agents: &[(&str, [u32; 2])]) -> SiteRun {
    let episodes: Vec<EpisodeResult> = agents.iter().flat_map(|(agent, passes)| episodes(agent, *passes)).collect();
    let figures =
        figures(id, "toolenv run", &episodes, 2, episodes.len() as u64, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap();
    SiteRun { figures, suite: suite.to_owned(), generator_version: version }
}

#[test]
fn each_suite_and_generator_version_has_its_own_leaderboard() {
    let runs = [
        run("run-0001", "paper", 0, &[("solver", [2, 2]), ("brittle", [1, 2])]),
        run("run-0002", "generated:7:20", 2, &[("solver", [2, 1])]),
        run("run-0003", "generated:7:20", 3, &[("solver", [0, 0])]),
        run("run-0004", "paper", 0, &[("naive", [2, 0])]),
    ];
    let pages = site(&runs);
    let paths: Vec<&str> = pages.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "index.html",
            "runs/run-0001.html",
            "runs/run-0002.html",
            "runs/run-0003.html",
            "runs/run-0004.html",
            "compare/run-0004-vs-run-0001.html"
        ],
        "a comparison only within a leaderboard"
    );
    for (page, run) in pages[1..5].iter().zip(&runs) {
        assert_eq!(page.html, render(std::slice::from_ref(&run.figures)), "the run's own report");
    }
    assert_eq!(pages[5].html, render(&[runs[3].figures.clone(), runs[0].figures.clone()]));

    let index = &pages[0].html;
    let options = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(index, options).expect("the index is well-formed XML");
    let boards: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("section")).collect();
    let keys: Vec<(&str, &str)> =
        boards.iter().map(|b| (b.attribute("data-suite").unwrap(), b.attribute("data-generator-version").unwrap())).collect();
    assert_eq!(keys, [("generated:7:20", "2"), ("generated:7:20", "3"), ("paper", "0")]);
    let rows = |board: &roxmltree::Node| -> Vec<(String, String)> {
        board
            .descendants()
            .filter(|n| n.has_tag_name("tr") && n.attribute("data-run").is_some())
            .map(|n| (n.attribute("data-run").unwrap().to_owned(), n.attribute("data-agent").unwrap().to_owned()))
            .collect()
    };
    assert_eq!(rows(&boards[0]), [("run-0002".to_owned(), "solver".to_owned())], "version 2 alone");
    assert_eq!(rows(&boards[1]), [("run-0003".to_owned(), "solver".to_owned())], "version 3 alone");
    // Ranked by pass^k (solver 1, naive 0.5, brittle 0.5 → then pass^1: brittle 0.75 before naive 0.5).
    let paper: Vec<(String, String)> = rows(&boards[2]);
    let expected = [("run-0001", "solver"), ("run-0001", "brittle"), ("run-0004", "naive")];
    assert_eq!(paper, expected.map(|(r, a)| (r.to_owned(), a.to_owned())));
    // Every rate is the figures' own value.
    for row in boards[2].descendants().filter(|n| n.has_tag_name("tr") && n.attribute("data-run").is_some()) {
        let run = runs.iter().find(|r| r.figures.run == row.attribute("data-run").unwrap()).unwrap();
        let agent = run.figures.report.agents.iter().find(|a| a.agent == row.attribute("data-agent").unwrap()).unwrap();
        for (field, rate) in [("pass_1", &agent.overall.pass_1), ("pass_k", &agent.overall.pass_k)] {
            let cell = row.children().find(|c| c.attribute("data-field") == Some(field)).unwrap();
            let shown: f64 = cell.attribute("data-value").unwrap().parse().unwrap();
            assert_eq!(Some(shown), rate.as_f64(), "{field} of {}", agent.agent);
        }
        let volume = agent.surface_volume.as_ref().map(|v| v.trapezoid);
        for (field, value) in [("volume", volume), ("cost", agent.usage.cost_per_100_episodes_usd)] {
            let cell = row.children().find(|c| c.attribute("data-field") == Some(field)).unwrap();
            let shown: Option<f64> = cell.attribute("data-value").map(|v| v.parse().unwrap());
            assert_eq!(shown, value, "{field} of {}", agent.agent);
        }
        assert_eq!(agent.usage.cost_per_100_episodes_usd.is_some(), agent.agent == "solver", "only the solver reported cost");
    }
    assert!(index.contains(r#"href="compare/run-0004-vs-run-0001.html""#) && index.contains(r#"href="runs/run-0003.html""#));
}

#[test]
fn run_ids_become_safe_file_names() {
    let pages = site(&[run("../evil<id>", "paper", 0, &[("solver", [2, 2])])]);
    assert_eq!(pages[1].path, "runs/___evil_id_.html");
    assert!(!pages[0].html.contains("<id>"), "escaped in the index");
}
