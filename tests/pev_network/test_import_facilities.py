"""`manage.py import_facilities`: formats, CRS, attribute mapping, points, refusal, dry run."""

from __future__ import annotations

import datetime
import io
import math
import zipfile
from decimal import Decimal
from pathlib import Path

import geopandas as gpd
import pytest
from django.contrib.gis.geos import MultiPolygon as GEOSMultiPolygon
from django.contrib.gis.geos import Polygon as GEOSPolygon
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from pyproj import Transformer
from shapely.geometry import Point, Polygon

from pev_network.models import FacilityLicense, ReceivingFacility, default_accepted_classes
from pev_network.services import save_municipality

pytestmark = pytest.mark.django_db

# Around Guaratinguetá/SP, in WGS 84 lon/lat.
LON, LAT = -45.19, -22.81
SIDE = 0.0005  # ~50 m


def square(lon: float = LON, lat: float = LAT, side: float = SIDE) -> Polygon:
    return Polygon([(lon, lat), (lon + side, lat), (lon + side, lat + side), (lon, lat + side)])


def bow_tie(lon: float = LON, lat: float = LAT, side: float = SIDE) -> Polygon:
    # Two triangles touching at the centre: the ring crosses itself.
    return Polygon([(lon, lat), (lon + side, lat + side), (lon + side, lat), (lon, lat + side)])


def write(tmp_path: Path, name: str, records: list[dict], geometries: list, crs=4326) -> Path:
    path = tmp_path / name
    gpd.GeoDataFrame(records, geometry=geometries, crs=crs).to_file(path, engine="pyogrio")
    return path


def zip_shapefile(shp: Path, zip_path: Path) -> Path:
    with zipfile.ZipFile(zip_path, "w") as archive:
        for part in shp.parent.glob(f"{shp.stem}.*"):
            archive.write(part, part.name)
    return zip_path


def run_import(path: Path, *args: str, stderr: io.StringIO | None = None) -> str:
    out = io.StringIO()
    call_command("import_facilities", str(path), *args, stdout=out, stderr=stderr or io.StringIO())
    return out.getvalue()


def refusal(path: Path, *args: str) -> str:
    with pytest.raises(CommandError) as exc:
        run_import(path, *args)
    return str(exc.value)


def pev(code: str, **extra) -> dict:
    return {"code": code, "kind": "PEV", "name": f"PEV {code}", **extra}


def test_geojson_import_creates_facilities_with_kind_default_classes(tmp_path):
    path = write(
        tmp_path,
        "rede.geojson",
        [pev("PEV-01"), {"code": "ATR-01", "kind": "LANDFILL", "name": "Aterro"}],
        [square(), square(LON + 0.01)],
    )
    out = run_import(path)

    pev_01 = ReceivingFacility.objects.get(code="PEV-01")
    assert pev_01.accepted_classes == default_accepted_classes("PEV")
    assert ReceivingFacility.objects.get(code="ATR-01").accepted_classes == ["A"]
    assert pev_01.area.geom_type == "MultiPolygon" and pev_01.area.srid == 4326
    assert "Feições lidas: 2" in out and "Áreas criadas: 2" in out


def test_accepted_classes_column_overrides_the_kind_default(tmp_path):
    path = write(
        tmp_path, "rede.geojson", [pev("PEV-01", accepted_classes="a; Volumosos")], [square()]
    )
    run_import(path)
    assert ReceivingFacility.objects.get().accepted_classes == ["A", "VOLUMOSO"]


def test_gpkg_in_sirgas_utm_23s_is_reprojected_to_wgs84(tmp_path):
    # SIRGAS 2000 / UTM 23S metres, a 50 m square in Guaratinguetá.
    e, n = 480_000.0, 7_477_000.0
    path = write(
        tmp_path,
        "rede.gpkg",
        [pev("PEV-01")],
        [Polygon([(e, n), (e + 50, n), (e + 50, n + 50), (e, n + 50)])],
        crs="EPSG:31983",
    )
    run_import(path)

    lon, lat = Transformer.from_crs("EPSG:31983", "EPSG:4326", always_xy=True).transform(e, n)
    vertices = ReceivingFacility.objects.get().area.coords[0][0]
    assert min(math.hypot(x - lon, y - lat) for x, y in vertices) < 1e-6


def test_zipped_shapefile_is_read_directly(tmp_path):
    (tmp_path / "shp").mkdir()
    shp = write(
        tmp_path / "shp", "pevs.shp", [pev("PEV-01"), pev("PEV-02")], [square(), square(LON + 0.01)]
    )
    run_import(zip_shapefile(shp, tmp_path / "pevs.zip"))
    assert sorted(ReceivingFacility.objects.values_list("code", flat=True)) == ["PEV-01", "PEV-02"]


def test_field_option_maps_the_files_column_names(tmp_path):
    path = write(
        tmp_path,
        "rede.geojson",
        [{"COD": "E-1", "TIPO": "Ecoponto", "NOME": "Ecoponto Centro", "OPERADORA": "SAAEG"}],
        [square()],
    )
    run_import(
        path, "--field", "code=COD", "--field", "kind=TIPO", "--field", "name=NOME",
        "--field", "operator=OPERADORA",
    )  # fmt: skip
    facility = ReceivingFacility.objects.get(code="E-1")
    assert (facility.kind, facility.name, facility.operator) == ("PEV", "Ecoponto Centro", "SAAEG")


def test_field_option_naming_a_missing_column_is_refused(tmp_path):
    path = write(tmp_path, "rede.geojson", [pev("PEV-01")], [square()])
    message = refusal(path, "--field", "name=NOME")
    assert "campo 'name'" in message and "'NOME'" in message
    assert not ReceivingFacility.objects.exists()


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("ecoponto", "PEV"),
        ("Transbordo", "ATT"),
        ("Área de Reciclagem", "RECYCLING"),
        ("ATERRO DE RCC", "LANDFILL"),
        # Open data writes the category in its own words: a kind named among them is read.
        ("Mini Ecoponto", "PEV"),
        ("Ecoponto de Entulho", "PEV"),
        ("ECOPONTO - Vila Nova", "PEV"),
        ("Usina de Reciclagem de Entulho", "RECYCLING"),
        ("Área de Transbordo e Triagem (ATT) Norte", "ATT"),
    ],
)
def test_portuguese_kind_names_are_accepted(tmp_path, value, kind):
    path = write(tmp_path, "rede.geojson", [{"code": "X", "kind": value, "name": "X"}], [square()])
    run_import(path)
    assert ReceivingFacility.objects.get().kind == kind


@pytest.mark.parametrize("value", ["Ecoponto e Aterro", "Pontos Viciados", "Entulho"])
def test_a_category_naming_no_kind_or_two_is_refused_with_the_override(tmp_path, value):
    path = write(tmp_path, "rede.geojson", [{"code": "X", "kind": value, "name": "X"}], [square()])
    message = refusal(path)
    assert f"tipo desconhecido '{value}'" in message
    # The refusal names the options that give the whole file one kind, and they work.
    assert "--kind" in message and "--field kind=" in message
    assert ReceivingFacility.objects.count() == 0
    run_import(path, "--kind", "ATT", "--field", "kind=")
    assert ReceivingFacility.objects.get().kind == "ATT"


def test_kind_option_sets_the_kind_of_a_file_without_kind_column(tmp_path):
    path = write(tmp_path, "rede.geojson", [{"code": "X", "name": "X"}], [square()])
    run_import(path, "--kind", "ATERRO")
    assert ReceivingFacility.objects.get().kind == "LANDFILL"


def test_file_without_kind_column_or_kind_option_is_refused(tmp_path):
    path = write(tmp_path, "rede.geojson", [{"code": "X", "name": "X"}], [square()])
    assert "campo 'kind'" in refusal(path)


def test_point_layer_without_buffer_is_refused(tmp_path):
    path = write(tmp_path, "pontos.geojson", [pev("PEV-01")], [Point(LON, LAT)])
    message = refusal(path)
    assert "--buffer-m" in message
    assert not ReceivingFacility.objects.exists()


def test_points_with_buffer_30_m_become_circles_of_30_m_radius(tmp_path):
    path = write(
        tmp_path,
        "pontos.geojson",
        [pev("PEV-01"), pev("PEV-02")],
        # The second one far north (Roraima, another UTM zone): the radius is metres anywhere.
        [Point(LON, LAT), Point(-60.67, 2.82)],
    )
    run_import(path, "--buffer-m", "30")

    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT code, ST_Area(area::geography), ST_GeometryType(area) "
            f"FROM {ReceivingFacility._meta.db_table} ORDER BY code"
        )
        rows = cursor.fetchall()
    assert len(rows) == 2
    for _code, area_m2, geom_type in rows:
        assert geom_type == "ST_MultiPolygon"
        assert area_m2 == pytest.approx(math.pi * 30**2, rel=0.02)


def test_file_with_bad_features_is_refused_whole_and_lists_each_problem(tmp_path):
    path = write(
        tmp_path,
        "rede.geojson",
        [
            pev("PEV-01"),
            pev("PEV-02"),
            {"code": "PEV-03", "kind": "XYZ", "name": "PEV 3"},
            pev(
                "PEV-04",
                license_number="LO-4",
                license_issuer="CETESB",
                license_valid_from="2024-31-12",
            ),
        ],
        [square(), bow_tie(LON + 0.01), square(LON + 0.02), square(LON + 0.03)],
    )
    message = refusal(path)

    assert ReceivingFacility.objects.count() == 0
    assert FacilityLicense.objects.count() == 0
    lines = message.splitlines()
    assert any(
        line.startswith("feição 2 (código PEV-02), campo 'geometry': geometria inválida")
        and "auto-interseção" in line
        for line in lines
    )
    assert (
        "feição 3 (código PEV-03), campo 'kind': tipo desconhecido 'XYZ' "
        "(use PEV, ATT, RECYCLING ou LANDFILL, ou use --kind TIPO com --field kind= para dar "
        "um só tipo ao arquivo todo)"
    ) in lines
    assert any(
        line.startswith("feição 4 (código PEV-04), campo 'license_valid_from': data inválida")
        for line in lines
    )
    assert not any(line.startswith("feição 1") for line in lines)


def test_dates_in_brazilian_format_and_portuguese_license_status_are_read(tmp_path):
    path = write(
        tmp_path,
        "rede.geojson",
        [
            pev(
                "PEV-01",
                license_number="LO-1/2024",
                license_issuer="CETESB",
                license_valid_from="15/01/2024",
                license_valid_until="2028-12-31",
                license_status="Suspensa",
                license_status_since="01/09/2026",
            )
        ],
        [square()],
    )
    run_import(path)
    license_ = FacilityLicense.objects.get()
    assert license_.facility.code == "PEV-01"
    assert (license_.valid_from, license_.valid_until) == (
        datetime.date(2024, 1, 15),
        datetime.date(2028, 12, 31),
    )
    assert (license_.status, license_.status_since) == ("SUSPENDED", datetime.date(2026, 9, 1))


def test_license_number_without_issuer_and_start_is_refused(tmp_path):
    path = write(tmp_path, "rede.geojson", [pev("PEV-01", license_number="LO-1")], [square()])
    message = refusal(path)
    assert "feição 1 (código PEV-01), campo 'license_issuer'" in message
    assert "feição 1 (código PEV-01), campo 'license_valid_from'" in message


def test_suspended_license_without_date_is_refused(tmp_path):
    license_ = {
        "license_number": "LO-1",
        "license_issuer": "CETESB",
        "license_valid_from": "2024-01-01",
        "license_status": "CASSADA",
    }
    path = write(tmp_path, "rede.geojson", [pev("PEV-01", **license_)], [square()])
    assert "campo 'license_status_since'" in refusal(path)


def test_feature_without_name_is_refused(tmp_path):
    path = write(
        tmp_path,
        "rede.geojson",
        [pev("PEV-01"), {"code": "PEV-02", "kind": "PEV", "name": ""}],
        [square(), square(LON + 0.01)],
    )
    assert "feição 2 (código PEV-02), campo 'name': nome ausente" in refusal(path)
    assert not ReceivingFacility.objects.exists()


def test_shapefile_without_prj_is_refused(tmp_path):
    shp = write(tmp_path, "pevs.shp", [pev("PEV-01")], [square(480_000, 7_477_000, 50)], crs=31983)
    shp.with_suffix(".prj").unlink()
    message = refusal(shp)
    assert "SRC" in message and "ausente" in message
    assert not ReceivingFacility.objects.exists()


@pytest.mark.filterwarnings("ignore:'crs' was not provided")
def test_geopackage_layer_without_srs_is_refused(tmp_path):
    path = tmp_path / "rede.gpkg"
    gpd.GeoDataFrame([pev("PEV-01")], geometry=[square()]).to_file(path, engine="pyogrio")
    assert "SRC" in refusal(path)


def test_dry_run_validates_everything_and_writes_nothing(tmp_path):
    path = write(
        tmp_path, "rede.geojson", [pev("PEV-01"), pev("PEV-02")], [square(), square(LON + 0.01)]
    )
    out = run_import(path, "--dry-run")

    assert not ReceivingFacility.objects.exists()
    assert "Áreas a criar: 2" in out
    assert "nada foi gravado (--dry-run)" in out


def test_dry_run_still_refuses_a_bad_file(tmp_path):
    path = write(tmp_path, "rede.geojson", [{"code": "X", "kind": "XYZ", "name": "X"}], [square()])
    assert "tipo desconhecido 'XYZ'" in refusal(path, "--dry-run")


def test_fix_invalid_repairs_a_bow_tie_and_reports_it(tmp_path):
    path = write(tmp_path, "rede.geojson", [pev("PEV-01")], [bow_tie()])
    out = run_import(path, "--fix-invalid")

    area = ReceivingFacility.objects.get(code="PEV-01").area
    assert area.valid
    assert len(area) == 2  # the two triangles
    assert "Geometrias corrigidas: 1" in out
    assert "feição 1 (código PEV-01): geometria corrigida com make_valid: auto-interseção" in out
    assert "1 → 2 polígono(s)" in out


def test_reimport_updates_by_code_instead_of_duplicating(tmp_path):
    license_ = {
        "license_number": "LO-1",
        "license_issuer": "CETESB",
        "license_valid_from": "2024-01-01",
    }
    first = write(tmp_path, "v1.geojson", [pev("PEV-01", **license_)], [square()])
    run_import(first)
    second = write(
        tmp_path,
        "v2.geojson",
        [
            {
                **pev("PEV-01", **license_),
                "name": "PEV renomeado",
                "license_valid_until": "2030-01-01",
            }
        ],
        [square(LON + 0.001)],
    )
    out = run_import(second)

    facility = ReceivingFacility.objects.get()
    assert facility.name == "PEV renomeado"
    assert facility.area.extent[0] == pytest.approx(LON + 0.001)
    license_row = FacilityLicense.objects.get()
    assert license_row.facility == facility
    assert license_row.valid_until == datetime.date(2030, 1, 1)
    assert "Áreas atualizadas: 1" in out and "Áreas criadas: 0" in out


def test_repeated_code_in_one_file_is_refused(tmp_path):
    path = write(tmp_path, "rede.geojson", [pev("PEV-01"), pev("PEV-01")], [square(), square()])
    assert "feição 2 (código PEV-01), campo 'code': código repetido" in refusal(path)


def test_municipality_is_the_one_whose_boundary_holds_the_area(tmp_path):
    boundary = GEOSMultiPolygon(GEOSPolygon.from_bbox((LON - 0.1, LAT - 0.1, LON + 0.1, LAT + 0.1)))
    boundary.srid = 4326
    guara, _ = save_municipality("3518404", "Guaratinguetá", "SP", boundary)
    path = write(
        tmp_path,
        "rede.geojson",
        [pev("DENTRO"), pev("FORA")],
        [square(), square(LON + 1)],
    )
    run_import(path)
    assert ReceivingFacility.objects.get(code="DENTRO").municipality == guara
    assert ReceivingFacility.objects.get(code="FORA").municipality is None


def test_capacity_accepts_brazilian_decimal_comma(tmp_path):
    path = write(tmp_path, "rede.geojson", [pev("PEV-01", capacity_m3_per_day="12,5")], [square()])
    run_import(path)
    assert ReceivingFacility.objects.get().capacity_m3_per_day == Decimal("12.50")


def test_progress_bar_goes_to_stderr_on_a_terminal(tmp_path):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    path = write(tmp_path, "rede.geojson", [pev("PEV-01")], [square()])
    err = Terminal()
    out = run_import(path, stderr=err)
    assert "gravando" in err.getvalue() and "100%" in err.getvalue()
    assert "100%" not in out


def test_exported_geojson_imports_back_unchanged(tmp_path):
    license_ = {
        "license_number": "LO-1",
        "license_issuer": "CETESB",
        "license_valid_from": "2024-01-01",
    }
    path = write(
        tmp_path,
        "rede.geojson",
        [pev("PEV-01", capacity_m3_per_day=10, **license_), pev("PEV-02", accepted_classes="A")],
        [square(), square(LON + 0.01)],
    )
    exported = tmp_path / "exportado.geojson"
    with transaction.atomic():
        run_import(path)
        before = list(ReceivingFacility.objects.values("code", "kind", "name", "accepted_classes"))
        call_command("export_facilities", str(exported), stdout=io.StringIO())
        transaction.set_rollback(True)  # back to an empty network

    run_import(exported)
    after = list(ReceivingFacility.objects.values("code", "kind", "name", "accepted_classes"))
    assert after == before
    assert FacilityLicense.objects.get().facility.code == "PEV-01"


def test_license_of_another_facility_is_not_moved(tmp_path):
    license_ = {
        "license_number": "LO-1",
        "license_issuer": "CETESB",
        "license_valid_from": "2024-01-01",
    }
    run_import(write(tmp_path, "v1.geojson", [pev("PEV-01", **license_)], [square()]))
    message = refusal(write(tmp_path, "v2.geojson", [pev("PEV-09", **license_)], [square()]))
    assert "feição 1 (código PEV-09), campo 'license_number'" in message
    assert "já pertence a outra área (código PEV-01)" in message
    assert list(ReceivingFacility.objects.values_list("code", flat=True)) == ["PEV-01"]


def test_geopackage_with_two_layers_needs_the_layer_option(tmp_path):
    path = write(tmp_path, "rede.gpkg", [pev("PEV-01")], [square()])
    gpd.GeoDataFrame([pev("ATT-01")], geometry=[square()], crs=4326).to_file(
        path, layer="outra", engine="pyogrio"
    )
    assert "--layer" in refusal(path)
    run_import(path, "--layer", "outra")
    assert ReceivingFacility.objects.get().code == "ATT-01"


def test_polygons_with_z_are_stored_flat(tmp_path):
    polygon_z = Polygon([(x, y, 540.0) for x, y in square().exterior.coords])
    run_import(write(tmp_path, "rede.geojson", [pev("PEV-01")], [polygon_z]))
    assert not ReceivingFacility.objects.get().area.hasz


# --- column names as Brazilian open data writes them ---------------------------------------------


def test_open_data_column_names_are_recognised_and_reported(tmp_path):
    """A municipal registry of ecopontos as published: Portuguese, accented, mixed case, with
    columns of its own that the import leaves alone and names."""
    path = write(
        tmp_path,
        "ecopontos.geojson",
        [
            {
                "OBJECTID": 7,
                "Código": "ECO-07",
                "Nome do Ecoponto": "Ecoponto Pedregulho",
                "Categoria": "Ecoponto",
                "Endereço": "Rua Exemplo, 100",
                "Bairro": "Pedregulho",
                "Responsável": "Secretaria de Meio Ambiente",
                "Nº Licença": "LO-7/2025",
                "ÓRGÃO EMISSOR": "CETESB",
                "Data de Emissão": "10/02/2025",
                "VALIDADE": "10/02/2029",
                "Situação": "Em funcionamento",
            }
        ],
        [square()],
    )
    out = run_import(path)
    facility = ReceivingFacility.objects.get(code="ECO-07")
    assert (facility.kind, facility.name) == ("PEV", "Ecoponto Pedregulho")
    assert facility.address == "Rua Exemplo, 100"
    assert facility.operator == "Secretaria de Meio Ambiente"
    license_ = FacilityLicense.objects.get(facility=facility)
    assert (license_.number, license_.issuer, license_.status) == ("LO-7/2025", "CETESB", "ACTIVE")
    assert (license_.valid_from, license_.valid_until) == (
        datetime.date(2025, 2, 10),
        datetime.date(2029, 2, 10),
    )
    lines = out.splitlines()
    for expected in (
        "  code <- 'Código' (sinônimo)",
        "  kind <- 'Categoria' (sinônimo)",
        "  name <- 'Nome do Ecoponto' (sinônimo)",
        "  operator <- 'Responsável' (sinônimo)",
        "  address <- 'Endereço' (sinônimo)",
        "  license_number <- 'Nº Licença' (sinônimo)",
        "  license_issuer <- 'ÓRGÃO EMISSOR' (sinônimo)",
        "  license_valid_from <- 'Data de Emissão' (sinônimo)",
        "  license_valid_until <- 'VALIDADE' (sinônimo)",
        "  license_status <- 'Situação' (sinônimo)",
        "Colunas ignoradas: 'OBJECTID', 'Bairro'",
    ):
        assert expected in lines, (expected, out)


@pytest.mark.parametrize(
    ("columns", "kind_column", "name_column"),
    [
        (("Tipo", "Nome"), "Tipo", "Nome"),
        (("TIPO", "NOME"), "TIPO", "NOME"),
        (("tipo", "nome_ecoponto"), "tipo", "nome_ecoponto"),
        (("CATEGORIA", "NOME_PEV"), "CATEGORIA", "NOME_PEV"),
        (("Classificação", "Denominação"), "Classificação", "Denominação"),
    ],
)
def test_kind_and_name_columns_in_any_case_and_accent(tmp_path, columns, kind_column, name_column):
    kind, name = columns
    path = write(
        tmp_path, "rede.geojson", [{kind: "Área de Transbordo", name: "ATT Sul"}], [square()]
    )
    out = run_import(path)
    facility = ReceivingFacility.objects.get()
    assert (facility.kind, facility.name) == ("ATT", "ATT Sul")
    assert f"  kind <- '{kind_column}' (sinônimo)" in out
    assert f"  name <- '{name_column}' (sinônimo)" in out


def test_our_own_column_name_wins_over_an_alias(tmp_path):
    path = write(
        tmp_path,
        "rede.geojson",
        [{"kind": "PEV", "name": "Nosso nome", "Nome": "O nome deles"}],
        [square()],
    )
    out = run_import(path)
    assert ReceivingFacility.objects.get().name == "Nosso nome"
    assert "  name <- 'name' (mesmo nome)" in out
    assert "Colunas ignoradas: 'Nome'" in out


def test_field_option_still_overrides_the_aliases(tmp_path):
    path = write(
        tmp_path,
        "rede.geojson",
        [{"Tipo": "PEV", "Nome": "PEV 3", "Denominação": "Ecoponto da Vila"}],
        [square()],
    )
    out = run_import(path, "--field", "name=denominacao")
    assert ReceivingFacility.objects.get().name == "Ecoponto da Vila"
    assert "  name <- 'Denominação' (--field)" in out
    assert "Colunas ignoradas: 'Nome'" in out


def test_a_status_column_that_is_not_the_licence_can_be_left_unread(tmp_path):
    path = write(
        tmp_path,
        "rede.geojson",
        [{"Tipo": "PEV", "Nome": "Ecoponto Novo", "Situação": "Em implantação"}],
        [square()],
    )
    message = refusal(path)
    assert "campo 'license_status' (coluna 'Situação')" in message
    assert "situação desconhecida 'Em implantação'" in message
    assert "--field license_status=" in message
    out = run_import(path, "--field", "license_status=")
    assert ReceivingFacility.objects.get().name == "Ecoponto Novo"
    assert "license_status <-" not in out
    assert "Colunas ignoradas: 'Situação'" in out


def test_a_file_without_a_name_column_lists_its_columns(tmp_path):
    path = write(tmp_path, "rede.geojson", [{"Tipo": "PEV", "Bairro": "Centro"}], [square()])
    message = refusal(path)
    assert "campo 'name'" in message
    assert "colunas do arquivo: Tipo, Bairro" in message
    assert "--field name=COLUNA" in message


def test_the_aliases_belong_to_one_field_each():
    from pev_network.facility_fields import COLUMN_ALIASES, FIELDS
    from pev_network.geofile import column_key as _column_key

    seen: dict[str, str] = {ours: ours for ours in FIELDS}
    for ours, aliases in COLUMN_ALIASES.items():
        for alias in aliases:
            assert _column_key(alias) == alias, alias  # written as they are compared
            assert alias not in seen, (alias, ours, seen.get(alias))
            seen[alias] = ours


# --- CSV with latitude/longitude columns, as municipal portals publish ecopontos ---------------

ECOPONTOS_CSV = (
    "Nome;Endereço;Bairro;Latitude;Longitude;Situação\n"
    "Ecoponto Pedregulho;Rua Exemplo, 100;Pedregulho;-22,810000;-45,190000;Em funcionamento\n"
    "Ecoponto Beira Rio;Av. Beira Rio, 5;Centro;-22,800000;-45,180000;Em funcionamento\n"
)


def test_csv_with_latitude_and_longitude_columns_imports_points_as_circles(tmp_path):
    path = tmp_path / "ecopontos.csv"
    path.write_bytes(ECOPONTOS_CSV.encode("latin-1"))  # the "CSV" of Excel in Portuguese
    out = run_import(path, "--kind", "ECOPONTO", "--buffer-m", "30")
    facilities = {f.name: f for f in ReceivingFacility.objects.all()}
    assert sorted(facilities) == ["Ecoponto Beira Rio", "Ecoponto Pedregulho"]
    pedregulho = facilities["Ecoponto Pedregulho"]
    assert (pedregulho.kind, pedregulho.address) == ("PEV", "Rua Exemplo, 100")
    centre = pedregulho.area.centroid
    assert math.isclose(centre.x, -45.19, abs_tol=1e-5)
    assert math.isclose(centre.y, -22.81, abs_tol=1e-5)
    lines = out.splitlines()
    assert "Coordenadas: longitude <- 'Longitude', latitude <- 'Latitude' (EPSG:4326)" in lines
    assert "  name <- 'Nome' (sinônimo)" in lines
    assert "  address <- 'Endereço' (sinônimo)" in lines
    assert "Colunas ignoradas: 'Bairro'" in lines


def test_csv_points_still_need_a_buffer(tmp_path):
    path = tmp_path / "ecopontos.csv"
    path.write_text(ECOPONTOS_CSV.replace(";", ",").replace("-22,8", "-22.8").replace(
        "-45,1", "-45.1").replace("Rua Exemplo, 100", '"Rua Exemplo, 100"').replace(
        "Av. Beira Rio, 5", '"Av. Beira Rio, 5"'))  # fmt: skip
    message = refusal(path, "--kind", "PEV")
    assert "--buffer-m" in message
    assert not ReceivingFacility.objects.exists()


def test_csv_with_a_bad_coordinate_names_the_row_and_column(tmp_path):
    path = tmp_path / "ecopontos.csv"
    path.write_text(ECOPONTOS_CSV.replace("-45,180000", "-45,18O"))
    message = refusal(path, "--kind", "PEV", "--buffer-m", "30")
    assert "feição 2, campo 'geometry' (coluna 'Longitude'): coordenada inválida '-45,18O'" in (
        message
    )
    assert "geometria ausente" not in message  # said once, precisely
    assert not ReceivingFacility.objects.exists()


def test_csv_without_coordinates_or_geometry_is_refused(tmp_path):
    path = tmp_path / "ecopontos.csv"
    path.write_text("Nome;Endereço\nEcoponto;Rua A, 1\n")
    message = refusal(path, "--kind", "PEV")
    assert "não tem geometria" in message and "latitude" in message


def test_csv_in_utm_with_its_prj_is_reprojected_and_without_it_refused(tmp_path):
    from pyproj import CRS

    x, y = Transformer.from_crs(4326, 31983, always_xy=True).transform(LON, LAT)
    path = tmp_path / "ecopontos.csv"
    path.write_text(f"Nome;Coord X;Coord Y\nEcoponto UTM;{x:.2f};{y:.2f}\n".replace(".", ","))
    message = refusal(path, "--kind", "PEV", "--buffer-m", "30")
    assert "(coluna 'Coord X'): coordenada" in message and "fora de -180 a 180 graus" in message
    (tmp_path / "ecopontos.prj").write_text(CRS.from_epsg(31983).to_wkt())
    out = run_import(path, "--kind", "PEV", "--buffer-m", "30")
    centre = ReceivingFacility.objects.get().area.centroid
    assert math.isclose(centre.x, LON, abs_tol=1e-5) and math.isclose(centre.y, LAT, abs_tol=1e-5)
    assert "Coordenadas: longitude <- 'Coord X', latitude <- 'Coord Y' (EPSG:31983)" in out
