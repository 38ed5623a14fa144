"""The chain of custody: where each load's waste went after its first facility (Lei 3.978/2007
art. 3 III: the ATT sorts "para posterior remoção para adequada disposição"; art. 13 sole §:
the transporter proves the destination; art. 9: the destination for the Habite-se).

**Allocation, first in first out per class.** At a facility that ships on (or processes on
site), each class's inbound loads are laid end to end in the order of their transport dates
(then CTR and line ids), and so are its outbound movements (onward CTRs issued or received,
then on-site processing, same order). Inbound volume [a, b) of the line is allocated to the
outbound movements whose own cumulative span overlaps it. Volume past the last outbound is
still in stock; outbound volume past the last inbound was shipped past what was received (the
sorting tolerance, ctr/custody/stock.py). The movements are the rows of stock.MOVES_SQL, so the
allocation and the balance agree to the cubic metre: the stock left in the allocation is the
facility's closing stock.

Set-based: one sweep over the span ends of both sides (window functions), no loop. Each piece
between two consecutive ends belongs to the inbound whose span ends first at or after it and to
the outbound likewise; in descending order of ends, that is the inbound end with the lowest
position seen so far (a running minimum of [position, line, volume]), and the same for
outbound. One sort of the ends does it all, and each piece is a distinct pair: every end
changes the line of one side.

**Rebuilt when anything changes.** Triggers (migration 0009) mark a facility stale whenever one
of its CTRs is received, refused, cancelled, corrected or deleted, an onward CTR leaves it, or
processing is recorded; every reader calls `refresh()` first, which rebuilds the stale
facilities in one statement each. A facility that never ships on has no pieces: its loads are
wholly there (stock at an ATT, destined at a recycling area or landfill).

**Following a load.** `destinations()` walks the pieces from a set of CTRs (a worksite's, a
generator's over a period) with a recursive query: a received onward CTR carries its share to
its destination, scaled by what was received of it, and the walk goes on there.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import connection, transaction

from pev_network.models import FacilityKind

from ..models import CTR, CTRStatus, CTRWaste, CustodyAllocation, CustodyStale, OnSiteProcessing
from .stock import SHIPPED_STATUSES

CTR_TABLE = CTR._meta.db_table
WASTE_TABLE = CTRWaste._meta.db_table
PROCESSING_TABLE = OnSiteProcessing._meta.db_table
ALLOCATION_TABLE = CustodyAllocation._meta.db_table
STALE_TABLE = CustodyStale._meta.db_table
RECEIVED = CTRStatus.RECEIVED.value

# What a received line brings into its facility: its share of the volume received.
RECEIVED_SHARE_SQL = (
    "CASE WHEN c.received_volume_m3 IS NULL THEN w.volume_m3 "
    "ELSE w.volume_m3 * c.received_volume_m3 / c.total_volume_m3 END"
)

# The FIFO pieces of the facilities %(facilities)s (an array of ids).
ALLOCATION_SQL = f"""
WITH outbound AS (
    SELECT c.origin_facility_id AS facility_id, w.waste_class, w.id AS line_id,
           NULL::bigint AS processing_id, w.volume_m3 AS volume,
           c.transport_date AS day, 0 AS kind, c.id AS ord, w.id AS ord2
    FROM {CTR_TABLE} c JOIN {WASTE_TABLE} w ON w.ctr_id = c.id
    WHERE c.origin_facility_id = ANY(%(facilities)s) AND c.status IN %(shipped)s
    UNION ALL
    SELECT p.facility_id, p.waste_class, NULL, p.id, p.volume_m3, p.day, 1, p.id, 0
    FROM {PROCESSING_TABLE} p
    WHERE p.facility_id = ANY(%(facilities)s)
), shipping AS (
    SELECT DISTINCT facility_id FROM outbound
), inbound AS (
    SELECT c.destination_facility_id AS facility_id, w.waste_class, w.id AS line_id,
           {RECEIVED_SHARE_SQL} AS volume, c.transport_date AS day, c.id AS ord, w.id AS ord2
    FROM {CTR_TABLE} c JOIN {WASTE_TABLE} w ON w.ctr_id = c.id
    WHERE c.destination_facility_id IN (SELECT facility_id FROM shipping)
      AND c.status = '{RECEIVED}'
), ends AS (
    SELECT facility_id, waste_class, 1 AS is_in, line_id, NULL::bigint AS processing_id, volume,
           sum(volume) OVER (PARTITION BY facility_id, waste_class
                             ORDER BY day, ord, ord2 ROWS UNBOUNDED PRECEDING) AS upto
    FROM inbound WHERE volume > 0
    UNION ALL
    SELECT facility_id, waste_class, 0, line_id, processing_id, volume,
           sum(volume) OVER (PARTITION BY facility_id, waste_class
                             ORDER BY day, kind, ord, ord2 ROWS UNBOUNDED PRECEDING)
    FROM outbound
), pieces AS (
    -- Ends at the same position are peers: one piece of length zero between them, dropped.
    SELECT facility_id, waste_class,
           upto - coalesce(lead(upto) OVER later, 0) AS length,
           min(CASE WHEN is_in = 1 THEN ARRAY[upto, line_id, volume] END) OVER later AS in_end,
           min(CASE WHEN is_in = 0 THEN ARRAY[upto, line_id, processing_id] END) OVER later
               AS out_end
    FROM ends
    WINDOW later AS (PARTITION BY facility_id, waste_class ORDER BY upto DESC)
)
SELECT facility_id, waste_class, in_end[2]::bigint, out_end[2]::bigint, out_end[3]::bigint,
       length, length / in_end[3]
FROM pieces
WHERE length > 0
"""

# A stored piece (s) equal to a fresh one (f): the same lines, m³ and fraction, the fresh ones
# rounded as their columns store them.
_SAME_PIECE = " AND ".join(
    ["f.facility_id = s.facility_id", "f.waste_class = s.waste_class"]
    + [f"coalesce(f.{c}, 0) = coalesce(s.{c}, 0)" for c in ("inbound_id", "outbound_id",
                                                            "processing_id")]
    + ["f.volume_m3 = s.volume_m3", "coalesce(f.fraction, -1) = coalesce(s.fraction, -1)"]
)  # fmt: skip
_VOLUME, _FRACTION = (CustodyAllocation._meta.get_field(name) for name in ("volume_m3", "fraction"))

# The allocation of the facilities %(facilities)s brought up to date: the stored pieces the
# sweep no longer gives are deleted, the new ones inserted, the others left alone. A change
# moves only the pieces after it in FIFO order (a load received or shipped today: the last
# ones), so most rebuilds write a few rows instead of every piece of the facility.
REBUILD_SQL = f"""
WITH fresh AS (
    SELECT a.facility_id, a.waste_class, a.inbound_id, a.outbound_id, a.processing_id,
           a.volume::numeric({_VOLUME.max_digits}, {_VOLUME.decimal_places}) AS volume_m3,
           a.fraction::numeric({_FRACTION.max_digits}, {_FRACTION.decimal_places}) AS fraction
    FROM ({ALLOCATION_SQL}) a (facility_id, waste_class, inbound_id, outbound_id,
                               processing_id, volume, fraction)
), gone AS (
    DELETE FROM {ALLOCATION_TABLE} s
    WHERE s.facility_id = ANY(%(facilities)s)
      AND NOT EXISTS (SELECT 1 FROM fresh f WHERE {_SAME_PIECE})
)
INSERT INTO {ALLOCATION_TABLE}
    (facility_id, waste_class, inbound_id, outbound_id, processing_id, volume_m3, fraction)
SELECT f.* FROM fresh f
WHERE NOT EXISTS (
    SELECT 1 FROM {ALLOCATION_TABLE} s
    WHERE s.facility_id = ANY(%(facilities)s) AND {_SAME_PIECE}
)
"""


def _params(facility_ids: list[int]) -> dict:
    return {"facilities": facility_ids, "shipped": SHIPPED_STATUSES}


def refresh() -> list[int]:
    """Rebuild the allocation of every stale facility; returns their ids. Two readers at once:
    the second waits on the first's delete of the stale rows, then finds nothing left to do
    and reads what the first wrote."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {STALE_TABLE} RETURNING facility_id")
        stale = sorted(row[0] for row in cursor.fetchall())
        if stale:
            cursor.execute(REBUILD_SQL, _params(stale))
    return stale


def allocation_rows(facility_ids: Iterable[int]) -> list[tuple]:
    """The pieces as the query computes them, without storing them (the benchmark's and the
    tests' view): (facility, class, inbound line, outbound line, processing, m³, fraction)."""
    with connection.cursor() as cursor:
        cursor.execute(ALLOCATION_SQL, _params(list(facility_ids)))
        return cursor.fetchall()


# --- following loads to their ends -----------------------------------------------------------


class Outcome:
    """Where a piece of a load is at the end of the walk."""

    DESTINED = "destined"  # at a recycling area or landfill: a final destination
    PROCESSED = "processed"  # recycled or reused at the facility itself
    STOCK = "stock"  # still stored at an ATT or PEV
    TRANSIT = "transit"  # on its way (a CTR issued, not yet received)
    REFUSED = "refused"  # a load the facility refused: its destination is unknown
    UNMATCHED = "unmatched"  # still moving after MAX_HOPS facilities: not followed further

    LABELS = {
        DESTINED: "destinação final",
        PROCESSED: "beneficiado na área",
        STOCK: "em estoque",
        TRANSIT: "em trânsito",
        REFUSED: "carga recusada",
        UNMATCHED: "sem rastreio",
    }
    CONCLUSIVE = {DESTINED, PROCESSED}


FINAL_KINDS = (FacilityKind.RECYCLING.value, FacilityKind.LANDFILL.value)

# Longest chain followed: worksite → PEV → ATT → ATT → … A loop (an ATT shipping back to where
# the waste came from) ends there instead of forever.
MAX_HOPS = 8

# Every piece of the CTRs chosen by %(roots)s (SQL selecting CTR ids), followed to its end:
# (root CTR, root line, class, first facility, facility where it ends, outcome, m³, hops).
DESTINATIONS_SQL = f"""
WITH RECURSIVE roots AS (
    SELECT c.id AS ctr_id, w.id AS line_id, w.waste_class, c.status,
           c.destination_facility_id AS facility_id, w.volume_m3 AS declared,
           {RECEIVED_SHARE_SQL} AS volume
    FROM {CTR_TABLE} c JOIN {WASTE_TABLE} w ON w.ctr_id = c.id
    WHERE c.id IN ({{roots}}) AND c.status <> '{CTRStatus.CANCELLED.value}'
), walk AS (
    SELECT ctr_id, line_id AS root_line, waste_class, facility_id AS first_facility,
           line_id, facility_id, volume::numeric AS volume, 0 AS hops
    FROM roots WHERE status = '{RECEIVED}'
    UNION ALL
    SELECT w.ctr_id, w.root_line, w.waste_class, w.first_facility, a.outbound_id,
           o.destination_facility_id,
           w.volume * a.fraction
               * CASE WHEN o.received_volume_m3 IS NULL THEN 1
                      ELSE o.received_volume_m3 / o.total_volume_m3 END,
           w.hops + 1
    FROM walk w
    JOIN {ALLOCATION_TABLE} a ON a.inbound_id = w.line_id
    JOIN {WASTE_TABLE} ol ON ol.id = a.outbound_id
    JOIN {CTR_TABLE} o ON o.id = ol.ctr_id
    WHERE o.status = '{RECEIVED}' AND w.hops < {MAX_HOPS}
), ends AS (
    -- A piece at a facility: what of it that facility shipped on is followed by the walk;
    -- the rest ends here (processed, in stock, or in transit on an onward CTR not received).
    SELECT w.ctr_id, w.root_line, w.waste_class, w.first_facility,
           CASE WHEN o.id IS NOT NULL THEN o.destination_facility_id ELSE w.facility_id END
               AS facility_id,
           CASE WHEN a.id IS NULL OR (a.outbound_id IS NULL AND a.processing_id IS NULL)
                THEN CASE WHEN f.kind IN %(final_kinds)s THEN '{Outcome.DESTINED}'
                          ELSE '{Outcome.STOCK}' END
                WHEN a.processing_id IS NOT NULL THEN '{Outcome.PROCESSED}'
                WHEN o.status = '{RECEIVED}' THEN '{Outcome.UNMATCHED}'
                ELSE '{Outcome.TRANSIT}' END AS outcome,
           w.volume * coalesce(a.fraction, 1) AS volume, w.hops
    FROM walk w
    JOIN pev_network_receivingfacility f ON f.id = w.facility_id
    LEFT JOIN {ALLOCATION_TABLE} a ON a.inbound_id = w.line_id
    LEFT JOIN {WASTE_TABLE} ol ON ol.id = a.outbound_id
    LEFT JOIN {CTR_TABLE} o ON o.id = ol.ctr_id
    WHERE a.id IS NULL OR a.outbound_id IS NULL OR o.status IN %(transit)s
       -- a piece at its last allowed hop ends where it is, whatever it did next
       OR (w.hops >= {MAX_HOPS} AND o.status = '{RECEIVED}')
    UNION ALL
    SELECT ctr_id, line_id, waste_class, facility_id, facility_id,
           CASE status WHEN '{CTRStatus.REFUSED.value}' THEN '{Outcome.REFUSED}'
                       ELSE '{Outcome.TRANSIT}' END,
           declared, 0
    FROM roots WHERE status <> '{RECEIVED}'
)
SELECT ctr_id, root_line, waste_class, first_facility, facility_id, outcome,
       round(sum(volume), 3), max(hops)
FROM ends
GROUP BY ctr_id, root_line, waste_class, first_facility, facility_id, outcome
HAVING round(sum(volume), 3) > 0
ORDER BY ctr_id, root_line, outcome, facility_id
"""


@dataclass(frozen=True)
class Piece:
    """m³ of one waste line of a CTR, ending at `facility_id` in the state `outcome`."""

    ctr_id: int
    line_id: int
    waste_class: str
    first_facility_id: int
    facility_id: int
    outcome: str
    volume_m3: Decimal
    hops: int


def _walk(sql: str, roots_sql: str, params: dict) -> list[tuple]:
    """Run `sql` (DESTINATIONS_SQL or a query over it) on the loads `roots_sql` chooses, after
    bringing the allocation up to date."""
    refresh()
    with connection.cursor() as cursor:
        cursor.execute(
            sql.replace("{roots}", roots_sql),
            {
                **params,
                "final_kinds": FINAL_KINDS,
                "transit": (CTRStatus.ISSUED.value,),
            },
        )
        return cursor.fetchall()


def _pieces(roots_sql: str, params: dict) -> list[Piece]:
    return [Piece(*row) for row in _walk(DESTINATIONS_SQL, roots_sql, params)]


def worksite_pieces(worksite_id: int) -> list[Piece]:
    """Every piece of the worksite's loads, followed to where it is now."""
    return _pieces(
        f"SELECT id FROM {CTR_TABLE} WHERE worksite_id = %(worksite)s "
        "AND origin_facility_id IS NULL",
        {"worksite": worksite_id},
    )


def generator_pieces(
    generator_id: int, date_from: datetime.date | None, date_to: datetime.date | None
) -> list[Piece]:
    """Every piece of the generator's loads transported in the period (its worksites'; its
    own onward CTRs when it operates a facility are not its waste)."""
    return _pieces(
        f"SELECT id FROM {CTR_TABLE} WHERE generator_id = %(generator)s "
        "AND origin_facility_id IS NULL "
        "AND transport_date BETWEEN %(date_from)s AND %(date_to)s",
        {
            "generator": generator_id,
            "date_from": date_from or datetime.date.min,
            "date_to": date_to or datetime.date.max,
        },
    )


@dataclass
class Destinations:
    """What became of a set of loads: per CTR and per destination, with the reasons the
    answer is not yet conclusive."""

    pieces: list[Piece]
    by_outcome: dict[str, Decimal] = field(default_factory=dict)

    def __post_init__(self):
        for piece in self.pieces:
            self.by_outcome[piece.outcome] = (
                self.by_outcome.get(piece.outcome, Decimal(0)) + piece.volume_m3
            )

    @property
    def conclusive(self) -> bool:
        """Every cubic metre reached a final destination or was processed at a facility."""
        return bool(self.pieces) and all(
            piece.outcome in Outcome.CONCLUSIVE for piece in self.pieces
        )

    def total(self, *outcomes: str) -> Decimal:
        return sum((self.by_outcome.get(o, Decimal(0)) for o in outcomes), Decimal(0))


# --- flows of many loads (the Núcleo's view) --------------------------------------------------

# The pieces of DESTINATIONS_SQL summed per origin bacia, first facility, facility where they
# end, outcome, class and month of the load's transport date, for %(waste_class)s or every
# class. A load's bacia is the first (by id) of its municipality's bacias whose area touches
# its origin: a point on a border must count once here, or its volume would be counted twice.
FLOWS_SQL = f"""
SELECT b.id, p.first_facility, ff.kind, p.facility_id, ef.kind, p.outcome, p.waste_class,
       date_trunc('month', c.transport_date)::date, sum(p.volume)
FROM ({DESTINATIONS_SQL}) p (ctr_id, line_id, waste_class, first_facility, facility_id,
                            outcome, volume, hops)
JOIN {CTR_TABLE} c ON c.id = p.ctr_id
JOIN pev_network_receivingfacility ff ON ff.id = p.first_facility
JOIN pev_network_receivingfacility ef ON ef.id = p.facility_id
LEFT JOIN LATERAL (
    SELECT b.id FROM pev_network_catchmentbasin b
    WHERE b.municipality_id = c.municipality_id AND ST_Intersects(b.area, c.origin)
    ORDER BY b.id LIMIT 1
) b ON TRUE
WHERE %(waste_class)s::text IS NULL OR p.waste_class = %(waste_class)s::text
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
ORDER BY 9 DESC, 1, 2, 4, 6, 7, 8
"""


@dataclass(frozen=True)
class Flow:
    """m³ of a class of the loads of one month from one bacia (None: outside every bacia),
    through their first facility, ending at `facility_id` in the state `outcome`."""

    basin_id: int | None
    first_facility_id: int
    first_kind: str
    facility_id: int
    facility_kind: str
    outcome: str
    waste_class: str
    month: datetime.date
    volume_m3: Decimal


def flows(roots_sql: str, params: dict, waste_class: str | None = None) -> list[Flow]:
    """The loads chosen by `roots_sql` (SQL selecting CTR ids from worksites, with named
    parameters `params`) followed to where they are now, summed per bacia, first facility,
    end, outcome, class and month: one query, whatever the number of loads."""
    rows = _walk(FLOWS_SQL, roots_sql, {**params, "waste_class": waste_class})
    return [Flow(*row) for row in rows]
