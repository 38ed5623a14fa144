"""A PostgreSQL streaming read replica for the heavy read-only pages
(docs/operations.md, "Réplica de leitura").

With DATABASE_REPLICA_URL set (config/settings.py adds the `replica` alias and the router
below), a view marked `@replica_readable` reads the domain's tables from the replica, when the
replica may answer for this client:

- Read-your-writes: after every request that may have written (any method but GET, HEAD,
  OPTIONS, TRACE), ReadYourWritesMiddleware puts the primary's WAL position in a signed cookie;
  the replica answers that client only once its replay position has reached it. The cookie
  lives as long as the lag threshold (and a minute): past that, a replica that has still not
  replayed the write lags more than the threshold, and is left alone anyway.
- Lag: the replica is behind when its replay position is short of the primary's flushed WAL;
  its lag is then the age of the last transaction it replayed. Past
  settings.CTR_REPLICA_MAX_LAG_SECONDS, the primary answers. Comparing with the primary (one
  cheap query there) also notices a replica that stopped receiving WAL, which its own figures
  alone would show as up to date.
- A replica that does not answer (down, refusing, promoted) is left for
  settings.CTR_REPLICA_RETRY_SECONDS; a query that fails on it mid-view runs the view again on
  the primary. Never an error for the user; a log line on each change of state.

Writes always go to the primary; so do the reads of authentication, sessions, the cache (rate
limits, lock-outs) and the municipal roles (jurisdiction): who may see what is decided on
current data. Scoping is unchanged: the replica holds the same rows, and the same jurisdiction
filters apply to them. Without DATABASE_REPLICA_URL none of this is installed.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import re
import threading
import time

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.db import DEFAULT_DB_ALIAS, connections

from config.middleware import DATABASE_ERRORS, is_statement_timeout

logger = logging.getLogger(__name__)

REPLICA = "replica"
LSN_COOKIE = "ctr_wal"
LSN_SALT = "config.replica.lsn"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")
# The apps whose tables a replica-readable view reads from the replica. Not auth, sessions,
# the cache table, axes, tokens or jurisdiction (roles): those stay on the primary.
REPLICA_APPS = frozenset(
    {"ctr", "pev_network", "fiscalization", "generators", "nucleo", "maps", "ogc", "webhooks"}
)
LSN_PATTERN = re.compile(r"^([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})$")

_read_alias: contextvars.ContextVar[str] = contextvars.ContextVar(
    "ctr_read_alias", default=DEFAULT_DB_ALIAS
)


def configured() -> bool:
    return REPLICA in settings.DATABASES


def read_alias() -> str:
    """The database the current code reads from: the replica only inside a replica-readable
    view that may use it, and never inside a transaction on the primary (it may have written)."""
    alias = _read_alias.get()
    if alias != DEFAULT_DB_ALIAS and connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return DEFAULT_DB_ALIAS
    return alias


class _ReadConnection:
    """`django.db.connection` for raw SQL that only reads (the dashboard's aggregates, the
    OGC API, the exports): the connection of read_alias()."""

    def __getattr__(self, name):
        return getattr(connections[read_alias()], name)


read_connection = _ReadConnection()


class ReplicaRouter:
    """Reads of the domain's models inside a replica-readable view: the replica; everything
    else, and every write: the primary. Migrations run on the primary only."""

    def db_for_read(self, model, **hints):
        if model._meta.app_label in REPLICA_APPS:
            return read_alias()
        return DEFAULT_DB_ALIAS

    def db_for_write(self, model, **hints):
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        return True  # the same database, one of them a copy

    def allow_migrate(self, db, app_label, **hints):
        return db == DEFAULT_DB_ALIAS


def parse_lsn(text: str | None) -> int | None:
    """A WAL position as PostgreSQL writes it ('16/B374D848'), as a number; None if not one."""
    match = LSN_PATTERN.match(text or "")
    if not match:
        return None
    return (int(match.group(1), 16) << 32) | int(match.group(2), 16)


class _State:
    """Per process: until when the replica is left alone, and the last state logged."""

    lock = threading.Lock()
    down_until = 0.0
    logged = "ok"


def _note(state: str, message: str, *args) -> None:
    """One log line when the replica's state changes (ok, down, lagging), not one per request."""
    with _State.lock:
        changed, _State.logged = _State.logged != state, state
    if changed:
        (logger.info if state == "ok" else logger.warning)(message, *args)


def _leave_replica(reason: str, *args) -> None:
    _State.down_until = time.monotonic() + settings.CTR_REPLICA_RETRY_SECONDS
    connections[REPLICA].close()
    _note("down", reason, *args)


def _error_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def required_lsn(request) -> int | None:
    """The primary's WAL position after this client's last write (signed cookie), if recent."""
    value = request.get_signed_cookie(LSN_COOKIE, default=None, salt=LSN_SALT)
    return parse_lsn(value)


def choose_database(request) -> str:
    """The alias a replica-readable view reads from for this request (see the module's doc)."""
    if not configured() or request.method not in SAFE_METHODS:
        return DEFAULT_DB_ALIAS
    if time.monotonic() < _State.down_until:
        return DEFAULT_DB_ALIAS
    try:
        with connections[REPLICA].cursor() as cursor:
            cursor.execute(
                "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text, "
                "extract(epoch FROM now() - pg_last_xact_replay_timestamp())"
            )
            in_recovery, replayed, age = cursor.fetchone()
    except DATABASE_ERRORS as exc:
        _leave_replica("Réplica de leitura indisponível, lendo do primário: %s", _error_line(exc))
        return DEFAULT_DB_ALIAS
    if not in_recovery:
        _leave_replica("DATABASE_REPLICA_URL não é uma réplica em recuperação: lendo do primário.")
        return DEFAULT_DB_ALIAS
    replayed = parse_lsn(replayed) or 0
    wanted = required_lsn(request)
    if wanted is not None and replayed < wanted:
        return DEFAULT_DB_ALIAS  # this client's own write is not there yet
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_flush_lsn()::text")
        flushed = parse_lsn(cursor.fetchone()[0]) or 0
    lag = 0.0 if replayed >= flushed else float("inf") if age is None else float(age)
    limit = settings.CTR_REPLICA_MAX_LAG_SECONDS
    if lag > limit:
        _note(
            "lagging",
            "Réplica de leitura atrasada (%s s, limite %s s): lendo do primário.",
            "?" if lag == float("inf") else f"{lag:.1f}",
            f"{limit:g}",
        )
        return DEFAULT_DB_ALIAS
    _note("ok", "Réplica de leitura em uso.")
    return REPLICA


def replica_readable(view):
    """Marks a read-only view whose reads may come from the replica (when one is configured
    and may answer this request: choose_database). The view must not write what it reads
    back; a write it makes goes to the primary all the same."""

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        alias = choose_database(request)
        if alias == DEFAULT_DB_ALIAS:
            return view(request, *args, **kwargs)
        token = _read_alias.set(alias)
        try:
            response = view(request, *args, **kwargs)
            if hasattr(response, "render") and not response.is_rendered:
                response.render()  # a TemplateResponse's queries, while on the replica
            return response
        except DATABASE_ERRORS as exc:
            if is_statement_timeout(exc) or not connections[REPLICA].errors_occurred:
                raise  # the primary's error, or a query too slow anywhere: the usual 503
            _leave_replica("Réplica de leitura falhou, lendo do primário: %s", _error_line(exc))
        finally:
            _read_alias.reset(token)
        return view(request, *args, **kwargs)

    wrapped.replica_readable = True
    return wrapped


class ReadYourWritesMiddleware:
    """After a request that may have written, the primary's WAL position in a signed cookie
    (choose_database reads it). Not installed without a replica."""

    def __init__(self, get_response):
        if not configured():
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.method in SAFE_METHODS:
            return response
        try:
            with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
                cursor.execute("SELECT pg_current_wal_lsn()::text")
                position = cursor.fetchone()[0]
        except DATABASE_ERRORS:
            return response  # the primary is gone: the response already says so
        response.set_signed_cookie(
            LSN_COOKIE,
            position,
            salt=LSN_SALT,
            max_age=int(settings.CTR_REPLICA_MAX_LAG_SECONDS) + 60,
            httponly=True,
            samesite="Lax",
            secure=settings.SESSION_COOKIE_SECURE,
        )
        return response
