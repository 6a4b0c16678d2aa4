//! `toolenv-fuzz [TARGET…] [--executions N] [--seed S] [--seconds T]`: runs
//! the fuzz targets (args, profiles, wire; all by default) and prints the
//! executions, their rate and every crash with its input.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use toolenv_fuzz::{Target, run};

fn main() -> ExitCode {
    let mut targets = Vec::new();
    let (mut executions, mut seed, mut seconds) = (1_000_000u64, 1u64, 600u64);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Option<u64> {
            let value = args.next().and_then(|v| v.replace('_', "").parse().ok());
            if value.is_none() {
                eprintln!("{name} takes a number");
            }
            value
        };
        match arg.as_str() {
            "--executions" => match number("--executions") {
                Some(n) => executions = n,
                None => return ExitCode::from(2),
            },
            "--seed" => match number("--seed") {
                Some(n) => seed = n,
                None => return ExitCode::from(2),
            },
            "--seconds" => match number("--seconds") {
                Some(n) => seconds = n,
                None => return ExitCode::from(2),
            },
            "-h" | "--help" => {
                println!(
                    "toolenv-fuzz [args|profiles|wire…] [--executions N per target, default 1000000] [--seed S] [--seconds T per target, default 600]"
                );
                return ExitCode::SUCCESS;
            }
            name => match Target::ALL.iter().find(|t| t.name() == name) {
                Some(&target) => targets.push(target),
                None => {
                    eprintln!("unknown target {name:?}; targets: args, profiles, wire");
                    return ExitCode::from(2);
                }
            },
        }
    }
    if targets.is_empty() {
        targets = Target::ALL.to_vec();
    }
    let mut total = 0u64;
    let mut crashed = false;
    for target in targets {
        let started = Instant::now();
        let deadline = started + Duration::from_secs(seconds);
        let (mut done, mut crashes) = (0u64, Vec::new());
        // Chunks, so the time bound holds and progress shows every 10 s.
        let mut next_report = started + Duration::from_secs(10);
        while done < executions && Instant::now() < deadline && crashes.len() < 10 {
            let chunk = (executions - done).min(10_000);
            crashes.extend(run(target, seed.wrapping_add(done), chunk, 10 - crashes.len()));
            done += chunk;
            if Instant::now() >= next_report {
                next_report += Duration::from_secs(10);
                let secs = started.elapsed().as_secs();
                eprintln!("{:<9} {done:>12} of {executions} executions, {secs} of at most {seconds} s…", target.name());
            }
        }
        let secs = started.elapsed().as_secs_f64();
        println!("{:<9} {done:>12} executions in {secs:>7.1} s ({:>9.0}/s), {} crashes", target.name(), done as f64 / secs, crashes.len());
        for crash in &crashes {
            crashed = true;
            println!(
                "  crash at execution {}: {}\n    input: {}",
                crash.execution,
                crash.message,
                crash.input.chars().take(2000).collect::<String>()
            );
        }
        total += done;
    }
    println!("total     {total:>12} executions");
    if crashed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
