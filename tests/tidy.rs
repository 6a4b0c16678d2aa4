//! Tidiness of the sources, checked as rust-analyzer's `tidy` does: every
//! source file opens with a `//!` header saying what it holds, and inside a
//! crate imports flow one way — no two sibling modules reach each other,
//! directly or round a circle. A module's siblings are the files and
//! folders beside it; a reference is a path from `crate::`, `super::` or
//! `self::` naming a sibling, in a `use` or in the code (test modules
//! may reach anywhere: they are not part of the structure).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates' source folders, from the repository's root: the root crate's
/// and every workspace member's `src` (read from the workspace's
/// `Cargo.toml`, so a new crate is checked without being listed here).
fn sources() -> Vec<String> {
    std::iter::once("src".to_owned())
        .chain(workspace_list("members").into_iter().map(|member| format!("{member}/src")))
        .filter(|dir| repository().join(dir).is_dir())
        .collect()
}

/// A one-line list of the workspace's `Cargo.toml` (`members`, `default-members`).
fn workspace_list(key: &str) -> Vec<String> {
    let manifest = std::fs::read_to_string(repository().join("Cargo.toml")).unwrap();
    let list = manifest
        .lines()
        .find_map(|line| line.strip_prefix(key)?.trim_start().strip_prefix("= ["))
        .unwrap_or_else(|| panic!("the workspace's Cargo.toml has no one-line `{key} = [...]`"));
    list.trim_end_matches(']').split(',').map(|member| member.trim().trim_matches('"').to_owned()).filter(|m| !m.is_empty()).collect()
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The module path of a source file: `src/html/sections.rs` is
/// `[html, sections]`, `src/html/mod.rs` `[html]`, `src/lib.rs` `[]`.
fn module_of(root: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(root).expect("a file under its crate's root");
    let mut path: Vec<String> = relative.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned()).collect();
    if path.last().is_some_and(|last| matches!(last.as_str(), "mod" | "lib" | "main")) {
        path.pop();
    }
    path
}

/// The modules a source file refers to, as absolute module paths (each
/// followed by whatever lowercase segments its reference names; the caller
/// keeps only the part that is a module).
fn references(module: &[String], text: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    // `foo.rs` and `foo/mod.rs` are both the module `foo`; `super` is its parent.
    let own = module.to_vec();
    let parent = |levels: usize| own.len().checked_sub(levels).map(|n| own[..n].to_vec());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        // A path starts at a word boundary.
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
        let (base, mut at) = if !boundary {
            (None, 0)
        } else if rest.starts_with("crate::") {
            (Some(Vec::new()), "crate::".len())
        } else if rest.starts_with("self::") {
            (Some(own.clone()), "self::".len())
        } else if rest.starts_with("super::") {
            let mut levels = 0;
            let mut at = 0;
            while rest[at..].starts_with("super::") {
                levels += 1;
                at += "super::".len();
            }
            (parent(levels), at)
        } else {
            (None, 0)
        };
        let Some(base) = base else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        // The segments after the base; a `{…}` group gives one path per item.
        let mut path = base.clone();
        loop {
            let segment: String = rest[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if segment.is_empty() {
                if rest[at..].starts_with('{') {
                    let group = &rest[at + 1..];
                    let end = group.find('}').unwrap_or(group.len());
                    for item in group[..end].split(',') {
                        let names: Vec<String> =
                            item.trim().split("::").map(str::trim).take_while(|s| is_module_name(s)).map(str::to_owned).collect();
                        if !names.is_empty() {
                            found.push(path.iter().cloned().chain(names).collect());
                        }
                    }
                }
                break;
            }
            if !is_module_name(&segment) {
                break;
            }
            at += segment.len();
            path.push(segment);
            if rest[at..].starts_with("::") {
                at += 2;
            } else {
                break;
            }
        }
        if path.len() > base.len() {
            found.push(path);
        }
        i += at.max(1);
    }
    found
}

fn is_module_name(segment: &str) -> bool {
    segment.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && segment.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The text of a file without its comments (a path in a doc comment is no
/// import) and without its inline test module: tests may reach anywhere.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// Whether a file is a test module (`tests.rs`, `foo_tests.rs`).
fn is_test_file(file: &Path) -> bool {
    file.file_stem().and_then(|s| s.to_str()).is_some_and(|stem| stem == "tests" || stem.ends_with("_tests"))
}

/// The sibling edges of a crate: for each parent module, which of its
/// children refers to which other child.
fn sibling_edges(root: &Path) -> BTreeMap<Vec<String>, BTreeSet<(String, String)>> {
    let files = rust_files(root);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(root, f)).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<(String, String)>> = BTreeMap::new();
    for file in files.iter().filter(|f| !is_test_file(f)) {
        let from = module_of(root, file);
        let text = std::fs::read_to_string(file).unwrap();
        for mut to in references(&from, &code(&text)) {
            // Keep the longest prefix that is a module of the crate.
            while !to.is_empty() && !modules.contains(&to) {
                to.pop();
            }
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            // An edge between two children of the common ancestor; a
            // reference up to an ancestor or down into oneself is none.
            if common < from.len() && common < to.len() {
                edges.entry(from[..common].to_vec()).or_default().insert((from[common].clone(), to[common].clone()));
            }
        }
    }
    edges
}

/// The circles among a parent's children: each set of two or more
/// children that all reach each other (a strongly connected component).
fn circles(edges: &BTreeSet<(String, String)>) -> Vec<BTreeSet<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(node) = stack.pop() {
            for (_, to) in edges.iter().filter(|(a, _)| *a == node) {
                if seen.insert(to.clone()) {
                    stack.push(to.clone());
                }
            }
        }
        seen
    };
    let nodes: BTreeSet<&String> = edges.iter().map(|(a, _)| a).collect();
    let reaches: BTreeMap<&String, BTreeSet<String>> = nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for node in &nodes {
        let circle: BTreeSet<String> = reaches[node]
            .iter()
            .filter(|other| reaches.get(other).is_some_and(|back| back.contains(*node)))
            .cloned()
            .chain(std::iter::once((*node).clone()))
            .collect();
        if circle.len() > 1 && !found.contains(&circle) {
            found.push(circle);
        }
    }
    found
}

#[test]
fn every_source_file_opens_with_a_header() {
    let root = repository();
    let missing: Vec<String> = sources()
        .iter()
        .flat_map(|dir| rust_files(&root.join(dir)))
        .filter(|file| !std::fs::read_to_string(file).unwrap().trim_start().starts_with("//!"))
        .map(|file| file.strip_prefix(&root).unwrap_or(&file).display().to_string())
        .collect();
    assert!(missing.is_empty(), "source files without a `//!` header saying what they hold:\n{}", missing.join("\n"));
}

#[test]
fn imports_flow_one_way_inside_each_crate() {
    let root = repository();
    let mut found = BTreeMap::new();
    for dir in sources() {
        for (parent, edges) in sibling_edges(&root.join(&dir)) {
            for circle in circles(&edges) {
                let at = if parent.is_empty() { String::new() } else { format!("{}/", parent.join("/")) };
                let members: Vec<&str> = circle.iter().map(String::as_str).collect();
                let inside: Vec<String> =
                    edges.iter().filter(|(a, b)| circle.contains(a) && circle.contains(b)).map(|(a, b)| format!("{a} → {b}")).collect();
                found.insert(format!("{dir}/{at}: {}", members.join(", ")), inside.join(", "));
            }
        }
    }
    let circles: Vec<String> = found.iter().map(|(name, edges)| format!("{name} ({edges})")).collect();
    assert!(circles.is_empty(), "modules that reach each other (make one depend on the other only):\n{}", circles.join("\n"));
}

/// What `cargo run` builds — the default members with their normal
/// dependencies, features unified — is what users run: a test-only feature
/// (tokio's `test-util` makes every clock read take a lock) belongs under
/// `[dev-dependencies]`, or in a crate that is not a default member.
#[test]
fn no_default_member_turns_on_a_test_feature() {
    let mut found = Vec::new();
    for member in workspace_list("default-members") {
        let path = repository().join(&member).join("Cargo.toml");
        let manifest = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut section = "";
        for line in manifest.lines() {
            if line.starts_with('[') {
                section = line.trim();
            } else if section.ends_with("dependencies]") && !section.contains("dev-") && line.contains("\"test-util\"") {
                found.push(format!("{member}/Cargo.toml {section}: {line}"));
            }
        }
    }
    assert!(found.is_empty(), "test-only features in what `cargo run` builds:\n{}", found.join("\n"));
}

#[test]
fn the_checker_sees_references_and_circles() {
    let module = |p: &[&str]| p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let found = references(
        &module(&["html", "sections"]),
        "use super::{markup::Tag, svg};\nuse crate::metrics::rates::Rate;\nfn f() { self::inner::g(); super::super::x(); }",
    );
    assert_eq!(
        found,
        vec![
            module(&["html", "markup"]),
            module(&["html", "svg"]),
            module(&["metrics", "rates"]),
            module(&["html", "sections", "inner", "g"]),
            module(&["x"])
        ]
    );
    let edges: BTreeSet<(String, String)> =
        [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")].iter().map(|(a, b)| ((*a).into(), (*b).into())).collect();
    assert_eq!(circles(&edges), vec![["a", "b", "c"].iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>()]);
    let one_way: BTreeSet<(String, String)> =
        [("a", "b"), ("b", "c"), ("a", "c")].iter().map(|(a, b)| ((*a).into(), (*b).into())).collect();
    assert!(circles(&one_way).is_empty());
}
