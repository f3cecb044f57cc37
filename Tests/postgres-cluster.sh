#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the sync tests and the P8 benchmark.
#
#   postgres-cluster.sh available          exit 0 when Debian's PostgreSQL binaries are installed
#   postgres-cluster.sh start PORT         initdb into a new temp dir, start on 127.0.0.1:PORT,
#                                          create user `defaults` (password below) and database
#                                          `defaults_sync`; prints the dir
#   postgres-cluster.sh stop DIR [MODE]    stop the server, keep the data (for restart tests); MODE is
#                                          pg_ctl's: fast (the default, clients are told) or immediate
#                                          (every server process is killed at once, as in a crash)
#   postgres-cluster.sh restart DIR        start it again on the same port
#   postgres-cluster.sh freeze DIR         stop every server process (SIGSTOP): it holds its connections
#                                          and answers nothing, as a hung machine would
#   postgres-cluster.sh thaw DIR           let them go on (SIGCONT)
#   postgres-cluster.sh destroy DIR        stop the server and delete DIR
#   postgres-cluster.sh query DIR SQL [DB] run SQL as the superuser in DB (postgres unless given);
#                                          prints the rows, one a line
#
# initdb refuses root: as root, the server runs as the `postgres` user.
set -euo pipefail

PASSWORD="defaults-test-password"

bindir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] || return 1
    echo "$dir"
}

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_ctl_start() {
    as_owner "$BIN/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 60 start > /dev/null
}

case "${1:-}" in
available)
    bindir > /dev/null
    ;;
start)
    BIN=$(bindir)
    port="$2"
    dir=$(mktemp -d /tmp/defaults-postgres.XXXXXX)
    # A start that fails part-way (the port taken meanwhile, the role not created) leaves no
    # server running and no directory: the caller, not knowing the directory, tries another port.
    trap 'bash "$0" destroy "$dir" > /dev/null 2>&1 || true' EXIT
    chmod 0755 "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_owner "$BIN/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
        -E UTF8 --no-sync > "$dir/initdb.log" 2>&1
    cat >> "$dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
fsync = off
CONF
    pg_ctl_start "$dir"
    as_owner "$BIN/psql" -h "$dir" -p "$port" -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
        -c "CREATE ROLE defaults LOGIN PASSWORD '$PASSWORD'" \
        -c "CREATE DATABASE defaults_sync OWNER defaults" > /dev/null
    trap - EXIT
    echo "$dir"
    ;;
stop)
    BIN=$(bindir)
    as_owner "$BIN/pg_ctl" -D "$2/data" -m "${3:-fast}" -w stop > /dev/null
    ;;
restart)
    BIN=$(bindir)
    pg_ctl_start "$2"
    ;;
destroy)
    BIN=$(bindir)
    # A frozen cluster would not stop.
    bash "$0" thaw "$2" > /dev/null 2>&1 || true
    as_owner "$BIN/pg_ctl" -D "$2/data" -m immediate -w stop > /dev/null 2>&1 || true
    case "$2" in /tmp/defaults-postgres.*) rm -rf "$2" ;; esac
    ;;
freeze | thaw)
    # SIGSTOP or SIGCONT the postmaster and its children: a database machine that stops
    # answering without closing a connection (a hung machine, a partition). The postmaster is
    # stopped first, so that it forks no child the scan misses; a child may end meanwhile.
    postmaster=$(sed -n 1p "$2/data/postmaster.pid")
    signal=STOP; [ "$1" = thaw ] && signal=CONT
    kill -s "$signal" "$postmaster"
    children=""
    for stat in /proc/[0-9]*/stat; do
        # The parent's id is the second field after the command's closing parenthesis.
        parent=$(sed -n 's/.*) [A-Za-z] \([0-9]*\) .*/\1/p' "$stat" 2> /dev/null || true)
        [ "$parent" = "$postmaster" ] && children="$children $(basename "$(dirname "$stat")")"
    done
    [ -z "$children" ] || kill -s "$signal" $children 2> /dev/null || true
    ;;
query)
    BIN=$(bindir)
    port=$(sed -n 4p "$2/data/postmaster.pid")
    as_owner "$BIN/psql" -h "$2" -p "$port" -U postgres -d "${4:-postgres}" -qAt -v ON_ERROR_STOP=1 -c "$3"
    ;;
*)
    echo "usage: $0 available | start PORT | stop DIR [MODE] | restart DIR | freeze DIR | thaw DIR | destroy DIR | query DIR SQL [DB]" >&2
    exit 2
    ;;
esac
