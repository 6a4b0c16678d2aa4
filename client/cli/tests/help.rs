//! What a newcomer reads: `--help` built from the lists the code uses, only
//! the flags that apply, and errors that say what happened once and what to do.

use std::process::Command;

use toolenv_agents::Builtin;
use toolenv_core::masfire::MasFault;

fn toolenv(args: &[&str]) -> (bool, i32, String, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .args(args)
        .env_remove("TOOLENV_URL")
        .env_remove("TOOLENV_TOKEN")
        .env("TOOLENV_STORE", dir.path().join("toolenv.db"))
        .output()
        .expect("toolenv runs");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.success(), out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn help(args: &[&str]) -> String {
    let (ok, _, stdout, stderr) = toolenv(args);
    assert!(ok, "{stderr}");
    stdout
}

#[test]
fn help_lists_every_built_in_agent_and_mas_fire_fault() {
    let top = help(&["--help"]);
    let run = help(&["run", "--help"]);
    let work = help(&["work", "--help"]);
    for agent in Builtin::ALL {
        assert!(top.contains(&format!("  {} ", agent.name())), "toolenv --help lacks {}:\n{top}", agent.name());
        assert!(run.contains(agent.name()) && work.contains(agent.name()), "{}", agent.name());
    }
    for command in ["play", "run", "host"] {
        let text = help(&[command, "--help"]);
        for fault in MasFault::ALL {
            assert!(text.contains(fault.name()), "{command} --help lacks {}", fault.name());
        }
        assert!(!text.contains("README lists them"), "{command}");
        // One default for --mas-rate wherever it is taken.
        assert!(text.contains("[default: 0.3]"), "{command} --help:\n{text}");
    }
}

#[test]
fn each_command_shows_only_the_flags_that_apply() {
    let host = help(&["host", "--help"]);
    assert!(!host.contains("--agent ") && !host.contains("--concurrency"), "{host}");
    assert!(host.contains("--label") && host.contains("--url"), "{host}");
    let serve = help(&["serve", "--help"]);
    assert!(!serve.contains("--url <") && !serve.contains("--ca-cert <") && serve.contains("--token <"), "{serve}");
    let selfcheck = help(&["selfcheck", "--help"]);
    assert!(!selfcheck.contains("--url <") && !selfcheck.contains("--token <"), "{selfcheck}");
    assert!(help(&["runs", "--help"]).contains("--url"));
    // --url's help says what each command does without it, nowhere that every one starts a server.
    for command in ["host", "work", "report", "runs", "compare", "play", "run"] {
        let text = help(&[command, "--help"]).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(text.contains("host and work need a server") && text.contains("read the local store"), "{command}: {text}");
    }
    // Given anyway, they are refused with the reason, not ignored.
    let (ok, code, _, stderr) = toolenv(&["serve", "--url", "http://127.0.0.1:1"]);
    assert!(!ok && code == 2 && stderr.contains("`toolenv serve` takes no --url"), "{stderr}");
    let (ok, _, _, stderr) = toolenv(&["selfcheck", "--token", "0123456789abcdef0"]);
    assert!(!ok && stderr.contains("takes no --token"), "{stderr}");
}

#[test]
fn a_run_whose_episodes_all_failed_for_infrastructure_reasons_exits_non_zero() {
    let (ok, code, _, stderr) =
        toolenv(&["run", "--domain", "travel", "--agent", "react@m", "--base-url", "http://127.0.0.1:9", "--max-attempts", "1"]);
    assert!(!ok && code == 3, "{code}: {stderr}");
    assert!(stderr.contains("all 5 episodes ended in an infrastructure error") && stderr.contains("Connection refused"), "{stderr}");
    let (ok, _, _, stderr) = toolenv(&["run", "--domain", "travel", "--no-store"]);
    assert!(ok, "{stderr}");
}

#[test]
fn an_address_in_use_is_said_once_with_what_to_do_and_logs_have_no_colour_codes() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (ok, _, _, stderr) = toolenv(&["serve", "--addr", &addr, "--no-store"]);
    assert!(!ok, "{stderr}");
    assert_eq!(stderr.matches("Address already in use").count(), 1, "{stderr}");
    assert!(stderr.contains("hint: another process"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "colour codes in a log that is not a terminal: {stderr:?}");
}

#[test]
fn the_selfcheck_table_is_aligned() {
    let (ok, _, stdout, stderr) = toolenv(&["selfcheck", "--suite", "generated:3:1", "--random-seeds", "1"]);
    assert!(ok, "{stderr}");
    let table: Vec<&str> = stdout.lines().skip_while(|l| !l.starts_with("DOMAIN")).take_while(|l| !l.is_empty()).collect();
    assert!(table.len() > 4, "{stdout}");
    let level_end = table[0].find("LEVEL").unwrap() + "LEVEL".len();
    for row in &table[1..] {
        assert!(
            row[..level_end].ends_with(|c: char| c.is_ascii_digit()) && row.as_bytes()[level_end] == b' ',
            "misaligned: {row:?}\n{stdout}"
        );
    }
}

#[test]
fn logs_written_to_a_file_or_pipe_have_no_colour_codes() {
    use std::io::BufRead as _;
    // Beyond loopback without a token, the server warns: a log line to read.
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .args(["serve", "--addr", "0.0.0.0:0", "--no-store"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = String::new();
    for line in std::io::BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        log.push_str(&line);
        log.push('\n');
        if line.contains("toolenv listening on") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(log.contains("WARN") && log.contains("INFO"), "{log}");
    assert!(!log.contains('\u{1b}'), "colour codes in a piped log: {log:?}");
}

#[test]
fn errors_end_with_what_to_do() {
    let (ok, _, _, stderr) = toolenv(&["tasks", "--url", "http://127.0.0.1:1"]);
    assert!(!ok && stderr.contains("cannot connect") && stderr.contains("hint: is a toolenv server running"), "{stderr}");
    let (ok, _, _, stderr) = toolenv(&["play", "nosuch/task"]);
    assert!(!ok && stderr.contains("hint: `toolenv tasks` lists the task ids"), "{stderr}");
}

#[test]
fn every_profile_the_faults_help_names_is_taken() {
    for command in ["play", "run", "host", "mcp"] {
        let text = help(&[command, "--help"]);
        for profile in toolenv_runs::ABLATION_PROFILES.iter().copied().chain(["0.0", "0.3", "mas:NAME@RATE"]) {
            assert!(text.contains(profile), "{command} --help lacks {profile}");
        }
    }
    // One episode under a MAS-FIRE label, as a grid takes it.
    let (ok, _, stdout, stderr) =
        toolenv(&["play", "travel/cheapest-flight/001", "--agent", "team-closed-loop", "--faults", "mas:hallucination@1.0"]);
    assert!(ok && stdout.contains("MAS-FIRE"), "{stderr}\n{stdout}");
    let (ok, _, _, stderr) =
        toolenv(&["play", "travel/cheapest-flight/001", "--faults", "mas:hallucination@1.0", "--mas-faults", "memory-loss"]);
    assert!(!ok && stderr.contains("give one of them"), "{stderr}");
}
