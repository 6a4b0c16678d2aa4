//! The deployment files (Dockerfile, .dockerignore, deploy/) hold the
//! properties that make them work as their headers say, checked on their
//! text; and the validators that are installed (`haproxy -c`,
//! `check-jsonschema` with the Compose schema, `kubernetes-validate`)
//! accept them. A validator that is missing is skipped with a printed reason.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The lines that are not comments, trimmed.
fn code(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#')).collect()
}

/// The leading comment block.
fn header(text: &str) -> String {
    text.lines().take_while(|line| line.starts_with('#')).collect::<Vec<_>>().join("\n")
}

/// Runs a validator when it is installed; `None` (with the reason printed) when it is not.
fn validate(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Option<std::process::Output> {
    match Command::new(program).args(args).envs(envs.iter().copied()).current_dir(root()).output() {
        Ok(output) => Some(output),
        Err(error) => {
            toolenv_tests::skipped(&format!("{program} is not installed here ({error})"));
            None
        }
    }
}

/// Kubernetes always pulls a `:latest` image unless told otherwise, so a
/// locally built toolenv image would never start; and the replicas require a
/// token from a Secret.
#[test]
fn kubernetes_runs_the_local_image_and_requires_a_token() {
    let manifests = read("deploy/kubernetes/toolenv.yaml");
    let toolenv: Vec<&str> = manifests.split("\n---\n").filter(|doc| doc.contains("image: toolenv")).collect();
    assert_eq!(toolenv.len(), 1, "one Deployment runs the toolenv image");
    let deployment = code(toolenv[0]);
    assert!(
        deployment.iter().any(|line| *line == "imagePullPolicy: IfNotPresent" || *line == "imagePullPolicy: Never"),
        "the toolenv container needs imagePullPolicy IfNotPresent or Never"
    );
    let token = deployment.iter().position(|line| *line == "- name: TOOLENV_TOKEN").expect("TOOLENV_TOKEN in the replicas' env");
    assert!(deployment[token + 1].starts_with("valueFrom: { secretKeyRef:"), "the token comes from a Secret: {}", deployment[token + 1]);
    assert!(header(&manifests).contains("toolenv-token"), "the header says how to create the token's Secret");

    if let Some(output) = validate("kubernetes-validate", &["--strict", "--quiet", "deploy/kubernetes/toolenv.yaml"], &[]) {
        assert!(
            output.status.success(),
            "kubernetes-validate: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Compose builds the toolenv image once, and every replica requires a token.
#[test]
fn compose_builds_once_and_requires_a_token() {
    let compose = read("deploy/compose.yaml");
    let lines = code(&compose);
    let builds = lines.iter().filter(|line| line.starts_with("build:")).count();
    assert_eq!(builds, 1, "one service builds the image, the others run it");
    assert!(!compose.contains("toolenv:latest"), "a local image is not :latest (compose would pull it)");
    // The replicas share one anchored block: it names the built image and the token.
    let anchor = compose.split("x-replica: &replica\n").nth(1).expect("the x-replica block");
    let anchor: String = anchor.lines().take_while(|line| line.starts_with(' ')).collect::<Vec<_>>().join("\n");
    assert!(anchor.contains("image: toolenv:local"), "{anchor}");
    assert!(anchor.contains("TOOLENV_TOKEN: ${TOOLENV_TOKEN:?"), "the token is required, with no default: {anchor}");
    let replicas: Vec<&str> = lines.iter().copied().filter(|line| line.starts_with("replica") && line.contains(':')).collect();
    assert_eq!(replicas.len(), 3, "{replicas:?}");
    let built_by = lines.iter().position(|line| line.starts_with("build:")).expect("a build");
    assert_eq!(lines[built_by - 1], "<<: *replica", "the building service is a replica");
    for replica in replicas.iter().filter(|line| !line.ends_with(':')) {
        assert!(replica.ends_with("*replica"), "{replica}");
    }
    assert!(header(&compose).contains("TOOLENV_TOKEN"), "the header says where the token comes from");

    let schema = ["--builtin-schema", "vendor.compose-spec", "deploy/compose.yaml"];
    if let Some(output) = validate("check-jsonschema", &schema, &[]) {
        assert!(
            output.status.success(),
            "compose-spec: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// HAProxy re-resolves the replicas' names (a recreated replica gets a new
/// address) and keeps an episode on one replica.
#[test]
fn haproxy_resolves_replicas_again_and_hashes_episodes() {
    let cfg = read("deploy/haproxy/haproxy.cfg");
    let lines = code(&cfg);
    let resolvers = lines.iter().find_map(|line| line.strip_prefix("resolvers ")).expect("a resolvers section");
    assert!(lines.iter().any(|line| line.starts_with("nameserver ") && line.ends_with("127.0.0.11:53")), "Docker's DNS");
    let default_server = lines.iter().find(|line| line.starts_with("default-server ")).expect("a default-server line");
    assert!(default_server.contains(&format!("resolvers {resolvers}")), "{default_server}");
    assert!(default_server.contains("init-addr last,libc,none"), "{default_server}");
    assert!(lines.contains(&"balance hdr(x-toolenv-episode)"), "an episode stays on one replica");

    let envs = [
        ("PROXY_ADDR", "127.0.0.1:50051"),
        ("REPLICA_1", "replica1:50051"),
        ("REPLICA_2", "replica2:50051"),
        ("REPLICA_3", "replica3:50051"),
    ];
    if let Some(output) = validate("haproxy", &["-c", "-f", "deploy/haproxy/haproxy.cfg"], &envs) {
        let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success() && printed.contains("Configuration file is valid"), "haproxy -c: {printed}");
    }
}

/// Whether a .dockerignore pattern matches a path: `*` within one path
/// component, `**` across any number; a matched directory takes its contents.
fn ignored(patterns: &[&str], path: &str) -> bool {
    fn glob(pattern: &[u8], name: &[u8]) -> bool {
        match (pattern.first(), name.first()) {
            (None, None) => true,
            (Some(b'*'), _) => glob(&pattern[1..], name) || (!name.is_empty() && glob(pattern, &name[1..])),
            (Some(p), Some(n)) if p == n => glob(&pattern[1..], &name[1..]),
            _ => false,
        }
    }
    fn components(pattern: &[&str], path: &[&str]) -> bool {
        match (pattern.first(), path.first()) {
            (None, _) => true, // the rest is inside a matched directory
            (Some(&"**"), _) => components(&pattern[1..], path) || (!path.is_empty() && components(pattern, &path[1..])),
            (Some(p), Some(n)) => glob(p.as_bytes(), n.as_bytes()) && components(&pattern[1..], &path[1..]),
            (Some(_), None) => false,
        }
    }
    let path: Vec<&str> = path.split('/').collect();
    patterns.iter().any(|pattern| {
        let pattern: Vec<&str> = pattern.trim_matches('/').split('/').collect();
        components(&pattern, &path)
    })
}

/// The build context leaves out the virtual environments the docs create
/// (hundreds of megabytes) and run stores, and keeps the sources.
#[test]
fn dockerignore_leaves_out_virtual_environments_and_stores() {
    let dockerignore = read(".dockerignore");
    let patterns = code(&dockerignore);
    assert!(patterns.iter().all(|pattern| !pattern.starts_with('!')), "no exceptions: the matcher here does not model them");
    for path in [
        ".venv/lib/python3.11/site-packages/x.py",
        "venv/bin/python",
        "agents-venv/bin/python",
        "langgraph-venv/bin/pip",
        "python/.venv/bin/python",
        "toolenv.db",
        "toolenv.db-wal",
        "python/toolenv.db",
        "target/debug/toolenv",
        ".git/HEAD",
    ] {
        assert!(ignored(&patterns, path), "{path} is sent to the build");
    }
    for path in [
        "Cargo.toml",
        "Cargo.lock",
        "client/cli/src/main.rs",
        "src/pb.rs",
        "src/descriptor_set.bin",
        "proto/toolenv.proto",
        "python/pyproject.toml",
    ] {
        assert!(!ignored(&patterns, path), "{path} is left out of the build");
    }
}

/// The runtime image's working directory belongs to its user, so the
/// default store (toolenv.db, relative to it) can be created there.
#[test]
fn the_runtime_image_works_in_a_directory_of_its_own() {
    let dockerfile = read("Dockerfile");
    let runtime = dockerfile.rsplit("\nFROM ").next().expect("a runtime stage");
    let lines = code(runtime);
    let workdir = lines.iter().find_map(|line| line.strip_prefix("WORKDIR ")).expect("the runtime stage sets WORKDIR");
    assert!(lines.contains(&"USER nonroot:nonroot"), "{runtime}");
    let owned = lines.iter().any(|line| {
        line.starts_with("COPY ")
            && (line.contains("--chown=65532:65532") || line.contains("--chown=nonroot:nonroot"))
            && line.ends_with(&format!(" {workdir}"))
    });
    assert!(owned, "WORKDIR {workdir} must be copied in owned by nonroot (WORKDIR alone creates it owned by root)");
}
