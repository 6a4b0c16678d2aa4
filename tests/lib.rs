//! Helpers the end-to-end tests share with the command line's tests: what a
//! test skipped and why, the Python and npm environments `tests/deps.sh`
//! makes, a throwaway PostgreSQL cluster, a held loopback port, and the
//! documentation's pages and command blocks. (Starting a server and playing
//! episodes is the end-to-end test target's own `support` module: this
//! library is a default member of the workspace, so `cargo run --release`
//! compiles it, and it stays small.)
#![forbid(unsafe_code)]

pub mod npm;
pub mod postgres;
pub mod python;

/// Says on the terminal what a test did not run and why. Written to the
/// process's stderr itself, which the test harness does not capture (it
/// captures `eprintln!`, and shows it only for a failing test), so a plain
/// `cargo test` that passes still lists what it skipped.
pub fn skipped(why: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why}");
}

/// [`skipped`] for want of something `.ci/run` installs, unless the
/// environment variable `required` is set (as `.ci/run` sets it), when the
/// test fails instead.
pub fn skipped_unless_required(required: &str, why: &str) {
    assert!(std::env::var_os(required).is_none(), "{required} is set: {why}");
    skipped(why);
}

/// A loopback port held for as long as the returned socket lives: bound
/// but not listening, so nothing listens there, and no server another test
/// starts on port 0 meanwhile is handed it (as it can be a dropped
/// listener's, or a stopped server's). Bound with SO_REUSEADDR, so that a
/// server told to use this very port (PostgreSQL, restarted on it) can.
pub fn held_port() -> (socket2::Socket, std::net::SocketAddr) {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("a socket");
    socket.set_reuse_address(true).expect("SO_REUSEADDR");
    socket.bind(&std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, 0)).into()).expect("a loopback port");
    let addr = socket.local_addr().ok().and_then(|addr| addr.as_socket()).expect("its address");
    (socket, addr)
}

/// A page of the documentation as the docs check reads it: the README or a
/// page of the book in `docs/`.
#[derive(Debug)]
pub struct DocPage {
    /// Its path from the repository's root (`README.md`, `docs/faults.md`).
    pub path: String,
    /// Its text.
    pub text: String,
    /// Its command blocks marked for checking, in order: each `sh` block right
    /// after a `<!-- readme-check: NAME -->` line, as (NAME, the block's lines
    /// without their indentation).
    pub blocks: Vec<(String, String)>,
    /// The output it shows for its blocks: each `text` block right after a
    /// `<!-- readme-output: NAME -->` line, as (NAME, its lines).
    pub outputs: Vec<(String, String)>,
}

/// The documentation's pages in reading order: the README, then every page
/// of `docs/SUMMARY.md` in its order. A page of `docs/` that SUMMARY.md does
/// not list would escape the check, so it is an error.
pub fn doc_pages() -> Vec<DocPage> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    let summary = read("docs/SUMMARY.md");
    let mut paths = vec!["README.md".to_owned()];
    for link in summary.split("](").skip(1) {
        let target = link.split(')').next().unwrap_or_default();
        assert!(target.ends_with(".md") && !target.contains('/'), "SUMMARY.md links to {target}: pages sit in docs/ itself");
        paths.push(format!("docs/{target}"));
    }
    let on_disk = std::fs::read_dir(root.join("docs")).expect("docs/");
    for entry in on_disk {
        let name = entry.expect("an entry of docs/").file_name().to_string_lossy().into_owned();
        let path = format!("docs/{name}");
        assert!(!name.ends_with(".md") || name == "SUMMARY.md" || paths.contains(&path), "{path} is not in docs/SUMMARY.md");
    }
    paths
        .into_iter()
        .map(|path| {
            let text = read(&path);
            let blocks = fenced_after(&path, &text, "readme-check", "sh");
            let outputs = fenced_after(&path, &text, "readme-output", "text");
            DocPage { path, text, blocks, outputs }
        })
        .collect()
}

/// The fenced blocks of `text` each right after a `<!-- MARK: NAME -->`
/// line, which must open with ```` ```LANGUAGE ````: (NAME, the block's lines
/// without their indentation).
fn fenced_after(path: &str, text: &str, mark: &str, language: &str) -> Vec<(String, String)> {
    let prefix = format!("<!-- {mark}: ");
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line.trim().strip_prefix(prefix.as_str()).and_then(|l| l.strip_suffix(" -->")) else { continue };
        let fence = lines.next().unwrap_or_default();
        assert_eq!(fence.trim(), format!("```{language}"), "{path}: the block marked {mark}: {name} does not start with ```{language}");
        let indent = fence.len() - fence.trim_start().len();
        let body: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").map(|l| l.get(indent..).unwrap_or(l.trim())).collect();
        blocks.push((name.to_owned(), body.join("\n") + "\n"));
    }
    blocks
}

/// The command blocks marked for checking in the README and every page of
/// the book, in reading order (see [`doc_pages`]), as (NAME, the block).
pub fn readme_blocks() -> Vec<(String, String)> {
    doc_pages().into_iter().flat_map(|page| page.blocks).collect()
}

/// The README block marked `name` (see [`readme_blocks`]).
pub fn readme_block(name: &str) -> String {
    readme_blocks().into_iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no README block marked {name}")).1
}
