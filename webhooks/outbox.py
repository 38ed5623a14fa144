"""Writing the outbox, inside the transaction of each event (ctr.signals): a webhook row per
endpoint that hears it, one INSERT … SELECT per event (none at all when no endpoint of the
CTR's transporter or facilities subscribes: a check in memory), set-based for a CSV chunk.

Rows are written by the event's own transaction, so a rolled-back operation leaves none and a
committed one cannot lose its rows when the process dies before they are sent."""

from __future__ import annotations

import datetime
import threading
import time
import uuid

from django.db import connection
from django.db.models import Q
from django.db.models.signals import post_delete, post_save

from ctr import lifecycle
from ctr.models import CTRAction

from .models import Delivery, DeliveryKind, Endpoint

# How long a process trusts its copy of "who subscribes to what" before reading it again. A
# change made in this process drops its copy at once; another process sees a new endpoint
# within this time (an endpoint hears the events from at most this long after it is created;
# a removed one is never written to: the INSERT reads the table itself).
SUBSCRIPTIONS_TTL_SECONDS = 5.0


class Subscriptions:
    """(owner kind "t"/"f", owner id, event type) of every active endpoint, per process."""

    def __init__(self):
        self._keys: frozenset | None = None
        self._loaded = 0.0
        self._lock = threading.Lock()

    def clear(self, **kwargs) -> None:
        self._keys = None

    def keys(self) -> frozenset:
        keys = self._keys
        if keys is None or time.monotonic() - self._loaded > SUBSCRIPTIONS_TTL_SECONDS:
            with self._lock:
                rows = Endpoint.objects.filter(active=True).values_list(
                    "transporter_id", "facility_id", "events"
                )
                keys = frozenset(
                    ("t", t, e) if t else ("f", f, e) for t, f, events in rows for e in events
                )
                self._keys, self._loaded = keys, time.monotonic()
        return keys

    def heard(self, kind: str, transporter_id, *facility_ids) -> bool:
        keys = self.keys()
        if not keys:
            return False
        return ("t", transporter_id, kind) in keys or any(
            ("f", f, kind) in keys for f in facility_ids if f
        )

    def any_of(self, *kinds: str) -> bool:
        return any(key[2] in kinds for key in self.keys())


subscriptions = Subscriptions()
post_save.connect(subscriptions.clear, sender=Endpoint)
post_delete.connect(subscriptions.clear, sender=Endpoint)

_COLUMNS = """kind, event_id, event_type, endpoint_id, ctr_id, ctr_status, occurred_at,
    recipients, subject, template, context, status, attempts, next_attempt_at, created_at"""
_MATCH = """e.active AND {kind} = ANY(e.events)
    AND (e.transporter_id = {transporter} OR e.facility_id = {destination}
         OR e.facility_id = {origin})"""

# Positional: the same INSERT runs alone (on_event_recorded) or as one CTE of the issue's
# statement (on_issue_writing), whose other members take positional parameters.
_EVENT_MATCH = _MATCH.format(kind="%s", transporter="%s", destination="%s", origin="%s")
EVENT_SQL = f"""
INSERT INTO webhooks_delivery ({_COLUMNS})
SELECT 'webhook', %s::uuid, %s, e.id, {{ctr_id}}, %s, %s,
       '{{{{}}}}', '', '', '{{{{}}}}', 'pending', 0, %s, %s
FROM webhooks_endpoint e
WHERE {_EVENT_MATCH}
"""
# One event id per CTR, shared by every endpoint that hears it: the CTE is materialized so
# gen_random_uuid() runs once per CTR, not once per joined row.
IMPORTED_SQL = """
WITH issued AS MATERIALIZED (
    SELECT c.id, c.status, c.transporter_id, c.destination_facility_id, c.origin_facility_id,
           CASE WHEN c.origin_facility_id IS NULL THEN %(issued)s
                ELSE %(onward_issued)s END AS kind,
           gen_random_uuid() AS event_id
    FROM {table} t JOIN ctr_ctr c ON c.id = t.id
)
INSERT INTO webhooks_delivery ({columns})
SELECT 'webhook', i.event_id, i.kind, e.id, i.id, i.status, %(at)s,
       '{{}}', '', '', '{{}}', 'pending', 0, %(at)s, %(at)s
FROM issued i JOIN webhooks_endpoint e ON {match}
"""


def event_rows(event, ctr_id: str | None = None) -> tuple[str, list] | None:
    """The webhook rows of one CTR event: an INSERT … SELECT and its parameters, or None when
    no endpoint hears it (a check in memory). `ctr_id`: the SQL of the CTR's id in an
    enclosing statement; None, the saved CTR's id as a parameter."""
    ctr = event.ctr
    kind = lifecycle.event_of(event.action, ctr.origin_facility_id is not None)
    if kind is None:
        return None
    facilities = (ctr.destination_facility_id, ctr.origin_facility_id)
    if not subscriptions.heard(kind, ctr.transporter_id, *facilities):
        return None
    # One id per event, shared by every endpoint that hears it.
    params = [str(uuid.uuid4()), kind, *([] if ctr_id else [ctr.pk])]
    params += [event.to_status, event.at, event.at, event.at]
    params += [kind, ctr.transporter_id, *facilities]
    return EVENT_SQL.format(ctr_id=ctr_id or "%s"), params


def on_issue_writing(sender, event, ctr_id, **kwargs) -> tuple[str, list] | None:
    """ctr.signals.issue_writing: the webhook rows of an issue, written by the issue's own
    statement (one round trip less per issue); on_event_recorded then leaves the event be."""
    rows = event_rows(event, ctr_id)
    if rows is not None:
        event.outbox_written = True
    return rows


def on_event_recorded(sender, event, **kwargs) -> None:
    """ctr.signals.event_recorded: the webhook rows of one CTR event (unless the event's own
    statement wrote them: on_issue_writing)."""
    if getattr(event, "outbox_written", False):
        return
    rows = event_rows(event)
    if rows is not None:
        with connection.cursor() as cursor:
            cursor.execute(*rows)


def enqueue(
    kind: str,
    data: dict,
    occurred_at: datetime.datetime,
    transporter_id: int | None = None,
    facility_ids: tuple[int | None, ...] = (),
) -> int:
    """The webhook rows of an event about a subject other than a CTR (its type among
    models.SUBJECT_EVENTS), inside the caller's transaction: one per active endpoint of the
    transporter or the facilities that hears it, its payload's `data` as given (JSON). Only
    those owners' endpoints: the subject's app names the owners it concerns. How many rows."""
    facilities = [f for f in facility_ids if f]
    if not subscriptions.heard(kind, transporter_id, *facilities):
        return 0
    owners = Q(facility_id__in=facilities)
    if transporter_id is not None:
        owners |= Q(transporter_id=transporter_id)
    event_id = uuid.uuid4()  # one per event, shared by every endpoint that hears it
    rows = [
        Delivery(
            kind=DeliveryKind.WEBHOOK,
            event_id=event_id,
            event_type=kind,
            endpoint=endpoint,
            occurred_at=occurred_at,
            context=data,
            next_attempt_at=occurred_at,
        )
        for endpoint in Endpoint.objects.filter(owners, active=True, events__contains=[kind])
    ]
    return len(Delivery.objects.bulk_create(rows))


def on_ctrs_imported(sender, cursor, table, actor_id, at, **kwargs) -> None:
    """ctr.signals.ctrs_imported: the webhook rows of a CSV chunk, in one statement."""
    issued = lifecycle.event_of(CTRAction.ISSUE, onward=False)
    onward_issued = lifecycle.event_of(CTRAction.ISSUE, onward=True)
    if not subscriptions.any_of(issued, onward_issued):
        return
    match = _MATCH.format(
        kind="i.kind",
        transporter="i.transporter_id",
        destination="i.destination_facility_id",
        origin="i.origin_facility_id",
    )
    cursor.execute(
        IMPORTED_SQL.format(table=table, columns=_COLUMNS, match=match),
        {"at": at, "issued": issued, "onward_issued": onward_issued},
    )
