//! Packages from npm for the tests that drive servers nobody here wrote:
//! installed once per checkout under the tests' scratch directory by
//! `tests/deps.sh` (which `.ci/run` runs; a test installs nothing).

use std::path::{Path, PathBuf};

/// The `node_modules/.bin` of the package `tests/fixtures/<dir>.txt` names
/// (an exact `name@version`), which `tests/deps.sh` installed under
/// `scratch/dir`; `None`, said on stderr, when it is not there, unless
/// `TOOLENV_REQUIRE_NPM` is set (as `.ci/run` sets it), when it fails instead.
pub fn package(scratch: &Path, dir: &str) -> Option<PathBuf> {
    let named = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(format!("{dir}.txt"));
    let spec = std::fs::read_to_string(&named).unwrap_or_else(|e| panic!("{}: {e}", named.display()));
    let spec = spec.trim();
    let prefix = scratch.join(dir);
    let installed = std::fs::read_to_string(prefix.join("installed.txt")).ok();
    if installed.as_deref() != Some(spec) {
        let why = format!("{spec} is not installed under {}: run `bash tests/deps.sh` (.ci/run does)", prefix.display());
        crate::skipped_unless_required("TOOLENV_REQUIRE_NPM", &why);
        return None;
    }
    Some(prefix.join("node_modules/.bin"))
}
