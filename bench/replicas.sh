#!/usr/bin/env bash
# The replicas' figures, in one run on this machine: calls and episodes per
# second with 16 clients against a single process without proxy, one replica
# without proxy (logging each call, and with --durability finish), and
# HAProxy in front of 1, 2 and 3 replicas on one
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
# A replica that logs an episode at its first call and its finish only.
finish_port=$(free_port)
"$toolenv" serve --addr "127.0.0.1:$finish_port" --store "$url" --time-scale 0 --durability finish >"$out/finish.log" 2>&1 &
pids+=("$!")
for port in "$single_port" "${ports[@]}" "$finish_port"; do wait_port "$port"; done
targets="single process (no proxy)=http://127.0.0.1:$single_port,1 replica (no proxy)=http://127.0.0.1:${ports[1]}"
targets+=",1 replica --durability finish (no proxy)=http://127.0.0.1:$finish_port"
for n in 1 2 3; do
    start_proxy "$n"
    targets+=",HAProxy + $n replica(s)=http://127.0.0.1:$proxy_port"
done
echo "$(nproc) cores; PostgreSQL with fsync on, on this machine's disk"
TOOLENV_BENCH_TARGETS=$targets target/release/toolenv-bench-replicas
TOOLENV_BENCH_PG=$url target/release/toolenv-bench-replicas
