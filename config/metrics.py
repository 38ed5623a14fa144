"""Prometheus metrics at /metrics (issue 26 point 4; docs/operations.md, "Saúde, métricas e logs").

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

import functools
import hmac
import ipaddress
import os

from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.db import transaction
from django.http import HttpResponse
from django.utils import timezone
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
from prometheus_client.core import GaugeMetricFamily

from config.clients import client_address
from ctr import signals as ctr_signals

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
CTRS = Counter(
    "ctr_ctrs",
    "CTRs emitidos, recebidos e recusados, por município (código IBGE).",
    ["municipality", "event"],
)
FINDINGS = Counter(
    "ctr_findings",
    "Constatações das regras nos CTRs emitidos, por código da regra.",
    ["rule"],
)
LOGIN_FAILURES = Counter(
    "ctr_login_failures",
    "Tentativas de entrada sem sucesso (formulário, token da API, administração).",
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


# --- business events ---------------------------------------------------------------------------

_EVENTS = {"issue": "issued", "receive": "received", "refuse": "refused"}


@functools.cache
def _municipality_code(municipality_id: int) -> str:
    from pev_network.models import Municipality

    return Municipality.objects.values_list("ibge_code", flat=True).get(pk=municipality_id)


def _count_after_commit(ctrs: dict[tuple[int, str], int], findings: dict[str, int]) -> None:
    """Counted when the transaction commits: an issue rolled back was never issued."""

    def count():
        for (municipality_id, event), n in ctrs.items():
            CTRS.labels(_municipality_code(municipality_id), event).inc(n)
        for rule, n in findings.items():
            FINDINGS.labels(rule).inc(n)

    transaction.on_commit(count)


def _on_event(sender, event, **kwargs) -> None:
    kind = _EVENTS.get(event.action)
    if kind is None:
        return
    codes = (event.data or {}).get("findings", []) if kind == "issued" else []
    findings: dict[str, int] = {}
    for code in codes:
        findings[code] = findings.get(code, 0) + 1
    _count_after_commit({(event.ctr.municipality_id, kind): 1}, findings)


def _on_import(sender, cursor, table, **kwargs) -> None:
    """The CSV import's chunk, set-based: two grouped queries over the chunk's new CTRs."""
    from ctr.models import CTR

    ctr_table = CTR._meta.db_table
    cursor.execute(
        f"SELECT c.municipality_id, count(*) FROM {ctr_table} c "
        f"JOIN {table} t ON t.id = c.id GROUP BY 1"
    )
    ctrs = {(municipality_id, "issued"): n for municipality_id, n in cursor.fetchall()}
    cursor.execute(
        f"SELECT f->>'code', count(*) FROM {ctr_table} c JOIN {table} t ON t.id = c.id, "
        "jsonb_array_elements(c.findings) f GROUP BY 1"
    )
    _count_after_commit(ctrs, dict(cursor.fetchall()))


_CHANNELS = (("/api/", "api"), ("/admin/", "admin"))


def _on_login_failed(sender, credentials=None, request=None, **kwargs) -> None:
    path = getattr(request, "path_info", "") or ""
    channel = next((name for prefix, name in _CHANNELS if path.startswith(prefix)), "web")
    LOGIN_FAILURES.labels(channel).inc()


ctr_signals.event_recorded.connect(_on_event, dispatch_uid="config.metrics.event")
ctr_signals.ctrs_imported.connect(_on_import, dispatch_uid="config.metrics.import")
user_login_failed.connect(_on_login_failed, dispatch_uid="config.metrics.login_failed")


# --- state read at scrape time -----------------------------------------------------------------


def outbox_families():
    """Depth of the outbox by kind, and the age of its oldest pending row (0 when empty)."""
    from django.db.models import Count, Min

    from webhooks.models import Delivery, DeliveryStatus

    depth = GaugeMetricFamily(
        "ctr_outbox_pending", "Entregas aguardando envio (webhooks e e-mails).", labels=["kind"]
    )
    age = GaugeMetricFamily(
        "ctr_outbox_oldest_pending_age_seconds",
        "Idade da entrega pendente mais antiga, em segundos (0 com a fila vazia).",
    )
    rows = (
        Delivery.objects.filter(status=DeliveryStatus.PENDING)
        .order_by()
        .values("kind")
        .annotate(n=Count("pk"), oldest=Min("created_at"))
    )
    counts = {kind: 0 for kind, _ in Delivery._meta.get_field("kind").choices}
    oldest = None
    for row in rows:
        counts[row["kind"]] = row["n"]
        oldest = row["oldest"] if oldest is None else min(oldest, row["oldest"])
    for kind, n in counts.items():
        depth.add_metric([kind], n)
    age.add_metric([], (timezone.now() - oldest).total_seconds() if oldest else 0)
    return [depth, age]


# Figures read at scrape time: functions returning metric families. The jobs' runs and
# failures (read from their table) go here, e.g. `jobs.metrics.job_families`.
SCRAPE_TIME_FAMILIES = [outbox_families]


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
