"""The CTR's figures for Prometheus (config/metrics.py serves them at /metrics): CTRs issued,
received and refused per municipality, and the rules' findings on the CTRs issued.

Counters incremented when the event is committed, not counted from the database at scrape
time: a GROUP BY over the CTR table (a million rows and more) and over the findings (JSON inside
each CTR, which no index serves) on every scrape would cost what one increment per event does
not. Labels are the municipality's IBGE code (public) and the rule's code: never a person.
Connected in CtrConfig.ready()."""

from __future__ import annotations

import functools

from django.db import transaction
from prometheus_client import Counter

from config import logs

from . import signals
from .models import CTR

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

EVENTS = {"issue": "issued", "receive": "received", "refuse": "refused"}


@functools.cache
def municipality_code(municipality_id: int) -> str:
    """A municipality's IBGE code (it never changes): one query per municipality and process."""
    from pev_network.models import Municipality

    return Municipality.objects.values_list("ibge_code", flat=True).get(pk=municipality_id)


def count_after_commit(ctrs: dict[tuple[int, str], int], findings: dict[str, int]) -> None:
    """Counted when the transaction commits: an issue rolled back was never issued."""

    def count():
        for (municipality_id, event), n in ctrs.items():
            CTRS.labels(municipality_code(municipality_id), event).inc(n)
        for rule, n in findings.items():
            FINDINGS.labels(rule).inc(n)

    transaction.on_commit(count)


def on_event_recorded(sender, event, **kwargs) -> None:
    kind = EVENTS.get(event.action)
    if kind is None:
        return
    findings: dict[str, int] = {}
    for code in (event.data or {}).get("findings", []) if kind == "issued" else []:
        findings[code] = findings.get(code, 0) + 1
    count_after_commit({(event.ctr.municipality_id, kind): 1}, findings)


def on_ctrs_imported(sender, cursor, table, **kwargs) -> None:
    """The CSV import's chunk, set-based: two grouped queries over the chunk's new CTRs."""
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
    count_after_commit(ctrs, dict(cursor.fetchall()))


def connect() -> None:
    signals.event_recorded.connect(on_event_recorded, dispatch_uid="ctr.metrics")
    signals.ctrs_imported.connect(on_ctrs_imported, dispatch_uid="ctr.metrics")
    # The access log names a staff member's municipality by its IBGE code too.
    logs.municipality_label = municipality_code
