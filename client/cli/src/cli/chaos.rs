//! `toolenv chaos`: the chaos layer's faults in front of any MCP server
//! ([`toolenv_mcp::chaos`]), and `toolenv report --chaos-ledger`: fault
//! recovery by kind from its ledgers.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use toolenv_core::chaos::{FaultKind, FaultProfile};
use toolenv_mcp::chaos::ledger;

/// Run an MCP server (the command after `--`, over stdio) behind a proxy
/// that injects seeded faults into its tool calls, and serve it to an MCP
/// client over stdio. Messages no fault hit pass through byte for byte;
/// the same seed, session and calls meet the same faults. Each call, its
/// fault and the reply the client got go to --ledger as JSON lines.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ChaosArgs {
    /// The session's name: draws are keyed by (seed, session, call index).
    #[arg(long, default_value = "0")]
    pub(crate) session: String,
    /// Fault profile: a preset (0.0, 0.1, 0.2, 0.3, timeout-only,
    /// rate-limit-only, partial-response-only, mixed) or a name from --fault-profiles.
    #[arg(long, default_value = "0.0")]
    pub(crate) faults: String,
    /// Keep only these fault types of the profile (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub(crate) only: Vec<String>,
    /// Write the ledger (a JSON line per tool call) to this file; with
    /// --listen, a directory of one `<session>-<n>.jsonl` per MCP session.
    #[arg(long, value_name = "FILE")]
    pub(crate) ledger: Option<PathBuf>,
    /// Serve MCP's streamable HTTP at http://ADDR/mcp instead of stdio: each
    /// MCP session gets its own upstream server and is the proxy session
    /// `<session>-<n>` (n counts sessions from 1), meeting the faults a
    /// stdio session of that name meets.
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<std::net::SocketAddr>,
    /// Seconds the upstream server has to exit on its own once the client's
    /// input ended (its stdin is closed then, as MCP's stdio shutdown asks)
    /// before it is killed.
    #[arg(long, value_name = "SECONDS", default_value_t = toolenv_mcp::chaos::UPSTREAM_GRACE.as_secs_f64())]
    pub(crate) grace: f64,
    #[command(flatten)]
    pub(crate) proxy: ProxyArgs,
}

/// The flags `chaos` and `chaos-run` share: the draws, the profiles, the
/// delays, the tool list's drift and the upstream server.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ProxyArgs {
    /// Seed of the fault draws (keyed by seed, session and call index).
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// A JSON file of named fault profiles: {"name": {"failure_rate": 0.1,
    /// "fault_weights": {"TransientTimeout": 1.0}, "params": {...}}}.
    #[arg(long, value_name = "FILE")]
    pub(crate) fault_profiles: Option<PathBuf>,
    /// Real milliseconds per simulated millisecond of fault delays (0:
    /// never sleep; the rate-limit window then counts the waits calls declare
    /// in `_meta` "toolenv/waited_ms").
    #[arg(long, default_value_t = 1.0)]
    pub(crate) time_scale: f64,
    /// Drift the tool list itself: parameter names in snake_case are
    /// offered in camelCase, and calls' arguments renamed back for the server.
    #[arg(long)]
    pub(crate) drift_tools: bool,
    /// The upstream MCP server's command and arguments, or its
    /// streamable-HTTP URL (http:// or https://).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}

/// The profile named by --faults (and --only), from the presets or --fault-profiles.
fn profile(faults: &str, only: &[String], fault_profiles: Option<&std::path::Path>) -> anyhow::Result<FaultProfile> {
    let named = match fault_profiles {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let profiles: std::collections::BTreeMap<String, FaultProfile> =
                serde_json::from_str(&text).with_context(|| format!("parsing fault profiles in {}", path.display()))?;
            profiles.get(faults).cloned()
        }
    };
    let profile = match named {
        Some(profile) => profile,
        None => FaultProfile::preset(faults).context("invalid --faults")?,
    };
    if only.is_empty() {
        return Ok(profile);
    }
    let kinds = only
        .iter()
        .map(|name| FaultKind::parse(name).ok_or_else(|| anyhow::anyhow!("invalid --only: unknown fault type '{name}'")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(profile.restricted_to(&kinds)?)
}

/// The upstream command: the one given, or for a URL this binary's
/// `chaos-connect URL`, which speaks stdio to the proxy and streamable HTTP
/// to the server.
fn upstream(command: &[String]) -> anyhow::Result<Vec<String>> {
    match command {
        [url] if url.starts_with("http://") || url.starts_with("https://") => {
            let toolenv = std::env::current_exe().context("the path of this toolenv binary")?;
            Ok(vec![toolenv.display().to_string(), "chaos-connect".to_owned(), url.clone()])
        }
        _ => Ok(command.to_vec()),
    }
}

/// Proxies until the upstream server's output ends; exits as it exited.
pub(crate) async fn chaos(args: ChaosArgs) -> anyhow::Result<ExitCode> {
    let time_scale = toolenv_runs::check_time_scale(args.proxy.time_scale).context("invalid --time-scale")?;
    let profile = profile(&args.faults, &args.only, args.proxy.fault_profiles.as_deref())?;
    profile.validate().context("invalid fault profile")?;
    let config = toolenv_mcp::chaos::Config {
        seed: args.proxy.seed,
        session: args.session.clone(),
        profile_name: args.faults.clone(),
        profile,
        time_scale,
        ledger: args.ledger.clone(),
        command: upstream(&args.proxy.command)?,
        drift_tools: args.proxy.drift_tools,
        grace: std::time::Duration::try_from_secs_f64(args.grace)
            .map_err(|_| anyhow::anyhow!("invalid --grace: {} is not a number of seconds ≥ 0", args.grace))?,
    };
    if let Some(addr) = args.listen {
        let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
        eprintln!("toolenv chaos: MCP over streamable HTTP at http://{}/mcp (Ctrl-C to stop)", listener.local_addr()?);
        let stop = async {
            let _ = super::signal::shutdown_signal().await;
        };
        toolenv_mcp::chaos::serve_http(config, listener, stop).await.context("serving MCP over HTTP")?;
        return Ok(ExitCode::SUCCESS);
    }
    // On a runtime of one thread of its own: each message crosses the proxy
    // through a few tasks, and on one thread their wake-ups cost no hand-over
    // between threads (measured: toolenv-bench chaos).
    let proxy = move || -> anyhow::Result<std::process::ExitStatus> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        Ok(runtime.block_on(async {
            match stdio_pipes() {
                Some((input, output)) => toolenv_mcp::chaos::run(config, input, output).await,
                None => toolenv_mcp::chaos::run(config, tokio::io::stdin(), tokio::io::stdout()).await,
            }
        })?)
    };
    let status = tokio::task::spawn_blocking(proxy).await??;
    // Exit at once: a client that keeps its stdin open after the upstream
    // server ended would otherwise hold the runtime on its blocking read.
    std::process::exit(status.code().unwrap_or(1))
}

/// Stdin and stdout as pipes the runtime polls, when they are pipes (as an
/// MCP client starts a server): tokio's own stdin and stdout hand every
/// read and write to a blocking thread, which measured most of what the
/// proxy added per call. `None` for anything else (a terminal, a file).
#[cfg(unix)]
fn stdio_pipes() -> Option<(tokio::net::unix::pipe::Receiver, tokio::net::unix::pipe::Sender)> {
    use std::os::fd::AsFd as _;
    let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let input = tokio::net::unix::pipe::Receiver::from_owned_fd(input).ok()?;
    let output = tokio::net::unix::pipe::Sender::from_owned_fd(output).ok()?;
    Some((input, output))
}

#[cfg(not(unix))]
fn stdio_pipes() -> Option<(tokio::io::Stdin, tokio::io::Stdout)> {
    None
}

/// `toolenv report --chaos-ledger FILE… [--verdicts FILE]`: fault recovery
/// by kind; with verdicts, the run's report too (pass^k, the surface, by
/// fault profile and agent), from each session's verdict and ledger.
pub(crate) fn report(
    files: &[PathBuf],
    verdicts: Option<&std::path::Path>,
    json: bool,
    html: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(html.is_none() || verdicts.is_some(), "--html with --chaos-ledger needs --verdicts: the page shows pass^k");
    let mut ledgers = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        ledgers.push(ledger::parse(&file.display().to_string(), &text)?);
    }
    let summary = ledger::summarize(ledgers.iter().map(Vec::as_slice));
    let judged = match verdicts {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let results = results(&path.display().to_string(), &text, &ledgers)?;
            let k = trials(&results);
            let conv = toolenv_runs::metrics::InfraConvention::CountAsFailure;
            let report = toolenv_runs::report::summary(&results, k, results.len() as u64, conv, Default::default())?;
            if let Some(file) = html {
                let label = format!("{} chaos ledger{}", files.len(), if files.len() == 1 { "" } else { "s" });
                let description = format!("sessions judged by {}", path.display());
                let figures =
                    toolenv_runs::html::figures(&label, &description, &results, k, results.len() as u64, conv, Default::default())?;
                std::fs::write(file, toolenv_runs::html::render(&[figures])).with_context(|| format!("writing {}", file.display()))?;
                eprintln!("wrote {}", file.display());
            }
            Some(report)
        }
    };
    if json {
        let mut value = serde_json::to_value(&summary)?;
        if let Some(report) = &judged {
            value["report"] = serde_json::to_value(report)?;
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", render(&summary));
    if let Some(report) = &judged {
        println!();
        print!("{}", toolenv_runs::report::render_summary(report));
    }
    Ok(ExitCode::SUCCESS)
}

/// One line of a verdicts file: how a session through the proxy ended.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Verdict {
    /// The session's name (`toolenv chaos --session`).
    session: String,
    /// Whether the user's checker passed the session.
    passed: bool,
    /// The task the session played: sessions of one task, agent and fault
    /// profile are its trials.
    #[serde(default = "default_task")]
    task: String,
    /// The agent's label.
    #[serde(default = "default_agent")]
    agent: String,
    /// The session's fault profile, for a session no ledger has (it made no
    /// tool call); a ledger's, when it has the session, must agree.
    #[serde(default)]
    fault_profile: Option<String>,
}

fn default_task() -> String {
    "task".to_owned()
}

fn default_agent() -> String {
    "agent".to_owned()
}

/// Each verdict as a run's episode record: its session's fault profile (and
/// λ) and fault ledger from the ledgers, its trial the count of earlier
/// verdicts of the same task, agent and profile.
fn results(file: &str, text: &str, ledgers: &[Vec<ledger::Call>]) -> anyhow::Result<Vec<toolenv_runs::metrics::EpisodeResult>> {
    use std::collections::BTreeMap;
    use toolenv_runs::metrics::{EpisodeOutcome, EpisodeResult, FaultCounts};
    let mut sessions: BTreeMap<&str, Vec<&ledger::Call>> = BTreeMap::new();
    for call in ledgers.iter().flatten() {
        sessions.entry(call.session.as_str()).or_default().push(call);
    }
    let mut trials: BTreeMap<(String, String, String), u32> = BTreeMap::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut results = Vec::new();
    for (line, text) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = || format!("{file}:{}", line + 1);
        let verdict: Verdict = serde_json::from_str(text).with_context(at)?;
        anyhow::ensure!(seen.insert(verdict.session.clone()), "{}: session '{}' has a second verdict", at(), verdict.session);
        let mut calls = sessions.get(verdict.session.as_str()).cloned().unwrap_or_default();
        calls.sort_by_key(|c| c.index);
        let profile = match (calls.first(), verdict.fault_profile) {
            (Some(call), Some(named)) if named != call.fault_profile => {
                anyhow::bail!("{}: session '{}' ran under fault profile '{}', not '{named}'", at(), verdict.session, call.fault_profile)
            }
            (Some(call), _) => call.fault_profile.clone(),
            (None, Some(named)) => named,
            (None, None) => anyhow::bail!(
                "{}: session '{}' is in no ledger given (--chaos-ledger); a session without tool calls needs its \"fault_profile\"",
                at(),
                verdict.session
            ),
        };
        let ledger_calls: Vec<_> = calls.iter().map(|c| c.ledger_call()).collect();
        let kinds = toolenv_core::fault_ledger(&ledger_calls);
        let totals = toolenv_core::FaultStats::of_kinds(kinds.values());
        let trial = trials.entry((verdict.task.clone(), verdict.agent.clone(), profile.clone())).or_default();
        results.push(EpisodeResult {
            task_id: verdict.task,
            domain: None,
            agent: verdict.agent,
            epsilon: 0.0,
            lambda: toolenv_runs::lambda_of(&profile),
            fault_profile: profile,
            trial: *trial,
            seed: 0,
            outcome: if verdict.passed { EpisodeOutcome::Passed } else { EpisodeOutcome::Failed },
            fault_stats: FaultCounts {
                injected: totals.injected,
                encountered: totals.encountered,
                recovered: totals.recovered,
                extra_calls: totals.extra_calls,
            },
            faults_by_kind: kinds,
            tokens: None,
            cost_usd: None,
            calls: u32::try_from(calls.len()).unwrap_or(u32::MAX),
            feasible: None,
            llm: None,
            mas_faults: Vec::new(),
            user_turns: 0,
            llm_user_turns: 0,
            answer_judge: None,
        });
        *trial += 1;
    }
    anyhow::ensure!(!results.is_empty(), "{file}: no verdicts");
    Ok(results)
}

/// The k of pass^k: the fewest trials any (task, agent, profile) has.
fn trials(results: &[toolenv_runs::metrics::EpisodeResult]) -> u32 {
    let mut counts = std::collections::BTreeMap::new();
    for r in results {
        *counts.entry((&r.task_id, &r.agent, &r.fault_profile)).or_insert(0u32) += 1;
    }
    counts.into_values().min().unwrap_or(1)
}

/// The summary as a text table.
fn render(summary: &ledger::Summary) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let counted = toolenv_runs::report::counted;
    let (sessions, calls) = (counted(summary.sessions as u64, "session"), counted(summary.calls as u64, "tool call"));
    let _ = writeln!(out, "chaos ledger: {sessions}, {calls}, {} met a fault", summary.calls_met);
    let _ = writeln!(
        out,
        "{:<18} {:>5} {:>9} {:>12} {:>10} {:>12} {:>8} {:>15}",
        "fault", "calls", "injected", "encountered", "recovered", "extra calls", "retried", "answered after"
    );
    let row = |out: &mut String, name: &str, k: &toolenv_core::KindCounts| {
        let _ = writeln!(
            out,
            "{name:<18} {:>5} {:>9} {:>12} {:>10} {:>12} {:>8} {:>15}",
            k.hits, k.injected, k.encountered, k.recovered, k.extra_calls, k.retried, k.answered_after
        );
    };
    let mut total = toolenv_core::KindCounts::default();
    for (kind, counts) in &summary.kinds {
        row(&mut out, kind.name(), counts);
        total.add(counts);
    }
    row(&mut out, "total", &total);
    if !summary.drawn_without_effect.is_empty() {
        let drawn: Vec<String> = summary.drawn_without_effect.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(out, "drawn without effect (not counted): {}", drawn.join(", "));
    }
    out
}

/// Play your own agent k times per fault profile against an MCP server
/// through the chaos proxy, judge each session with your checker, and
/// report pass^k by fault profile as a toolenv run does. Each trial runs
/// the --agent command (with `sh -c`) with the proxy's command line in
/// TOOLENV_MCP_COMMAND (shell-quoted) and TOOLENV_MCP_COMMAND_JSON (an
/// argv array): the agent starts it as its stdio MCP server. Then --check
/// runs (`sh -c`, exit status 0: passed) with TOOLENV_SESSION,
/// TOOLENV_FAULT_PROFILE and TOOLENV_TRIAL set; without --check, an agent
/// that exits 0 passed. Ledgers and verdicts go to --out.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ChaosRunArgs {
    /// The agent's command, run with `sh -c` once per trial and profile.
    #[arg(long, value_name = "COMMAND")]
    pub(crate) agent: String,
    /// The checker's command, run with `sh -c` after each session; exit status 0 means passed.
    #[arg(long, value_name = "COMMAND")]
    pub(crate) check: Option<String>,
    /// Fault profiles (comma-separated): presets or names from --fault-profiles.
    #[arg(long, value_delimiter = ',', default_value = "0.0,0.2")]
    pub(crate) faults: Vec<String>,
    /// Trials per profile: the k of pass^k.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub(crate) trials: u32,
    /// The task's name in the report (sessions are its trials).
    #[arg(long, default_value = "task")]
    pub(crate) task: String,
    /// The agent's label in the report.
    #[arg(long, default_value = "agent")]
    pub(crate) label: String,
    /// Where the ledgers (one per session) and verdicts.jsonl go.
    #[arg(long, value_name = "DIR", default_value = "chaos-run")]
    pub(crate) out: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) proxy: ProxyArgs,
}

/// A word as `sh` reads it back: single-quoted unless plainly safe.
fn shell_quoted(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// `toolenv chaos-run`: every (profile, trial) session, its verdict, then the report.
pub(crate) fn chaos_run(args: ChaosRunArgs) -> anyhow::Result<ExitCode> {
    toolenv_runs::check_time_scale(args.proxy.time_scale).context("invalid --time-scale")?;
    for name in &args.faults {
        profile(name, &[], args.proxy.fault_profiles.as_deref())?.validate().with_context(|| format!("invalid fault profile '{name}'"))?;
    }
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let toolenv = std::env::current_exe().context("finding the toolenv binary")?;
    let (mut ledgers, mut verdicts) = (Vec::new(), String::new());
    for profile_name in &args.faults {
        for trial in 0..args.trials {
            let session = format!("{profile_name}-{trial}");
            let ledger = args.out.join(format!("{session}.jsonl"));
            let mut proxy = vec![toolenv.display().to_string(), "chaos".into(), "--seed".into(), args.proxy.seed.to_string()];
            proxy.extend(["--session".into(), session.clone(), "--faults".into(), profile_name.clone()]);
            proxy.extend(["--time-scale".into(), args.proxy.time_scale.to_string(), "--ledger".into(), ledger.display().to_string()]);
            if let Some(file) = &args.proxy.fault_profiles {
                proxy.extend(["--fault-profiles".into(), file.display().to_string()]);
            }
            if args.proxy.drift_tools {
                proxy.push("--drift-tools".into());
            }
            proxy.push("--".into());
            proxy.extend(args.proxy.command.iter().cloned());
            let line = proxy.iter().map(|w| shell_quoted(w)).collect::<Vec<_>>().join(" ");
            let sh = |command: &str| {
                let mut sh = std::process::Command::new("sh");
                sh.arg("-c")
                    .arg(command)
                    .env("TOOLENV_MCP_COMMAND", &line)
                    .env("TOOLENV_MCP_COMMAND_JSON", serde_json::to_string(&proxy).unwrap_or_default())
                    .env("TOOLENV_SESSION", &session)
                    .env("TOOLENV_FAULT_PROFILE", profile_name)
                    .env("TOOLENV_TRIAL", trial.to_string());
                sh
            };
            let played = sh(&args.agent).status().with_context(|| format!("running the agent for session {session}"))?;
            let passed = match &args.check {
                Some(check) => sh(check).status().with_context(|| format!("running the checker for session {session}"))?.success(),
                None => played.success(),
            };
            if !ledger.exists() {
                // The agent never started the proxy: a session without calls (its verdict names its profile).
                std::fs::write(&ledger, "").with_context(|| format!("writing {}", ledger.display()))?;
            }
            eprintln!("{session}: {}", if passed { "passed" } else { "failed" });
            let verdict = serde_json::json!({
                "session": session, "passed": passed, "task": args.task, "agent": args.label, "fault_profile": profile_name,
            });
            verdicts.push_str(&format!("{verdict}\n"));
            ledgers.push(ledger);
        }
    }
    let verdicts_file = args.out.join("verdicts.jsonl");
    std::fs::write(&verdicts_file, &verdicts).with_context(|| format!("writing {}", verdicts_file.display()))?;
    report(&ledgers, Some(&verdicts_file), args.json, None)
}
