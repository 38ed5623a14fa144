"""GeoJSON layers for the Núcleo's maps: every facility, with the state of its license.

Unlike the public layers (licensed facilities only), the management body must see the ones
that may not receive, and why: expired, suspended, revoked, or never licensed.
"""

from __future__ import annotations

import datetime

from django.utils import timezone

from .models import FacilityLicense, LicenseStatus, ReceivingFacility, valid_on_sql
from .public_layers import BBox, anchor_sql, bbox_sql, facilities_geojson

LICENSE_STATE_LABELS = {
    "valid": "licença válida",
    "expired": "licença vencida",
    "suspended": "licença suspensa",
    "revoked": "licença cassada",
    "pending": "licença ainda não vigente",
    "none": "sem licença",
}


def network_of(municipality) -> list[int]:
    """The municipalities whose facilities the Núcleo of `municipality` sees on its map: its
    own, and those whose areas receive its CTRs by agreement (accepted_destinations, Lei
    3.978/2007 art. 4 §2 II). None without a municipality."""
    if municipality is None:
        return []
    return [municipality.pk, *municipality.accepted_destinations.values_list("pk", flat=True)]


def facilities_with_license_state_geojson(
    municipality_ids: list[int], day: datetime.date | None = None, bbox: BBox | None = None
) -> dict:
    """The facilities of `municipality_ids` (and those of no municipality yet, an import
    without one) as a FeatureCollection; `license_state` is one of LICENSE_STATE_LABELS, read
    from the license in force on `day` or else the most recent one. Another municipality's
    facilities, their licenses and capacities, are its own: none without `municipality_ids`."""
    params: dict = {"day": day or timezone.localdate(), "municipality_ids": municipality_ids}
    where_bbox = bbox_sql("f.area", bbox, params)
    properties = {
        "capacity_m3_per_day": "f.capacity_m3_per_day",
        "license_number": "lic.number",
        "license_valid_until": "lic.valid_until",
        "license_state": f"""CASE
            WHEN lic.id IS NULL THEN 'none'
            WHEN lic.in_force THEN 'valid'
            WHEN lic.status = '{LicenseStatus.SUSPENDED.value}'
                 AND lic.status_since <= %(day)s THEN 'suspended'
            WHEN lic.status = '{LicenseStatus.REVOKED.value}'
                 AND lic.status_since <= %(day)s THEN 'revoked'
            WHEN lic.valid_from > %(day)s THEN 'pending'
            ELSE 'expired' END""",
        "anchor": anchor_sql("ST_PointOnSurface(f.area)"),
    }
    source = f"""{ReceivingFacility._meta.db_table} f
        LEFT JOIN LATERAL (
            SELECT l.id, l.number, l.valid_from, l.valid_until, l.status, l.status_since,
                   {valid_on_sql("l")} AS in_force
            FROM {FacilityLicense._meta.db_table} l
            WHERE l.facility_id = f.id
            ORDER BY {valid_on_sql("l")} DESC, l.valid_from DESC, l.id DESC
            LIMIT 1
        ) lic ON TRUE
        WHERE (f.municipality_id = ANY(%(municipality_ids)s::bigint[])
               OR (f.municipality_id IS NULL AND cardinality(%(municipality_ids)s::bigint[]) > 0))
              {where_bbox}"""
    return facilities_geojson(properties, source, params)
