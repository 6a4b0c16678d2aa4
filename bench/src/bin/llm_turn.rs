//! toolenv's own CPU time per model turn of a built-in LLM agent: every
//! task of the suite played by `react` against the scripted
//! OpenAI-compatible endpoint on a loopback port (real HTTP, real parsing,
//! real gRPC to an embedded server), in each protocol variant. The process
//! CPU time (user + system, from /proc/self/stat) covers the agent loop,
//! its HTTP client, the toolenv server and the scripted endpoint too, so the
//! figure is an upper bound of toolenv's overhead; a real model's turn takes
//! 0.3–30 s. Target: ≤ 1 ms per turn.
//!
//! `cargo run --release -p toolenv-bench --bin toolenv-bench-llm [ROUNDS]`

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use toolenv_agents::llm::scripted::{Script, ScriptedEndpoint, Variant};
use toolenv_agents::llm::{Architecture, LlmAgent, LlmAgents, ModelEndpoint, RetryPolicy, Sampling, Tape, ToolChoice};
use toolenv_client::{Client, run_plan};
use toolenv_runs::Grid;

/// The process's CPU time so far (user + system), in clock ticks of 10 ms.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) in parentheses.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let server = toolenv_server::RunningServer::start(toolenv_server::Config::default()).await?;
    let client = Client::connect(&server.url()).await?;
    println!("toolenv CPU per model turn, react on every task against the scripted endpoint ({rounds} rounds)");
    println!("{:<14} {:>8} {:>8} {:>12} {:>14} {:>16}", "variant", "episodes", "turns", "wall s", "CPU ms", "CPU µs per turn");
    for variant in [Variant::Native, Variant::Fenced, Variant::Bare, Variant::ReactAction] {
        let (mut episodes, mut turns, mut cpu, mut wall) = (0u64, 0u64, Duration::ZERO, Duration::ZERO);
        for task in toolenv_domains::suite() {
            let calls = task.reference.iter().map(|c| (c.tool.to_owned(), c.arguments.clone())).collect();
            let endpoint = ScriptedEndpoint::start(Script::new(calls, variant)).await?;
            let agent = LlmAgent {
                architecture: Architecture::React,
                model: "scripted".into(),
                endpoint: ModelEndpoint::new(&endpoint.base_url(), None, RetryPolicy::default(), Tape::Off)?,
                sampling: Sampling::default(),
                tool_choice: ToolChoice::Omit,
                parallel_tool_calls: None,
                max_turns: 24,
                price: None,
            };
            let label = "react@scripted".to_owned();
            let agents = LlmAgents::new(BTreeMap::from([(label.clone(), agent)]));
            let grid = Grid { trials: rounds, time_scale: Some(0.0), ..Grid::single(vec![label]) };
            let plan = grid.plan([task.id.as_str()]);
            let (cpu_before, started) = (cpu_time(), Instant::now());
            let results = run_plan(&client, &plan, 8, &|label| agents.agent(label), |_, _, _| {}).await;
            cpu += cpu_time().saturating_sub(cpu_before);
            wall += started.elapsed();
            episodes += results.len() as u64;
            turns += results.iter().filter_map(|r| r.llm).map(|l| u64::from(l.model_turns)).sum::<u64>();
            if let Some(bad) = results.iter().find(|r| r.is_infra_error()) {
                return Err(format!("{}: {:?}", task.id, bad.outcome).into());
            }
        }
        let per_turn = cpu.as_secs_f64() * 1e6 / turns.max(1) as f64;
        println!(
            "{:<14} {:>8} {:>8} {:>12.2} {:>14} {:>16.0}",
            format!("{variant:?}"),
            episodes,
            turns,
            wall.as_secs_f64(),
            cpu.as_millis(),
            per_turn
        );
        println!("  target ≤ 1000 µs per turn: {}", if per_turn <= 1000.0 { "met" } else { "MISSED" });
    }
    server.shutdown().await?;
    Ok(())
}
