"""GDAL's own command-line tools, as real third-party clients, read our OGC API – Features."""

import json
import subprocess
import urllib.error
import urllib.request

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.ctr_world import build_world, ctr_payload

pytestmark = [pytest.mark.interop, pytest.mark.django_db(transaction=True)]


def gdal(*args: str, token: str | None = None, tmp_env: dict | None = None) -> str:
    env = {"PATH": "/usr/bin:/bin", "GDAL_HTTP_TIMEOUT": "60", **(tmp_env or {})}
    if token:
        env["GDAL_HTTP_HEADERS"] = f"Authorization: Token {token}"
    result = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture
def world_with_ctrs(live_server):
    world = build_world()
    client = APIClient()
    client.force_authenticate(world.alfa_user)
    for _ in range(3):
        assert client.post("/api/v1/ctrs/", ctr_payload(world), format="json").status_code == 201
    return world


def feature_count(ogrinfo_output: str) -> int:
    for line in ogrinfo_output.splitlines():
        if line.startswith("Feature Count:"):
            return int(line.split(":")[1])
    raise AssertionError(ogrinfo_output)


def test_ogrinfo_lists_the_public_layers(live_server, world_with_ctrs):
    out = gdal("ogrinfo", "-ro", "-q", f"OAPIF:{live_server.url}/ogc/")
    assert "facilities" in out and "bacias" in out and "municipalities" in out
    assert "ctr-origins" not in out  # anonymous: not listed


def test_ogrinfo_counts_facilities_across_pages(live_server, world_with_ctrs):
    # A page of 2 forces GDAL to follow our `next` links.
    out = gdal(
        "ogrinfo", "-ro", "-so", "-oo", "PAGE_SIZE=2", f"OAPIF:{live_server.url}/ogc/", "facilities"
    )
    assert feature_count(out) == 4
    assert "Multi Polygon" in out


def test_ogr2ogr_copies_a_layer_to_geopackage(live_server, world_with_ctrs, tmp_path):
    target = tmp_path / "rede.gpkg"
    gdal(
        "ogr2ogr", "-f", "GPKG", str(target), f"OAPIF:{live_server.url}/ogc/", "facilities",
        "-oo", "PAGE_SIZE=3",
    )  # fmt: skip
    out = gdal("ogrinfo", "-ro", "-so", str(target), "facilities")
    assert feature_count(out) == 4


def test_nucleo_reads_ctr_origins_with_a_token(live_server, world_with_ctrs):
    token = Token.objects.create(user=world_with_ctrs.nucleo).key
    out = gdal("ogrinfo", "-ro", "-so", f"OAPIF:{live_server.url}/ogc/", "ctr-origins", token=token)
    assert feature_count(out) == 3


def test_items_reject_unknown_parameters_with_400(live_server, world_with_ctrs):
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(f"{live_server.url}/ogc/collections/facilities/items?foo=1")
    assert error.value.code == 400
    body = json.loads(error.value.read())
    assert "foo" in body["detail"]


@pytest.fixture
def flows_world(live_server):
    from tests.clock import frozen_clock
    from tests.nucleo.flows_world import build_flows

    # The world's loads have fixed dates: built on TODAY (GDAL reads no date).
    with frozen_clock():
        return build_flows(build_world())


def test_ogrinfo_reads_the_flows_as_lines_with_a_token(live_server, flows_world):
    token = Token.objects.create(user=flows_world.nucleo).key
    out = gdal("ogrinfo", "-ro", "-so", f"OAPIF:{live_server.url}/ogc/", "flows", token=token)
    assert feature_count(out) == 2
    assert "Line String" in out
    assert "volume_m3: Real" in out and "destination_kind: String" in out
    # Anonymous: the collection is not there.
    listed = gdal("ogrinfo", "-ro", "-q", f"OAPIF:{live_server.url}/ogc/")
    assert "flows" not in listed


def test_ogr2ogr_copies_a_month_of_flows_to_geopackage(live_server, flows_world, tmp_path):
    token = Token.objects.create(user=flows_world.nucleo).key
    target = tmp_path / "fluxos.gpkg"
    gdal(
        "ogr2ogr", "-f", "GPKG", str(target), f"OAPIF:{live_server.url}/ogc/", "flows",
        "-oo", "PAGE_SIZE=1", "-where", "destination_kind = 'LANDFILL'", token=token,
    )  # fmt: skip
    out = gdal("ogrinfo", "-ro", "-al", str(target))
    assert feature_count(out) == 1
    assert "destination_facility (String) = Aterro" in out
    assert "volume_m3 (Real) = 2" in out
