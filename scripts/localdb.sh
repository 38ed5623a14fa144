#!/usr/bin/env bash
# A project-local PostgreSQL + PostGIS cluster, so that nothing system-wide is touched.
# Usage: scripts/localdb.sh start|stop|status|url|psql|datadir|port
#
# As root the cluster belongs to the 'postgres' user (PostgreSQL refuses to run as root); its
# data directory must then be reachable by that user, so a checkout under a private directory
# (e.g. /root) keeps its cluster under /var/tmp, keyed by the checkout's path.
set -euo pipefail

root_dir="$(cd "$(dirname "$0")/.." && pwd)"
state_dir="$root_dir/.local"
pg_major="${CTR_PG_MAJOR:-15}"
pg_bin="${CTR_PG_BINDIR:-/usr/lib/postgresql/$pg_major/bin}"
db_name="${CTR_PG_DB:-ctr}"
password_file="$state_dir/pg-password"
# The port: CTR_PG_PORT, else the one the last start used (remembered beside the password, and
# read by config/settings.py too, so a plain `manage.py …` after `make run CTR_PG_PORT=54341`
# reaches this cluster), else 54329.
port_file="$state_dir/pg-port"
port="${CTR_PG_PORT:-$(cat "$port_file" 2>/dev/null || true)}"
port="${port:-54329}"

mkdir -p "$state_dir"
# Traversable but not listable: as root, the postgres user must reach .local/pgdata.
chmod 711 "$state_dir"

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

choose_data_dir() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "$state_dir/pgdata"
        return
    fi
    # Root: the postgres user must be able to traverse every parent of the data directory.
    if runuser -u postgres -- test -x "$root_dir" 2>/dev/null; then
        echo "$state_dir/pgdata"
    else
        local key
        key="$(printf '%s' "$root_dir" | sha1sum | cut -c1-12)"
        echo "/var/tmp/ctr-pg-$key/pgdata"
    fi
}

data_dir="$(choose_data_dir)"

ensure_password() {
    if [ ! -s "$password_file" ]; then
        (umask 077 && python3 -c "import secrets; print(secrets.token_urlsafe(24))" > "$password_file")
    fi
}

database_url() {
    echo "postgis://postgres:$(cat "$password_file")@127.0.0.1:$port/$db_name"
}

init_cluster() {
    [ -f "$data_dir/PG_VERSION" ] && return
    ensure_password
    local pwfile
    mkdir -p "$data_dir"
    chmod 700 "$data_dir"
    pwfile="$(mktemp)"
    cp "$password_file" "$pwfile"
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres "$data_dir" "$pwfile"
    fi
    echo "Criando o cluster PostgreSQL local em $data_dir"
    as_owner "$pg_bin/initdb" -D "$data_dir" -U postgres --auth=scram-sha-256 \
        --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$pwfile"
    # PostgreSQL 15's defaults (wal_level = replica, max_wal_senders = 10) and initdb's pg_hba
    # lines for replication from 127.0.0.1 already let tests/config/test_replica.py make a
    # streaming replica of this cluster with pg_basebackup: nothing to add for it here.
    cat >> "$data_dir/postgresql.conf" <<CONF
# project-local cluster (scripts/localdb.sh)
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$data_dir'
fsync = ${CTR_PG_FSYNC:-on}
CONF
}

is_running() {
    as_owner "$pg_bin/pg_ctl" -D "$data_dir" status >/dev/null 2>&1
}

start() {
    init_cluster
    if ! is_running; then
        as_owner "$pg_bin/pg_ctl" -D "$data_dir" -l "$data_dir/server.log" -w -t 60 \
            -o "-p $port" start >/dev/null || {
            echo "O PostgreSQL local não iniciou; veja $data_dir/server.log" >&2
            tail -n 20 "$data_dir/server.log" >&2 || true
            exit 1
        }
    fi
    export PGPASSWORD
    PGPASSWORD="$(cat "$password_file")"
    export PGOPTIONS="-c client_min_messages=warning"
    local psql=(psql -X -q -h 127.0.0.1 -p "$port" -U postgres)
    if ! "${psql[@]}" -d postgres -tAc "select 1 from pg_database where datname = '$db_name'" | grep -q 1; then
        "${psql[@]}" -d postgres -c "create database \"$db_name\""
    fi
    "${psql[@]}" -d "$db_name" -c "create extension if not exists postgis" >/dev/null
    echo "$port" > "$port_file"
}

stop() {
    if [ -f "$data_dir/PG_VERSION" ] && is_running; then
        as_owner "$pg_bin/pg_ctl" -D "$data_dir" -m fast -w stop >/dev/null
        echo "PostgreSQL local parado."
    else
        echo "O PostgreSQL local não estava em execução."
    fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) is_running && echo "em execução ($data_dir, porta $port)" || echo "parado" ;;
    url) ensure_password; database_url ;;
    # Where the cluster lives and listens (scripts/pitr.sh configures pgBackRest with them).
    datadir) echo "$data_dir" ;;
    port) echo "$port" ;;
    psql) shift; PGPASSWORD="$(cat "$password_file")" exec psql -h 127.0.0.1 -p "$port" -U postgres -d "$db_name" "$@" ;;
    *) echo "uso: $0 start|stop|status|url|psql|datadir|port" >&2; exit 2 ;;
esac
