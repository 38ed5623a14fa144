#!/usr/bin/env bash
# Point-in-time recovery with pgBackRest (docs/operations.md): continuous WAL archiving and base
# backups beside the nightly dump of `make backup` (scripts/backup.sh), so that a failure at
# 17:00 loses seconds of CTRs, not the day's.
#
#   scripts/pitr.sh setup                 the local cluster (scripts/localdb.sh) starts archiving
#                                         and gets its first full backup (`make pitr-setup`)
#   scripts/pitr.sh off                   the local cluster stops archiving (the repository stays)
#   scripts/pitr.sh backup [full|diff|incr]   a base backup (`make pitr-backup`)
#   scripts/pitr.sh check | verify | info     is archiving working, is the repository sound,
#                                         which backups and WAL it holds
#   scripts/pitr.sh restore DIR ['AAAA-MM-DD HH:MM:SS-03'] [pgbackrest options…]
#                                         a NEW data directory DIR, as of that time (else the
#                                         latest archived WAL); the live cluster is not touched
#   scripts/pitr.sh stanza-create         the repository's stanza, once, before the first backup
#   scripts/pitr.sh configure BASE PGDATA PORT SOCKET_DIR [STANZA]
#                                         writes BASE/pgbackrest.conf (repository BASE/repo)
#   scripts/pitr.sh archive-command       the archive_command for postgresql.conf
#
# The configuration is $PITR_CONF, else the local cluster's (pgbackrest/pgbackrest.conf beside
# its data directory); the stanza $PITR_STANZA, else "ctr". As root, pgBackRest runs as the
# cluster's owner, the 'postgres' user (as scripts/localdb.sh runs PostgreSQL).
#
# Why the local cluster does not archive by default: archiving copies (and compresses) every
# 16 MB WAL segment, and `make test` writes many (each run creates, fills and drops the test
# databases): the suite would pay for a repository nobody restores from. A machine that holds
# real data runs `make pitr-setup` once; the setting then stays in the cluster
# (postgresql.auto.conf) across `make stop`/`make run`.
set -euo pipefail

root_dir="$(cd "$(dirname "$0")/.." && pwd)"
pg_bin="${CTR_PG_BINDIR:-/usr/lib/postgresql/${CTR_PG_MAJOR:-15}/bin}"
stanza="${PITR_STANZA:-ctr}"

die() {
    echo "$*" >&2
    exit 2
}

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

local_conf() {
    echo "$(dirname "$(bash "$root_dir/scripts/localdb.sh" datadir)")/pgbackrest/pgbackrest.conf"
}

conf="${PITR_CONF:-}"
[ -n "$conf" ] || conf="$(local_conf)"

pgbackrest_cmd() {
    command -v pgbackrest >/dev/null || die "pgbackrest não encontrado: instale o pacote Debian pgbackrest."
    [ -r "$conf" ] || [ "$(id -u)" -eq 0 ] || die "Configuração do pgBackRest não encontrada: $conf (rode 'make pitr-setup')."
    # The local cluster asks for a password even on its socket: libpq reads it from pgpass.
    local pgpass
    pgpass="$(dirname "$conf")/pgpass"
    if [ -f "$pgpass" ]; then
        export PGPASSFILE="$pgpass"
    fi
    as_owner pgbackrest --config="$conf" --stanza="$stanza" "$@"
}

configure() {
    local base="$1" pgdata="$2" port="$3" socket="$4"
    stanza="${5:-$stanza}"
    [ -n "$socket" ] || die "uso: $0 configure BASE PGDATA PORT SOCKET_DIR [STANZA]"
    mkdir -p "$base"/{repo,log,lock,spool}
    chmod 700 "$base"
    # Full backups kept: 2 (and the WAL needed to restore from the older one to now).
    cat >"$base/pgbackrest.conf" <<CONF
# pgBackRest for the CTR database (scripts/pitr.sh; docs/operations.md).
[global]
repo1-path=$base/repo
repo1-retention-full=2
# The WAL's start and end checked against the archive; backups start at once (a checkpoint).
start-fast=y
compress-type=lz4
log-path=$base/log
lock-path=$base/lock
spool-path=$base/spool
log-level-console=warn
log-level-file=info

[$stanza]
pg1-path=$pgdata
pg1-port=$port
pg1-socket-path=$socket
pg1-user=postgres
CONF
    if [ "$(id -u)" -eq 0 ]; then
        chown -R postgres "$base"
    fi
    echo "$base/pgbackrest.conf"
}

archive_command() {
    echo "pgbackrest --config=$conf --stanza=$stanza archive-push %p"
}

local_psql() {
    bash "$root_dir/scripts/localdb.sh" psql -X -q -v ON_ERROR_STOP=1 "$@"
}

setup() {
    bash "$root_dir/scripts/localdb.sh" start >/dev/null
    local data_dir port
    data_dir="$(bash "$root_dir/scripts/localdb.sh" datadir)"
    port="$(bash "$root_dir/scripts/localdb.sh" port)"
    configure "$(dirname "$conf")" "$data_dir" "$port" "$data_dir" >/dev/null
    local pgpass
    pgpass="$(dirname "$conf")/pgpass"
    (umask 077 && echo "*:$port:*:postgres:$(cat "$root_dir/.local/pg-password")" >"$pgpass")
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres "$pgpass"
    fi
    # archive_mode needs a restart; ALTER SYSTEM keeps both in postgresql.auto.conf.
    local_psql -c "ALTER SYSTEM SET archive_mode = 'on'" \
        -c "ALTER SYSTEM SET archive_command = '$(archive_command)'"
    bash "$root_dir/scripts/localdb.sh" stop >/dev/null
    bash "$root_dir/scripts/localdb.sh" start >/dev/null
    pgbackrest_cmd stanza-create
    pgbackrest_cmd check
    pgbackrest_cmd backup --type=full
    echo "Arquivamento contínuo ativo (stanza $stanza, configuração $conf)."
}

off() {
    local_psql -c "ALTER SYSTEM RESET archive_mode" -c "ALTER SYSTEM RESET archive_command"
    bash "$root_dir/scripts/localdb.sh" stop >/dev/null
    bash "$root_dir/scripts/localdb.sh" start >/dev/null
    echo "Arquivamento contínuo desligado; o repositório continua em $(dirname "$conf")/repo."
}

restore() {
    local dir="${1:-}" target="${2:-}"
    [ -n "$dir" ] || die "uso: $0 restore DIRETÓRIO_NOVO ['AAAA-MM-DD HH:MM:SS-03']"
    shift
    [ $# -gt 0 ] && shift
    if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
        die "$dir não está vazio: a restauração vai para um diretório novo, nunca sobre um cluster."
    fi
    mkdir -p "$dir"
    chmod 700 "$dir"
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres "$dir"
    fi
    local how=(--type=default)
    if [ -n "$target" ]; then
        # Replays the WAL up to the last commit at or before the target, then opens for writes.
        how=(--type=time "--target=$target" --target-action=promote)
    fi
    # --archive-mode=off by default: a restored copy must not push its WAL into the repository
    # of the cluster it came from (pass --archive-mode=preserve when it replaces that cluster).
    local archive=(--archive-mode=off)
    case " $* " in *" --archive-mode="*) archive=() ;; esac
    pgbackrest_cmd restore --pg1-path="$dir" "${archive[@]}" "${how[@]}" "$@"
    echo "Restaurado em $dir. Inicie-o numa porta livre: $pg_bin/pg_ctl -D $dir -o '-p PORTA' start"
}

case "${1:-}" in
    setup) setup ;;
    off) off ;;
    backup) pgbackrest_cmd backup --type="${2:-full}" ;;
    stanza-create) pgbackrest_cmd stanza-create ;;
    check) pgbackrest_cmd check ;;
    verify) pgbackrest_cmd verify ;;
    info) pgbackrest_cmd info ;;
    restore) shift; restore "$@" ;;
    configure) shift; configure "$@" ;;
    archive-command) archive_command ;;
    *) die "uso: $0 setup|off|backup [full|diff|incr]|check|verify|info|restore DIR [HORA]|configure|archive-command" ;;
esac
