"""Where the waste went, as the Núcleo reads it (Lei 3.978/2007 art. 3 III, art. 18 sole §):
the loads of the period followed through their first facility to where they are now
(ctr.custody.chain), arranged for the dashboard's flow diagram, the map's lines and the recycling
rate of class A; and each facility's stock over the period (ctr.custody.stock).

Every figure here reads the same `custody.Flow` rows, so the diagram, the map, the rate and
their tables add up to the same cubic metres.
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.gis.db.models.functions import PointOnSurface

from ctr.custody import stock
from ctr.custody.chain import FINAL_KINDS, Flow, Outcome
from maps.legend import KIND_STYLES
from pev_network.models import CatchmentBasin, FacilityKind, ReceivingFacility, WasteClass


class Fate:
    """What became of a flow, in the words of the law's aims (art. 2, art. 18 sole §)."""

    RECYCLED = "recycled"  # at a recycling area, or recycled or reused at the facility itself
    LANDFILLED = "landfilled"  # at an RCC landfill
    STOCK = Outcome.STOCK
    TRANSIT = Outcome.TRANSIT
    UNKNOWN = "unknown"  # refused by the facility, or not followed further: not known

    LABELS = {
        RECYCLED: "reciclado ou reutilizado",
        LANDFILLED: "aterro de RCC",
        STOCK: "em estoque",
        TRANSIT: "em trânsito",
        UNKNOWN: "recusado ou sem rastreio",
    }
    # Okabe-Ito, as everywhere: the two final destinations in the colours the maps give
    # recycling areas and landfills (maps.legend.KIND_STYLES), so that a line ends in the
    # colour of the area it reaches.
    COLOURS = {
        RECYCLED: KIND_STYLES[FacilityKind.RECYCLING].colour,
        LANDFILLED: KIND_STYLES[FacilityKind.LANDFILL].colour,
        STOCK: "#E69F00",
        TRANSIT: "#56B4E9",
        UNKNOWN: "#6B7280",
    }
    FINAL = (RECYCLED, LANDFILLED)


def fate(flow: Flow) -> str:
    if flow.outcome == Outcome.PROCESSED:
        return Fate.RECYCLED
    if flow.outcome == Outcome.DESTINED:
        return Fate.LANDFILLED if flow.facility_kind == FacilityKind.LANDFILL else Fate.RECYCLED
    if flow.outcome in (Outcome.STOCK, Outcome.TRANSIT):
        return flow.outcome
    return Fate.UNKNOWN


@dataclass(frozen=True)
class Names:
    """Names and map anchors ((lon, lat) inside the area) of the bacias and facilities the
    flows name."""

    basins: dict[int, tuple[str, tuple[float, float]]]
    facilities: dict[int, tuple[str, str, tuple[float, float]]]  # name, kind, anchor

    @classmethod
    def of(cls, flows: Iterable[Flow]) -> Names:
        flows = list(flows)
        basin_ids = {f.basin_id for f in flows if f.basin_id is not None}
        facility_ids = {f.first_facility_id for f in flows} | {f.facility_id for f in flows}
        basins = (
            CatchmentBasin.objects.filter(pk__in=basin_ids)
            .annotate(anchor=PointOnSurface("area"))
            .values_list("pk", "name", "anchor")
        )
        facilities = (
            ReceivingFacility.objects.filter(pk__in=facility_ids)
            .annotate(anchor=PointOnSurface("area"))
            .values_list("pk", "name", "kind", "anchor")
        )
        return cls(
            {pk: (name, anchor.coords) for pk, name, anchor in basins},
            {pk: (name, kind, anchor.coords) for pk, name, kind, anchor in facilities},
        )

    def basin(self, basin_id: int | None) -> str:
        if basin_id is None:
            return "fora das bacias"
        return self.basins.get(basin_id, (f"bacia {basin_id}",))[0]

    def facility(self, facility_id: int) -> str:
        return self.facilities.get(facility_id, (f"área {facility_id}",))[0]


# --- the flow diagram: bacias → first facility → where the waste is now ---------------------

# Nodes per column before the smaller ones are summed into "outras …".
DIAGRAM_NODES = 8
DIRECT = "Direto ao destino final"
PROCESSED = "Beneficiado na própria área"
COLUMN_TITLES = ("Bacia de origem", "Primeira área", "Onde está agora")
OTHERS = ("outras bacias", "outras áreas", "outros destinos")


@dataclass(frozen=True)
class Route:
    """One line of the diagram's table: m³ from a bacia through a first area to an end."""

    basin: str
    first: str
    end: str
    fate: str
    volume_m3: Decimal


def _middle(flow: Flow, names: Names) -> str:
    # A load delivered straight to a recycling area or landfill passed through no ATT or PEV.
    return DIRECT if flow.first_kind in FINAL_KINDS else names.facility(flow.first_facility_id)


def _end(flow: Flow, names: Names, kind: str) -> str:
    if kind in Fate.FINAL and flow.outcome == Outcome.DESTINED:
        return names.facility(flow.facility_id)
    if flow.outcome == Outcome.PROCESSED:
        return PROCESSED
    return Fate.LABELS[kind].capitalize()


def routes(flows: Iterable[Flow], names: Names) -> list[Route]:
    """The flows summed per bacia, first area and end, largest first."""
    volume: dict[tuple[str, str, str, str], Decimal] = defaultdict(Decimal)
    for flow in flows:
        kind = fate(flow)
        key = (names.basin(flow.basin_id), _middle(flow, names), _end(flow, names, kind), kind)
        volume[key] += flow.volume_m3
    return sorted(
        (Route(*key, value) for key, value in volume.items() if value > 0),
        key=lambda r: (-r.volume_m3, r.basin, r.first, r.end),
    )


@dataclass(frozen=True)
class Diagram:
    columns: list[list[str]]  # node labels per column, largest first, "outras …" last
    # (column of the source, source, target, fate, m³)
    links: list[tuple[int, str, str, str, float]]


def diagram(found: Sequence[Route], nodes: int = DIAGRAM_NODES) -> Diagram:
    """The routes as three columns of nodes and the links between them, each link coloured
    by where its waste is now; past `nodes` per column the smaller are summed together."""
    columns: list[list[str]] = []
    kept: list[set[str]] = []
    for index, attribute in enumerate(("basin", "first", "end")):
        totals: dict[str, Decimal] = defaultdict(Decimal)
        for route in found:
            totals[getattr(route, attribute)] += route.volume_m3
        ordered = sorted(totals, key=lambda name: (-totals[name], name))
        keep = set(ordered if len(ordered) <= nodes else ordered[: nodes - 1])
        kept.append(keep)
        others = [OTHERS[index]] if keep != set(ordered) else []
        columns.append([n for n in ordered if n in keep] + others)

    def node(index: int, name: str) -> str:
        return name if name in kept[index] else OTHERS[index]

    links: dict[tuple[int, str, str, str], float] = defaultdict(float)
    for route in found:
        basin, first, end = node(0, route.basin), node(1, route.first), node(2, route.end)
        links[0, basin, first, route.fate] += float(route.volume_m3)
        links[1, first, end, route.fate] += float(route.volume_m3)
    return Diagram(columns, [(*key, value) for key, value in links.items()])


# --- the map: lines from each bacia through its first area to the final destination --------

MAP_LINES = 30


@dataclass(frozen=True)
class MapLine:
    coordinates: list[tuple[float, float]]
    route: str  # "Bacia → ATT → Aterro", as the popup says it
    fate: str
    volume_m3: float


def map_lines(
    flows: Iterable[Flow],
    names: Names,
    bbox: tuple[float, float, float, float] | None = None,
    limit: int = MAP_LINES,
) -> tuple[list[MapLine], int, float]:
    """The flows that reached a final destination (or were recycled where they were), one
    line per bacia, first area and end: from the bacia (or, for an origin outside every
    bacia, the first area) through the first area to the end, largest first; those that
    cross `bbox` (lon/lat), at most `limit`, and how many lines and m³ were left out."""
    volume: dict[tuple[int | None, int, int, str], float] = defaultdict(float)
    for flow in flows:
        kind = fate(flow)
        if kind in Fate.FINAL:
            volume[flow.basin_id, flow.first_facility_id, flow.facility_id, kind] += float(
                flow.volume_m3
            )
    lines = []
    for (basin_id, first_id, end_id, kind), m3 in volume.items():
        stops = [names.basins[basin_id][1]] if basin_id in names.basins else []
        labels = [names.basin(basin_id)] if stops else []
        for facility_id in dict.fromkeys((first_id, end_id)):
            stops.append(names.facilities[facility_id][2])
            labels.append(names.facility(facility_id))
        if len(stops) < 2 or (bbox is not None and not _crosses(stops, bbox)):
            continue
        lines.append(MapLine(stops, " → ".join(labels), kind, m3))
    lines.sort(key=lambda line: (-line.volume_m3, line.route))
    kept, rest = lines[:limit], lines[limit:]
    return kept, len(rest), sum(line.volume_m3 for line in rest)


def _crosses(stops: Sequence[tuple[float, float]], bbox: tuple[float, float, float, float]):
    # The line's own box against the window: enough to drop what lies wholly elsewhere.
    lons, lats = [s[0] for s in stops], [s[1] for s in stops]
    min_x, min_y, max_x, max_y = bbox
    return min(lons) <= max_x and max(lons) >= min_x and min(lats) <= max_y and max(lats) >= min_y


# --- the recycling rate of class A (art. 18 sole §) -----------------------------------------


@dataclass(frozen=True)
class RecyclingMonth:
    """Class A transported from the municipality's worksites in `month`, by what became of
    it. The rate is recycled / (recycled + landfilled): of what reached a final destination,
    the share that went to recycling (a recycling area, or recycled or reused at the ATT or
    PEV itself) rather than to an RCC landfill. What is still in stock or in transit is not
    in the rate yet, and is shown beside it: a month's rate can still change until it is
    zero."""

    month: datetime.date
    recycled: Decimal
    landfilled: Decimal
    pending: Decimal  # in stock or in transit
    unknown: Decimal  # refused, or not followed

    @property
    def final(self) -> Decimal:
        return self.recycled + self.landfilled

    @property
    def rate_pct(self) -> float | None:
        return float(100 * self.recycled / self.final) if self.final else None


def recycling_by_month(flows: Iterable[Flow]) -> list[RecyclingMonth]:
    """The class A flows per month of transport, by fate (RecyclingMonth says why this
    definition)."""
    sums: dict[datetime.date, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    for flow in flows:
        if flow.waste_class == WasteClass.A:
            sums[flow.month][fate(flow)] += flow.volume_m3
    return [
        RecyclingMonth(
            month,
            by[Fate.RECYCLED],
            by[Fate.LANDFILLED],
            by[Fate.STOCK] + by[Fate.TRANSIT],
            by[Fate.UNKNOWN],
        )
        for month, by in sorted(sums.items())
    ]


# --- stock over time (art. 3 III: an ATT is a place of passage) ----------------------------

# Up to this many days, one point a day; past it, one a week (Sundays), so that a year's
# chart has 53 points per line, not 366.
DAILY_UP_TO_DAYS = 92
# ATTs and PEVs keep what they receive only until it moves on; a recycling area or a landfill
# is where it ends, so its "stock" is everything it ever took.
PASSAGE_KINDS = (FacilityKind.ATT.value, FacilityKind.PEV.value)
STOCK_PANELS = 12


def series_days(date_from: datetime.date, date_to: datetime.date) -> list[datetime.date]:
    days = (date_to - date_from).days
    if days <= DAILY_UP_TO_DAYS:
        return [date_from + datetime.timedelta(days=n) for n in range(days + 1)]
    first_sunday = date_from + datetime.timedelta(days=(6 - date_from.weekday()) % 7)
    sundays = range((date_to - first_sunday).days // 7 + 1)
    weekly = [first_sunday + datetime.timedelta(weeks=n) for n in sundays]
    return sorted({date_from, *weekly, date_to})


@dataclass(frozen=True)
class FacilityStock:
    facility: ReceivingFacility
    days: list[datetime.date]
    by_class: dict[str, list[Decimal]]  # the balance at the end of each day, per class
    stale: list[stock.StaleStock]

    @property
    def peak(self) -> Decimal:
        return max((max(values) for values in self.by_class.values()), default=Decimal(0))


def facility_stocks(
    municipality_id: int | None,
    date_from: datetime.date,
    date_to: datetime.date,
    today: datetime.date,
    waste_class: str | None = None,
) -> list[FacilityStock]:
    """The ATTs and PEVs of the municipality that held anything in the period (or before it
    and still), with their balance per class over the period (stock.stock_series, one query)
    and the stale stock on the period's last day (not later than today; stock.stale_stocks, one
    query)."""
    facilities = {
        f.pk: f
        for f in ReceivingFacility.objects.defer("area")
        .select_related("municipality")
        .filter(kind__in=PASSAGE_KINDS, municipality_id=municipality_id)
    }
    days = series_days(date_from, date_to)
    points: dict[int, dict[str, list[Decimal]]] = defaultdict(lambda: defaultdict(list))
    for point in stock.stock_series(list(facilities), days):
        if waste_class is None or point.waste_class == waste_class:
            points[point.facility_id][point.waste_class].append(point.volume_m3)
    held = [
        facility_id
        for facility_id, by_class in points.items()
        if any(v for values in by_class.values() for v in values)
    ]
    # One query for every area's stale stock (an N+1 made the dashboard slower with each ATT).
    stale = stock.stale_stocks([facilities[pk] for pk in held], min(date_to, today))
    found = [
        FacilityStock(
            facilities[pk],
            days,
            dict(points[pk]),
            [s for s in stale[pk] if waste_class is None or s.waste_class == waste_class],
        )
        for pk in held
    ]
    return sorted(found, key=lambda s: (-s.peak, s.facility.name))
