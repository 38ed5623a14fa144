"""GDAL's own `ogrinfo` reads what `manage.py export_facilities` writes."""

from __future__ import annotations

import datetime
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.contrib.gis.geos import MultiPolygon, Polygon
from django.core.management import call_command

from pev_network.models import FacilityLicense, ReceivingFacility

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.interop,
    pytest.mark.skipif(shutil.which("ogrinfo") is None, reason="ogrinfo (gdal-bin) não instalado"),
]

LON, LAT = -45.19, -22.81


def facility(code: str, kind: str, dx: float) -> ReceivingFacility:
    box = Polygon.from_bbox((LON + dx, LAT, LON + dx + 0.0005, LAT + 0.0005))
    area = MultiPolygon(box, srid=4326)
    return ReceivingFacility.objects.create(code=code, kind=kind, name=f"Área {code}", area=area)


@pytest.fixture
def network():
    pev_1 = facility("PEV-01", "PEV", 0)
    facility("PEV-02", "PEV", 0.01)
    facility("ATR-01", "LANDFILL", 0.02)
    FacilityLicense.objects.create(
        facility=pev_1, number="LO-1", issuer="CETESB", valid_from=datetime.date(2024, 1, 1)
    )


def export(path: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("export_facilities", str(path), *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def ogrinfo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["ogrinfo", "-ro", *args], capture_output=True, text=True, timeout=60, check=True
    )


@pytest.mark.parametrize(
    ("name", "geometry"),
    [
        ("rede.geojson", "Multi Polygon"),
        ("rede.gpkg", "Multi Polygon"),
        # A CSV layer has no declared type; GDAL reads each row's WKT (checked below).
        ("rede.csv", "Unknown (any)"),
    ],
)
def test_ogrinfo_reads_every_export_format(network, tmp_path, name, geometry):
    path = tmp_path / name
    summary = export(path)
    assert "3 área(s)" in summary

    info = ogrinfo("-so", "-al", str(path))
    assert "Feature Count: 3" in info.stdout
    assert f"Geometry: {geometry}" in info.stdout
    assert re.search(r"Extent: \(-45\.19\d*, -22\.81\d*\)", info.stdout)
    assert 'ID["EPSG",4326]' in info.stdout
    assert "license_number: String" in info.stdout
    # No "partially supported" GeoPackage version warning from older GDALs.
    assert "Warning" not in info.stderr


def test_ogrinfo_finds_the_wkt_geometry_of_the_csv(network, tmp_path):
    path = tmp_path / "rede.csv"
    export(path)
    assert path.read_text().splitlines()[0].startswith("WKT,")

    info = ogrinfo(
        "-al", "-oo", "GEOM_POSSIBLE_NAMES=WKT", "-oo", "KEEP_GEOM_COLUMNS=NO", str(path)
    )
    geometries = [line for line in info.stdout.splitlines() if line.startswith("  MULTIPOLYGON")]
    assert len(geometries) == 3
    assert "license_number (String) = LO-1" in info.stdout


def test_export_of_one_kind_holds_only_that_kind(network, tmp_path):
    path = tmp_path / "pevs.gpkg"
    export(path, "--kind", "PEV")
    info = ogrinfo("-so", "-al", str(path))
    assert "Feature Count: 2" in info.stdout
