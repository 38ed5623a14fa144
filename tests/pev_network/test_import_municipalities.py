"""`manage.py import_municipalities`: the geofile policy shared with the facility import
(invalid geometry refused unless --fix-invalid, what was repaired reported, zip checks)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import geopandas as gpd
import pytest
from django.contrib.gis.geos import GEOSGeometry
from django.core.management import CommandError, call_command
from shapely.geometry import MultiPolygon, Polygon

from pev_network import boundaries
from pev_network.models import Municipality

pytestmark = pytest.mark.django_db

# Inside Guaratinguetá/SP, in WGS 84 lon/lat.
LON, LAT = -45.19, -22.81
SIDE = 0.01  # ~1 km


def square(lon: float = LON, lat: float = LAT) -> Polygon:
    return Polygon([(lon, lat), (lon + SIDE, lat), (lon + SIDE, lat + SIDE), (lon, lat + SIDE)])


def bow_tie(lon: float = LON, lat: float = LAT) -> Polygon:
    # Two triangles touching at the centre: the ring crosses itself.
    return Polygon([(lon, lat), (lon + SIDE, lat + SIDE), (lon + SIDE, lat), (lon, lat + SIDE)])


def write(path: Path, features: list[tuple[str, str, Polygon]]) -> Path:
    records = [{"cd_mun": code, "nm_mun": name, "uf": "SP"} for code, name, _ in features]
    geometries = [geom for _, _, geom in features]
    gpd.GeoDataFrame(records, geometry=geometries, crs=4326).to_file(path, engine="pyogrio")
    return path


def run_import(path: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("import_municipalities", str(path), *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def one_bow_tie(tmp_path) -> Path:
    """A valid municipality and, second, one whose boundary is a bow-tie."""
    return write(
        tmp_path / "municipios.geojson",
        [("3599901", "Quadrado", square()), ("3599902", "Laço", bow_tie(LON + 0.1))],
    )


def test_invalid_boundary_is_refused_naming_the_feature_and_the_reason(one_bow_tie):
    with pytest.raises(CommandError) as refused:
        run_import(one_bow_tie)
    message = str(refused.value)
    assert message.startswith("Arquivo recusado; nada foi importado:")
    assert "feição 2 (Laço): geometria inválida: auto-interseção em (-22,805; -45,085)" in message
    assert "(use --fix-invalid para corrigir)" in message
    assert "feição 1" not in message
    # All or nothing: the valid one is not written either.
    assert not Municipality.objects.filter(ibge_code__in=["3599901", "3599902"]).exists()


def test_the_service_refuses_an_invalid_boundary_without_fix_invalid(one_bow_tie):
    with pytest.raises(boundaries.BoundaryImportError, match="geometria inválida"):
        boundaries.import_municipalities(one_bow_tie)
    assert not Municipality.objects.filter(ibge_code="3599902").exists()


def test_fix_invalid_repairs_the_bow_tie_and_reports_what_it_repaired(one_bow_tie):
    out = run_import(one_bow_tie, "--fix-invalid")

    assert "criados: 2" in out and "geometrias reparadas: 1." in out
    repaired = [line for line in out.splitlines() if line.startswith("  reparado: ")]
    assert len(repaired) == 1
    assert repaired[0].startswith(
        "  reparado: feição 2 (Laço) (3599902): geometria corrigida com make_valid: "
        "auto-interseção em (-22,805; -45,085); área antes "
    )
    assert repaired[0].endswith("1 → 2 polígono(s)")
    boundary = Municipality.objects.get(ibge_code="3599902").boundary
    assert boundary.valid and len(boundary) == 2  # the two triangles of the bow-tie
    assert boundary.area == pytest.approx(SIDE * SIDE / 2)


def test_fix_invalid_leaves_valid_boundaries_unchanged(one_bow_tie):
    run_import(one_bow_tie, "--fix-invalid")
    boundary = Municipality.objects.get(ibge_code="3599901").boundary
    # The same vertices (GeoJSON keeps 15 significant digits).
    assert boundary.equals_exact(GEOSGeometry(MultiPolygon([square()]).wkt), tolerance=1e-9)


def test_dry_run_with_fix_invalid_reports_the_repair_and_writes_nothing(one_bow_tie):
    out = run_import(one_bow_tie, "--fix-invalid", "--dry-run")
    assert "geometrias reparadas: 1." in out and "Nada foi gravado (--dry-run)." in out
    assert not Municipality.objects.filter(ibge_code__in=["3599901", "3599902"]).exists()


def test_zip_with_an_unsafe_path_is_refused_as_the_facility_import_does(tmp_path):
    shp = write(tmp_path / "municipios.shp", [("3599901", "Quadrado", square())])
    archive = tmp_path / "municipios.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for part in sorted(shp.parent.glob("municipios.*")):
            if part != archive:
                zipped.write(part, f"../{part.name}")
    with pytest.raises(CommandError, match=r"o ZIP contém um caminho inseguro \('\.\./"):
        run_import(archive)
    assert not Municipality.objects.filter(ibge_code="3599901").exists()


# --- one municipality of a file (boundaries.read_boundary, the onboarding's reader) ---------


def test_read_boundary_judges_only_the_feature_asked_for(one_bow_tie):
    """Another municipality's bad polygon in the state's file is not this one's problem."""
    boundary = boundaries.read_boundary(one_bow_tie, "3599901")
    assert (boundary.ibge_code, boundary.name, boundary.uf) == ("3599901", "Quadrado", "SP")
    assert boundary.geometry.geom_type == "MultiPolygon" and boundary.geometry.srid == 4326
    assert boundary.source == "municipios.geojson" and boundary.repaired is None
    assert not Municipality.objects.exists()  # it only reads


def test_read_boundary_refuses_the_invalid_one_unless_fixed(one_bow_tie):
    with pytest.raises(boundaries.BoundaryImportError) as refused:
        boundaries.read_boundary(one_bow_tie, "3599902")
    assert refused.value.code == "boundary_invalid"
    assert "geometria inválida" in refused.value.message
    fixed = boundaries.read_boundary(one_bow_tie, "3599902", fix_invalid=True)
    assert fixed.repaired and fixed.geometry.valid


def test_read_boundary_says_when_the_code_is_missing_or_repeated(tmp_path):
    path = write(
        tmp_path / "dois.geojson",
        [("3599901", "Um", square()), ("3599901", "Outro", square(LON + 0.1))],
    )
    with pytest.raises(boundaries.BoundaryImportError) as missing:
        boundaries.read_boundary(path, "3599903")
    assert missing.value.code == "boundary_missing"
    assert "não tem o limite do município 3599903 (coluna 'cd_mun', 2 feição(ões))" in (
        missing.value.message
    )
    with pytest.raises(boundaries.BoundaryImportError) as repeated:
        boundaries.read_boundary(path, "3599901")
    assert "tem 2 feições com o código 3599901 (feições 1, 2)" in repeated.value.message
