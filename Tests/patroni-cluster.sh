#!/usr/bin/env bash
# A throwaway 3-node Patroni cluster (one etcd, three PostgreSQL nodes, one HAProxy routing to the
# primary) on 127.0.0.1, for the tests and the benchmark of a sync service losing its database machine.
#
#   patroni-cluster.sh available              exit 0 when patroni, etcd, haproxy and PostgreSQL are installed
#   patroni-cluster.sh start BASEPORT         start everything in a new temp dir, wait until there is a primary,
#                                             a sync standby and a replica, create user `defaults` (password
#                                             below) and database `defaults_sync`; prints the dir as the last line
#   patroni-cluster.sh primary DIR            prints "N PORT": node index (1..3) and PostgreSQL port of the primary
#   patroni-cluster.sh kill-primary DIR       loses the primary's machine: SIGKILL its Patroni, then all its
#                                             PostgreSQL processes; prints the node index; does not wait
#   patroni-cluster.sh wait-primary DIR [S]   waits (S seconds, default 90) until a live node is primary, a live
#                                             node is sync standby and every live node runs PostgreSQL; prints
#                                             the primary's node index
#   patroni-cluster.sh restart-node DIR N     starts node N's Patroni again (it rejoins as a replica, rewinding
#                                             as needed); does not wait
#   patroni-cluster.sh status DIR             prints Patroni's /cluster JSON, asked of any live node
#   patroni-cluster.sh query DIR SQL [DB]     run SQL as the superuser on the primary, in DB (postgres unless
#                                             given); prints the rows, one a line, columns separated by |
#   patroni-cluster.sh destroy DIR            kill HAProxy, Patroni, PostgreSQL and etcd, and delete DIR
#
# Ports from BASEPORT (B), all on 127.0.0.1:
#   B etcd client, B+1 etcd peer, B+2..B+4 PostgreSQL of nodes 1..3, B+5..B+7 Patroni REST of nodes 1..3,
#   B+8 HAProxy (always the primary).
# DIR/ports holds them as key=value lines for the tests:
#   etcd=B  etcd_peer=B+1  postgres=B+2,B+3,B+4  rest=B+5,B+6,B+7  haproxy=B+8  scope=NAME
#
# Patroni runs (as `postgres` when root) by /usr/bin/patroni itself: its #! is Debian's
# /usr/bin/python3, which has Patroni's modules (a python3 earlier in PATH may not). JSON is read with it too.
set -euo pipefail

PASSWORD="defaults-test-password"
PY=/usr/bin/python3
# haproxy is in /usr/sbin, outside a normal user's PATH.
HAPROXY=$(PATH=$PATH:/usr/sbin:/sbin command -v haproxy || echo /usr/sbin/haproxy)
NODES="1 2 3"
# initdb refuses root: as root, Patroni and PostgreSQL run as `postgres`.
if [ "$(id -u)" = 0 ]; then RUN_USER=postgres; else RUN_USER=$(id -un); fi

bindir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] || return 1
    echo "$dir"
}

load_ports() {
    local dir="$1" key value
    [ -f "$dir/ports" ] || { echo "no cluster in $dir" >&2; exit 1; }
    while IFS='=' read -r key value; do
        case "$key" in
        etcd) ETCD_PORT=$value ;;
        postgres) IFS=, read -r PG1 PG2 PG3 <<< "$value" ;;
        rest) IFS=, read -r REST1 REST2 REST3 <<< "$value" ;;
        haproxy) HAPROXY_PORT=$value ;;
        esac
    done < "$dir/ports"
}

# Unique per cluster, so clusters never share etcd keys or process names.
scope_of() { echo "defaults-${1##*.}"; }

pg_port() { local v="PG$1"; echo "${!v}"; }
rest_port() { local v="REST$1"; echo "${!v}"; }

# HTTP status of a Patroni REST endpoint, 000 when nobody answers.
http_code() {
    curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$1$2" 2>/dev/null || true
}

# The pid in pid file $1 if that process lives and its command line mentions $2 (pid reuse).
live_pid() {
    local file="$1" pid
    [ -s "$file" ] || return 1
    pid=$(head -1 "$file")
    [ -d "/proc/$pid" ] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$2" || return 1
    echo "$pid"
}

patroni_pid() { live_pid "$DIR/node$1/patroni.pid" "$DIR/node$1/patroni.yml"; }

# Nodes whose /primary answers 200; a node whose Patroni was killed answers nothing.
primaries() {
    local n
    for n in $NODES; do
        [ "$(http_code "$(rest_port "$n")" /primary)" = 200 ] && echo "$n"
    done
    return 0
}

cluster_json() {
    local n
    for n in $NODES; do
        patroni_pid "$n" > /dev/null || continue
        curl -sf --max-time 2 "http://127.0.0.1:$(rest_port "$n")/cluster" && return 0
    done
    return 1
}

start_node() {
    local n="$1" node="$DIR/node$1"
    local drop=""
    # setpriv execs (runuser would fork), so the pid written is Patroni's own.
    if [ "$(id -u)" = 0 ]; then drop="setpriv --reuid=postgres --regid=postgres --init-groups --reset-env"; fi
    # setsid: the node outlives the caller's process group (a test runner's Ctrl-C, a killed job).
    setsid sh -c 'echo $$ > "$1"; exec $2 /usr/bin/patroni "$3"' sh "$node/patroni.pid" "$drop" \
        "$node/patroni.yml" < /dev/null >> "$node/patroni.log" 2>&1 &
    disown
    local i
    for i in $(seq 50); do [ -s "$node/patroni.pid" ] && return 0; sleep 0.1; done
    echo "node $n did not start" >&2
    return 1
}

postmaster_pid() { live_pid "$DIR/node$1/data/postmaster.pid" "$DIR/node$1/data"; }

# Every PostgreSQL process of node N at once, as a power loss would (no shutdown checkpoint, no goodbye
# to clients beyond the kernel resetting their sockets). The children are not in the postmaster's
# process group (each calls setsid), so they are found as its children; SIGSTOP first so that it
# forks none in between.
kill_postgres() {
    local pm
    pm=$(postmaster_pid "$1") || return 0
    kill -STOP "$pm" 2> /dev/null || return 0
    # shellcheck disable=SC2046
    kill -KILL "$pm" $(pgrep -P "$pm") 2> /dev/null || true
}

# Every process of this cluster: etcd and HAProxy by pid file, whatever runs as RUN_USER naming DIR
# (patroni, postgres -D, pg_rewind, pg_basebackup, initdb), and the servers' children, named
# "postgres: SCOPE: ..." (cluster_name is the scope, unique per cluster) even once orphaned.
cluster_pids() {
    {
        pgrep -u "$RUN_USER" -f -- "$DIR/" || true
        pgrep -u "$RUN_USER" -f -- "^postgres: $SCOPE: " || true
        live_pid "$DIR/etcd.pid" "$DIR/etcd" || true
        live_pid "$DIR/haproxy.pid" "$DIR/haproxy.cfg" || true
    } | sort -u
}

show_logs() {
    local f
    for f in "$DIR"/etcd.log "$DIR"/node*/patroni.log "$DIR"/node*/data/log/*; do
        [ -f "$f" ] || continue
        echo "== $f" >&2
        tail -n 25 "$f" >&2
    done
    cluster_json >&2 || true
}

destroy() {
    local pids pid i killed
    killed=$(cluster_pids)
    # Patroni first, so it does not restart PostgreSQL behind our back.
    for i in $NODES; do
        pid=$(patroni_pid "$i") && kill -KILL "$pid" 2> /dev/null || true
    done
    for i in $NODES; do kill_postgres "$i"; done
    for i in $(seq 100); do
        pids=$(cluster_pids)
        [ -z "$pids" ] && break
        killed="$killed $pids"
        # shellcheck disable=SC2086
        kill -KILL $pids 2> /dev/null || true
        sleep 0.1
    done
    # Killed processes linger as zombies until init reaps them: give it a moment, so `ps` shows none.
    for pid in $killed; do
        for i in $(seq 20); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
    done
    if [ -n "$(cluster_pids)" ]; then
        echo "processes left behind:" >&2
        ps -o pid,user,args -p "$(cluster_pids | paste -sd,)" >&2 || true
        return 1
    fi
    case "$DIR" in /tmp/defaults-patroni.*) rm -rf "$DIR" ;; esac
}

start() {
    local base="${1:?usage: start BASEPORT}" bin n
    bin=$(bindir)
    DIR=$(mktemp -d /tmp/defaults-patroni.XXXXXX)
    chmod 0755 "$DIR"
    SCOPE=$(scope_of "$DIR")
    local scope=$SCOPE
    ETCD_PORT=$base
    local peer=$((base + 1))
    PG1=$((base + 2)) PG2=$((base + 3)) PG3=$((base + 4))
    REST1=$((base + 5)) REST2=$((base + 6)) REST3=$((base + 7))
    HAPROXY_PORT=$((base + 8))
    cat > "$DIR/ports" <<PORTS
etcd=$ETCD_PORT
etcd_peer=$peer
postgres=$PG1,$PG2,$PG3
rest=$REST1,$REST2,$REST3
haproxy=$HAPROXY_PORT
scope=$scope
PORTS
    # A port already taken would make a node talk to another cluster's etcd or PostgreSQL.
    local port
    for port in $(seq "$base" $((base + 8))); do
        if (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then
            echo "port $port is in use" >&2
            rm -rf "$DIR"
            exit 1
        fi
    done
    trap 'show_logs; destroy || true' ERR

    # etcd 3.4 serves only the v3 API (Patroni's etcd3 section); one member is enough for tests.
    setsid sh -c 'echo $$ > "$1"; shift; exec "$@"' sh "$DIR/etcd.pid" \
        etcd --name e1 --data-dir "$DIR/etcd" --logger zap \
        --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
        --initial-cluster "e1=http://127.0.0.1:$peer" --initial-cluster-token "$scope" \
        --initial-cluster-state new < /dev/null > "$DIR/etcd.log" 2>&1 &
    disown
    local i
    for i in $(seq 100); do
        live_pid "$DIR/etcd.pid" "$DIR/etcd" > /dev/null && curl -sf --max-time 1 "http://127.0.0.1:$ETCD_PORT/health" > /dev/null && break
        [ "$i" = 100 ] && { echo "etcd did not start" >&2; false; }
        sleep 0.1
    done

    for n in $NODES; do
        mkdir -p "$DIR/node$n"
        cat > "$DIR/node$n/patroni.yml" <<YAML
scope: $scope
namespace: /$scope/
name: node$n
log:
  level: INFO
restapi:
  listen: 127.0.0.1:$(rest_port "$n")
  connect_address: 127.0.0.1:$(rest_port "$n")
etcd3:
  hosts: 127.0.0.1:$ETCD_PORT
bootstrap:
  dcs:
    # A dead primary's leader key expires within ttl; the others notice within loop_wait; every
    # DCS call gives up after retry_timeout. Short, for tests: failover in about 10-13 s.
    ttl: 10
    loop_wait: 2
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    # A commit is acknowledged only once the sync standby has it, and only the sync standby may be
    # promoted; strict: with no standby left the primary blocks writes rather than go alone.
    synchronous_mode: true
    synchronous_mode_strict: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_log_hints: 'on'
        max_connections: 200
        # A replica retries its WAL source every 5 s by default; after a failover the survivor
        # cannot become sync standby (and strict mode blocks commits) until it reconnects.
        wal_retrieve_retry_interval: 500ms
        # Machine loss is simulated by killing processes, never the OS: the page cache survives,
        # so fsync off loses nothing here and is much faster.
        fsync: 'off'
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - data-checksums
postgresql:
  listen: 127.0.0.1:$(pg_port "$n")
  connect_address: 127.0.0.1:$(pg_port "$n")
  data_dir: $DIR/node$n/data
  bin_dir: $bin
  pgpass: $DIR/node$n/pgpass
  # Here rather than under bootstrap, so every node writes it whichever one bootstraps;
  # scram-sha-256 over TCP as in postgres-cluster.sh.
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
  parameters:
    unix_socket_directories: '$DIR/node$n'
  authentication:
    superuser:
      username: postgres
      password: '$PASSWORD'
    replication:
      username: replicator
      password: '$PASSWORD'
    rewind:
      username: rewinder
      password: '$PASSWORD'
YAML
    done
    if [ "$(id -u)" = 0 ]; then chown -R postgres:postgres "$DIR"/node*; fi
    chmod 0700 "$DIR"/node*

    for n in $NODES; do start_node "$n"; done

    # Ready: one primary, and /cluster shows a running leader, sync_standby and replica.
    local deadline=$((SECONDS + 90)) ready=""
    while [ $SECONDS -lt $deadline ]; do
        if [ "$(primaries | wc -l)" = 1 ] && cluster_json 2> /dev/null | "$PY" -c '
import json, sys
members = json.load(sys.stdin)["members"]
roles = sorted(m["role"] for m in members if m["state"] == "running")
sys.exit(0 if roles == ["leader", "replica", "sync_standby"] else 1)'; then
            ready=1
            break
        fi
        sleep 0.5
    done
    [ -n "$ready" ] || { echo "cluster not ready after 90 s" >&2; false; }

    n=$(primaries)
    PGPASSWORD=$PASSWORD PGCONNECT_TIMEOUT=5 "$bin/psql" -h 127.0.0.1 -p "$(pg_port "$n")" -U postgres \
        -d postgres -q -v ON_ERROR_STOP=1 \
        -c "CREATE ROLE defaults LOGIN PASSWORD '$PASSWORD'" \
        -c "CREATE DATABASE defaults_sync OWNER defaults" > /dev/null

    # HAProxy sends each connection to the node whose Patroni says it is primary, and cuts the
    # sessions of a node marked down so clients notice a failover at once.
    cat > "$DIR/haproxy.cfg" <<CFG
global
    maxconn 1000

defaults
    mode tcp
    timeout connect 2s
    timeout client 1h
    timeout server 1h

listen postgres
    bind 127.0.0.1:$HAPROXY_PORT
    # OPTIONS: Patroni answers the same status as GET without a body (GET bodies make Patroni log
    # a traceback each time HAProxy resets the connection after reading the status).
    option httpchk OPTIONS /primary
    http-check expect status 200
    default-server inter 1s fall 2 rise 2 on-marked-down shutdown-sessions
    server node1 127.0.0.1:$PG1 check port $REST1
    server node2 127.0.0.1:$PG2 check port $REST2
    server node3 127.0.0.1:$PG3 check port $REST3
CFG
    "$HAPROXY" -f "$DIR/haproxy.cfg" -D -p "$DIR/haproxy.pid" < /dev/null > "$DIR/haproxy.log" 2>&1
    # HAProxy deems every server up until `fall` checks failed: wait until three connections in a row
    # (round robin over the three servers) reach the primary.
    local hits=0
    for i in $(seq 100); do
        if [ "$(PGPASSWORD=$PASSWORD PGCONNECT_TIMEOUT=2 "$bin/psql" -h 127.0.0.1 -p "$HAPROXY_PORT" \
            -U defaults -d defaults_sync -qAt -c "SELECT pg_is_in_recovery()" 2> /dev/null)" = f ]; then
            hits=$((hits + 1))
        else
            hits=0
        fi
        [ $hits = 3 ] && break
        [ "$i" = 100 ] && { echo "HAProxy does not route to the primary" >&2; false; }
        sleep 0.2
    done
    trap - ERR
    echo "$DIR"
}

case "${1:-}" in
available)
    [ -x /usr/bin/patroni ] && [ -x "$PY" ] && command -v etcd > /dev/null && [ -x "$HAPROXY" ] \
        && command -v curl > /dev/null && command -v setpriv > /dev/null && id "$RUN_USER" > /dev/null 2>&1 \
        && bindir > /dev/null
    ;;
start)
    start "${2:-}"
    ;;
primary)
    DIR="${2:?usage: $1 DIR}"; DIR="${DIR%/}"; load_ports "$DIR"
    n=$(primaries)
    [ "$(wc -w <<< "$n")" = 1 ] || { echo "no single primary (${n:-none})" >&2; exit 1; }
    echo "$n $(pg_port "$n")"
    ;;
kill-primary)
    DIR="${2:?usage: $1 DIR}"; DIR="${DIR%/}"; load_ports "$DIR"
    n=$(primaries)
    [ "$(wc -w <<< "$n")" = 1 ] || { echo "no single primary (${n:-none})" >&2; exit 1; }
    # Patroni first: alive, it would notice PostgreSQL gone and restart it.
    pid=$(patroni_pid "$n") && kill -KILL "$pid"
    kill_postgres "$n"
    echo "$n"
    ;;
wait-primary)
    DIR="${2:?usage: $1 DIR}"; DIR="${DIR%/}"; load_ports "$DIR"
    deadline=$((SECONDS + ${3:-90}))
    while [ $SECONDS -lt $deadline ]; do
        n=$(primaries)
        if [ "$(wc -w <<< "$n")" = 1 ]; then
            ok=1 sync=""
            for i in $NODES; do
                patroni_pid "$i" > /dev/null || continue
                # A restarted node still rewinding or catching up counts as not ready yet.
                [ "$(http_code "$(rest_port "$i")" /health)" = 200 ] || ok=""
                [ "$(http_code "$(rest_port "$i")" /sync)" = 200 ] && sync=1
            done
            [ -n "$ok" ] && [ -n "$sync" ] && { echo "$n"; exit 0; }
        fi
        sleep 0.2
    done
    echo "no primary with a sync standby after ${3:-90} s" >&2
    cluster_json >&2 || true
    exit 1
    ;;
restart-node)
    DIR="${2:?usage: $1 DIR}"; DIR="${DIR%/}"; load_ports "$DIR"
    n="$3"
    case "$n" in 1|2|3) ;; *) echo "node must be 1, 2 or 3" >&2; exit 2 ;; esac
    patroni_pid "$n" > /dev/null && { echo "node $n is running" >&2; exit 1; }
    # Leftovers of the killed server would keep the port; there should be none.
    kill_postgres "$n"
    start_node "$n"
    ;;
query)
    DIR="${2:?usage: $1 DIR SQL [DB]}"; DIR="${DIR%/}"; load_ports "$DIR"
    n=$(primaries)
    [ "$(wc -w <<< "$n")" = 1 ] || { echo "no single primary (${n:-none})" >&2; exit 1; }
    PGPASSWORD=$PASSWORD PGCONNECT_TIMEOUT=5 "$(bindir)/psql" -h 127.0.0.1 -p "$(pg_port "$n")" -U postgres \
        -d "${4:-postgres}" -qAt -v ON_ERROR_STOP=1 -c "$3"
    ;;
status)
    DIR="${2:?usage: $1 DIR}"; DIR="${DIR%/}"; load_ports "$DIR"
    cluster_json || { echo "no live node answers" >&2; exit 1; }
    echo
    ;;
destroy)
    DIR="${2:?usage: $1 DIR}"; DIR="${DIR%/}"
    [ -d "$DIR" ] || exit 0
    SCOPE=$(scope_of "$DIR")
    destroy
    ;;
*)
    echo "usage: $0 available | start BASEPORT | primary DIR | kill-primary DIR | wait-primary DIR [SECONDS]" \
        "| restart-node DIR N | status DIR | query DIR SQL [DB] | destroy DIR" >&2
    exit 2
    ;;
esac
