//! The documentation's marked command blocks (`<!-- readme-check: NAME -->`
//! before a sh block), run the way a newcomer reads them: the README, then
//! each page of the book in `docs/SUMMARY.md`'s order. A page's blocks run in
//! order in one bash (one terminal), with `set -e`, in a scratch directory of
//! the page's own (so its own `toolenv.db`), with `toolenv` on the PATH (the
//! binary this test was built with, standing for `cargo install`),
//! `cargo run --release --` read as `toolenv`, and free ports of the page's
//! own in place of 50051 and 9464. A server a page starts with `&` is waited
//! for, and must be stopped by the page itself: one still running when the
//! page ends fails it. Where a page shows a block's output
//! (`<!-- readme-output: NAME -->` before a text block), each shown line must
//! appear in what the block printed, in order (see [`shows`]).

use std::collections::BTreeSet;
use std::io::{BufRead as _, BufReader, Read as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use toolenv_tests::DocPage;

/// The most one block may take with the debug binary.
const BLOCK_LIMIT: Duration = Duration::from_secs(90);

/// The line the script prints (to stdout and stderr) before each block.
const BEGIN: &str = "::readme-check begins";

/// The exit status of a page that left a server running.
const LEFT_RUNNING: i32 = 97;

/// A page's blocks as one bash script.
fn script(blocks: &[&(String, String)], port: u16, metrics_port: u16) -> String {
    let mut out = String::from("set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n");
    for (name, block) in blocks {
        out.push_str(&format!("echo '{BEGIN} {name}'; echo '{BEGIN} {name}' >&2\n"));
        for line in block
            .replace("cargo run --release -- ", "toolenv ")
            .replace("50051", &port.to_string())
            .replace("9464", &metrics_port.to_string())
            .lines()
        {
            out.push_str(line);
            out.push('\n');
            let command = line.split(" #").next().unwrap_or(line).trim_end();
            if command.ends_with('&') {
                // A person types the next command after the server said it listens.
                out.push_str(&format!(
                    "for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; sleep 0.1; done\n"
                ));
            }
        }
    }
    // What the page started in the background, the page stops (a server still
    // shutting down gets a few seconds).
    out.push_str(&format!(
        "for _ in $(seq 50); do [ -z \"$(jobs -rp)\" ] && break; sleep 0.1; done\n\
         if [ -n \"$(jobs -rp)\" ]; then echo 'the page leaves running:' >&2; jobs -r >&2; exit {LEFT_RUNNING}; fi\n"
    ));
    out
}

/// Whether `output` shows every line of `shown` in order. Lines are compared
/// with their runs of spaces made one and their ends trimmed; `…` in a shown
/// line stands for any text, and shown lines may skip printed ones. Returns
/// the first shown line not found, with the output after the last line found.
fn shows<'a>(output: &str, shown: &'a str) -> Result<(), (&'a str, String)> {
    let squeeze = |line: &str| line.split_whitespace().collect::<Vec<_>>().join(" ");
    let printed: Vec<&str> = output.lines().collect();
    let mut next = 0;
    for line in shown.lines().filter(|line| !line.trim().is_empty() && line.trim() != "…") {
        let pattern = squeeze(line);
        match printed[next..].iter().position(|printed| matches(&squeeze(printed), &pattern)) {
            Some(at) => next += at + 1,
            None => return Err((line, printed[next..].join("\n"))),
        }
    }
    Ok(())
}

/// `text` against `pattern`, where each `…` stands for any text.
fn matches(text: &str, pattern: &str) -> bool {
    let parts: Vec<&str> = pattern.split('…').collect();
    let [first, middle @ .., last] = parts.as_slice() else { return text == pattern };
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    for part in middle {
        let Some(at) = rest.find(part) else { return false };
        rest = &rest[at + part.len()..];
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The last lines of `text`, for a failure's message.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// Runs one page's marked blocks: how many ran, or what went wrong.
fn run_page(page: &DocPage, path: &std::ffi::OsStr) -> Result<usize, String> {
    let blocks: Vec<&(String, String)> = page
        .blocks
        .iter()
        .filter(|(name, block)| {
            // Tools a newcomer installs from their system's packages, not from this repository.
            let missing = [("openssl", "version"), ("curl", "--version")].into_iter().find(|(tool, version)| {
                block.contains(&format!("{tool} ")) && Command::new(tool).arg(version).output().map_or(true, |o| !o.status.success())
            });
            if let Some((tool, _)) = missing {
                toolenv_tests::skipped(&format!("{} block {name}: {tool} is not installed", page.path));
            }
            missing.is_none()
        })
        .collect();
    if blocks.is_empty() {
        return Ok(0);
    }
    let dir = tempfile::tempdir().unwrap();
    // Held while the page runs, so that no other test's server is handed them
    // between the page's servers (which bind them all the same).
    let ((_held, addr), (_held_metrics, metrics_addr)) = (toolenv_tests::held_port(), toolenv_tests::held_port());
    let script = script(&blocks, addr.port(), metrics_addr.port());
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(dir.path())
        .env("PATH", path)
        .env_remove("TOOLENV_URL")
        .env_remove("TOOLENV_STORE")
        .env_remove("TOOLENV_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that nothing it started outlives the test.
        .process_group(0)
        .spawn()
        .unwrap();
    let group = child.id();
    let mut stdout = child.stdout.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let (lines, begun) = mpsc::channel();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        for line in stderr.lines().map_while(Result::ok) {
            if let Some(name) = line.strip_prefix(BEGIN) {
                let _ = lines.send((name.trim().to_owned(), Instant::now()));
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let page_begun = Instant::now();
    let mut current: Option<(String, Instant)> = None;
    let mut timings = Vec::new();
    let status = loop {
        while let Ok((name, at)) = begun.try_recv() {
            if let Some((previous, since)) = current.replace((name, at)) {
                timings.push((previous, at - since));
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if current.as_ref().is_some_and(|(_, since)| since.elapsed() > BLOCK_LIMIT) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Whatever the page left behind (the check below says whether it did):
    // its process group. `--` first, or procps' kill reads `-1…` as -1, every
    // process there is.
    assert!(group > 1, "the page's process group is {group}");
    let _ = Command::new("kill").args(["-s", "KILL", "--", &format!("-{group}")]).stderr(Stdio::null()).status();
    let _ = child.wait();
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    let block = current.as_ref().map_or("(none)", |(name, _)| name.as_str());
    let page_name = &page.path;
    match status {
        Some(status) if status.success() => {}
        Some(status) if status.code() == Some(LEFT_RUNNING) => {
            return Err(format!(
                "{page_name} leaves a server running after its last block (stop it on the page: kill %1; wait):\n{}",
                tail(&stderr)
            ));
        }
        Some(status) => {
            return Err(format!(
                "{page_name}, block {block} failed ({status}):\n{script}\n--- stdout\n{}\n--- stderr\n{}",
                tail(&stdout),
                tail(&stderr)
            ));
        }
        None => return Err(format!("{page_name}, block {block} took over {BLOCK_LIMIT:?}:\n{script}\n--- stderr\n{}", tail(&stderr))),
    }

    if let Some((name, since)) = current {
        timings.push((name, since.elapsed()));
    }
    for (name, took) in &timings {
        eprintln!("{page_name} block {name}: ok in {:.1} s", took.as_secs_f64());
    }
    // Each block's stdout: what follows its marker line, up to the next one.
    let mut printed: Vec<(&str, String)> = Vec::new();
    for line in stdout.lines() {
        match line.strip_prefix(BEGIN) {
            Some(name) => printed.push((name.trim(), String::new())),
            None => {
                if let Some((_, text)) = printed.last_mut() {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
    }
    for (name, shown) in &page.outputs {
        let Some((_, output)) = printed.iter().find(|(block, _)| block == name) else {
            if !page.blocks.iter().any(|(block, _)| block == name) {
                return Err(format!("{page_name} shows the output of {name}, which is no marked block"));
            }
            continue; // a block skipped for a missing tool
        };
        if let Err((line, after)) = shows(output, shown) {
            let after: String = after.lines().take(40).collect::<Vec<_>>().join("\n");
            return Err(format!(
                "{page_name}, block {name}: the page shows\n  {line}\nwhich is not in what it printed next (in order):\n{after}"
            ));
        }
    }
    eprintln!("{page_name}: {} blocks in {:.1} s", blocks.len(), page_begun.elapsed().as_secs_f64());
    Ok(blocks.len())
}

/// The PATH with the directory of the `toolenv` this test was built with first.
fn path_with_toolenv() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_toolenv")).parent().unwrap().to_owned();
    std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap()
}

#[test]
fn every_pages_marked_blocks_run_in_order() {
    let pages = toolenv_tests::doc_pages();
    let mut names = BTreeSet::new();
    for page in &pages {
        for (name, _) in &page.blocks {
            assert!(names.insert(name.as_str()), "two blocks are marked {name} (the second in {})", page.path);
        }
    }
    assert!(names.len() >= 15, "marked blocks: {names:?}");
    let path = path_with_toolenv();
    let started = Instant::now();
    // Pages share nothing (each its own directory and ports): a few at once,
    // each page's blocks in order; a failure is told in the pages' order.
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 4);
    let mut results: Vec<(usize, Result<usize, String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut ran = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(page) = pages.get(i) else { break ran };
                        ran.push((i, run_page(page, &path)));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|handle| handle.join().expect("a page's runner panicked")).collect()
    });
    results.sort_by_key(|(i, _)| *i);
    let ran: usize = results.into_iter().map(|(_, result)| result.unwrap_or_else(|failure| panic!("{failure}"))).sum();
    eprintln!("documentation: {ran} of {} marked blocks ran, {:.1} s in all", names.len(), started.elapsed().as_secs_f64());
}

/// A heading's anchor as GitHub and mdBook make it: lower case, spaces as
/// hyphens, punctuation left out.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn the_documentations_links_lead_somewhere_in_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let pages = toolenv_tests::doc_pages();
    for page in &pages {
        assert!(!page.text.contains("../shared"), "{} points outside the repository", page.path);
        let dir = Path::new(&page.path).parent().unwrap();
        for link in page.text.split("](").skip(1) {
            let target = link.split(')').next().unwrap_or_default();
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
            let linked = if file.is_empty() { page.path.clone() } else { dir.join(file).to_string_lossy().into_owned() };
            let on_disk = root.join(&linked);
            assert!(on_disk.exists(), "{}: the link to {target} leads nowhere ({} does not exist)", page.path, on_disk.display());
            if !fragment.is_empty() {
                let text = std::fs::read_to_string(&on_disk).unwrap();
                let anchors: Vec<String> =
                    text.lines().filter_map(|line| line.strip_prefix('#')).map(|h| anchor(h.trim_start_matches('#'))).collect();
                assert!(anchors.iter().any(|a| a == fragment), "{}: no heading of {linked} has the anchor #{fragment}", page.path);
            }
        }
    }
}

#[test]
fn shown_output_is_matched_line_by_line() {
    let printed = "a  b   c\nverdict: PASS\n  ok   x (expected 1, actual 1)\nfaults: 2 injected\n";
    assert_eq!(shows(printed, "a b c\n…\nverdict: PASS\nfaults: … injected\n"), Ok(()));
    assert_eq!(
        shows(printed, "verdict: PASS\na b c\n"),
        Err(("a b c", "  ok   x (expected 1, actual 1)\nfaults: 2 injected".to_owned())),
        "in order"
    );
    assert_eq!(shows(printed, "verdict: FAIL\n").map_err(|(line, _)| line), Err("verdict: FAIL"));
    assert!(matches("ok x (expected 1, actual 1)", "ok … (expected 1, …)"));
    assert!(!matches("ab", "a…b…b"));
    assert!(matches("a", "a…"));
    assert!(!matches("a", "ab"));
}

#[test]
fn a_page_must_stop_the_servers_it_starts() {
    let page = |block: &str| DocPage {
        path: "docs/example.md".to_owned(),
        text: String::new(),
        blocks: vec![("serve".to_owned(), block.to_owned())],
        outputs: vec![("serve".to_owned(), "verdict: PASS\n".to_owned())],
    };
    let serve = "toolenv serve --addr 127.0.0.1:50051 --no-store &\ntoolenv play travel/cheapest-flight/001 --url http://127.0.0.1:50051\n";
    let path = path_with_toolenv();
    assert_eq!(run_page(&page(&format!("{serve}kill %1; wait\n")), &path), Ok(1));
    let message = run_page(&page(serve), &path).expect_err("a server left running fails the page");
    assert!(message.contains("leaves a server running"), "{message}");
}
