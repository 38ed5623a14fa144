"""Site-wide middleware."""

from __future__ import annotations

import contextlib
import json
import logging
import sys

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.signals import got_request_exception
from django.db import InterfaceError, OperationalError, connections
from django.http import Http404, HttpResponse
from django.middleware.gzip import GZipMiddleware

from config.br import br_number
from config.errors import DomainError, back_to_page
from config.views import not_found

logger = logging.getLogger(__name__)

DATABASE_ERRORS = (OperationalError, InterfaceError)
# Paths whose clients expect JSON: problem details (RFC 9457) rather than an HTML page.
API_PREFIXES = ("/api/", "/ogc/")
PROBLEM_CONTENT_TYPE = "application/problem+json"
DEFAULT_STATEMENT_TIMEOUT_MS = 15_000
# SQLSTATE 57014 (query_canceled): statement_timeout or a cancel from the server side.
QUERY_CANCELED = "57014"
# libpq transaction status of the DB-API connection (psycopg2 and psycopg agree).
TX_IDLE, TX_INTRANS = 0, 2
RETRY_AFTER_UNAVAILABLE = 10
RETRY_AFTER_TIMEOUT = 30

HTML_PAGE = """<!doctype html>
<html lang="pt-BR">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} — CTR</title></head>
<body style="font-family: sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1>{title}</h1>
<p>{detail}</p>
<p><a href="/">Voltar ao início</a></p>
</body>
</html>
"""


def is_statement_timeout(exc: BaseException) -> bool:
    cause = exc.__cause__ or exc.__context__
    return getattr(cause, "pgcode", None) == QUERY_CANCELED


def _remember_database_error(sender, request=None, **kwargs) -> None:
    """Django turns an exception raised in a middleware inside ours into a 500 response before
    it reaches us; this receiver (of got_request_exception, sent then) marks the request, so
    that the 500 is replaced by our 503."""
    exc = sys.exc_info()[1]
    if request is not None and isinstance(exc, DATABASE_ERRORS):
        request._database_guard_error = exc


got_request_exception.connect(_remember_database_error, dispatch_uid="config.database_guard")


def unavailable_response(request, exc: BaseException) -> HttpResponse:
    """503 in Portuguese, without a trace of the error; problem+json for API clients."""
    timeout = is_statement_timeout(exc)
    if timeout:
        seconds = br_number(statement_timeout_ms() / 1000, grouping=False)
        title = "Tempo de consulta esgotado"
        detail = (
            f"A consulta passou do limite de {seconds} segundos e foi interrompida. "
            "Tente de novo com um filtro menor (período ou área) ou mais tarde."
        )
        code, retry_after = "statement_timeout", RETRY_AFTER_TIMEOUT
    else:
        title = "Serviço temporariamente indisponível"
        detail = (
            "O banco de dados está indisponível no momento. Tente novamente em alguns "
            "instantes; antes de reenviar dados, confira se a operação já foi registrada."
        )
        code, retry_after = "database_unavailable", RETRY_AFTER_UNAVAILABLE
    logger.error(
        "%s em %s %s: %s: %s",
        "Tempo de consulta esgotado" if timeout else "Banco de dados indisponível",
        request.method,
        request.path,
        type(exc).__name__,
        str(exc).strip().splitlines()[0] if str(exc).strip() else "",
    )
    if request.path.startswith(API_PREFIXES):
        body = {
            "type": "about:blank",
            "title": title,
            "status": 503,
            "detail": detail,
            "code": code,
            "instance": request.get_full_path(),
        }
        response = HttpResponse(
            json.dumps(body, ensure_ascii=False),
            status=503,
            content_type=PROBLEM_CONTENT_TYPE,
        )
    else:
        response = HttpResponse(
            HTML_PAGE.format(title=title, detail=detail),
            status=503,
            content_type="text/html; charset=utf-8",
        )
    response["Retry-After"] = str(retry_after)
    response["Cache-Control"] = "no-store"
    return response


def too_big_response(request) -> HttpResponse:
    """413 in Portuguese (problem+json) for an API body past DATA_UPLOAD_MAX_MEMORY_SIZE, instead
    of Django's HTML 400 page."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0
    megabytes = br_number(limit / (1024 * 1024), grouping=False)
    body = {
        "type": "about:blank",
        "title": "Conteúdo grande demais",
        "status": 413,
        "detail": (
            f"O corpo da requisição passa do limite de {megabytes} MB: envie menos dados por "
            "requisição (fotos vão como arquivos, em multipart/form-data)."
        ),
        "code": "request_too_large",
        "instance": request.get_full_path(),
    }
    return HttpResponse(
        json.dumps(body, ensure_ascii=False), status=413, content_type=PROBLEM_CONTENT_TYPE
    )


def statement_timeout_ms() -> int:
    value = getattr(settings, "CTR_REQUEST_STATEMENT_TIMEOUT_MS", DEFAULT_STATEMENT_TIMEOUT_MS)
    return int(value or 0)


def request_session_settings() -> dict[str, str]:
    """PostgreSQL settings for the queries of a request (never for commands or benchmarks).

    statement_timeout: settings.CTR_REQUEST_STATEMENT_TIMEOUT_MS (0 leaves the server's).
    max_parallel_workers_per_gather: settings.CTR_REQUEST_PARALLEL_WORKERS (None leaves the
    server's). PostGIS declares its spatial predicates expensive, so the planner goes parallel
    for a bbox that matches a thousand rows; starting the workers cost 15-30 ms on a 2-core
    machine, for a query that takes 1-2 ms alone (docs/performance.md, P5), and under load
    the requests already keep every core busy."""
    values = {}
    milliseconds = statement_timeout_ms()
    if milliseconds > 0:
        values["statement_timeout"] = str(milliseconds)
    workers = getattr(settings, "CTR_REQUEST_PARALLEL_WORKERS", None)
    if workers is not None:
        values["max_parallel_workers_per_gather"] = str(int(workers))
    return values


# Whether this process serves requests only (serve_requests_only). Then each connection keeps
# the request settings between requests: every statement it runs is a request's.
_requests_only = False


def serve_requests_only(on: bool = True) -> None:
    """Called by a process that serves requests and nothing else (config/wsgi.py, bench.urls):
    its connections get the request settings once (the first request on each) and keep them,
    instead of a SET before and a reset after every request, two round trips per request.
    A process where other code shares the connections (tests, management
    commands, the in-process benchmarks) does not call it: the settings are undone after each
    request there. `on=False` goes back to that, the connections' kept settings undone (a test
    that serves a stretch of requests as gunicorn does, then runs its own queries)."""
    global _requests_only
    _requests_only = on
    if not on:
        for connection in connections.all(initialized_only=True):
            scope = connection.__dict__.pop("ctr_request_settings", None)
            if scope is not None:
                scope.reset(connection)


def requests_only() -> bool:
    return _requests_only


class RequestSessionSettings:
    """An execute wrapper that puts a connection under the request's `SET`s before the first
    statement of a request (one round trip), and `reset()` puts the session defaults back at
    the end (in a process that serves requests only, the SET is kept: session_scope).

    Lazy: a request that makes no query opens no connection. A SET made inside a transaction
    is undone if that transaction rolls back, so it holds for good only once made in autocommit;
    until then it is made again at the start of each new transaction.
    """

    def __init__(self, values: dict[str, str]):
        self.values = values
        self.set_sql = "; ".join(f"SET {name} = {value}" for name, value in values.items())
        self.reset_sql = "; ".join(f"SET {name} TO DEFAULT" for name in values)
        self.raw = None  # the DB-API connection the settings were made on
        self.durable = False  # made in autocommit: holds until reset
        self.in_transaction = False  # made inside the current transaction

    def __call__(self, execute, sql, params, many, context):
        connection = context["connection"]
        raw = connection.connection
        if raw is not None:
            if raw is not self.raw:  # first statement, or a new connection after an error
                self.raw, self.durable, self.in_transaction = raw, False, False
            if not self.durable:
                status = raw.info.transaction_status
                if connection.get_autocommit():
                    self._set(connection, self.set_sql)
                    self.durable = True
                elif status == TX_IDLE or (status == TX_INTRANS and not self.in_transaction):
                    # The statement opens a transaction (IDLE) or runs in one not seen yet.
                    self._set(connection, self.set_sql)
                    self.in_transaction = True
        return execute(sql, params, many, context)

    def _set(self, connection, statement: str) -> None:
        # A plain cursor of the DB-API connection: not through the execute wrappers (no
        # recursion) and never a server-side (named) cursor, which cannot run SET.
        with connection.wrap_database_errors, connection.connection.cursor() as cursor:
            cursor.execute(statement)

    def reset(self, connection) -> None:
        raw = self.raw
        if raw is None or raw is not connection.connection or getattr(raw, "closed", True):
            return
        if raw.info.transaction_status not in (TX_IDLE, TX_INTRANS):
            return  # an aborted transaction: its rollback undoes the SET anyway
        try:
            self._set(connection, self.reset_sql)
        except Exception:  # the database went away: the connection is discarded anyway
            logger.warning("Não foi possível restaurar as configurações da conexão.")


def session_scope(connection, values: dict[str, str]) -> RequestSessionSettings:
    """The request's settings on `connection`: new for each request; in a process that serves
    requests only, the connection's own, kept from one request to the next (it knows whether
    the SET was made on the DB-API connection in use, and makes it again on a new one)."""
    if not _requests_only:
        return RequestSessionSettings(values)
    scope = getattr(connection, "ctr_request_settings", None)
    if scope is None or scope.values != values:
        if scope is not None:  # other settings than the kept ones (not in production)
            scope.reset(connection)
        scope = connection.ctr_request_settings = RequestSessionSettings(values)
    return scope


class DatabaseGuardMiddleware:
    """Answers 503 in Portuguese when the database is unavailable (or a query passes the
    statement timeout), never with a stack trace, and runs each request's queries under
    `statement_timeout` (settings.CTR_REQUEST_STATEMENT_TIMEOUT_MS; 0 turns it off) and
    without parallel workers (see request_session_settings). Management commands and
    benchmarks are not requests: their queries have no such limit.
    An API body past DATA_UPLOAD_MAX_MEMORY_SIZE gets a 413 problem+json (not an HTML 400)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        values = request_session_settings()
        scopes: list[tuple[object, RequestSessionSettings]] = []
        try:
            with contextlib.ExitStack() as stack:
                if values:
                    for alias in settings.DATABASES:
                        connection = connections[alias]
                        if connection.vendor != "postgresql":
                            continue
                        scope = session_scope(connection, values)
                        stack.enter_context(connection.execute_wrapper(scope))
                        scopes.append((connection, scope))
                response = self.get_response(request)
        except DATABASE_ERRORS as exc:  # raised outside Django's own handling
            return unavailable_response(request, exc)
        finally:
            if not _requests_only:
                for connection, scope in scopes:
                    scope.reset(connection)
        error = getattr(request, "_database_guard_error", None)
        if error is not None and response.status_code >= 500:
            return unavailable_response(request, error)
        return response

    def process_exception(self, request, exception):
        if isinstance(exception, DATABASE_ERRORS):
            return unavailable_response(request, exception)
        if isinstance(exception, RequestDataTooBig) and request.path.startswith(API_PREFIXES):
            return too_big_response(request)
        return None


class PortugueseNotFoundMiddleware:
    """Every 404 is the site's Portuguese page (config.views.not_found), with DEBUG on too.

    With DEBUG on (as `make run` serves), Django answers an unknown URL or an Http404 raised by
    a view with its technical page, in English, listing the URL patterns. Here an Http404 from
    a view goes to the project's handler (process_exception), and a 404 for a URL that no
    pattern matched (Django leaves request.resolver_match unset then) is rendered again by it.
    The 404 pages views render themselves ("CTR não encontrado", "Obra não encontrada") are
    left as they are. Placed after CommonMiddleware, so that its APPEND_SLASH redirect still
    sees the 404."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            settings.DEBUG
            and response.status_code == 404
            and getattr(request, "resolver_match", None) is None
        ):
            return not_found(request)
        return response

    def process_exception(self, request, exception):
        if settings.DEBUG and isinstance(exception, Http404):
            return not_found(request, exception)
        return None


class DomainErrorMiddleware:
    """A DomainError that a page's view lets escape becomes a message on the page the user
    acted from (config.errors.back_to_page): the views of actions need no try/except that only
    translates. The API never gets here: DRF's handler answers it (config.api_errors)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, DomainError):
            # What lies outside the user's municipalities does not exist for it.
            if exception.status == 404:
                return not_found(request, exception)
            return back_to_page(request, exception)
        return None


# Text that compresses several-fold: pages, JSON and GeoJSON, CSV. Photos, PDFs and the
# GeoPackage are compressed already or binary, and streamed answers stay as they are.
COMPRESSIBLE_TYPES = (
    "text/",
    "application/json",
    "application/problem+json",
    "application/geo+json",
)


class CompressedTextMiddleware(GZipMiddleware):
    """Pages and JSON gzip-compressed for clients that accept it: the issue form's HTML is ~100 KB
    and a phone on 4G pays for every byte. First in MIDDLEWARE, so every
    other middleware reads and writes the plain body. BREACH: the one secret in a page, the
    CSRF token, is masked anew on every response by Django."""

    def process_response(self, request, response):
        if response.streaming or not response.get("Content-Type", "").startswith(
            COMPRESSIBLE_TYPES
        ):
            return response
        return super().process_response(request, response)
