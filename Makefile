# Controle de Transporte de Resíduos — the two commands are `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := run

VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)

# With DATABASE_URL set, the app uses that PostGIS and the local cluster is left alone.
# Without it, manage.py finds the local cluster by itself too (config/settings.py).
ifeq ($(strip $(DATABASE_URL)),)
DB_START := bash scripts/localdb.sh start
DB_ENV = DATABASE_URL="$$(bash scripts/localdb.sh url)"
DB_NOTE := echo "O PostgreSQL local continua em execução (porta $${CTR_PG_PORT:-$$(cat .local/pg-port 2>/dev/null || echo 54329)}); 'make stop' o para."
else
DB_START := @echo "Usando DATABASE_URL externo."
DB_ENV =
DB_NOTE := true
endif

.PHONY: run prod test stop system-run system-test system-bench venv db prepare lint format clean bench tour

system-run:
	@bash scripts/system-packages.sh run

system-test:
	@bash scripts/system-packages.sh test

system-bench:
	@bash scripts/system-packages.sh bench

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip
	@$(PY) -m pip install -q -e '.[dev]'
	@rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP)
	@bash scripts/frontend-assets.sh

db:
	$(DB_START)

# The start itself (migrate, cache table, demos, static files, serve) is scripts/start.sh, the
# same one the Docker image runs.
prepare: system-run venv db
	@$(DB_ENV) PYTHON=$(PY) bash scripts/start.sh prepare

run: system-run venv db
	@$(DB_NOTE)
	@$(DB_ENV) PYTHON=$(PY) HOST=$(HOST) PORT=$(PORT) bash scripts/start.sh

# Production without Docker (docs/operations.md, "Processos em produção"): gunicorn, the worker
# and the scheduler under honcho (Procfile), DEBUG off; DJANGO_SECRET_KEY required.
prod: system-run venv db
	@$(DB_ENV) HOST=$(HOST) PORT=$(PORT) bash scripts/serve.sh

# The static files collected first, as in production (WhiteNoise serves STATIC_ROOT). The
# suite's exit code is make's; the note on the local cluster comes after it, pass or fail.
# The whole suite runs in TEST_WORKERS processes (pytest-xdist), each with its own test
# database (test_ctr_gw0, …) and ports. Tests are dealt out in pytest-django's order (every
# test in a transaction before any that flushes the database, which empties what the data
# migrations loaded): --dist load keeps that order in each process; loadfile would not. With
# PYTEST_ARGS (a file, a -k), one process unless TEST_WORKERS is given; 0 runs all in one.
TEST_WORKERS ?= $(if $(PYTEST_ARGS),0,4)
test: system-test venv db
	@$(DB_ENV) $(PY) manage.py collectstatic --noinput -v 0
	@$(DB_ENV) $(PY) -m pytest $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist load) $(PYTEST_ARGS); status=$$?; $(DB_NOTE); exit $$status

# Benchmarks on a database of their own (ctr_bench beside the app's; or BENCH_DATABASE_URL):
# 10k, 100k and 1M synthetic CTRs; figures in docs/performance.md. BENCH_ARGS="--sizes 10000 --no-write" (partial runs print or go to --output).
# P1 (CSV import) and P6 (chain of custody, 1M CTRs of which 20 % onward) on theirs. The phone
# pages (bench.pages: Lighthouse, a dev dependency it installs with `npm ci`) on the demo.
bench: system-run system-bench venv db
	@$(DB_ENV) $(PY) -m bench $(BENCH_ARGS)
	@$(DB_ENV) $(PY) -m bench.p1_bulk
	@$(DB_ENV) $(PY) -m bench.p6_custody
	@$(DB_ENV) $(PY) -m bench.p7_dashboard
	@$(DB_ENV) $(PY) -m bench.pages
	@$(DB_ENV) $(PY) -m bench.soak

# The illustrated tour (docs/tour.md): each role's main journey in the demo, desktop and phone.
tour: system-test prepare
	@$(DB_ENV) $(PY) manage.py tour --docs docs

stop:
	@bash scripts/localdb.sh stop

# Backups (docs/security.md): `make backup` writes backups/ctr-<timestamp>.dump (pg_dump -Fc of
# the DATABASE_URL database or the local cluster's; BACKUP_DIR=… elsewhere); `make restore
# FILE=backups/ctr-….dump CONFIRM=1` replaces the database's contents with it (refused
# without CONFIRM=1; stop the application first).
.PHONY: backup restore
backup: db
	@$(DB_ENV) bash scripts/backup.sh backup $(BACKUP_DIR)

restore: db
	@test -n "$(FILE)" || { echo "uso: make restore FILE=backups/ctr-AAAAMMDD-HHMMSS.dump CONFIRM=1" >&2; exit 2; }
	@$(DB_ENV) CONFIRM="$(CONFIRM)" bash scripts/backup.sh restore "$(FILE)"

# Point-in-time recovery (docs/operations.md, scripts/pitr.sh): `make pitr-setup` once makes the
# local cluster archive its WAL to pgBackRest and takes a full backup (off by default: archiving
# would slow every `make test`); `make pitr-backup [TYPE=diff|incr]`, `make pitr-check` (archiving
# works, the repository verifies), `make pitr-restore DIR=/novo/pgdata [AT='2026-12-04
# 16:59:00-03']` into a NEW data directory, the running cluster untouched.
.PHONY: pitr-setup pitr-backup pitr-check pitr-restore
pitr-setup: system-run db
	@bash scripts/system-packages.sh pitr
	@bash scripts/pitr.sh setup

pitr-backup:
	@bash scripts/pitr.sh backup $(or $(TYPE),full)

pitr-check:
	@bash scripts/pitr.sh check && bash scripts/pitr.sh verify && bash scripts/pitr.sh info

pitr-restore:
	@test -n "$(DIR)" || { echo "uso: make pitr-restore DIR=/novo/pgdata [AT='AAAA-MM-DD HH:MM:SS-03']" >&2; exit 2; }
	@bash scripts/pitr.sh restore "$(DIR)" "$(AT)"

# Also the migrations (config/migration_lint.py): a backward-incompatible one fails, since the
# version still running during a rolling deploy would trip over it (docs/operations.md). The
# linter reads each migration's SQL through the database connection, hence `db`.
lint: system-run venv db
	@$(PY) -m ruff check . && $(PY) -m ruff format --check .
	@$(DB_ENV) $(PY) -m config.migration_lint

format: venv
	@$(PY) -m ruff format . && $(PY) -m ruff check --fix .

clean: stop
	rm -rf .local $(VENV) staticfiles
