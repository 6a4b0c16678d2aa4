#!/usr/bin/env bash
# The replicas' figures, in one run on this machine: calls and episodes per
# second with 16 clients against a single process without proxy, one replica
# without proxy, and HAProxy in front of 1, 2 and 3 replicas on one
# PostgreSQL store (the cluster of tests/drill/cluster.sh); then the durable
# log's cost per call, lease claims per second and rebuild times
# (toolenv-bench-replicas on the same database).
#
# Usage: bench/replicas.sh   (builds release binaries; a few minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$PWD/target/bench-replicas
rm -rf "$out" && mkdir -p "$out"
cargo build --locked --quiet --release -p toolenv-cli --bin toolenv -p toolenv-bench --bin toolenv-bench-replicas
toolenv=$PWD/target/release/toolenv
PG_FSYNC=on source tests/drill/cluster.sh

single_port=$(free_port)
"$toolenv" serve --addr "127.0.0.1:$single_port" --no-store --time-scale 0 >"$out/single.log" 2>&1 &
pids+=("$!")
for n in 1 2 3; do start_replica "$n"; done
for port in "$single_port" "${ports[@]}"; do wait_port "$port"; done
targets="single process (no proxy)=http://127.0.0.1:$single_port,1 replica (no proxy)=http://127.0.0.1:${ports[1]}"
for n in 1 2 3; do
    start_proxy "$n"
    targets+=",HAProxy + $n replica(s)=http://127.0.0.1:$proxy_port"
done
echo "$(nproc) cores; PostgreSQL with fsync on, on this machine's disk"
TOOLENV_BENCH_TARGETS=$targets target/release/toolenv-bench-replicas
TOOLENV_BENCH_PG=$url target/release/toolenv-bench-replicas
