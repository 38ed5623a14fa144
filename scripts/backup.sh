#!/usr/bin/env bash
# Backups of the application's database (docs/security.md): pg_dump in PostgreSQL's custom
# format, and a guarded pg_restore.
#
#   scripts/backup.sh backup [DIR]            DIR/ctr-AAAAMMDD-HHMMSS.dump (default: backups/)
#   CONFIRM=1 scripts/backup.sh restore FILE  replaces the database's contents with FILE's
#
# The database is $DATABASE_URL's, else the project-local cluster's (scripts/localdb.sh url).
# A dump holds personal data (CPF, names, contacts): it is written readable by its owner only,
# and backups/ is ignored by git. Restore with the application stopped: pg_restore --clean drops
# and recreates every table, in one transaction (all or nothing).
set -euo pipefail

root_dir="$(cd "$(dirname "$0")/.." && pwd)"
pg_bin="${CTR_PG_BINDIR:-/usr/lib/postgresql/${CTR_PG_MAJOR:-15}/bin}"

die() {
    echo "$*" >&2
    exit 2
}

tool() {
    if [ -x "$pg_bin/$1" ]; then
        echo "$pg_bin/$1"
    elif command -v "$1" >/dev/null; then
        command -v "$1"
    else
        die "$1 não encontrado: instale o pacote postgresql-client (ou postgresql-15)."
    fi
}

url="${DATABASE_URL:-}"
if [ -z "$url" ]; then
    url="$(bash "$root_dir/scripts/localdb.sh" url)"
fi

# libpq's variables from the URL: the password never appears on a command line (ps).
eval "$(
    python3 - "$url" <<'PY'
import shlex
import sys
from urllib.parse import unquote, urlsplit

parts = urlsplit(sys.argv[1])
values = {
    "PGHOST": parts.hostname or "",
    "PGPORT": str(parts.port or 5432),
    "PGUSER": unquote(parts.username or ""),
    "PGPASSWORD": unquote(parts.password or ""),
    "PGDATABASE": unquote(parts.path.lstrip("/")),
}
for name, value in values.items():
    if value:
        print(f"export {name}={shlex.quote(value)}")
PY
)"
[ -n "${PGDATABASE:-}" ] || die "DATABASE_URL sem nome de banco: $url"

backup() {
    local out_dir="${1:-$root_dir/backups}"
    umask 077
    mkdir -p "$out_dir"
    if [ "$out_dir" = "$root_dir/backups" ] && [ ! -f "$out_dir/.gitignore" ]; then
        printf '# Dumps of the database: personal data, never in git.\n*\n' >"$out_dir/.gitignore"
    fi
    local stamp file
    stamp="$(date +%Y%m%d-%H%M%S)"
    file="$out_dir/ctr-$stamp.dump"
    local n=1
    while [ -e "$file" ]; do
        file="$out_dir/ctr-$stamp-$n.dump"
        n=$((n + 1))
    done
    # Written under a temporary name, renamed when complete: a file named *.dump is whole.
    "$(tool pg_dump)" --format=custom --file="$file.partial" "$PGDATABASE"
    "$(tool pg_restore)" --list "$file.partial" >/dev/null
    mv "$file.partial" "$file"
    echo "$file"
}

restore() {
    local file="${1:-}"
    [ -n "$file" ] || die "uso: CONFIRM=1 $0 restore ARQUIVO.dump"
    [ -r "$file" ] || die "Arquivo não encontrado ou ilegível: $file"
    # Read the whole archive's table of contents before touching the database.
    "$(tool pg_restore)" --list "$file" >/dev/null || die "Não é um dump válido: $file"
    if [ "${CONFIRM:-}" != "1" ]; then
        die "A restauração APAGA o conteúdo atual do banco $PGDATABASE ($PGHOST:$PGPORT) e o
substitui pelo de $file. Pare a aplicação e rode de novo com CONFIRM=1."
    fi
    "$(tool pg_restore)" --clean --if-exists --no-owner --no-privileges \
        --single-transaction --exit-on-error --dbname="$PGDATABASE" "$file"
    echo "Banco $PGDATABASE restaurado de $file."
}

case "${1:-}" in
    backup) shift; backup "$@" ;;
    restore) shift; restore "$@" ;;
    *) die "uso: $0 backup [DIRETÓRIO] | CONFIRM=1 $0 restore ARQUIVO" ;;
esac
