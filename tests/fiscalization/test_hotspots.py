"""Hotspots: DBSCAN in metres on a known layout of report points, recurrence after cleaning,
the API (parameters, access) and the cost at 100,000 reports."""

from __future__ import annotations

import datetime

import folium
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from ctr import roles
from fiscalization import hotspots
from fiscalization.hotspot_layers import add_hotspots, hotspots_map
from fiscalization.models import DumpingReport, ReportStatus
from maps.base import ExposeOnMap, base_map, render_parts
from pev_network.models import CatchmentBasin
from tests.builders import ORIGIN, multi, municipality, offset, point, square
from tests.ctr_world import make_user

pytestmark = pytest.mark.django_db

EPS = 50.0
URL = "/api/v1/dumping-reports/hotspots/"
# Members of the two tight groups, in metres east and north of the group's centre: every
# member within 30 m of the centre, each within EPS of several others.
TIGHT = [(0, 0), (10, 0), (0, 10), (20, 15), (-10, 5)]
A = (0, 0)  # metres from ORIGIN
B = (2000, 0)
C = (0, 2000)  # a pair: noise at min_points 3
SINGLES = [(1000, 1000), (-1500, 300), (3000, -2000), (-800, -2500)]


def at(east: float, north: float):
    return point(*offset(*ORIGIN, east, north))


def report(town, east, north, days_ago=10.0, status=ReportStatus.NEW, **fields):
    fields.setdefault("created_at", timezone.now() - datetime.timedelta(days=days_ago))
    return DumpingReport.objects.create(
        municipality=town, location=at(east, north), category="LOTE_VAGO", status=status, **fields
    )


def group(town, centre, members=TIGHT, **fields):
    return [report(town, centre[0] + e, centre[1] + n, **fields) for e, n in members]


@pytest.fixture
def town():
    return municipality("3518404", "Guaratinguetá (teste)")


@pytest.fixture
def layout(town):
    a = group(town, A)
    b = group(town, B)
    c = group(town, C, [(0, 0), (10, 0)])
    singles = [report(town, e, n) for e, n in SINGLES]
    # Not dumping on the ground: never counted, even where they would complete a cluster.
    report(town, C[0] + 5, C[1], status=ReportStatus.DUPLICATE)
    report(town, C[0] + 5, C[1] + 5, status=ReportStatus.UNFOUNDED)
    return {"a": a, "b": b, "c": c, "singles": singles}


def ids(reports) -> list[int]:
    return sorted(r.pk for r in reports)


def find(town, **kwargs) -> list[hotspots.Hotspot]:
    kwargs.setdefault("eps_m", EPS)
    return hotspots.find_hotspots(hotspots.HotspotQuery(municipality_id=town.pk, **kwargs))


# --- clustering ----------------------------------------------------------------------------


def test_two_tight_groups_are_the_only_hotspots_at_three_points(town, layout):
    found = find(town, min_points=3)
    assert sorted(h.report_ids for h in found) == sorted([ids(layout["a"]), ids(layout["b"])])
    assert [h.reports for h in found] == [5, 5]
    for h in found:
        assert h.hull["type"] == "Polygon"
        assert h.municipality_ibge == "3518404"
        # The hull of points within 30 m of the centre: a few hundred m², not more.
        assert 200 < h.area_m2 < 2000
        assert h.id == min(h.report_ids)


def test_the_pair_is_a_hotspot_at_two_points_and_its_line_hull_is_buffered(town, layout):
    found = find(town, min_points=2)
    assert sorted(h.report_ids for h in found) == sorted(
        [ids(layout["a"]), ids(layout["b"]), ids(layout["c"])]
    )
    pair = next(h for h in found if h.reports == 2)
    assert pair.hull["type"] == "Polygon"
    # A 10 m segment buffered by 5 m: 10 × 10 + π × 5² ≈ 178.5 m² (8 segments per quarter).
    assert pair.area_m2 == pytest.approx(10 * 10 + 3.1214 * 25, rel=0.02)


def test_a_single_spot_of_reports_gives_a_small_disc(town):
    group(town, A, [(0, 0)] * 3)
    (only,) = find(town, min_points=3)
    assert only.reports == 3
    assert only.area_m2 == pytest.approx(3.1214 * 25, rel=0.02)  # a 5 m disc


@pytest.mark.parametrize(
    ("east", "joins"),
    [(EPS - 10, True), (EPS + 10, False)],
    ids=["10m-inside-eps", "10m-beyond-eps"],
)
def test_eps_is_in_metres_east_west(town, layout, east, joins):
    """The easternmost member of A is at (20, 15): a point `east` metres east of it joins A
    only within eps. Degrees would get this wrong: 50 m is 0.00049° east-west here."""
    extra = report(town, A[0] + 20 + east, A[1] + 15)
    (cluster_a,) = [h for h in find(town, min_points=3) if layout["a"][0].pk in h.report_ids]
    assert (extra.pk in cluster_a.report_ids) is joins
    assert cluster_a.reports == (6 if joins else 5)


@pytest.mark.parametrize(("north", "joins"), [(EPS - 10, True), (EPS + 10, False)])
def test_eps_is_in_metres_north_south(town, layout, north, joins):
    extra = report(town, B[0] + 0, B[1] + 10 + north)  # (0, 10) is B's northernmost
    (cluster_b,) = [h for h in find(town, min_points=3) if layout["b"][0].pk in h.report_ids]
    assert (extra.pk in cluster_b.report_ids) is joins


def test_a_bridge_point_merges_two_groups(town):
    left = group(town, (0, 0), [(0, 0), (10, 0), (0, 10)])
    right = group(town, (100, 0), [(0, 0), (10, 0), (0, 10)])
    assert len(find(town, min_points=3)) == 2
    bridge = report(town, 55, 0)  # 45 m from (10, 0) and from (100, 0): a core point
    (merged,) = find(town, min_points=3)
    assert merged.report_ids == ids([*left, *right, bridge])


def test_since_and_until_select_the_reports(town):
    old = group(town, A, days_ago=200)
    recent = group(town, B, days_ago=5)
    assert [h.report_ids for h in find(town)] == [ids(recent)]  # default: 180 days
    long_ago = timezone.localdate() - datetime.timedelta(days=365)
    assert sorted(h.report_ids for h in find(town, since=long_ago)) == sorted(
        [ids(old), ids(recent)]
    )
    until = timezone.localdate() - datetime.timedelta(days=100)
    assert [h.report_ids for h in find(town, since=long_ago, until=until)] == [ids(old)]


def test_recurrence_after_cleaning(town):
    now = timezone.now()

    def day(n):
        return now - datetime.timedelta(days=n)

    members = iter(TIGHT)

    def add(days_ago, status=ReportStatus.NEW, cleaned_days_ago=None):
        e, n = next(members)
        return report(
            town, e, n, status=status, created_at=day(days_ago),
            cleaned_at=day(cleaned_days_ago) if cleaned_days_ago else None,
        )  # fmt: skip

    add(30, ReportStatus.CLEANED, cleaned_days_ago=25)  # reported, cleaned 5 days later
    add(28)  # before the cleaning: not a recurrence
    add(20)  # after it
    add(10, ReportStatus.CLEANED, cleaned_days_ago=5)  # after it, and cleaned again
    add(2)  # after both
    (h,) = find(town)
    assert h.reports == 5
    assert h.cleaned == 2
    assert h.first_cleaned_at == day(25)
    assert h.last_cleaned_at == day(5)
    assert h.recurrence_after_cleaning == 3
    assert h.reports_since_last_cleaning == 1
    assert h.first_report_at == day(30)
    assert h.last_report_at == day(2)


def test_no_cleaning_no_recurrence(town, layout):
    assert {(h.cleaned, h.recurrence_after_cleaning) for h in find(town)} == {(0, 0)}


def test_the_bacia_of_the_hotspot(town, layout):
    basin = CatchmentBasin.objects.create(
        municipality=town,
        name="Bacia Centro",
        area=multi(square(*offset(*ORIGIN, -100, -100), 300)),
    )
    by_group = {h.report_ids[0]: h for h in find(town)}
    assert by_group[ids(layout["a"])[0]].basin_id == basin.pk
    assert by_group[ids(layout["a"])[0]].basin_name == "Bacia Centro"
    assert by_group[ids(layout["b"])[0]].basin_id is None


def test_hotspots_stay_inside_their_municipality(town):
    """Two municipalities side by side: a group on each side of the border gives two
    hotspots, one each, not one straddling both."""
    from pev_network.services import save_municipality

    lon, lat = offset(*ORIGIN, 10_000, -10_000)
    neighbour, _ = save_municipality("3500000", "Vizinho", "SP", multi(square(lon, lat, 20_000)))
    west = group(town, (9_980, 0), [(0, 0), (5, 0), (0, 5)])
    east = [
        DumpingReport.objects.create(
            municipality=neighbour, location=at(10_010 + e, n), category="LOTE_VAGO"
        )
        for e, n in [(0, 0), (5, 0), (0, 5)]
    ]
    found = hotspots.find_hotspots(hotspots.HotspotQuery(eps_m=EPS))
    assert sorted(h.report_ids for h in found) == sorted([ids(west), ids(east)])
    assert {h.municipality_ibge for h in found} == {"3518404", "3500000"}


def test_hotspot_of_a_report(town, layout):
    query = hotspots.HotspotQuery(eps_m=EPS, min_points=3)
    found = hotspots.hotspot_of_report(layout["b"][2], query)
    assert found.report_ids == ids(layout["b"])
    assert hotspots.hotspot_of_report(layout["singles"][0], query) is None


# --- API -----------------------------------------------------------------------------------


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


@pytest.fixture
def fiscal(town):
    return make_user("fiscal", roles.FISCAL, town)


def test_api_returns_geojson_hulls(town, layout, fiscal):
    response = client_for(fiscal).get(URL, {"eps_m": "50", "min_points": "3"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["type"] == "FeatureCollection"
    assert body["parameters"]["eps_m"] == 50
    assert body["parameters"]["min_points"] == 3
    assert len(body["features"]) == 2
    feature = body["features"][0]
    assert feature["geometry"]["type"] == "Polygon"
    props = feature["properties"]
    assert props["reports"] == 5
    assert props["municipality"]["ibge_code"] == "3518404"
    assert set(props) >= {
        "first_report_at", "last_report_at", "recurrence_after_cleaning", "cleaned",
        "basin", "area_m2", "centre", "last_report",
    }  # fmt: skip


def test_api_min_points_two_and_municipality_and_bbox(town, layout, fiscal):
    client = client_for(fiscal)
    body = client.get(URL, {"eps_m": "50", "min_points": "2", "municipality": "3518404"}).json()
    assert sorted(f["properties"]["reports"] for f in body["features"]) == [2, 5, 5]
    lon0, lat0 = offset(*ORIGIN, B[0] - 100, B[1] - 100)
    lon1, lat1 = offset(*ORIGIN, B[0] + 100, B[1] + 100)
    box = f"{lon0},{lat0},{lon1},{lat1}"
    body = client.get(URL, {"eps_m": "50", "bbox": box}).json()
    assert [f["id"] for f in body["features"]] == [min(ids(layout["b"]))]


def test_api_defaults(town, fiscal):
    group(town, A, [(0, 0), (60, 0), (120, 0)])  # a chain 60 m apart: a hotspot at 100 m
    body = client_for(fiscal).get(URL).json()
    assert body["parameters"]["eps_m"] == 100
    assert body["parameters"]["min_points"] == 3
    assert (
        body["parameters"]["since"]
        == (timezone.localdate() - datetime.timedelta(days=180)).isoformat()
    )
    assert len(body["features"]) == 1


@pytest.mark.parametrize(
    ("params", "field", "fragment"),
    [
        ({"eps_m": "0"}, "eps_m", "fora do intervalo de 1 a 5000"),
        ({"eps_m": "abc"}, "eps_m", "não é um número"),
        ({"eps_m": "6000"}, "eps_m", "fora do intervalo"),
        ({"min_points": "1"}, "min_points", "fora do intervalo de 2 a 1000"),
        ({"min_points": "2.5"}, "min_points", "não é um número inteiro"),
        ({"since": "2026-13-01"}, "since", "não é uma data válida"),
        ({"since": "1990-01-01"}, "since", "últimos 5 anos"),
        ({"since": "2026-06-01", "until": "2026-05-01"}, "until", "anterior à inicial"),
        ({"municipality": "12"}, "municipality", "código IBGE de 7 dígitos"),
        ({"municipality": "1234567"}, "municipality", "Nenhum município"),
        ({"bbox": "1,2,3"}, "bbox", "quatro números"),
        ({"bbox": "-45,-22,-46,-23"}, "bbox", "Caixa invertida"),
    ],
)
def test_api_bad_parameters_are_400_in_portuguese(town, fiscal, params, field, fragment):
    response = client_for(fiscal).get(URL, params)
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    errors = response.json()["errors"]
    assert errors[0]["campo"] == field
    assert fragment in errors[0]["mensagem"]


def test_api_access(town, layout):
    assert APIClient().get(URL).status_code == 401
    outsider = make_user("curioso")
    assert client_for(outsider).get(URL).status_code == 403
    nucleo = make_user("nucleo", roles.NUCLEO, town)
    response = client_for(nucleo).get(URL)
    assert response.status_code == 200
    body = response.json()
    assert body["type"] == "FeatureCollection" and body["numberReturned"] == 2
    assert sorted(f["properties"]["reports"] for f in body["features"]) == [5, 5]  # a and b


def test_api_too_costly_is_503(town, fiscal, monkeypatch):
    """A clustering past the statement timeout is cancelled and said so, in Portuguese."""
    monkeypatch.setattr(hotspots, "STATEMENT_TIMEOUT_MS", 50)
    monkeypatch.setattr(hotspots, "_sql", lambda query: ("SELECT pg_sleep(1)", []))
    response = client_for(fiscal).get(URL, {"eps_m": "5000", "min_points": "2"})
    assert response.status_code == 503
    assert response["Content-Type"].startswith("application/problem+json")
    assert "reduza o raio" in response.json()["detail"]
    # The connection is usable afterwards (the transaction was rolled back).
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


# --- map layers ----------------------------------------------------------------------------


def test_add_hotspots_keeps_the_layer_control_last(town, layout):
    collection = hotspots.hotspots_geojson(
        hotspots.HotspotQuery(eps_m=EPS, municipality_id=town.pk)
    )
    m = base_map()
    control = folium.LayerControl().add_to(m)
    m.add_child(ExposeOnMap("ctrLayerControl", control))
    add_hotspots(m, collection, "/fiscalizacao/denuncias/{report}/suspeitos/")
    kinds = [type(child).__name__ for child in m._children.values()]
    assert kinds[-2:] == ["LayerControl", "ExposeOnMap"]
    parts = render_parts(m)
    assert "Pontos cr" in parts.script  # non-ASCII is escaped in the JSON
    assert "CTRs suspeitos" in parts.script
    # The control lists the hotspots' layer: its variable is declared before the control's.
    group = next(c for c in m._children.values() if isinstance(c, folium.FeatureGroup))
    assert parts.script.index(f"var {group.get_name()}") < parts.script.index(
        f"var {control.get_name()}"
    )


def test_hotspots_map_uses_local_leaflet_only(town, layout):
    collection = hotspots.hotspots_geojson(
        hotspots.HotspotQuery(eps_m=EPS, municipality_id=town.pk)
    )
    parts = render_parts(hotspots_map(collection))
    # Leaflet's script is loaded by maps/map-loader.js when the map comes near the viewport.
    assert '"/static/leaflet/leaflet.js"' in parts.script
    assert "/static/maps/map-loader.js" in parts.header
    assert "cdn" not in parts.header.lower() + parts.script.lower()


# --- cost ----------------------------------------------------------------------------------


def test_hotspots_at_100k_reports_are_bounded_to_the_limit(town):
    """100,000 reports in one municipality over 170 days: 300 dense spots holding 60 % of
    them, the rest scattered over 20 × 20 km. The answer stays bounded (its speed is measured
    by the benchmarks, not asserted here)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH centres AS (
                SELECT g, %s + (random() - 0.5) * 0.18 AS x, %s + (random() - 0.5) * 0.18 AS y
                FROM generate_series(0, 299) g
            ), pts AS (
                SELECT i, CASE WHEN i < 60000
                    THEN ST_SetSRID(ST_MakePoint(c.x + (random() - 0.5) * 0.001,
                                                 c.y + (random() - 0.5) * 0.001), 4326)
                    ELSE ST_SetSRID(ST_MakePoint(%s + (random() - 0.5) * 0.18,
                                                 %s + (random() - 0.5) * 0.18), 4326) END AS p
                FROM generate_series(0, 99999) i JOIN centres c ON c.g = mod(i, 300)
            )
            INSERT INTO {DumpingReport._meta.db_table} (protocol, municipality_id, location,
                description, category, status, reporter_kind, contact_name, contact,
                created_at, updated_at)
            SELECT 'T-' || i, %s, p, '', 'LOTE_VAGO',
                   (ARRAY['NEW', 'CONFIRMED', 'CLEANED', 'NEW', 'DUPLICATE', 'NEW'])[1 + mod(i, 6)],
                   'CITIZEN', '', '', %s - random() * interval '170 days', %s
            FROM pts
            """,
            # The times from Python's clock (the one the hotspot window reads), not the server's.
            [*ORIGIN, *ORIGIN, town.pk, timezone.now(), timezone.now()],
        )
        cursor.execute(f"ANALYZE {DumpingReport._meta.db_table}")
    query = hotspots.HotspotQuery(municipality_id=town.pk)
    # Its time is a benchmark's business (make bench), not a test's: no timed assertion here.
    found = hotspots.find_hotspots(query)
    assert len(found) == hotspots.DEFAULT_LIMIT


def test_add_hotspots_on_the_nucleo_map(town, layout):
    """The wiring of nucleo.views: add_hotspots on the finished Núcleo map, whose layer
    control was added first, still lists the hotspots."""
    from fiscalization.hotspot_layers import hotspots_collection
    from nucleo import layers as nucleo

    m = nucleo.nucleo_map(
        facilities={"features": []}, basins=None, outline=None, flows=[], overdue=[], reports=[],
        facility_admin_url="/admin/{id}/", ctr_list_url="/admin/?f={facility}",
    )  # fmt: skip
    collection = hotspots_collection(town, eps_m=EPS)
    assert len(collection["features"]) == 2
    add_hotspots(m, collection)
    script = render_parts(m).script
    group = [c for c in m._children.values() if isinstance(c, folium.FeatureGroup)][-1]
    control = next(c for c in m._children.values() if isinstance(c, folium.LayerControl))
    assert script.index(f"var {group.get_name()}") < script.index(f"var {control.get_name()}")
    # The control's list of overlays (declared after the layer) names the hotspots' group.
    assert group.get_name() in script[script.index(f"var {control.get_name()}_layers") :]
