#!/usr/bin/env bash
# The production start without Docker (docs/operations.md, "Processos em produção"): the
# database brought up to date, the static files collected (hashed, compressed), then the
# Procfile's three processes under honcho: web (gunicorn), worker, scheduler. Ctrl+C or
# SIGTERM stops all three.
#
# Usage: scripts/serve.sh [prepare|run]   (default: both)
# Environment: DJANGO_SECRET_KEY (required), DATABASE_URL, DJANGO_ALLOWED_HOSTS, HOST, PORT
# (web; 127.0.0.1:8000), CTR_SITE_URL; DJANGO_DEBUG is forced off. CTR_LOAD_DEMO=1 loads the
# demo too (a trial deployment). Processes in deploy/ (systemd units) do the same per service.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -x .venv/bin/python ]; then export PATH="$PWD/.venv/bin:$PATH"; fi
export DJANGO_DEBUG=false DJANGO_STATIC_MANIFEST=true PYTHONUNBUFFERED=1
export HOST="${HOST:-127.0.0.1}" PORT="${PORT:-8000}"
# The links in webhooks and e-mails: honcho gives the worker a PORT of its own (PORT + 100), so
# the site's address is fixed here for all three.
export CTR_SITE_URL="${CTR_SITE_URL:-http://$HOST:$PORT}"
if [ -z "${DJANGO_SECRET_KEY:-}" ]; then
    echo "DJANGO_SECRET_KEY é obrigatória em produção (veja docs/operations.md)." >&2
    exit 2
fi
step="${1:-all}"

if [ "$step" = all ] || [ "$step" = prepare ]; then
    # The static files first: the URLconf names some by their hashed names (maps/urls.py),
    # and migrate's checks load it.
    python manage.py collectstatic --noinput -v 0
    python manage.py migrate --noinput -v 0
    python manage.py createcachetable
    if [ "${CTR_LOAD_DEMO:-0}" = 1 ]; then
        python manage.py load_demo
    fi
fi
if [ "$step" = all ] || [ "$step" = run ]; then
    # /metrics sums every gunicorn worker's counters from this folder (config/metrics.py):
    # emptied at each start, or the last run's dead processes would count again.
    export PROMETHEUS_MULTIPROC_DIR="${PROMETHEUS_MULTIPROC_DIR:-${TMPDIR:-/tmp}/ctr-metrics-$PORT}"
    rm -rf "$PROMETHEUS_MULTIPROC_DIR" && mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
    echo "Servindo em http://$HOST:$PORT/ (web, worker, scheduler; Ctrl+C para parar)"
    # honcho gives the first process (web) PORT itself; -f: the one Procfile of the checkout.
    exec honcho -f Procfile start
fi
