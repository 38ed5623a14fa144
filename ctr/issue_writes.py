"""The writes of one issued CTR in one round trip.

services.issue wrote the number (the sequence's upsert), the CTR, its waste lines and its
event with one statement each, three of them built by the ORM. Here they are one statement:
data-modifying CTEs, the number drawn by the same upsert (the row lock the concurrent issuers
queue on until commit: numbers stay unique and gapless), the CTR's number and sequence read
from it, the lines and the event from the CTR's RETURNING. The rows' values are the ORM's
(each field's pre_save, get_db_prep_save and placeholder, as Django's INSERT compiler takes
them), so what is stored is what CTR.objects.create stored; the model instances come back
as after create() (primary keys set, not adding).

Scope: the rows written are the issuing transporter's CTR and its own lines and event; the
sequence is the CTR's municipality's.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection
from django.db.models import Model

from .models import CTR, CTREvent, CTRWaste, NumberSequence

NUMBER_TABLE = NumberSequence._meta.db_table
# services.next_number's upsert, shared.
NEXT_NUMBER_SQL = f"""
    INSERT INTO {NUMBER_TABLE} (municipality_id, year, last_value) VALUES (%s, %s, 1)
    ON CONFLICT (municipality_id, year)
    DO UPDATE SET last_value = {NUMBER_TABLE}.last_value + 1
    RETURNING last_value
"""
# The number as services.next_number formats it: CTR-<IBGE>-<year>-<sequence, 6 digits or
# more> (Python's :06d pads and never cuts; lpad would cut past 6 digits).
NUMBER_SQL = (
    "(SELECT 'CTR-' || %s || '-' || %s || '-' || "
    "lpad(last_value::text, greatest(6, length(last_value::text)), '0') FROM seq)"
)


def values(obj: Model, skip: tuple[str, ...] = ()) -> tuple[list[str], list[str], list]:
    """Columns, placeholders and parameters of obj's INSERT, as the ORM's compiler makes them
    (the primary key and the `skip` fields left to the caller)."""
    columns, placeholders, params = [], [], []
    for f in obj._meta.concrete_fields:
        if f.primary_key or f.attname in skip:
            continue
        value = f.get_db_prep_save(f.pre_save(obj, True), connection)
        placeholder = (
            f.get_placeholder(value, None, connection) if hasattr(f, "get_placeholder") else "%s"
        )
        columns.append(f'"{f.column}"')
        placeholders.append(placeholder)
        params.append(value)
    return columns, placeholders, params


def _mark_saved(obj: Model, pk: int) -> None:
    obj.pk = pk
    obj._state.adding = False
    obj._state.db = connection.alias


# The new CTR's id inside the statement, for the rows written alongside (signals.issue_writing).
CTR_ID_SQL = "(SELECT id FROM c)"


def insert_issued(
    ctr: CTR,
    ibge_code: str,
    lines: list[CTRWaste],
    event: CTREvent,
    alongside: Sequence[tuple[str, list]] = (),
) -> None:
    """Draw the number and insert `ctr`, its `lines`, its `event` and the `alongside` INSERTs
    (each (sql, params), naming the CTR by CTR_ID_SQL: the webhooks' outbox rows) in one
    statement; set their primary keys and the CTR's number and sequence. Inside the caller's
    transaction."""
    ctr_cols, ctr_marks, ctr_params = values(ctr, skip=("number", "sequence", "id"))
    # The waste lines and the event name the CTR by the CTE's id.
    line_rows, line_params = [], []
    line_cols = None
    for line in lines:
        cols, marks, params = values(line, skip=("ctr_id",))
        line_cols = cols
        line_rows.append(f"({CTR_ID_SQL}, " + ", ".join(marks) + ")")
        line_params += params
    event_cols, event_marks, event_params = values(event, skip=("ctr_id",))
    year = ctr.year
    sql = [
        f"WITH seq AS ({NEXT_NUMBER_SQL}),",
        f"c AS (INSERT INTO {CTR._meta.db_table} (number, sequence, {', '.join(ctr_cols)})",
        f"  VALUES ({NUMBER_SQL}, (SELECT last_value FROM seq), {', '.join(ctr_marks)})",
        "  RETURNING id, number, sequence),",
    ]
    params = [ctr.municipality_id, year, ibge_code, str(year), *ctr_params]
    if lines:
        sql += [
            f"w AS (INSERT INTO {CTRWaste._meta.db_table} (ctr_id, {', '.join(line_cols)})",
            f"  VALUES {', '.join(line_rows)} RETURNING id),",
        ]
        params += line_params
    sql += [
        f"ev AS (INSERT INTO {CTREvent._meta.db_table} (ctr_id, {', '.join(event_cols)})",
        f"  VALUES ({CTR_ID_SQL}, {', '.join(event_marks)}) RETURNING id)",
    ]
    params += event_params
    # A data-modifying CTE runs once and to completion even when nothing reads it.
    for n, (text, extra) in enumerate(alongside):
        sql.append(f", x{n} AS ({text})")
        params += extra
    sql += [
        "SELECT c.id, c.number, c.sequence, (SELECT id FROM ev), "
        + ("(SELECT array_agg(id ORDER BY id) FROM w)" if lines else "NULL::bigint[]")
        + " FROM c",
    ]
    with connection.cursor() as cursor:
        cursor.execute("\n".join(sql), params)
        ctr_id, number, sequence, event_id, line_ids = cursor.fetchone()
    _mark_saved(ctr, ctr_id)
    ctr.number, ctr.sequence = number, sequence
    for line, line_id in zip(lines, line_ids or [], strict=True):
        line.ctr = ctr
        _mark_saved(line, line_id)
    event.ctr = ctr
    _mark_saved(event, event_id)
