"""The Núcleo's dashboard: figures that add up, CSV downloads, access."""

import csv
import datetime
import io

import pytest
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from ctr import analytics
from fiscalization.models import DumpingReport
from pev_network.models import CatchmentBasin, ReceivingFacility
from tests.builders import multi, point, square
from tests.ctr_world import TODAY, build_world, ctr_payload

# Issues CTRs on the day the clock says: frozen on TODAY (tests/clock.py).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]


@pytest.fixture
def world():
    world = build_world()
    ReceivingFacility.objects.filter(pk=world.att.pk).update(capacity_m3_per_day=1)
    client = APIClient()
    client.force_authenticate(world.alfa_user)
    operator = APIClient()
    operator.force_authenticate(world.operator)
    for volume, date in (("3", "2026-10-10"), ("4", "2026-11-05"), ("2.5", "2026-11-20")):
        payload = ctr_payload(
            world, transport_date=date, waste=[{"class": "A", "volume_m3": volume}]
        )
        number = client.post("/api/v1/ctrs/", payload, format="json").json()["number"]
        operator.post(f"/api/v1/ctrs/{number}/receive/", {"received_volume_m3": volume},
                      format="json")  # fmt: skip
    CatchmentBasin.objects.create(
        municipality=world.town, name="Bacia Origem", area=multi(square(*world.origin.coords, 50)),
        served_by=world.pev,
    )  # fmt: skip
    DumpingReport.objects.create(
        municipality=world.town, location=point(*world.origin.coords), category="LOTE_VAGO",
        # Inside the tests' period whatever the day they run (it used to be "now").
        created_at=datetime.datetime(2026, 11, 20, 12, tzinfo=datetime.UTC),
    )  # fmt: skip
    return world


def nucleo(world) -> Client:
    client = Client()
    client.force_login(world.nucleo)
    return client


def csv_rows(response) -> list[list[str]]:
    text = response.content.decode("utf-8-sig")
    return list(csv.reader(io.StringIO(text), delimiter=";"))


def br_float(text: str) -> float:
    return float(text.replace(".", "").replace(",", "."))


def test_class_month_table_adds_up_to_the_sql_sum(world):
    response = nucleo(world).get("/nucleo/?date_from=2026-09-01&date_to=2026-11-30&csv=classes")
    assert response.status_code == 200
    rows = csv_rows(response)
    assert rows[0] == ["mês", "classe", "volume (m³)"]
    assert [r[0] for r in rows[1:]] == ["10/2026", "11/2026"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT sum(volume_m3) FROM ctr_ctrwaste")
        total = float(cursor.fetchone()[0])
    assert sum(br_float(r[2]) for r in rows[1:]) == pytest.approx(total)


def test_capacity_use_of_a_facility(world):
    flt = analytics.CTRFilter(datetime.date(2026, 11, 1), datetime.date(2026, 11, 30))
    [att] = analytics.volume_by_facility(flt)
    assert att.volume_m3 == pytest.approx(6.5)
    assert att.capacity_m3 == 30  # 1 m³/day × 30 days
    assert att.use_pct == pytest.approx(100 * 6.5 / 30)


def test_volume_by_basin_counts_origins_inside(world):
    flt = analytics.CTRFilter(datetime.date(2026, 1, 1), TODAY)
    [(volume, ctrs)] = analytics.volume_by_basin(flt).values()
    assert (volume, ctrs) == (pytest.approx(9.5), 3)


def test_compliance_ranking(world):
    flt = analytics.CTRFilter(datetime.date(2026, 1, 1), TODAY)
    [alfa] = analytics.transporter_compliance(flt, datetime.datetime.now(datetime.UTC))
    assert (alfa.ctrs, alfa.problems, alfa.compliance_pct) == (3, 0, 100.0)


def test_dashboard_page_has_charts_tables_and_map(world):
    response = nucleo(world).get("/nucleo/?date_from=2026-09-01&date_to=2026-11-30")
    assert response.status_code == 200
    html = response.content.decode()
    # Classes, capacity and compliance; and the ATT's stock over time: it keeps
    # the loads it received, shipping nothing on.
    assert html.count('<svg role="img"') == 4
    assert "Bacia Origem" in html and "baixar CSV" in html
    assert "Bacias com mais denúncias" in html


def test_reports_per_basin_csv(world):
    rows = csv_rows(nucleo(world).get(f"/nucleo/?date_to={TODAY}&csv=denuncias"))
    assert rows[1] == ["Bacia Origem", "PEV", "1", "1"]


def test_unknown_table_and_bad_period(world):
    client = nucleo(world)
    assert client.get("/nucleo/?csv=senhas").status_code == 404
    assert client.get("/nucleo/?date_from=2026-12-01&date_to=2026-01-01").status_code == 400


def test_only_municipal_users(world):
    assert Client().get("/nucleo/").status_code == 302
    operator = Client()
    operator.force_login(world.operator)
    assert operator.get("/nucleo/").status_code == 403
