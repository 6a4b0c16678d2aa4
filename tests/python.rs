//! One Python virtual environment for every test that runs Python: the
//! pinned packages of `python/requirements-test.txt` from PyPI, installed by
//! `tests/deps.sh` (which `.ci/run` runs; a test installs nothing
//! from the network), and the `toolenv` package built from `python/`
//! (reinstalled here, offline, when its sources or the proto changed, so it
//! is never stale and never rebuilt for nothing).
//!
//! Without the script's venvs a test that needs one says so on stderr and
//! skips; with `TOOLENV_REQUIRE_PYTHON=1` (as `.ci/run` sets) it fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The repository's root.
pub fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The venv's Python under `scratch` (a test's `CARGO_TARGET_TMPDIR`), with
/// the toolenv package up to date, or `None` (the test skips) when
/// `tests/deps.sh` has not made it. Panics with the failing
/// command's output when the package does not install.
pub fn venv(scratch: &Path) -> Option<PathBuf> {
    static READY: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut ready = READY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(python) = ready.as_ref() {
        return Some(python.clone());
    }
    let venv = scratch.join("python-venv");
    let python = installed(&venv, "python/requirements-test.txt")?;
    let stamp = venv.join("installed-package.txt");
    let sources = package_stamp();
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(sources.as_str()) {
        *ready = Some(python.clone());
        return Some(python);
    }
    // The package, with stubs generated from proto/ by its build, using the
    // venv's pinned grpcio-tools (no isolated build environment to download).
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-build-isolation",
                "--no-deps",
                "--force-reinstall",
            ])
            .arg(repository().join("python")),
        "pip install ./python",
    );
    std::fs::write(&stamp, sources).expect("writing the package's stamp");
    *ready = Some(python.clone());
    Some(python)
}

/// What the installed package is built from: every file of `python/` but
/// its tests, build output and caches, and the proto its stubs come from,
/// as (path, length, hash) lines.
fn package_stamp() -> String {
    use std::hash::{Hash as _, Hasher as _};
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let skipped = matches!(name.to_str(), Some("tests" | "build" | "__pycache__" | ".pytest_cache"))
                || name.to_str().is_some_and(|n| n.ends_with(".egg-info"));
            if path.is_dir() && !skipped {
                walk(&path, files);
            } else if path.is_file() {
                files.push(path);
            }
        }
    }
    let root = repository();
    let mut files = vec![root.join("proto/toolenv/v1/toolenv.proto")];
    walk(&root.join("python"), &mut files);
    files.sort();
    files
        .iter()
        .map(|file| {
            let bytes = std::fs::read(file).unwrap_or_default();
            let mut hasher = std::hash::DefaultHasher::new();
            bytes.hash(&mut hasher);
            format!("{} {} {:016x}\n", file.strip_prefix(&root).unwrap_or(file).display(), bytes.len(), hasher.finish())
        })
        .collect()
}

/// A venv of its own under `scratch/name` with the pinned packages of
/// `requirements` (a path from the repository's root) and not the toolenv
/// package: for examples whose packages cannot share the tests' venv.
/// `None` (the test skips) when `tests/deps.sh` has not made it.
pub fn venv_of(scratch: &Path, name: &str, requirements: &str) -> Option<PathBuf> {
    installed(&scratch.join(name), requirements)
}

/// The Python of `venv` if `tests/deps.sh` installed the packages of
/// `requirements` (a path from the repository's root) in it as the file now
/// pins them; otherwise says why on stderr and returns `None`, or fails
/// under `TOOLENV_REQUIRE_PYTHON`.
fn installed(venv: &Path, requirements: &str) -> Option<PathBuf> {
    let path = repository().join(requirements);
    let wanted = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let python = venv.join("bin/python");
    let marker = venv.join("installed-requirements.txt");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(wanted.as_str()) && python.exists() {
        return Some(python);
    }
    let why = format!("no venv at {} with {requirements} installed: run `bash tests/deps.sh` (.ci/run does)", venv.display());
    crate::skipped_unless_required("TOOLENV_REQUIRE_PYTHON", &why);
    None
}

fn run(command: &mut Command, what: &str) {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: cannot run: {e} (the test needs python3 with venv)"));
    assert!(
        output.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
