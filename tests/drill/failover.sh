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
# Installs Debian's postgresql and haproxy when missing (apt-get, as root).
# Usage: tests/drill/failover.sh   (from anywhere; run by .ci/run)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$PWD/target/drill
rm -rf "$out" && mkdir -p "$out"
started=$SECONDS

sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
need() { # package, then a command or path that shows it is there
    if ! ls $2 >/dev/null 2>&1 && ! command -v "$2" >/dev/null 2>&1; then
        echo "installing Debian's $1 (the failover drill)"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$1" >/dev/null
    fi
}
need postgresql "/usr/lib/postgresql/*/bin/initdb"
need haproxy haproxy
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

cargo build --locked --quiet -p toolenv-cli --bin toolenv
toolenv=$PWD/target/debug/toolenv

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    [ -n "${pg_data:-}" ] && as_pg "$pgbin/pg_ctl" stop -D "$pg_data" -m immediate >/dev/null 2>&1 || true
    [ -n "${pg_dir:-}" ] && rm -rf "$pg_dir"
}
trap cleanup EXIT

# PostgreSQL: a fresh cluster, owned by `postgres` when this runs as root.
pg_dir=$(mktemp -d /tmp/toolenv-drill-pg.XXXXXX)
pg_data=$pg_dir/data
if [ "$(id -u)" = 0 ]; then
    chown postgres:postgres "$pg_dir"
    as_pg() { runuser -u postgres -- "$@"; }
else
    as_pg() { "$@"; }
fi
echo drill-password >"$pg_dir/pw" && chmod 644 "$pg_dir/pw"
as_pg "$pgbin/initdb" -U toolenv --auth=scram-sha-256 --pwfile="$pg_dir/pw" --no-sync -E UTF8 --locale=C.UTF-8 -D "$pg_data" >/dev/null
pg_port=$(free_port)
pg_start() {
    as_pg "$pgbin/pg_ctl" start -D "$pg_data" -w -l "$pg_dir/log" \
        -o "-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" >/dev/null
}
pg_start
url="postgres://toolenv:drill-password@127.0.0.1:$pg_port/postgres"

# Three replicas and the proxy.
declare -a ports replica_pids
start_replica() { # number
    RUST_LOG=info "$toolenv" --log-format json serve --addr "127.0.0.1:${ports[$1]}" --store "$url" --time-scale 0 \
        >>"$out/replica$1.log" 2>&1 &
    replica_pids[$1]=$!
    pids+=("$!")
}
for n in 1 2 3; do ports[$n]=$(free_port); start_replica "$n"; done
proxy_port=$(free_port)
PROXY_ADDR=127.0.0.1:$proxy_port REPLICA_1=127.0.0.1:${ports[1]} REPLICA_2=127.0.0.1:${ports[2]} REPLICA_3=127.0.0.1:${ports[3]} \
    haproxy -f deploy/haproxy/haproxy.cfg -db >"$out/haproxy.log" 2>&1 &
pids+=("$!")
for n in 1 2 3; do
    until (echo >"/dev/tcp/127.0.0.1/${ports[$n]}") 2>/dev/null; do sleep 0.1; done
done
until (echo >"/dev/tcp/127.0.0.1/$proxy_port") 2>/dev/null; do sleep 0.1; done
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

verdicts() { PGPASSWORD=drill-password "$pgbin/psql" -X -q -A -t -h 127.0.0.1 -p "$pg_port" -U toolenv -d postgres \
    -c "SELECT COUNT(*) FROM episodes WHERE run_id = '$run' AND passed IS NOT NULL" 2>/dev/null || echo 0; }
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

# Exactly one verdict per planned episode (the key allows no second row).
counts=$(PGPASSWORD=drill-password "$pgbin/psql" -X -q -A -t -h 127.0.0.1 -p "$pg_port" -U toolenv -d postgres \
    -c "SELECT COUNT(*), COUNT(DISTINCT plan_index), COUNT(*) FILTER (WHERE passed IS NULL) FROM episodes WHERE run_id = '$run'")
[ "$counts" = "$planned|$planned|0" ] || { echo "FAILED: episodes (rows|distinct|infra errors) = $counts, planned $planned"; exit 1; }

# The report equals a single process's, byte for byte (the figures; the run's
# own id, description and times differ by nature).
"$toolenv" report "$run" --json --store "$url" >"$out/replicas.json"
"$toolenv" export "$run" --store "$url" >"$out/replicas.jsonl"   # every episode, to read when the reports differ
"$toolenv" run --agent reference "${grid[@]}" --store "$out/single.db" >/dev/null 2>&1
"$toolenv" report run-0001 --json --store "$out/single.db" >"$out/single.json"
python3 - "$out/replicas.json" "$out/single.json" <<'PY'
import json, sys
a, b = (json.dumps(json.load(open(p))["report"], sort_keys=True) for p in sys.argv[1:])
if a != b:
    sys.exit("FAILED: the replicas' report differs from the single process's")
PY
rebuilt=$(cat "$out"/replica*.log | grep -c 'rebuilt from the durable log' || true)
echo "passed: $planned episodes, one verdict each; report equal to a single process's; $rebuilt episodes rebuilt by replay; $((SECONDS - started)) s"
