#!/usr/bin/env bash
# The demo start of the application (`make run`): migrate, the cache table (the rate limits and
# the login ceiling live in the database cache), the whole demonstration (demo/), the static files, then serve
# with runserver, the worker and the scheduler beside it. Production (the Docker image,
# docker-compose.yml, `make prod`) is scripts/serve.sh: docs/operations.md.
#
# Usage: scripts/start.sh [prepare]
#   prepare  does everything but serve
# Environment: HOST, PORT (127.0.0.1, 8000); PYTHON (the checkout's .venv/bin/python when it
# exists, else python: the Docker image has no venv); DATABASE_URL (else the checkout's local
# cluster, as config/settings.py builds its URL).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${PYTHON:-}" ]; then
    if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python; fi
fi
host="${HOST:-127.0.0.1}"
port="${PORT:-8000}"
manage() { "$PYTHON" manage.py "$@"; }

manage migrate --noinput -v 0
manage createcachetable
manage load_demo
manage collectstatic --noinput -v 0

[ "${1:-}" = "prepare" ] && exit 0

# The worker (the webhooks' and e-mails' outbox, the periodic jobs' runs) and the scheduler
# (jobs.schedule), as production runs them (docs/operations.md), in the background: each stops
# when the server (this shell's PID, after exec) is gone. CTR_JOBS=0 leaves them out, e.g.
# where services of their own run them.
if [ "${CTR_JOBS:-1}" != "0" ]; then
    manage worker --parent $$ &
    manage scheduler --parent $$ &
fi

echo "Servindo em http://$host:$port/  (Ctrl+C para parar)"
exec "$PYTHON" manage.py runserver --noreload "$host:$port"
