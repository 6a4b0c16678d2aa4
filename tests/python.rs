//! One Python virtual environment for every test that runs Python: the
//! pinned packages of `python/requirements-test.txt` from PyPI (installed
//! once per target directory) and the `toolenv` package built from
//! `python/` (reinstalled when its sources or the proto changed, so it is
//! never stale and never rebuilt for nothing).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The repository's root.
pub fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The venv's Python, set up under `scratch` (a test's `CARGO_TARGET_TMPDIR`).
/// Panics with the failing command's output: a test cannot go on without it.
pub fn venv(scratch: &Path) -> PathBuf {
    static READY: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut ready = READY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(python) = ready.as_ref() {
        return python.clone();
    }
    let venv = scratch.join("python-venv");
    let python = installed(&venv, &repository().join("python/requirements-test.txt"));
    let stamp = venv.join("installed-package.txt");
    let sources = package_stamp();
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(sources.as_str()) {
        *ready = Some(python.clone());
        return python;
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
    python
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
pub fn venv_of(scratch: &Path, name: &str, requirements: &str) -> PathBuf {
    static READY: Mutex<()> = Mutex::new(());
    let _one_at_a_time = READY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    installed(&scratch.join(name), &repository().join(requirements))
}

/// The Python of `venv`, with the packages of `requirements` installed
/// (again only when the file changed since, or the venv is missing).
fn installed(venv: &Path, requirements: &Path) -> PathBuf {
    let wanted = std::fs::read_to_string(requirements).unwrap_or_else(|e| panic!("{}: {e}", requirements.display()));
    let python = venv.join("bin/python");
    let marker = venv.join("installed-requirements.txt");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(wanted.as_str()) || !python.exists() {
        run(Command::new("python3").args(["-m", "venv", "--clear"]).arg(venv), "python3 -m venv");
        run(
            Command::new(&python).args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r"]).arg(requirements),
            "pip install",
        );
        std::fs::write(&marker, wanted).expect("writing the venv's marker");
    }
    python
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
