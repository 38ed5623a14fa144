"""Worksites to register in the test world (tests/ctr_world.py): a point and contours in metres
around the world's origin, the web form's fields and the API's body."""

from __future__ import annotations

import datetime

from ctr.models import Generator, Worksite
from tests.builders import ORIGIN, offset, point
from tests.ctr_world import TODAY

D = datetime.date
ADDRESS = "Rua do Canteiro, 200"
# The world's town is a 20 km square around ORIGIN: its west edge 10 km west of ORIGIN.
TOWN_HALF_SIDE_M = 10_000


def at(east_m: float = 0, north_m: float = 0) -> tuple[float, float]:
    """(lon, lat) `east_m`/`north_m` metres from the world's origin (tests.ctr_world.World)."""
    return offset(*ORIGIN, -500 + east_m, -500 + north_m)


def ring(*corners_m: tuple[float, float]) -> list[list[float]]:
    """A closed GeoJSON ring through the corners (metres east, north of the origin)."""
    positions = [list(at(e, n)) for e, n in corners_m]
    return [*positions, positions[0]]


def square_m(east_m: float = -50, north_m: float = -50, size_m: float = 100) -> dict:
    """A GeoJSON square `size_m` wide, its south-west corner at (east_m, north_m): by default
    centred on the world's origin."""
    e, n, s = east_m, north_m, size_m
    corners = ((e, n), (e + s, n), (e + s, n + s), (e, n + s))
    return {"type": "Polygon", "coordinates": [ring(*corners)]}


# Bad contours, each with what its refusal must say.
BOWTIE = {"type": "Polygon", "coordinates": [ring((0, 0), (100, 100), (100, 0), (0, 100))]}
TWO_CORNERS = {"type": "Polygon", "coordinates": [[list(at(0, 0)), list(at(50, 0))]]}
A_LINE = {"type": "LineString", "coordinates": [list(at(0, 0)), list(at(50, 0))]}
# 200 m wide, across the town's west edge.
ACROSS_THE_EDGE = square_m(-TOWN_HALF_SIDE_M + 500 - 100, 0, 200)
FAR_AWAY = {"type": "Point", "coordinates": [-60.0, -10.0]}


def api_body(**overrides) -> dict:
    """A valid registration as the API takes it: a 100 m square around the world's origin."""
    body = {
        "address": ADDRESS,
        "neighbourhood": "Centro",
        "geometry": square_m(),
        "permit_number": "ALV-2026-015",
        "built_area_m2": "350.50",
        "work_kind": "new_building",
        "start_date": "2026-09-01",
        "expected_end": "2027-06-30",
    }
    body.update(overrides)
    return body


def form_data(**overrides) -> dict:
    """A valid registration as the web form posts it: the point of the world's origin."""
    lon, lat = at()
    data = {
        "address": ADDRESS,
        "neighbourhood": "Centro",
        "shape": "point",
        "location_lat": f"{lat:.6f}".replace(".", ","),
        "location_lon": f"{lon:.6f}".replace(".", ","),
        "area": "",
        "permit_number": "ALV-2026-015",
        "built_area_m2": "350,5",
        "work_kind": "new_building",
        "start_date": "2026-09-01",
        "expected_end": "2027-06-30",
    }
    data.update(overrides)
    return data


def registered(generator: Generator, address: str = ADDRESS, area=None, **fields) -> Worksite:
    """A worksite registered at `address` (the world's origin, or `area` as a GEOS polygon)."""
    location = area.point_on_surface if area is not None else point(*at())
    values = {
        "location": location,
        "area": area,
        "permit_number": "",
        "built_area_m2": 120,
        "work_kind": "renovation",
        "start_date": TODAY - datetime.timedelta(days=30),
        "expected_end": TODAY + datetime.timedelta(days=120),
        "registered_at": datetime.datetime(2026, 10, 1, 12, tzinfo=datetime.UTC),
    }
    values.update(fields)
    return Worksite.objects.create(generator=generator, address=address, **values)
