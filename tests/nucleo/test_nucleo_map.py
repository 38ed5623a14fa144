"""The Núcleo's map: aggregations that add up, bounded layers, access for municipal roles only."""

import datetime
import json
import re

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from ctr import analytics
from ctr.models import CTR
from maps.base import render_parts
from nucleo import layers as nucleo
from pev_network.models import FacilityKind
from tests.builders import ORIGIN, licensed_facility, municipality, offset, square
from tests.ctr_world import TODAY, build_world, ctr_payload

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    world = build_world()
    client = APIClient()
    client.force_authenticate(world.alfa_user)
    small = [{"class": "A", "volume_m3": "1"}]
    to_pev = {"type": "Point", "coordinates": list(world.inside(world.pev).coords)}
    for payload in (
        ctr_payload(world),
        ctr_payload(world, waste=[{"class": "A", "volume_m3": "4.5"}]),
        ctr_payload(world, facility=world.landfill),
        ctr_payload(world, destination=to_pev, waste=small),
        ctr_payload(world, transport_date="2026-06-01"),  # outside the default period
    ):
        assert client.post("/api/v1/ctrs/", payload, format="json").status_code == 201
    return world


def shows(name: str, html: str) -> bool:
    """Layer names reach the page inside JavaScript strings, where non-ASCII is escaped."""
    return name in html or json.dumps(name)[1:-1] in html


def period(**kwargs):
    return analytics.CTRFilter(
        date_from=TODAY - datetime.timedelta(days=90), date_to=TODAY, **kwargs
    )


def plain_sum(where: str, params: list) -> float:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT coalesce(sum(total_volume_m3), 0) FROM ctr_ctr WHERE {where}", params
        )
        return float(cursor.fetchone()[0])


def test_flows_add_up_to_the_plain_sql_sum(world):
    flows = analytics.flows(period(), cell=0.01)
    expected = plain_sum(
        "transport_date BETWEEN %s AND %s AND status <> 'cancelled'",
        [TODAY - datetime.timedelta(days=90), TODAY],
    )
    assert sum(f.volume_m3 for f in flows) == pytest.approx(expected)
    assert sum(f.ctrs for f in flows) == 4
    by_facility = {f.facility_name: f.volume_m3 for f in flows}
    assert by_facility == {"ATT": pytest.approx(7.5), "Aterro": 3, "PEV": 1}


def test_flows_by_facility_and_class_filters(world):
    only_landfill = analytics.flows(period(facility_id=world.landfill.pk), cell=0.01)
    assert [f.facility_name for f in only_landfill] == ["Aterro"]
    assert analytics.flows(period(waste_class="B"), cell=0.01) == []


def test_totals_match_sql(world):
    totals = analytics.totals(period())
    assert totals["ctrs"] == 4
    assert totals["volume_m3"] == pytest.approx(11.5)


def test_cancelled_ctrs_carry_nothing(world):
    number = CTR.objects.order_by("sequence").first().number
    client = APIClient()
    client.force_authenticate(world.alfa_user)
    client.post(f"/api/v1/ctrs/{number}/cancel/", {"reason": "desistiu"}, format="json")
    assert sum(f.ctrs for f in analytics.flows(period(), cell=0.01)) == 3


def test_overdue_cells_count_the_open_ctrs_past_the_alert(world):
    later = timezone.now() + datetime.timedelta(hours=49)
    cells = analytics.overdue_origin_cells(period(), cell=0.01, now=later)
    assert sum(c.count for c in cells) == 4
    assert analytics.overdue_origin_cells(period(), cell=0.01, now=timezone.now()) == []


def test_grid_size_is_a_round_fraction_of_the_extent():
    assert analytics.grid_size_degrees((-45.44, -23.02, -45.03, -22.61), cells=60) == 0.01
    assert analytics.grid_size_degrees((0, 0, 6, 1), cells=60) == 0.1


def test_map_builder_has_every_layer_without_http(world):
    flows = analytics.flows(period(), cell=0.01)
    the_map = nucleo.nucleo_map(
        facilities={"type": "FeatureCollection", "features": []},
        basins=None,
        outline=None,
        flows=flows,
        overdue=[analytics.Cell(-45.19, -22.81, 3)],
        reports=[],
        facility_admin_url="/admin/x/{id}/",
        ctr_list_url="/ctrs/?f={facility}",
    )
    parts = render_parts(the_map)
    html = parts.header + parts.html + parts.script
    for layer in (nucleo.LAYER_FLOWS, nucleo.LAYER_OVERDUE, nucleo.LAYER_REPORTS):
        assert shows(layer, html), layer
    assert "/ctrs/?f=" in html


def test_page_for_the_nucleo(world):
    client = Client()
    client.force_login(world.nucleo)
    response = client.get("/nucleo/mapa/")
    assert response.status_code == 200
    html = response.content.decode()
    assert shows(nucleo.LAYER_FLOWS, html) and "Guaratinguetá (teste)" in html
    external = [u for u in re.findall(r'(?:src|href)="([^"]+)"', html) if "//" in u]
    assert all("openstreetmap" in u for u in external), external


def test_the_facilities_are_the_towns_and_its_partners_not_a_neighbours(world):
    """A neighbour's area just across the border is in the map's window, but its license and
    capacity are the neighbour's own; a consortium partner's area receives the town's CTRs
    (accepted_destinations), so its license state is the town's concern too."""
    neighbour = municipality("3500105", "Vizinha (teste)", east_m=20_000)
    partner = municipality("3500204", "Consorciada (teste)", east_m=-20_000)
    world.town.accepted_destinations.add(partner)
    east, west = offset(*ORIGIN, 10_500, 0), offset(*ORIGIN, -10_600, 0)
    licensed_facility(FacilityKind.ATT, square(*east, 100), "ATT da vizinha", neighbour)
    licensed_facility(FacilityKind.LANDFILL, square(*west, 100), "Aterro do consórcio", partner)
    client = Client()
    client.force_login(world.nucleo)
    html = client.get("/nucleo/mapa/").content.decode()
    assert shows("Reciclagem", html) and shows("Aterro do consórcio", html)
    assert not shows("ATT da vizinha", html)


def test_bad_filters_get_400_in_portuguese(world):
    client = Client()
    client.force_login(world.fiscal)
    response = client.get("/nucleo/mapa/?date_from=2026-12-01&date_to=2026-01-01")
    assert response.status_code == 400
    assert "data inicial é posterior" in response.content.decode()
    assert client.get("/nucleo/mapa/?date_from=ontem").status_code == 400


def test_anonymous_goes_to_login_and_transporter_is_refused(world):
    response = Client().get("/nucleo/mapa/")
    assert response.status_code == 302 and response["Location"].startswith("/entrar/")
    client = Client()
    client.force_login(world.alfa_user)
    assert client.get("/nucleo/mapa/").status_code == 403
