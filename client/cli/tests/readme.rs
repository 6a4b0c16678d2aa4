//! The README's marked command blocks (`<!-- readme-check: NAME -->` before
//! a sh block), run in order the way a newcomer would: in a scratch
//! directory, with `toolenv` on the PATH (the binary this test was built
//! with, standing for `cargo install`), `cargo run --release --` read as
//! `toolenv`, and free ports in place of 50051 and 9464. Each block runs in one bash
//! with `set -e`; a server a block starts with `&` is waited for, and
//! stopped when the block ends.

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The most one block may take with the debug binary.
const BLOCK_LIMIT: Duration = Duration::from_secs(90);

/// The block as the shell runs it.
fn script(block: &str, port: u16, metrics_port: u16) -> String {
    let mut out = String::from("set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n");
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
            out.push_str(&format!("for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; sleep 0.1; done\n"));
        }
    }
    out
}

/// Two distinct free ports: both listeners are held until both ports are
/// known (one dropped at once could be handed out again as the second).
fn free_ports() -> (u16, u16) {
    let bind = || std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (a, b) = (bind(), bind());
    (a.local_addr().unwrap().port(), b.local_addr().unwrap().port())
}

#[test]
fn the_readmes_marked_blocks_run_in_order() {
    let blocks = toolenv_tests::readme_blocks();
    assert!(blocks.len() >= 5, "marked blocks: {:?}", blocks.iter().map(|b| &b.0).collect::<Vec<_>>());
    let dir = tempfile::tempdir().unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_toolenv")).parent().unwrap().to_owned();
    let path =
        std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap();
    let started = Instant::now();
    for (name, block) in blocks {
        // Tools a newcomer installs from their system's packages, not from this repository.
        let missing = [("openssl", "version"), ("curl", "--version")].into_iter().find(|(tool, version)| {
            block.contains(&format!("{tool} ")) && Command::new(tool).arg(version).output().map_or(true, |o| !o.status.success())
        });
        if let Some((tool, _)) = missing {
            eprintln!("README block {name}: {tool} is not installed, skipped");
            continue;
        }
        let (port, metrics_port) = free_ports();
        let script = script(&block, port, metrics_port);
        let begun = Instant::now();
        let mut child = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env_remove("TOOLENV_URL")
            .env_remove("TOOLENV_STORE")
            .env_remove("TOOLENV_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (mut stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let out = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stdout.read_to_string(&mut text);
            text
        });
        let err = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if begun.elapsed() > BLOCK_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
        let tail = |text: &str| text.lines().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
        match status {
            Some(status) if status.success() => {}
            Some(status) => {
                panic!("README block {name} failed ({status}):\n{script}\n--- stdout\n{}\n--- stderr\n{}", tail(&stdout), tail(&stderr))
            }
            None => panic!("README block {name} took over {BLOCK_LIMIT:?}:\n{script}\n--- stderr\n{}", tail(&stderr)),
        }
        eprintln!("README block {name}: ok in {:.1} s", begun.elapsed().as_secs_f64());
        if name == "hosted" {
            assert!(stdout.contains("run-0001") && stdout.contains("== agent my-agent"), "{stdout}");
        }
    }
    eprintln!("README blocks: {:.1} s in all", started.elapsed().as_secs_f64());
}
