//! `toolenv-bench chaos [CALLS]`: what the chaos proxy adds to a tool call.
//! The same sequential `tools/call`s against `toolenv mcp` directly and
//! through `toolenv chaos --faults 0.0` (nothing drawn: the proxy only reads
//! and forwards), in alternating rounds; prints the mean time per call of
//! each, the difference (target: ≤ 0.2 ms) and the proxy's resident memory
//! after the session (one session per proxy process). Needs
//! `target/release/toolenv` (or TOOLENV_BIN).

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Error;

const TASK: &str = "travel/cheapest-flight/001";
const ROUNDS: usize = 3;

/// An MCP session over a child's stdio.
struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Session {
    fn start(mut command: Command) -> Result<Session, Error> {
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut session = Session { child, stdin, stdout, next_id: 0 };
        session.ask("initialize", r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}"#)?;
        writeln!(session.stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#)?;
        Ok(session)
    }

    /// Sends a request and reads lines until its reply.
    fn ask(&mut self, method: &str, params: &str) -> Result<(), Error> {
        self.next_id += 1;
        let id = self.next_id;
        writeln!(self.stdin, r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)?;
        self.stdin.flush()?;
        let wanted = format!(r#""id":{id}"#);
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                return Err("the server closed its output".into());
            }
            if line.contains(&wanted) && !line.contains(r#""method""#) {
                return Ok(());
            }
        }
    }

    /// The mean time of `calls` sequential searches.
    fn calls(&mut self, calls: usize) -> Result<Duration, Error> {
        let params = r#"{"name":"search_flights","arguments":{"origin":"LON","dest":"PAR","date":"2026-01-05"}}"#;
        let started = Instant::now();
        for _ in 0..calls {
            self.ask("tools/call", params)?;
        }
        Ok(started.elapsed() / calls as u32)
    }

    /// The resident memory of the session's process, from /proc.
    fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn run(args: &[String]) -> Result<(), Error> {
    let calls: usize = args.first().map(|a| a.parse()).transpose()?.unwrap_or(2000);
    // TOOLENV_BIN: another toolenv binary to measure (as the drill takes it).
    let toolenv = match std::env::var_os("TOOLENV_BIN") {
        Some(path) => std::path::PathBuf::from(path),
        None => std::env::current_exe()?.with_file_name("toolenv"),
    };
    if !toolenv.exists() {
        return Err(format!("{} is missing: cargo build --release -p toolenv-cli", toolenv.display()).into());
    }
    let direct = || {
        let mut command = Command::new(&toolenv);
        command.args(["mcp", TASK]).env_remove("TOOLENV_URL");
        command
    };
    let proxied = || {
        let mut command = Command::new(&toolenv);
        command.args(["chaos", "--faults", "0.0", "--time-scale", "0", "--"]).arg(&toolenv).args(["mcp", TASK]).env_remove("TOOLENV_URL");
        command
    };
    // Sessions stay open across rounds; each round's calls come after a warm-up.
    let (mut a, mut b) = (Session::start(direct())?, Session::start(proxied())?);
    a.calls(100)?;
    b.calls(100)?;
    let rss_before = b.rss_kib();
    let (mut direct_times, mut proxied_times) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        direct_times.push(a.calls(calls)?);
        proxied_times.push(b.calls(calls)?);
    }
    let median = |times: &mut Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let (d, p) = (median(&mut direct_times), median(&mut proxied_times));
    let added = p.as_secs_f64() * 1e3 - d.as_secs_f64() * 1e3;
    println!("chaos proxy, {calls} sequential tools/call × {ROUNDS} rounds (median), λ = 0:");
    println!("  direct   {:>8.3} ms/call", d.as_secs_f64() * 1e3);
    println!("  proxied  {:>8.3} ms/call  ({:.2}× direct)", p.as_secs_f64() * 1e3, p.as_secs_f64() / d.as_secs_f64());
    println!("  added    {added:>8.3} ms/call  (target ≤ 0.2)");
    match (rss_before, b.rss_kib()) {
        (Some(before), Some(after)) => println!(
            "  proxy resident memory: {:.1} MiB after 100 calls, {:.1} MiB after {} ({:+.0} B/call)",
            before as f64 / 1024.0,
            after as f64 / 1024.0,
            100 + ROUNDS * calls,
            (after as f64 - before as f64) * 1024.0 / (ROUNDS * calls) as f64
        ),
        _ => println!("  proxy resident memory: n/a (no /proc)"),
    }
    Ok(())
}
