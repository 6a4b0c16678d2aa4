#!/usr/bin/env bash
# The failover drill: PostgreSQL from initdb in a temporary directory on a
# loopback port, three `toolenv serve --store postgres://…` replicas behind
# HAProxy (deploy/haproxy/haproxy.cfg: HTTP/2, episodes hashed by id), a
# hosted run of 1,080 episodes played by 16 workers through the proxy. Mid-run
# one replica is killed with SIGKILL twice (and restarted each time) and
# PostgreSQL is restarted once. Checks: every planned episode ends with
# exactly one verdict, and the run's report (its figures, as JSON) equals a
# single-process run of the same grid byte for byte. Prints how many
# episodes the replicas rebuilt by replay.
#
# Beside it, a lease probe: a second run with long leases (60 s) played by
# slow workers (`work --think-ms`, longer than the replicas' idle timeout, so
# the replica drops each copy between calls and rebuilds it from the log),
# through the same kills. Checks: no live lease refused as expired, and every
# probe episode passed.
#
# The cluster is tests/drill/cluster.sh's, which installs Debian's postgresql
# and haproxy when missing (apt-get, as root).
# Usage: tests/drill/failover.sh   (from anywhere; run by .ci/run)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${DRILL_OUT:-$PWD/target/drill}
rm -rf "$out" && mkdir -p "$out"
started=$SECONDS

# TOOLENV_BIN: a toolenv binary to drill instead of building this checkout's.
toolenv=${TOOLENV_BIN:-}
if [ -z "$toolenv" ]; then
    cargo build --locked --quiet -p toolenv-cli --bin toolenv
    toolenv=$PWD/target/debug/toolenv
fi
source tests/drill/cluster.sh

# Three replicas and the proxy; copies idle for a second are dropped (the
# durable log keeps the episode), which the lease probe relies on.
replica_args=(--idle-timeout-secs 1)
for n in 1 2 3; do start_replica "$n"; done
for n in 1 2 3; do wait_port "${ports[$n]}"; done
start_proxy 3
proxy=http://127.0.0.1:$proxy_port

grid=(--epsilon 0,0.1,0.2 --faults 0.0,0.2 --trials 9 --time-scale 0)
run=$("$toolenv" --url "$proxy" host "${grid[@]}" --label reference --lease-timeout-secs 2 --no-wait 2>"$out/host.log" | grep -o 'run-[0-9]*' | head -1) || true
if [ -z "$run" ]; then
    echo "failover drill: host planned no run; its output:" >&2
    cat "$out/host.log" >&2
    exit 1
fi
planned=$("$toolenv" --url "$proxy" runs 2>/dev/null | awk -v r="$run" '$1 == r {print}' | grep -o '[0-9]*/[0-9]*' | head -1 | cut -d/ -f2)
echo "hosted $run ($planned episodes) on three replicas behind HAProxy; 16 workers"

# 16 workers; one that stops on an infrastructure error (its replica died
# mid-call) starts again: the abandoned episode's lease expires and another
# worker plays it from the start.
for w in $(seq 1 16); do
    (for _ in $(seq 1 40); do
        "$toolenv" --url "$proxy" work "$run" --agent reference --workers 1 >>"$out/worker$w.log" 2>&1 && exit 0
        sleep 0.2
    done; exit 1) &
    pids+=("$!")
    workers+=("$!")
done

# The lease probe: two slow workers on a run with long leases.
probe=$("$toolenv" --url "$proxy" host --domain scheduling --trials 3 --label reference --lease-timeout-secs 60 --no-wait 2>"$out/probe-host.log" | grep -o 'run-[0-9]*' | head -1) || true
[ -n "$probe" ] || { echo "failover drill: the lease probe's run was not planned:" >&2; cat "$out/probe-host.log" >&2; exit 1; }
"$toolenv" --url "$proxy" work "$probe" --agent reference --workers 2 --think-ms 1500 >"$out/probe.log" 2>&1 &
probe_worker=$!
pids+=("$probe_worker")

verdicts() { psql_run -c "SELECT COUNT(*) FROM episodes WHERE run_id = '$run' AND passed IS NOT NULL" 2>/dev/null || echo 0; }
deadline=$((SECONDS + 170))
wait_for() {
    while [ "$(verdicts)" -lt "$1" ]; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "FAILED: stuck at $(verdicts) verdicts"; exit 1; }
        sleep 0.1
    done
}

wait_for $((planned / 6))
echo "SIGKILL replica 2 at $(verdicts) verdicts"; kill -9 "${replica_pids[2]}"; sleep 0.5; start_replica 2
wait_for $((planned / 3))
echo "restarting PostgreSQL at $(verdicts) verdicts"; as_pg "$pgbin/pg_ctl" stop -D "$pg_data" -m fast -w >/dev/null; pg_start
wait_for $((planned / 2))
echo "SIGKILL replica 2 at $(verdicts) verdicts"; kill -9 "${replica_pids[2]}"; sleep 0.5; start_replica 2
for pid in "${workers[@]}"; do wait "$pid" || { echo "FAILED: a worker kept failing (see $out/worker*.log)"; exit 1; }; done
echo "every worker done at $(verdicts) verdicts"
wait "$probe_worker" || { echo "FAILED: the lease probe's worker failed:"; cat "$out/probe.log"; exit 1; }
grep -q "; 0 lost to expired leases" "$out/probe.log" || { echo "FAILED: the lease probe lost live leases:"; cat "$out/probe.log"; exit 1; }
probe_counts=$(psql_run -c "SELECT COUNT(*), COUNT(*) FILTER (WHERE passed) FROM episodes WHERE run_id = '$probe'")
[ "${probe_counts%|*}" -gt 0 ] && [ "${probe_counts%|*}" = "${probe_counts#*|}" ] || { echo "FAILED: lease probe episodes (rows|passed) = $probe_counts"; exit 1; }

# Exactly one verdict per planned episode (the key allows no second row).
counts=$(psql_run -c "SELECT COUNT(*), COUNT(DISTINCT plan_index), COUNT(*) FILTER (WHERE passed IS NULL) FROM episodes WHERE run_id = '$run'")
[ "$counts" = "$planned|$planned|0" ] || { echo "FAILED: episodes (rows|distinct|infra errors) = $counts, planned $planned"; exit 1; }

# The report equals a single process's, byte for byte (the figures; the run's
# own id, description and times differ by nature).
"$toolenv" report "$run" --json --store "$url" >"$out/replicas.json"
"$toolenv" export "$run" --store "$url" >"$out/replicas.jsonl"   # every episode, to read when the reports differ
"$toolenv" run --agent reference "${grid[@]}" --store "$out/single.db" >/dev/null 2>&1
"$toolenv" report run-0001 --json --store "$out/single.db" >"$out/single.json"
python3 - "$out/replicas.json" "$out/single.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["report"] for p in sys.argv[1:])

def differences(x, y, path=""):
    """The JSON pointers where x and y differ, with both values."""
    if isinstance(x, dict) and isinstance(y, dict):
        for key in sorted(set(x) | set(y)):
            yield from differences(x.get(key), y.get(key), f"{path}/{key}")
    elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (u, v) in enumerate(zip(x, y)):
            yield from differences(u, v, f"{path}/{i}")
    elif x != y:
        yield f"{path}: replicas {json.dumps(x)[:200]}, single process {json.dumps(y)[:200]}"

found = list(differences(a, b))
if found:
    print("\n".join(found[:40]), file=sys.stderr)
    sys.exit("FAILED: the replicas' report differs from the single process's")
PY
rebuilt=$(cat "$out"/replica*.log | grep -c 'rebuilt from the durable log' || true)
echo "passed: $planned episodes, one verdict each; report equal to a single process's; $rebuilt episodes rebuilt by replay; lease probe: ${probe_counts%|*} slow episodes, none refused; $((SECONDS - started)) s"
