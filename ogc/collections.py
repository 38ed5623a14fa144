"""The feature collections published through OGC API – Features, each one SQL description.

Features are assembled in PostGIS (ST_AsGeoJSON inside json_build_object): a GIS client may
page through thousands of them, and per-feature serialization in Python is the slow part.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass

from ctr import roles
from ctr.exports import onward_flows_sql
from ctr.models import CTR
from pev_network.models import (
    CatchmentBasin,
    FacilityLicense,
    Municipality,
    ReceivingFacility,
    licensed_sql,
    parameters_sql,
    valid_on_sql,
)


@dataclass(frozen=True)
class Collection:
    id: str
    title: str
    description: str
    # A table, or a parenthesised query whose rows have an `id` (a collection computed on
    # the fly, such as the flows).
    table: str
    geometry: str
    # SQL expressions for the properties, by name; "t" is the table's alias.
    properties: dict[str, str]
    # Who may see it; public when None.
    visible_to: Callable | None = None
    # The rows of the user's municipalities: WHERE fragments whose every %s is the
    # array of their ids (jurisdiction.scope's readable_ids), a row being the user's when any
    # of them holds; None: the same for everyone. Where each fragment has an index of its own,
    # the count of a page adds them up one at a time, each without the rows of those before it
    # (views.count_sql): an OR of two indexes made PostgreSQL read every row of a large
    # municipality to count them (docs/performance.md). A computed
    # collection keeps its OR in one fragment, read once.
    scope: tuple[str, ...] | None = None
    # A date column for the `datetime` parameter; None when the collection has no time.
    temporal: str | None = None
    # For features that last a period (from `temporal` to this column): `datetime` picks the
    # ones whose period overlaps the interval asked for.
    temporal_end: str | None = None
    where: str = "TRUE"

    def is_visible(self, user) -> bool:
        return self.visible_to is None or self.visible_to(user)

    def properties_sql(self, today: datetime.date) -> dict[str, str]:
        """The properties' SQL with TODAY as the day of the request (a date literal made from a
        date, never from the request's text)."""
        day = day_literal(today)
        return {name: expr.replace(TODAY, day) for name, expr in self.properties.items()}

    def where_sql(self, today: datetime.date) -> str:
        """`where` with TODAY as the day of the request, as properties_sql."""
        return self.where.replace(TODAY, day_literal(today))


def day_literal(day: datetime.date) -> str:
    return f"DATE '{day.isoformat()}'"


# The request's day in a property's SQL (Collection.properties_sql): a municipality's
# parameters are shown as they are today, the set in force on it.
TODAY = "{today}"


# The IBGE code of the row's municipality, for collections that have one.
MUNICIPALITY_CODE = (
    f"(SELECT m.ibge_code FROM {Municipality._meta.db_table} m WHERE m.id = t.municipality_id)"
)

# A column of the facility's license in force today (the latest to start when several overlap,
# as ReceivingFacility.license_on picks).
LICENSE_IN_FORCE = (
    f"(SELECT l.{{column}} FROM {FacilityLicense._meta.db_table} l WHERE l.facility_id = t.id"
    f" AND {valid_on_sql('l', TODAY)} ORDER BY l.valid_from DESC, l.id DESC LIMIT 1)"
)

COLLECTIONS = {
    c.id: c
    for c in (
        Collection(
            id="facilities",
            title="Áreas de recebimento",
            description="PEV, ATT, áreas de reciclagem e aterros de RCC (polígonos) licenciados "
            "hoje, com a licença vigente (Lei 3.978/2007 art. 14 §1).",
            table=ReceivingFacility._meta.db_table,
            geometry="area",
            properties={
                "code": "t.code",
                "kind": "t.kind",
                "name": "t.name",
                "operator": "t.operator",
                "address": "t.address",
                "accepted_classes": "array_to_string(t.accepted_classes, ',')",
                "municipality": MUNICIPALITY_CODE,
                **{
                    f"license_{column}": LICENSE_IN_FORCE.replace("{column}", column)
                    for column in ("number", "issuer", "valid_until")
                },
            },
            # Only licensed facilities are public destinations (art. 14 §1), as on the maps: an
            # expired, suspended or revoked area is the municipality's to see (the Núcleo's map).
            where=licensed_sql("t.id", TODAY),
        ),
        Collection(
            id="bacias",
            title="Bacias de captação",
            description="Partes da área urbana atendidas cada uma por um PEV (art. 3 V).",
            table=CatchmentBasin._meta.db_table,
            geometry="area",
            properties={
                "code": "t.code",
                "name": "t.name",
                "served_by": "t.served_by_id",
                "municipality": MUNICIPALITY_CODE,
            },
        ),
        Collection(
            id="municipalities",
            title="Municípios",
            description="Limites municipais (IBGE) e parâmetros legais.",
            table=Municipality._meta.db_table,
            geometry="boundary",
            properties={
                "ibge_code": "t.ibge_code",
                "name": "t.name",
                "uf": "t.uf",
                "small_volume_limit_m3": "(SELECT mp.small_volume_limit_m3 FROM "
                f"{parameters_sql('t.id', TODAY)} mp)",
            },
        ),
        Collection(
            id="ctr-origins",
            title="Origens dos CTRs",
            description="Pontos de origem dos CTRs (somente Núcleo e fiscalização).",
            table=CTR._meta.db_table,
            geometry="origin",
            properties={
                "number": "t.number",
                "status": "t.status",
                "transport_date": "t.transport_date",
                "total_volume_m3": "t.total_volume_m3",
                "destination_facility": "t.destination_facility_id",
                "transporter": "t.transporter_id",
            },
            visible_to=roles.is_municipal,
            # Its origin's municipality, and the municipality of its destination facility (the
            # loads crossing into it): CTRQuerySet.municipal_q, in SQL, each on its index.
            scope=("t.municipality_id = ANY(%s)", "t.crossing_into_id = ANY(%s)"),
            temporal="transport_date",
        ),
        Collection(
            id="flows",
            title="Fluxos entre áreas (CTRs de saída)",
            description="Volume levado de cada ATT ou PEV a cada destino, por classe e mês "
            "(CTRs de saída emitidos ou recebidos; Lei 3.978/2007 art. 3 III), em linhas da área "
            "de origem à de destino (somente Núcleo e fiscalização).",
            table=f"({onward_flows_sql()})",
            geometry="geom",
            properties={
                "municipality": "t.municipality",
                "origin_facility_code": "t.origin_code",
                "origin_facility": "t.origin_name",
                "origin_kind": "t.origin_kind",
                "destination_facility_code": "t.destination_code",
                "destination_facility": "t.destination_name",
                "destination_kind": "t.destination_kind",
                "waste_class": "t.waste_class",
                "period_start": "t.period_start",
                "period_end": "t.period_end",
                "ctrs": "t.ctrs",
                "volume_m3": "t.volume_m3",
                "received_volume_m3": "t.received_volume_m3",
            },
            visible_to=roles.is_municipal,
            scope=("(t.municipality_id = ANY(%s) OR t.destination_municipality_id = ANY(%s))",),
            temporal="period_start",
            temporal_end="period_end",
        ),
    )
}
