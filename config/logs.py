"""Logs you can follow (docs/operations.md, "Saúde, métricas e logs").

- One line per request (logger `ctr.access`): method, route (the URL pattern's name, never
  the raw path), status, duration, user id (never a user name or e-mail), municipality (IBGE code of
  the staff member's current municipality, when the request read it) and the request id.
- The request id comes from the client's `X-Request-ID` when it is a plausible id (8 to 64
  letters, digits, `.`, `_`, `-`), else is generated; it is returned in the `X-Request-ID`
  header and in every application/problem+json body (`request_id`), and every line logged
  while the request runs carries it (structlog's context variables): a transporter's support
  call quoting it finds the request's lines.
- One line per job run: `job_run("nome")` (a context manager) gives the run its own id.
- JSON in production (CTR_LOG_FORMAT=json, the default with DEBUG off); `key=value` on the
  console for `make run`. Either way each line passes through config.log_privacy's masking:
  no CPF, CNPJ, e-mail or phone, whatever field it is in.

Probes (/healthz, /readyz) and scrapes of /metrics are not access-logged: a load balancer
probing every few seconds would drown the lines people read.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import re
import time
import uuid
from collections.abc import Callable

import structlog
from django.utils.functional import empty

from config.health import PROBE_PATHS
from config.log_privacy import MaskingFormatter, mask

REQUEST_ID_HEADER = "X-Request-ID"
_VALID_ID = re.compile(r"^[A-Za-z0-9._\-]{8,64}$")
QUIET_PATHS = PROBE_PATHS | {"/metrics"}
PROBLEM_CONTENT_TYPE = "application/problem+json"

structlog.configure(
    processors=[
        structlog.contextvars.merge_contextvars,
        # The fields go to the stdlib record (its `extra`): the handlers' masking and
        # formatters below write them, in JSON or on the console.
        structlog.stdlib.render_to_log_kwargs,
    ],
    logger_factory=structlog.stdlib.LoggerFactory(),
    wrapper_class=structlog.stdlib.BoundLogger,
    cache_logger_on_first_use=True,
)

access_log = structlog.get_logger("ctr.access")
jobs_log = structlog.get_logger("ctr.jobs")


def request_id_from(value: str | None) -> str:
    """The client's id when it is one we can log and echo safely; a new one otherwise."""
    if value and _VALID_ID.fullmatch(value):
        return value
    return uuid.uuid4().hex


def _with_request_id(response, request_id: str) -> None:
    """Adds `request_id` to an application/problem+json body, whoever built it (DRF's handler,
    the rate limits, the database guard, the lockout page of the API)."""
    if not response.get("Content-Type", "").startswith(PROBLEM_CONTENT_TYPE):
        return
    if getattr(response, "streaming", False):
        return
    try:
        body = json.loads(response.content)
    except ValueError:
        return
    if isinstance(body, dict) and "request_id" not in body:
        body["request_id"] = request_id
        response.content = json.dumps(body, ensure_ascii=False).encode()
        if response.has_header("Content-Length"):  # set by CommonMiddleware for the old body
            response["Content-Length"] = str(len(response.content))


def _user_id(request) -> int | None:
    """The user's id if the request already read it (never a query just for the log)."""
    user = getattr(request, "user", None)
    if user is None or getattr(user, "_wrapped", None) is empty:
        return None
    return user.pk if getattr(user, "is_authenticated", False) else None


# How a municipality's id is named in the access log: the ctr app sets its IBGE code here
# (ctr.metrics.connect; config imports no app); the id itself until then.
municipality_label: Callable[[int], str] = str


def _municipality(request) -> str | None:
    user = getattr(request, "user", None)
    if user is None or getattr(user, "_wrapped", None) is empty:
        return None
    jurisdiction = getattr(user, "_jurisdiction", None)  # read by this request already
    current = getattr(jurisdiction, "current_id", None)
    return municipality_label(current) if current else None


class RequestObservationMiddleware:
    """First in MIDDLEWARE: the request id, the access line and the HTTP metrics of every
    request, the error pages and 503s of the middlewares below it included."""

    def __init__(self, get_response):
        # Here, not at the top: the formatters below are loaded while logging is configured,
        # before the apps (config.metrics hears django-axes' signals).
        from config import metrics

        self.metrics = metrics
        self.get_response = get_response

    def __call__(self, request):
        request_id = request_id_from(request.headers.get(REQUEST_ID_HEADER))
        request.request_id = request_id
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            seconds = time.perf_counter() - started
            response[REQUEST_ID_HEADER] = request_id
            _with_request_id(response, request_id)
            self.metrics.observe_request(request, response.status_code, seconds)
            if request.path_info not in QUIET_PATHS:
                access_log.info(
                    "request",
                    method=request.method,
                    route=self.metrics.route_of(request),
                    status=response.status_code,
                    duration_ms=round(seconds * 1000, 1),
                    user_id=_user_id(request),
                    municipality=_municipality(request),
                )
            return response
        finally:
            structlog.contextvars.clear_contextvars()


@contextlib.contextmanager
def job_run(job: str, **fields):
    """Logs one line when the job ends: its name, its own run id (`job_id`, also on every line
    logged during the run), outcome (`ok` or `erro`), duration and what the job put in the
    dict it was given (`with job_run("purge") as summary: summary["apagados"] = n`). An
    exception is logged with the line and raised again."""
    summary: dict = dict(fields)
    job_id = uuid.uuid4().hex
    tokens = structlog.contextvars.bind_contextvars(job=job, job_id=job_id)
    started = time.perf_counter()
    try:
        yield summary
    except BaseException as exc:
        jobs_log.error(
            "job",
            outcome="erro",
            error=type(exc).__name__,
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
            **summary,
        )
        raise
    else:
        jobs_log.info(
            "job",
            outcome="ok",
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
            **summary,
        )
    finally:
        structlog.contextvars.reset_contextvars(**tokens)


# --- formatters (settings.LOGGING) ---------------------------------------------------------------

_RECORD_FIELDS = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


def _fields(record: logging.LogRecord) -> dict:
    """The structured fields of a record (structlog's, or a stdlib call's `extra`)."""
    return {
        k: v
        for k, v in record.__dict__.items()
        if k not in _RECORD_FIELDS and not k.startswith("_")
    }


class JsonFormatter(MaskingFormatter):
    """One JSON object per line: time (UTC), level, logger, event, the structured fields, the
    ids of the request or job run being served, the traceback if any; masked as a whole."""

    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            # Which of gunicorn's worker processes wrote it.
            "pid": record.process,
            "event": record.getMessage(),
        }
        payload.update(_fields(record))
        # A stdlib call (Django's, a library's) within a request or a job run: its ids too.
        for key, bound in structlog.contextvars.get_contextvars().items():
            payload.setdefault(key, bound)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            payload["exception"] = record.exc_text
        return mask(json.dumps(payload, ensure_ascii=False, default=str))


class ConsoleFormatter(MaskingFormatter):
    """The plain line of `make run`, with the structured fields as key=value after it."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extra = " ".join(f"{k}={v}" for k, v in _fields(record).items() if v is not None)
        return mask(f"{line} {extra}") if extra else line
