"""Liveness and readiness probes (docs/operations.md, "Saúde, métricas e logs").

- `/healthz`: the process answers. No database, no session, no template: a load balancer or
  a container runtime restarts the process when this fails.
- `/readyz`: the process can serve: every check of READINESS_CHECKS passes. 200 when all do,
  503 naming the one that failed; a load balancer takes the server out of rotation meanwhile.

Small views rather than django-health-check: its checks answer under one URL of its own with
its own body and HTTP 500 on failure, and have no "no database" liveness view; ours are two
fixed paths, 503, and a JSON body a probe reads (`{"status": …, "checks": {name: {…}}}`).

Platform-level, not scoped to a municipality: the body says which check failed and numbers
about the whole deployment (how late the oldest outbox row is), never a municipality's data,
a person, an address, a host name or an exception's text. Excluded from the rate limits
(config.security.RULES names none of these paths) and from the access log (config.logs).
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import DatabaseError, connection
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache

PROBE_PATHS = frozenset({"/healthz", "/readyz"})


@dataclass
class Result:
    ok: bool
    detail: str = ""
    data: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        body = {"status": "ok" if self.ok else "falha"}
        if self.detail:
            body["detalhe"] = self.detail
        return body | self.data


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[], Result]
    # Checks that read the database are not run when it is unreachable (one failure, not four).
    needs_database: bool = True


def check_database() -> Result:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        # Not the exception's text: it names the host and port of the database.
        return Result(False, "Banco de dados inacessível.")
    return Result(True)


@functools.cache
def _migrations_on_disk() -> tuple[frozenset, dict]:
    """The migrations this code ships (read once per process: the code does not change under
    a running process) and the squashed ones' replacements."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return frozenset(loader.graph.nodes), dict(loader.replacements)


def check_migrations() -> Result:
    """Every migration of this code applied: a new version started before `migrate` (or a
    rollback of the database) is not ready. One query on django_migrations per probe."""
    on_disk, replacements = _migrations_on_disk()
    applied = set(MigrationRecorder(connection).applied_migrations())
    missing = []
    for key in on_disk:
        if key in applied:
            continue
        replaced = replacements.get(key)
        if replaced is not None and all(old in applied for old in replaced.replaces):
            continue
        missing.append(key)
    if missing:
        return Result(
            False,
            "Há migrações não aplicadas: rode `manage.py migrate`.",
            {"pendentes": sorted(f"{app}.{name}" for app, name in missing)},
        )
    return Result(True)


def seen_within(what: str, last_seen: Callable[[], datetime.datetime | None], minutes: int):
    """A check that `what` (the worker, the scheduler) was seen in the last `minutes`:
    `last_seen()` answers when, or None if never."""

    def run() -> Result:
        seen = last_seen()
        if seen is None:
            return Result(False, f"{what} nunca foi visto.")
        age = int((timezone.now() - seen).total_seconds())
        data = {"visto_ha_segundos": age, "limite_segundos": minutes * 60}
        if age > minutes * 60:
            return Result(False, f"{what} não é visto há mais de {minutes} minutos.", data)
        return Result(True, data=data)

    return run


# What /readyz checks, in order. The apps add theirs in their AppConfig.ready() (config imports
# no app): the outbox (webhooks.health). To add one: a Check with a function returning a
# Result, e.g. the worker and the scheduler of the jobs app:
#   Check("worker", seen_within("O worker", lambda: jobs.health.last_seen()["worker"], N)),
READINESS_CHECKS: list[Check] = [
    Check("database", check_database, needs_database=False),
    Check("migrations", check_migrations),
]


def run_checks(checks: list[Check]) -> tuple[bool, dict]:
    results: dict[str, dict] = {}
    database_ok = True
    for check in checks:
        if check.needs_database and not database_ok:
            result = Result(False, "Não verificado: banco de dados inacessível.")
        else:
            try:
                result = check.run()
            except DatabaseError:
                result = Result(False, "Erro ao consultar o banco de dados.")
        if check.name == "database":
            database_ok = result.ok
        results[check.name] = result.as_dict()
    ready = all(r["status"] == "ok" for r in results.values())
    return ready, results


@never_cache
def healthz(request):
    return JsonResponse({"status": "ok"})


@never_cache
def readyz(request):
    ready, results = run_checks(READINESS_CHECKS)
    body = {"status": "ok" if ready else "falha", "checks": results}
    return JsonResponse(body, status=200 if ready else 503)


# How their data is scoped (jurisdiction.access.DataScope.PUBLIC, named here as a string since
# config imports no app): platform-level figures, open to the probe of a load balancer.
healthz.data_scope = readyz.data_scope = "public"
