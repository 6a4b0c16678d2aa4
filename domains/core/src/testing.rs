//! Helpers for tests: a domain's tool called on a state directly, the seeds
//! a sweep plays, and committed snapshots checked (and written again under
//! `TOOLENV_BLESS`). Test support only: the engine itself reads no file and
//! no environment.

use std::path::Path;

use serde_json::Value;

use crate::date::Date;
use crate::tool::DomainError;
use crate::world::{Context, DomainState};

/// Calls one tool of a domain state directly, with arguments that must be
/// valid for its schema, on the given day. No rollback on error; the
/// result text must be canonical JSON.
pub fn call<S: DomainState>(state: &mut S, today: Date, tool: &str, args: Value) -> Result<Value, DomainError> {
    let tool = S::TOOLS.iter().find(|t| t.spec.name == tool).unwrap_or_else(|| panic!("no tool {tool}"));
    let name = tool.spec.name;
    let args = tool.spec.parse_arguments(&args.to_string()).unwrap_or_else(|e| panic!("invalid arguments for {name}: {e}"));
    let reply = tool.call(state, &args, &Context { today })?;
    let value: Value = serde_json::from_str(&reply.text).unwrap_or_else(|e| panic!("{name} wrote invalid json: {e}"));
    assert_eq!(crate::json::canonical(&value), reply.text, "{name} writes canonical json");
    Ok(value)
}

/// The seeds a sweep over `0..full` plays: every one where
/// `TOOLENV_FULL_SWEEPS` is set (`.ci/run` sets it), else `sampled` of
/// them spread evenly over the range (the first among them), so that a
/// developer's `cargo test` stays quick and CI still runs everything.
pub fn sweep_seeds(full: u64, sampled: u64) -> impl Iterator<Item = u64> {
    let step = if std::env::var_os("TOOLENV_FULL_SWEEPS").is_some() || sampled == 0 { 1 } else { full.div_ceil(sampled).max(1) };
    (0..full).step_by(usize::try_from(step).unwrap_or(usize::MAX))
}

/// Checks `actual` against the committed snapshot at `path`, writing it
/// there first when `TOOLENV_BLESS` is set (`TOOLENV_BLESS=1 cargo test …`
/// accepts a change). A mismatch says `changed` and shows the lines that
/// differ (the first [`SHOWN_LINES`] of them).
pub fn assert_snapshot(path: &Path, actual: &[u8], changed: &str) {
    if std::env::var_os("TOOLENV_BLESS").is_some() {
        std::fs::write(path, actual).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    let pinned = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e} (TOOLENV_BLESS=1 writes it)", path.display()));
    if pinned == actual {
        return;
    }
    fn lines(bytes: &[u8]) -> impl Iterator<Item = Option<&[u8]>> {
        bytes.split(|&b| b == b'\n').map(Some).chain(std::iter::repeat(None))
    }
    let count = pinned.split(|&b| b == b'\n').count().max(actual.split(|&b| b == b'\n').count());
    let differing: Vec<_> = lines(&pinned).zip(lines(actual)).take(count).enumerate().filter(|(_, (was, now))| was != now).collect();
    let show = |line: Option<&[u8]>| line.map_or_else(|| "(no line)".to_owned(), |line| String::from_utf8_lossy(line).into_owned());
    let mut message = format!("{}: {changed} (TOOLENV_BLESS=1 accepts it); {} line(s) differ", path.display(), differing.len());
    for (number, (was, now)) in differing.iter().take(SHOWN_LINES) {
        message.push_str(&format!("\nline {}:\n- {}\n+ {}", number + 1, show(*was), show(*now)));
    }
    panic!("{message}");
}

/// How many differing lines a failed [`assert_snapshot`] shows.
pub const SHOWN_LINES: usize = 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_mismatch_shows_the_lines_that_differ() {
        if std::env::var_os("TOOLENV_BLESS").is_some() {
            return; // blessing would write the file instead
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("snapshot.txt");
        std::fs::write(&path, "a\nb\nc\n").unwrap();
        assert_snapshot(&path, b"a\nb\nc\n", "unchanged");
        let failure = std::panic::catch_unwind(|| assert_snapshot(&path, b"a\nB\nc\n", "changed")).expect_err("a mismatch fails");
        let message = failure.downcast_ref::<String>().expect("a message");
        assert!(message.contains("changed") && message.contains("1 line(s) differ\nline 2:\n- b\n+ B"), "{message}");
        let failure = std::panic::catch_unwind(|| assert_snapshot(&path, b"a\nb\n", "shorter")).expect_err("a shorter file fails");
        assert!(
            failure.downcast_ref::<String>().expect("a message").ends_with("2 line(s) differ\nline 3:\n- c\n+ \nline 4:\n- \n+ (no line)"),
            "the missing line is shown"
        );
    }
}
