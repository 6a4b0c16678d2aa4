//! The results site: a leaderboard per suite, generator version and k (runs
//! of different versions, or of different k, never in one table), rows ranked by pass^k with the
//! figures' own values, a report page per run and comparisons within a
//! leaderboard only.

use super::*;
use crate::metrics::EpisodeOutcome;
use crate::metrics::tests::episode;

/// Episodes of `agent` on two tasks × 2 trials, passing `passes` of each task's trials.
fn episodes(agent: &str, passes: [u32; 2]) -> Vec<EpisodeResult> {
    let mut out = Vec::new();
    for (task, passes) in ["travel/x/001", "support/z/003"].into_iter().zip(passes) {
        for trial in 0..2u32 {
            let mut e = episode(task, trial, if trial < passes { EpisodeOutcome::Passed } else { EpisodeOutcome::Failed });
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
    run_k(id, suite, version, 2, agents)
}

/// A run whose figures are computed with `k` (its episodes have two trials per task).
fn run_k(id: &str, suite: &str, version: u32, k: u32, agents: &[(&str, [u32; 2])]) -> SiteRun {
    let episodes: Vec<EpisodeResult> = agents.iter().flat_map(|(agent, passes)| episodes(agent, *passes)).collect();
    let figures =
        figures(id, "toolenv run", &episodes, k, episodes.len() as u64, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap();
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

/// The leaderboard's cells of a field, row by row: (agent, text shown).
fn column(index: &str, field: &str) -> Vec<(String, String)> {
    let options = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(index, options).expect("the index is well-formed XML");
    doc.descendants()
        .filter(|n| n.has_tag_name("tr") && n.attribute("data-run").is_some())
        .map(|row| {
            let cell = row.children().find(|c| c.attribute("data-field") == Some(field)).expect("the field's cell");
            let text: String = cell.descendants().filter(|n| n.is_text()).filter_map(|n| n.text()).collect();
            (row.attribute("data-agent").unwrap().to_owned(), text)
        })
        .collect()
}

#[test]
fn equal_figures_share_a_rank() {
    // brittle and naive tie on pass^2 (0.5) and pass^1 (0.75): both are second, and idle is fourth.
    let runs = [run("run-0001", "paper", 0, &[("solver", [2, 2]), ("brittle", [1, 2]), ("naive", [2, 1]), ("idle", [0, 0])])];
    let index = &site(&runs)[0].html;
    let ranks = column(index, "rank");
    let expected = [("solver", "1"), ("brittle", "2"), ("naive", "2"), ("idle", "4")];
    assert_eq!(ranks, expected.map(|(a, r)| (a.to_owned(), r.to_owned())));
    assert!(column(index, "k").iter().all(|(_, k)| k == "2"));
    assert!(column(index, "episodes").iter().all(|(_, n)| n == "4"));
    // Absent figures say n/a, never 0: no surface with a single cell, no cost but the solver's.
    assert!(column(index, "volume").iter().all(|(_, v)| v == "n/a"));
    let cost = column(index, "cost");
    assert!(cost.iter().all(|(agent, c)| if agent == "solver" { c == "$2.00" } else { c == "n/a" }), "{cost:?}");
}

#[test]
fn the_index_counts_in_the_singular_where_it_is_one() {
    let one = site(&[run("run-0001", "paper", 0, &[("solver", [2, 2])])]);
    assert!(one[0].html.contains("1 run in 1 leaderboard."), "one run");
    let two = site(&[run("run-0001", "paper", 0, &[("solver", [2, 2])]), run("run-0002", "paper", 0, &[("naive", [2, 0])])]);
    assert!(two[0].html.contains("2 runs in 1 leaderboard."), "two runs, one leaderboard");
}

#[test]
fn pass_k_of_different_k_is_never_ranked_together() {
    // brittle's pass^1 (0.75) is no better than solver's pass^2 would be: different figures, different leaderboards.
    let runs = [run_k("run-0001", "paper", 0, 2, &[("solver", [2, 1])]), run_k("run-0002", "paper", 0, 1, &[("brittle", [1, 2])])];
    let pages = site(&runs);
    let paths: Vec<&str> = pages.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["index.html", "runs/run-0001.html", "runs/run-0002.html"], "no comparison across k");
    let options = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(&pages[0].html, options).expect("the index is well-formed XML");
    let boards: Vec<(&str, &str, Vec<&str>)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("section"))
        .map(|b| {
            let rows = b.descendants().filter_map(|n| n.attribute("data-run")).collect();
            (b.attribute("data-suite").unwrap(), b.attribute("data-k").unwrap(), rows)
        })
        .collect();
    assert_eq!(boards, [("paper", "1", vec!["run-0002"]), ("paper", "2", vec!["run-0001"])]);
    assert!(pages[0].html.contains("2 runs in 2 leaderboards.") && pages[0].html.contains("generator version 0, k = 2"));
}

#[test]
fn each_leaderboard_says_how_infrastructure_errors_were_counted() {
    let counted = site(&[run("run-0001", "paper", 0, &[("solver", [2, 2])])]);
    assert!(counted[0].html.contains(r#"data-convention="count_as_failure""#) && counted[0].html.contains("count as failed trials"));
    let mut excluded = run("run-0001", "paper", 0, &[("solver", [2, 2])]);
    let episodes = episodes("solver", [2, 2]);
    excluded.figures = figures("run-0001", "toolenv run", &episodes, 2, 4, InfraConvention::Exclude, Population::AllEpisodes).unwrap();
    let index = &site(&[excluded])[0].html;
    assert!(index.contains(r#"data-convention="exclude""#) && index.contains("left out of the rates (--exclude-infra-errors)"), "{index}");
}
