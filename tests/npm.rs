//! Packages from npm for the tests that drive servers nobody here wrote:
//! installed once per checkout under the tests' scratch directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The `node_modules/.bin` of `spec` (an exact `name@version`) installed
/// under `scratch/dir`; `None`, said on stderr, when npm is not on this
/// machine, unless `TOOLENV_REQUIRE_NPM` is set (as `.ci/run` sets it), when
/// it fails instead.
pub fn package(scratch: &Path, dir: &str, spec: &str) -> Option<PathBuf> {
    static READY: Mutex<()> = Mutex::new(());
    let _one_at_a_time = READY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if Command::new("npm").arg("--version").output().is_err() {
        assert!(std::env::var_os("TOOLENV_REQUIRE_NPM").is_none(), "npm is required here (TOOLENV_REQUIRE_NPM) and not found");
        crate::skipped(&format!("npm is not installed, so {spec} cannot be (.ci/run installs Debian's npm)"));
        return None;
    }
    let prefix = scratch.join(dir);
    let marker = prefix.join("installed.txt");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(spec) {
        let output = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(spec)
            .output()
            .unwrap_or_else(|e| panic!("npm install {spec}: {e}"));
        assert!(output.status.success(), "npm install {spec} failed:\n{}", String::from_utf8_lossy(&output.stderr));
        std::fs::write(&marker, spec).expect("writing the package's marker");
    }
    Some(prefix.join("node_modules/.bin"))
}
