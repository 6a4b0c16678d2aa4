# A local cluster of toolenv replicas, sourced by the failover drill
# (tests/drill/failover.sh) and the replicas benchmark (bench/replicas.sh):
# PostgreSQL from initdb in a temporary directory on a loopback port, replicas
# (`toolenv serve --store postgres://…`) and HAProxy with the shipped
# configuration (deploy/haproxy/haproxy.cfg). Everything started is stopped
# when the sourcing script exits.
#
# Needs: $toolenv (the binary) and $out (a directory for logs). Installs
# Debian's postgresql and haproxy when missing (apt-get, as root).

need() { # package, then a command or path that shows it is there
    if ! ls $2 >/dev/null 2>&1 && ! command -v "$2" >/dev/null 2>&1; then
        echo "installing Debian's $1"
        local sudo=""
        [ "$(id -u)" = 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$1" >/dev/null
    fi
}
need postgresql "/usr/lib/postgresql/*/bin/initdb"
need haproxy haproxy
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { until (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do sleep 0.1; done; }
pids=()
# More `serve` flags for every replica (the caller may set them).
replica_args=(${replica_args[@]+"${replica_args[@]}"})
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    [ -n "${pg_data:-}" ] && as_pg "$pgbin/pg_ctl" stop -D "$pg_data" -m immediate >/dev/null 2>&1 || true
    [ -n "${pg_dir:-}" ] && rm -rf "$pg_dir"
}
trap cleanup EXIT

# PostgreSQL: a fresh cluster, owned by `postgres` when this runs as root.
pg_dir=$(mktemp -d /tmp/toolenv-cluster-pg.XXXXXX)
pg_data=$pg_dir/data
if [ "$(id -u)" = 0 ]; then
    chown postgres:postgres "$pg_dir"
    as_pg() { runuser -u postgres -- "$@"; }
else
    as_pg() { "$@"; }
fi
echo cluster-password >"$pg_dir/pw" && chmod 644 "$pg_dir/pw"
as_pg "$pgbin/initdb" -U toolenv --auth=scram-sha-256 --pwfile="$pg_dir/pw" --no-sync -E UTF8 --locale=C.UTF-8 -D "$pg_data" >/dev/null
pg_port=$(free_port)
pg_start() {
    as_pg "$pgbin/pg_ctl" start -D "$pg_data" -w -l "$pg_dir/log" \
        -o "-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1 -c fsync=${PG_FSYNC:-off} -c max_connections=200" >/dev/null
}
pg_start
url="postgres://toolenv:cluster-password@127.0.0.1:$pg_port/postgres"
psql_run() { PGPASSWORD=cluster-password "$pgbin/psql" -X -q -A -t -h 127.0.0.1 -p "$pg_port" -U toolenv -d postgres "$@"; }

declare -a ports replica_pids
start_replica() { # number
    [ -n "${ports[$1]:-}" ] || ports[$1]=$(free_port)
    RUST_LOG=info "$toolenv" --log-format json serve --addr "127.0.0.1:${ports[$1]}" --store "$url" --time-scale 0 \
        "${replica_args[@]}" >>"$out/replica$1.log" 2>&1 &
    replica_pids[$1]=$!
    pids+=("$!")
}

# HAProxy in front of replicas 1..n (n ≤ 3), listening on $proxy_port.
start_proxy() { # n
    local config="$out/haproxy$1.cfg"
    grep -v "server replica[$(($1 + 1))-9] " deploy/haproxy/haproxy.cfg >"$config"
    proxy_port=$(free_port)
    PROXY_ADDR=127.0.0.1:$proxy_port REPLICA_1=127.0.0.1:${ports[1]} REPLICA_2=127.0.0.1:${ports[2]:-1} \
        REPLICA_3=127.0.0.1:${ports[3]:-1} haproxy -f "$config" -db >"$out/haproxy$1.log" 2>&1 &
    proxy_pid=$!
    pids+=("$!")
    wait_port "$proxy_port"
}
