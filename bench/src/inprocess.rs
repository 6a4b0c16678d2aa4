//! Phase 1, in-process: the pure core (`toolenv-domains`), JSON text in,
//! JSON text out. Tool calls of each domain with and without chaos
//! decisions, creating and finishing an episode, where the time goes, and
//! bytes per live episode (from `toolenv-bench-alloc`); and the bare loops
//! of `profile` for a profiler.

use std::process::Command;

use toolenv::pb;
use toolenv_bench::{CallCase, Timing, call_cases, time_batched};
use toolenv_domains::Finish;

use crate::{Error, Settings, USAGE, target, us};

/// `profile WHAT NAME [N]`: a bare loop for a profiler. Setup (cloning the
/// prepared episodes) happens before the loop, so the loop is the operation.
pub(crate) fn profile(args: &[String]) -> Result<(), Error> {
    let (Some(what), Some(name)) = (args.first(), args.get(1)) else { return Err(USAGE.into()) };
    let n: usize = args.get(2).map(|a| a.parse()).transpose()?.unwrap_or(10_000);
    let task = || toolenv_domains::task(name).ok_or_else(|| format!("unknown task '{name}'"));
    let mut out = 0usize;
    match what.as_str() {
        "call" | "call-chaos" => {
            let case = call_cases().into_iter().find(|c| &c.name == name).ok_or_else(|| format!("unknown case '{name}'"))?;
            let prepared = case.prepared(what == "call-chaos");
            let mut episodes: Vec<_> = (0..n).map(|_| prepared.clone()).collect();
            for episode in &mut episodes {
                out += case.call(episode).len();
            }
        }
        "create" => {
            let task = task()?;
            let episodes: Vec<_> = (0..n).map(|i| toolenv_bench::create(task, i as u64, true)).collect();
            out = episodes.len();
        }
        "finish" => {
            let task = task()?;
            let played = toolenv_bench::played(task, 7, false);
            let mut episodes: Vec<_> = (0..n).map(|_| played.clone()).collect();
            for episode in &mut episodes {
                out += usize::from(episode.finish().passed);
            }
        }
        _ => return Err(USAGE.into()),
    }
    println!("{what} {name} x{n}: {out}");
    Ok(())
}

fn time_call(case: &CallCase, chaos: bool, s: &Settings) -> Timing {
    let prepared = case.prepared(chaos);
    time_batched(
        || prepared.clone(),
        |mut episode| {
            let text = case.call(&mut episode);
            (episode, text)
        },
        64,
        s.samples,
        s.budget,
    )
}

pub(crate) fn run(s: &Settings) -> Result<Vec<String>, Error> {
    let mut summary = Vec::new();
    println!("\n== 1. In-process: the pure core (toolenv-domains), JSON text in, JSON text out ==");
    println!("Median of {} samples, each the mean over a batch of 64 calls on fresh copies of the episode", s.samples);
    println!("(p10–p90 of the samples in brackets). With chaos: λ = 0.2, a seed whose draws meet no fault.\n");
    println!("{:<18} {:<22} {:>26} {:>26}", "call", "tool", "no chaos", "chaos λ=0.2 (decision)");
    let mut worst_call: (f64, String) = (0.0, String::new());
    let mut all_medians = Vec::new();
    for case in call_cases() {
        let plain = time_call(&case, false, s);
        let chaos = time_call(&case, true, s);
        let show = |t: Timing| format!("{} [{}–{}]", us(t.median_ns), us(t.p10_ns), us(t.p90_ns));
        println!("{:<18} {:<22} {:>26} {:>26}", case.name, case.tool, show(plain), show(chaos));
        for (t, label) in [(plain, "no chaos"), (chaos, "chaos")] {
            all_medians.push(t.median_ns);
            if t.median_ns > worst_call.0 {
                worst_call = (t.median_ns, format!("{} {label}", case.name));
            }
        }
    }
    all_medians.sort_by(f64::total_cmp);
    let median_of_medians = all_medians[all_medians.len() / 2];
    summary.push(target(
        &format!("in-process tool call, median (worst: {})", worst_call.1),
        us(worst_call.0),
        "≤ 1 µs".into(),
        worst_call.0 <= 1000.0,
    ));
    summary.push(target(
        "in-process tool call, median of the 16 cases",
        us(median_of_medians),
        "≤ 1 µs".into(),
        median_of_medians <= 1000.0,
    ));

    println!("\nCreating and finishing an episode, per suite task (median per episode):");
    println!("  create: Episode::new (+ Chaos::new of the λ = 0.2 preset and with_chaos); finish: oracle, diff, state hashes.");
    println!("  The wire columns are the server's conversions around the core (tool schemas of the CreateEpisode");
    println!("  reply; the Verdict message), shown apart because they are not part of the core.\n");
    println!(
        "{:<32} {:>10} {:>12} {:>10} {:>14} {:>13} {:>13}",
        "task", "create", "create λ=.2", "finish", "create+finish", "wire create", "wire verdict"
    );
    let mut worst = (0.0f64, String::new());
    let mut sums = Vec::new();
    for task in toolenv_domains::suite() {
        let create = time_batched(|| (), |()| toolenv_bench::create(task, 7, false), 64, s.samples, s.budget);
        let create_chaos = time_batched(|| (), |()| toolenv_bench::create(task, 7, true), 64, s.samples, s.budget);
        let played = toolenv_bench::played(task, 7, false);
        let finish = time_batched(
            || played.clone(),
            |mut episode| {
                episode.finish();
                episode
            },
            64,
            s.samples,
            s.budget,
        );
        let chaos = toolenv_bench::chaos();
        let wire_create = time_batched(
            || (),
            |()| {
                let tools: Vec<pb::ToolSpec> = task.tools().iter().map(Into::into).collect();
                (tools, serde_json::to_string(chaos.profile()).unwrap_or_default(), task.description())
            },
            64,
            s.samples,
            s.budget,
        );
        let mut finished = played.clone();
        finished.finish();
        let verdict = finished.verdict().expect("finished").clone();
        let wire_verdict = time_batched(|| (), |()| pb::Verdict::from(&verdict), 64, s.samples, s.budget);
        let sum = create_chaos.median_ns + finish.median_ns;
        sums.push(sum);
        if sum > worst.0 {
            worst = (sum, task.id.clone());
        }
        println!(
            "{:<32} {:>10} {:>12} {:>10} {:>14} {:>13} {:>13}",
            task.id,
            us(create.median_ns),
            us(create_chaos.median_ns),
            us(finish.median_ns),
            us(sum),
            us(wire_create.median_ns),
            us(wire_verdict.median_ns)
        );
    }
    let mean = sums.iter().sum::<f64>() / sums.len() as f64;
    println!("{:<32} {:>49}", "mean over the 20 tasks", us(mean));
    summary.push(target(&format!("create (λ=0.2) + finish, worst task ({})", worst.1), us(worst.0), "≤ 50 µs".into(), worst.0 <= 50_000.0));

    println!("\nWhere the time goes: each step alone, through the public APIs (median; the steps overlap the totals above).");
    let anatomy_budget = s.budget / 2;
    for name in ["travel/read", "ecommerce/write"] {
        let case = call_cases().into_iter().find(|c| c.name == name).expect("a case");
        println!("  {name} ({}):", case.tool);
        for step in toolenv_bench::call_anatomy(&case, s.samples, anatomy_budget) {
            println!("    {:<78} {:>10}", step.name, us(step.timing.median_ns));
        }
    }
    let worst_task = toolenv_domains::task(&worst.1).expect("a suite task");
    println!("  finish {}:", worst_task.id);
    for step in toolenv_bench::finish_anatomy(worst_task, s.samples, anatomy_budget) {
        println!("    {:<78} {:>10}", step.name, us(step.timing.median_ns));
    }

    summary.extend(memory_per_episode()?);
    Ok(summary)
}

/// Runs `toolenv-bench-alloc` and prints its per-task figures.
fn memory_per_episode() -> Result<Vec<String>, Error> {
    println!("\nBytes per live episode (net heap bytes counted by a global allocator + the Episode itself;");
    println!("blocks: live heap allocations, each costing malloc a further 8–16 bytes of overhead). World copy: one");
    println!("clone of the task's state; results: the played calls' results as JSON value trees / as canonical text:\n");
    let exe = std::env::current_exe()?.with_file_name("toolenv-bench-alloc");
    let output = match Command::new(&exe).output() {
        Ok(output) if output.status.success() => output,
        Ok(output) => return Err(format!("{} failed: {}", exe.display(), String::from_utf8_lossy(&output.stderr)).into()),
        Err(e) => {
            println!("  (skipped: cannot run {}: {e}; build it with `cargo build --release -p toolenv-bench`)", exe.display());
            return Ok(Vec::new());
        }
    };
    let text = String::from_utf8(output.stdout)?;
    println!(
        "{:<32} {:>15} {:>15} {:>19} {:>15} {:>11} {:>19}",
        "task", "fresh λ=0", "fresh λ=0.2", "reference played", "finished", "world copy", "results tree / text"
    );
    let mut worst = (0u64, String::new());
    let mut generated = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        if line.starts_with("#generated") || line.starts_with("#live") {
            generated.push(fields.iter().skip(1).copied().collect::<Vec<_>>().join("  "));
            continue;
        }
        if line.starts_with('#') {
            println!("  (size_of::<Episode>() = {} bytes)", fields[1]);
            continue;
        }
        let n = |i: usize| fields[i].parse::<u64>().unwrap_or(0);
        let cell = |bytes: u64, blocks: u64| format!("{:.1} KiB/{blocks:>3}", bytes as f64 / 1024.0);
        let kib = |bytes: u64| format!("{:.1} KiB", bytes as f64 / 1024.0);
        println!(
            "{:<32} {:>15} {:>15} {:>19} {:>15} {:>11} {:>19}",
            fields[0],
            cell(n(1), n(2)),
            cell(n(3), n(4)),
            cell(n(5), n(6)),
            cell(n(7), n(8)),
            kib(n(9)),
            format!("{} / {}", kib(n(10)), kib(n(11)))
        );
        let live = n(1).max(n(3)).max(n(5));
        if live > worst.0 {
            worst = (live, fields[0].to_owned());
        }
    }
    // Generated level-3 tasks: state bytes, then a fresh (λ 0, λ 0.2) and a played episode's bytes beyond it.
    println!("\nLargest level-3 task of the standard suite per domain: state bytes, fresh λ=0 / fresh λ=0.2 / played episode bytes:");
    for line in &generated {
        println!("  {line}");
    }
    Ok(vec![target(
        &format!("bytes per live paper-task episode, worst ({})", worst.1),
        format!("{:.1} KiB", worst.0 as f64 / 1024.0),
        "≤ 16 KiB".into(),
        worst.0 <= 16 * 1024,
    )])
}
