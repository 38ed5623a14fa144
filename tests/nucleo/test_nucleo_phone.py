"""The Núcleo's map and dashboard as a phone shows them: readable flows, the period applied
shown in the filter, the default municipality named, overdue circles with their own popup,
and a capacity section that says when no capacity is declared."""

import datetime
import re

import pytest
import time_machine
from django.test import Client

from ctr.analytics import Cell, Flow
from maps.base import render_parts
from nucleo import layers as nucleo
from tests.ctr_world import build_world

pytestmark = pytest.mark.django_db
NOW = datetime.datetime(2026, 11, 30, 15, 0, tzinfo=datetime.UTC)


def flow(lon, lat, facility, volume):
    return Flow(lon, lat, facility, f"Área {facility}", -45.2, -22.8, volume, 1)


def test_flows_regrouped_on_a_coarser_grid_keep_every_cubic_metre():
    # Nine origin cells of 0.01° in one 0.03° region, to two facilities, and a far one.
    flows = [
        flow(-45.205 + i * 0.01, -22.795 + j * 0.01, 1, 1.0) for i in range(3) for j in range(3)
    ]
    flows += [flow(-45.195, -22.795, 2, 2.0), flow(-44.5, -22.0, 1, 0.5)]
    kept, omitted, omitted_volume = nucleo.aggregate_flows(flows, cell=0.01, factor=3, limit=2)
    assert [(f.facility_id, f.volume_m3, f.ctrs) for f in kept] == [(1, 9.0, 9), (2, 2.0, 1)]
    assert (omitted, omitted_volume) == (1, 0.5)
    # The line starts at the region's volume-weighted centre.
    assert kept[0].origin_lon == pytest.approx(-45.195) and kept[0].origin_lat == pytest.approx(
        -22.785
    )


def test_overdue_circles_open_their_own_popup():
    m = nucleo.nucleo_map(
        facilities={"type": "FeatureCollection", "features": []},
        basins=None,
        outline=None,
        flows=[flow(-45.2, -22.8, 1, 3.0)],
        overdue=[Cell(-45.19, -22.81, 2)],
        reports=[],
        facility_admin_url="/admin/{id}/",
        ctr_list_url="/ctrs/?f={facility}",
    )
    script = render_parts(m).script
    # One popup for the flows' layer, one for the overdue circles' (before, a tap on a circle
    # opened the popup of the flow under it).
    assert script.count(".bindPopup(") == 2


@time_machine.travel(NOW, tick=False)
def test_filter_shows_the_period_applied_and_names_the_municipality():
    world = build_world()
    client = Client()
    client.force_login(world.nucleo)
    html = client.get("/nucleo/mapa/").content.decode()
    assert 'name="date_from" value="2026-09-01"' in html
    assert 'name="date_to" value="2026-11-30"' in html
    # The municipality is the one the user works in, named on the page, not a
    # filter of the form: the Núcleo of one town has no other to choose.
    assert 'name="municipality"' not in html
    assert re.search(r"Município: <strong>Guaratinguetá \(teste\)/SP</strong>", html)
    # A period with its start left empty: the start shown is the one applied.
    html = client.get("/nucleo/mapa/?date_to=2026-10-31").content.decode()
    assert 'name="date_from" value="2026-08-02"' in html
    assert "02/08/2026 a 31/10/2026" in html


@time_machine.travel(NOW, tick=False)
def test_capacity_section_says_when_no_capacity_is_declared():
    world = build_world()
    from rest_framework.test import APIClient

    from tests.ctr_world import ctr_payload

    api = APIClient()
    api.force_authenticate(world.alfa_user)
    assert api.post("/api/v1/ctrs/", ctr_payload(world), format="json").status_code == 201
    world.att.capacity_m3_per_day = None
    world.att.save(update_fields=["capacity_m3_per_day"])
    client = Client()
    client.force_login(world.nucleo)
    html = client.get("/nucleo/").content.decode()
    assert "Sem gráfico de uso: nenhuma área com capacidade declarada" in html
