"""Exports for the Núcleo: CTRs of a period as CSV and GeoPackage, network and bacias."""

import csv
import io
import sqlite3
import subprocess

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from pev_network.models import CatchmentBasin
from tests.builders import multi, square
from tests.ctr_world import ORIGIN, build_world, ctr_payload

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    world = build_world()
    client = APIClient()
    client.force_authenticate(world.alfa_user)
    for date in ("2026-11-01", "2026-11-20", "2026-11-30"):
        payload = ctr_payload(world, transport_date=date)
        assert client.post("/api/v1/ctrs/", payload, format="json").status_code == 201
    CatchmentBasin.objects.create(
        municipality=world.town, name="Bacia Teste", area=multi(square(*ORIGIN, 800)),
        served_by=world.pev, code="B1",
    )  # fmt: skip
    return world


def ogr_count(path, layer) -> int:
    out = subprocess.run(
        ["ogrinfo", "-ro", "-so", str(path), layer], capture_output=True, text=True, check=True
    ).stdout
    return int(next(line for line in out.splitlines() if line.startswith("Feature Count:"))
               .split(":")[1])  # fmt: skip


def test_export_ctrs_csv_command(world, tmp_path):
    target = tmp_path / "ctrs.csv"
    call_command("export_ctrs", str(target), "--from", "2026-11-10", "--to", "2026-11-30",
                 stdout=io.StringIO())  # fmt: skip
    raw = target.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig")), delimiter=";"))
    assert [r["Data do transporte"] for r in rows] == ["20/11/2026", "30/11/2026"]
    assert rows[0]["Área de destino"] == "ATT" and rows[0]["Classes de resíduo"] == "Classe A"
    lon = float(rows[0]["Longitude da origem"].replace(",", "."))
    assert lon == pytest.approx(world.origin.x, abs=1e-6)


def test_export_ctrs_geopackage_has_origins_and_destinations(world, tmp_path):
    target = tmp_path / "ctrs.gpkg"
    call_command("export_ctrs", str(target), "--from", "2026-01-01", "--to", "2026-12-31",
                 stdout=io.StringIO())  # fmt: skip
    assert ogr_count(target, "ctr_origens") == 3
    assert ogr_count(target, "ctr_destinos") == 3


def test_export_of_an_empty_period_is_a_valid_empty_file(world, tmp_path):
    target = tmp_path / "vazio.gpkg"
    call_command("export_ctrs", str(target), "--from", "2020-01-01", "--to", "2020-01-31",
                 stdout=io.StringIO())  # fmt: skip
    assert ogr_count(target, "ctr_origens") == 0


def gpkg_version(path) -> int:
    """The GeoPackage version the file declares (user_version: 10200 is 1.2)."""
    with sqlite3.connect(path) as db:
        return db.execute("PRAGMA user_version").fetchone()[0]


@pytest.mark.parametrize(
    ("command", "args"),
    [("export_ctrs", ["--from", "2026-01-01", "--to", "2026-12-31"]),
     ("export_ctrs", ["--from", "2020-01-01", "--to", "2020-01-31"]),
     ("export_ctrs", ["--flows", "--from", "2020-01-01", "--to", "2020-01-31"]),
     ("export_facilities", []),
     ("export_basins", [])],
)  # fmt: skip
def test_every_geopackage_is_version_1_2_even_an_empty_one(world, tmp_path, command, args):
    """GDAL writes 1.4 unless told, which older GDAL and QGIS warn about: each export writes
    through pev_network.exporting.write_layer, which tells it, empty or not."""
    target = tmp_path / "saida.gpkg"
    call_command(command, str(target), *args, stdout=io.StringIO())
    assert gpkg_version(target) == 10200


@pytest.mark.parametrize(
    ("args", "message"),
    [(["x.txt", "--from", "2026-01-01", "--to", "2026-01-02"],
      "Use a extensão .csv ou .gpkg para o arquivo de saída."),
     (["x.csv", "--from", "2026-02-01", "--to", "2026-01-02"],
      "A data inicial é posterior à final."),
     (["x.csv", "--from", "ontem", "--to", "2026-01-02"],
      "Data inválida 'ontem': use AAAA-MM-DD."),
     (["x.csv", "--from", "2026-01-01", "--to", "2026-01-02", "--municipality", "0000000"],
      "Município 0000000 não cadastrado.")],
)  # fmt: skip
def test_export_ctrs_refuses_bad_arguments(world, tmp_path, args, message):
    with pytest.raises(CommandError) as raised:
        call_command("export_ctrs", str(tmp_path / args[0]), *args[1:], stdout=io.StringIO())
    assert str(raised.value) == message
    assert not (tmp_path / args[0]).exists()


def test_export_basins(world, tmp_path):
    target = tmp_path / "bacias.gpkg"
    call_command("export_basins", str(target), stdout=io.StringIO())
    assert ogr_count(target, "bacias_de_captacao") == 1


def nucleo_client(world):
    client = Client()
    client.force_login(world.nucleo)
    return client


def test_web_downloads_for_the_nucleo(world, tmp_path):
    client = nucleo_client(world)
    page = client.get("/nucleo/exportar/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="date_from"' in html and 'name="transporter"' not in html  # the period only
    response = client.get("/nucleo/exportar/ctrs.csv?date_from=2026-11-01&date_to=2026-11-30")
    assert response.status_code == 200
    body = b"".join(response.streaming_content).decode("utf-8-sig")
    assert body.count("\n") == 4  # header + 3 CTRs
    assert "ctrs_20261101_20261130.csv" in response["Content-Disposition"]
    for name, layer, count in (("areas.gpkg", "areas_de_recebimento", 4),
                               ("bacias.gpkg", "bacias_de_captacao", 1)):  # fmt: skip
        response = client.get(f"/nucleo/exportar/{name}")
        target = tmp_path / name
        target.write_bytes(b"".join(response.streaming_content))
        assert ogr_count(target, layer) == count


def test_web_export_refuses_others_and_bad_input(world):
    transporter = Client()
    transporter.force_login(world.alfa_user)
    assert transporter.get("/nucleo/exportar/ctrs.csv").status_code == 403
    client = nucleo_client(world)
    assert client.get("/nucleo/exportar/senhas.txt").status_code == 404
    bad = client.get("/nucleo/exportar/ctrs.csv?date_from=2026-12-01&date_to=2026-01-01")
    assert bad.status_code == 400


# --- onward flows ---------------------------------------------------------------------------


@pytest.fixture
def flows_world(frozen_today):
    from tests.ctr_world import build_world as fresh_world
    from tests.nucleo.flows_world import build_flows

    return build_flows(fresh_world())


def test_ctr_export_names_the_facility_an_onward_ctr_left(flows_world, tmp_path):
    target = tmp_path / "ctrs.csv"
    call_command("export_ctrs", str(target), "--from", "2026-10-01", "--to", "2026-11-30",
                 stdout=io.StringIO())  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(target.read_text("utf-8-sig")), delimiter=";"))
    origin = "Área de origem (CTR de saída)"
    onward = [(r[origin], r["Tipo da área de origem"], r["Área de destino"]) for r in rows]
    assert onward == [("", "", "ATT")] * 2 + [("", "", "Aterro"), ("", "", "ATT"),
                      ("ATT", "ATT", "Reciclagem"), ("ATT", "ATT", "Aterro")]  # fmt: skip
    gpkg = tmp_path / "ctrs.gpkg"
    call_command("export_ctrs", str(gpkg), "--from", "2026-10-01", "--to", "2026-11-30",
                 stdout=io.StringIO())  # fmt: skip
    out = subprocess.run(
        ["ogrinfo", "-ro", "-q", str(gpkg), "ctr_origens", "-where", "origin_kind = 'ATT'"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert out.count("OGRFeature(ctr_origens)") == 2


def test_flows_csv_one_row_per_origin_destination_class_and_month(flows_world):
    client = nucleo_client(flows_world)
    response = client.get("/nucleo/exportar/fluxos.csv?date_from=2026-11-05&date_to=2026-11-30")
    assert response.status_code == 200
    assert "fluxos_20261105_20261130.csv" in response["Content-Disposition"]
    body = b"".join(response.streaming_content).decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(body), delimiter=";"))
    assert [(r["Área de origem"], r["Área de destino"], r["Tipo da área de destino"],
             r["Classe de resíduo"], r["De"], r["Até"], r["Volume expedido (m³)"],
             r["Volume recebido no destino (m³)"]) for r in rows] == [
        ("ATT", "Aterro", "Aterro de RCC", "Classe A", "05/11/2026", "30/11/2026", "2", "2"),
        ("ATT", "Reciclagem", "Área de reciclagem", "Classe A", "05/11/2026", "30/11/2026",
         "6", "6"),
    ]  # fmt: skip
    # A period before the first onward CTR: the header only.
    response = client.get("/nucleo/exportar/fluxos.csv?date_from=2026-10-01&date_to=2026-10-31")
    assert b"".join(response.streaming_content).decode("utf-8-sig").count("\n") == 1


def test_flows_geopackage_holds_lines_gdal_reads(flows_world, tmp_path):
    response = nucleo_client(flows_world).get(
        "/nucleo/exportar/fluxos.gpkg?date_from=2026-10-01&date_to=2026-11-30"
    )
    target = tmp_path / "fluxos.gpkg"
    target.write_bytes(b"".join(response.streaming_content))
    assert ogr_count(target, "fluxos") == 2
    info = subprocess.run(["ogrinfo", "-ro", "-al", str(target)], capture_output=True,
                          text=True, check=True).stdout  # fmt: skip
    assert "Geometry: Line String" in info
    assert "volume_m3: Real" in info and "ctrs: Integer" in info
    assert "destination_kind (String) = RECYCLING" in info  # codes, for programs
    assert "period_start (String) = 2026-11-01" in info


def test_an_empty_flows_geopackage_is_a_valid_file(flows_world, tmp_path):
    target = tmp_path / "vazio.gpkg"
    out = io.StringIO()
    call_command("export_ctrs", str(target), "--flows", "--from", "2020-01-01",
                 "--to", "2020-01-31", stdout=out)  # fmt: skip
    assert "0 fluxo(s) exportado(s)" in out.getvalue()
    assert ogr_count(target, "fluxos") == 0
