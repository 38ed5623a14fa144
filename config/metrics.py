"""Prometheus metrics at /metrics (docs/operations.md, "Saúde, métricas e logs").

Two kinds of figures, each from where it is cheap and right:

- Events (requests, CTRs issued/received/refused, findings, login failures) are counters
  incremented when they happen, in the process where they happen. Under gunicorn each worker
  process has its own: with PROMETHEUS_MULTIPROC_DIR set, prometheus-client writes them to
  files in that directory and the scrape sums every worker's (multiprocess mode). Counting
  them from the database at scrape time instead would mean a GROUP BY over the CTR table
  (1 million rows and more) and over its findings (JSON inside each CTR, no index can serve)
  on every scrape; the counters cost one increment per event. Prometheus' rate() handles
  their reset when a process restarts; two app servers are two targets that Prometheus sums.
- The outbox's depth and age are a state, not events: read from the database at scrape time,
  on the partial index of pending rows (a handful of rows when the worker keeps up).

Platform-level, like the probes: labels are a URL pattern's name (never a raw path with ids), an
HTTP method and status, a municipality's IBGE code (public), a rule code, an outbox kind. No
person, user name, address or document is ever a label. Reading them needs the bearer token
CTR_METRICS_TOKEN, or a client address in CTR_METRICS_ALLOWED_NETWORKS; with neither set the
endpoint answers 404.
"""

from __future__ import annotations

import hmac
import ipaddress
import os

from axes.signals import user_locked_out
from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.http import HttpResponse
from django.views.decorators.cache import never_cache
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

from config.clients import client_address

REQUESTS = Counter(
    "ctr_http_requests",
    "Requisições HTTP atendidas, por rota (nome do padrão da URL), método e status.",
    ["route", "method", "status"],
)
LATENCY = Histogram(
    "ctr_http_request_duration_seconds",
    "Tempo de resposta das requisições HTTP, por rota, método e status.",
    ["route", "method", "status"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
LOGIN_FAILURES = Counter(
    "ctr_login_failures",
    "Tentativas de entrada sem sucesso (formulário, token da API, administração).",
    ["channel"],
)
LOGIN_LOCKOUTS = Counter(
    "ctr_login_lockouts",
    "Entradas recusadas por bloqueio (django-axes, usuário e endereço): a tentativa que bloqueia "
    "e cada uma durante o bloqueio.",
    ["channel"],
)

# Where the HTTP figures of a request go when it matched no URL pattern: one series, not one
# per path a scanner tries.
UNMATCHED_ROUTE = "(nenhuma)"


def route_of(request) -> str:
    """The name of the URL pattern the request matched (`ctr-receive`, `ctr_web:login`), or
    the pattern itself when it has no name; never the path with its ids."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        return UNMATCHED_ROUTE
    return match.view_name or "/" + match.route


def observe_request(request, status: int, seconds: float) -> None:
    labels = (route_of(request), request.method, str(status))
    REQUESTS.labels(*labels).inc()
    LATENCY.labels(*labels).observe(seconds)


_CHANNELS = (("/api/", "api"), ("/admin/", "admin"))


def _channel(request) -> str:
    path = getattr(request, "path_info", "") or ""
    return next((name for prefix, name in _CHANNELS if path.startswith(prefix)), "web")


def _on_login_failed(sender, credentials=None, request=None, **kwargs) -> None:
    LOGIN_FAILURES.labels(_channel(request)).inc()


def _on_locked_out(sender, request=None, **kwargs) -> None:
    LOGIN_LOCKOUTS.labels(_channel(request)).inc()


# Django's signal (django-axes counts the failures on it too) and django-axes' own.
user_login_failed.connect(_on_login_failed, dispatch_uid="config.metrics.login_failed")
user_locked_out.connect(_on_locked_out, dispatch_uid="config.metrics.locked_out")


# --- state read at scrape time -----------------------------------------------------------------

# Figures read at scrape time: functions returning metric families, added by the apps that own
# them (config imports no app): the outbox's depth and age (webhooks.health); the jobs' runs
# and failures, read from their table, go here too.
SCRAPE_TIME_FAMILIES: list = []


class _ScrapeTime:
    def collect(self):
        for families in SCRAPE_TIME_FAMILIES:
            yield from families()


def exposition() -> bytes:
    """The metrics of every worker process of this server, then the database's."""
    multiproc_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if multiproc_dir:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=multiproc_dir)
        events = generate_latest(registry)
    else:
        events = generate_latest(REGISTRY)
    state = CollectorRegistry(auto_describe=False)
    state.register(_ScrapeTime())
    return events + generate_latest(state)


def _allowed(request) -> bool:
    token = settings.CTR_METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer "):
        given = header.removeprefix("Bearer ").strip().encode()
        if hmac.compare_digest(given, token.encode()):
            return True
    networks = settings.CTR_METRICS_ALLOWED_NETWORKS
    if networks:
        try:
            address = ipaddress.ip_address(client_address(request.META))
        except ValueError:
            return False
        return any(address in ipaddress.ip_network(n, strict=False) for n in networks)
    return False


@never_cache
def metrics_view(request):
    if not settings.CTR_METRICS_TOKEN and not settings.CTR_METRICS_ALLOWED_NETWORKS:
        return HttpResponse("Não encontrado.", status=404, content_type="text/plain")
    if not _allowed(request):
        response = HttpResponse(
            "Acesso negado: envie o cabeçalho “Authorization: Bearer <CTR_METRICS_TOKEN>”.",
            status=401,
            content_type="text/plain; charset=utf-8",
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)


# Platform-level figures behind a token (jurisdiction.access.DataScope.PUBLIC as a string:
# config imports no app); no municipality's personal data in them.
metrics_view.data_scope = "public"
