"""The receiving network's spatial and legal rules, against real PostGIS."""

import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from pev_network import services
from pev_network.boundaries import import_municipalities
from pev_network.models import (
    FacilityKind,
    FacilityLicense,
    Municipality,
    MunicipalParameters,
    ReceivingFacility,
    WasteClass,
    in_period,
    licensed_sql,
    valid_on_sql,
)
from tests.builders import (
    ORIGIN,
    licensed_facility,
    multi,
    municipality,
    offset,
    point,
    set_parameters,
    square,
)

pytestmark = pytest.mark.django_db
FIXTURES = Path(settings.BASE_DIR) / "fixtures"
D = datetime.date


# --- facility areas: covers, tolerance, multipolygons -------------------------------------


def test_point_on_fence_counts_as_inside():
    facility = licensed_facility(FacilityKind.ATT, square(*ORIGIN, 100))
    # The square's eastern edge, halfway up: on the fence, not strictly inside.
    east_lon, mid_lat = offset(*ORIGIN, 100, 50)
    on_edge = point(east_lon, mid_lat)
    assert services.point_within_facility(on_edge, facility, tolerance_m=0)
    with connection.cursor() as cursor:  # ...where ST_Contains would have said no
        cursor.execute(
            "SELECT ST_Contains(area, %s::geometry) FROM pev_network_receivingfacility "
            "WHERE id = %s",
            [on_edge.ewkt, facility.pk],
        )
        assert cursor.fetchone()[0] is False


def test_gps_tolerance_accepts_a_point_just_outside():
    facility = licensed_facility(FacilityKind.ATT, square(*ORIGIN, 100))
    five_m_out = point(*offset(*ORIGIN, 105, 50))
    assert not services.point_within_facility(five_m_out, facility, tolerance_m=0)
    assert services.point_within_facility(five_m_out, facility, tolerance_m=10)
    assert not services.point_within_facility(five_m_out, facility, tolerance_m=3)


def test_multipolygon_facility_covers_both_parts_but_not_the_road_between():
    west = square(*ORIGIN, 50)
    east = square(*offset(*ORIGIN, 80, 0), 50)  # a 30 m road between the two parts
    facility = licensed_facility(FacilityKind.RECYCLING, multi(west, east))
    assert services.point_within_facility(point(*offset(*ORIGIN, 100, 25)), facility)
    assert services.point_within_facility(point(*offset(*ORIGIN, 25, 25)), facility)
    assert not services.point_within_facility(point(*offset(*ORIGIN, 65, 25)), facility)


def test_accepted_classes_default_by_kind():
    landfill = licensed_facility(FacilityKind.LANDFILL, square(*ORIGIN, 100))
    pev = licensed_facility(FacilityKind.PEV, square(*offset(*ORIGIN, 500, 0), 30))
    assert landfill.accepted_classes == [WasteClass.A]
    assert WasteClass.VOLUMOSO in pev.accepted_classes
    assert WasteClass.D not in pev.accepted_classes


# --- licenses on a date, at the boundary days ----------------------------------------------


def licensed_ids(day):
    return set(ReceivingFacility.objects.licensed_on(day).values_list("pk", flat=True))


def test_license_valid_on_its_first_and_last_day_only():
    facility = licensed_facility(
        FacilityKind.ATT, square(*ORIGIN, 100), valid_from=D(2026, 1, 1), valid_until=D(2026, 6, 30)
    )
    assert facility.pk not in licensed_ids(D(2025, 12, 31))
    assert facility.pk in licensed_ids(D(2026, 1, 1))
    assert facility.pk in licensed_ids(D(2026, 6, 30))
    assert facility.pk not in licensed_ids(D(2026, 7, 1))


def test_suspension_takes_effect_on_its_day_and_not_before():
    facility = licensed_facility(
        FacilityKind.ATT,
        square(*ORIGIN, 100),
        status=FacilityLicense.Status.SUSPENDED,
        status_since=D(2026, 9, 1),
    )
    assert facility.pk in licensed_ids(D(2026, 8, 31))
    assert facility.pk not in licensed_ids(D(2026, 9, 1))
    license_ = facility.licenses.get()
    assert license_.is_valid_on(D(2026, 8, 31)) and not license_.is_valid_on(D(2026, 9, 1))


def test_revoked_license_counts_for_no_later_day():
    facility = licensed_facility(
        FacilityKind.PEV,
        square(*ORIGIN, 30),
        status=FacilityLicense.Status.REVOKED,
        status_since=D(2025, 1, 1),
    )
    assert facility.pk not in licensed_ids(D(2026, 11, 30))


def test_license_without_end_date_is_valid_from_its_start():
    facility = licensed_facility(FacilityKind.ATT, square(*ORIGIN, 100), valid_until=None)
    assert facility.pk in licensed_ids(D(2090, 1, 1))


# Licenses around their boundary days: the period's ends, open-ended, suspended and revoked on
# a day, suspended before the period starts.
LICENSE_CASES = [  # (valid_from, valid_until, status, status_since)
    (D(2026, 1, 1), D(2026, 6, 30), "ACTIVE", None),
    (D(2026, 1, 1), None, "ACTIVE", None),
    (D(2026, 1, 1), None, "SUSPENDED", D(2026, 3, 1)),
    (D(2026, 1, 1), D(2026, 6, 30), "REVOKED", D(2026, 6, 30)),
    (D(2026, 3, 1), None, "SUSPENDED", D(2026, 1, 1)),
]
LICENSE_DAYS = [D(2025, 12, 31), D(2026, 1, 1), D(2026, 2, 28), D(2026, 3, 1), D(2026, 6, 29),
                D(2026, 6, 30), D(2026, 7, 1)]  # fmt: skip


def test_license_validity_reads_the_same_in_sql_queryset_and_memory():
    licenses = [
        licensed_facility(
            FacilityKind.ATT,
            square(*offset(*ORIGIN, 300 * i, 0), 100),
            valid_from=valid_from,
            valid_until=valid_until,
            status=status,
            status_since=since,
        ).licenses.get()
        for i, (valid_from, valid_until, status, since) in enumerate(LICENSE_CASES)
    ]
    seen = set()
    for day in LICENSE_DAYS:
        in_memory = {lic.pk for lic in licenses if lic.is_valid_on(day)}
        queryset = set(FacilityLicense.objects.valid_on(day).values_list("pk", flat=True))
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT l.id FROM pev_network_facilitylicense l WHERE {valid_on_sql('l')}",
                {"day": day},
            )
            sql = {row[0] for row in cursor.fetchall()}
            cursor.execute(
                f"SELECT f.id FROM pev_network_receivingfacility f WHERE {licensed_sql('f.id')}",
                {"day": day},
            )
            facilities = {row[0] for row in cursor.fetchall()}
        assert in_memory == queryset == sql, day
        assert facilities == set(
            ReceivingFacility.objects.licensed_on(day).values_list("pk", flat=True)
        )
        assert facilities == {lic.facility_id for lic in licenses if lic.pk in in_memory}
        assert all(
            in_period(lic.valid_from, lic.valid_until, day)
            for lic in licenses
            if lic.pk in in_memory
        )
        seen.add(frozenset(in_memory))
    assert len(seen) > 4  # the days tell the cases apart


def test_second_license_renews_after_the_first_expires():
    facility = licensed_facility(
        FacilityKind.ATT,
        square(*ORIGIN, 100),
        valid_from=D(2024, 1, 1),
        valid_until=D(2024, 12, 31),
    )
    FacilityLicense.objects.create(
        facility=facility, number="LO-2", issuer="CETESB", valid_from=D(2025, 1, 2)
    )
    assert facility.pk in licensed_ids(D(2024, 12, 31))
    assert facility.pk not in licensed_ids(D(2025, 1, 1))  # the gap day
    assert facility.pk in licensed_ids(D(2025, 1, 2))
    # One row per facility even when two licenses match (EXISTS, not a join).
    assert ReceivingFacility.objects.licensed_on(D(2025, 6, 1)).count() == 1


# --- nearest legal facility -----------------------------------------------------------------


@pytest.fixture
def small_network():
    town = municipality()
    pev = licensed_facility(
        FacilityKind.PEV, square(*offset(*ORIGIN, 200, 0), 30), "PEV perto", town
    )
    att = licensed_facility(FacilityKind.ATT, square(*offset(*ORIGIN, 1500, 0), 100), "ATT", town)
    landfill = licensed_facility(
        FacilityKind.LANDFILL, square(*offset(*ORIGIN, 0, 3000), 200), "Aterro", town
    )
    expired = licensed_facility(
        FacilityKind.PEV,
        square(*offset(*ORIGIN, 50, 0), 20),
        "PEV vencido",
        town,
        valid_until=D(2020, 12, 31),
    )
    return {"pev": pev, "att": att, "landfill": landfill, "expired": expired, "town": town}


def nearest_names(volume, waste_class=None):
    found = services.nearest_legal_facilities(
        point(*ORIGIN), Decimal(volume), waste_class, on=D(2026, 11, 30)
    )
    return [f.name for f in found]


def test_small_load_goes_to_the_nearest_pev(small_network):
    assert nearest_names("0.5") == ["PEV perto", "ATT", "Aterro"]


def test_large_load_is_not_sent_to_a_pev(small_network):
    assert nearest_names("3") == ["ATT", "Aterro"]


def test_exactly_one_cubic_metre_is_still_a_small_volume(small_network):
    # Art. 12 §1: "limitados ao volume de 01 (um) metro cúbico por descarga".
    assert "PEV perto" in nearest_names("1.000")
    assert "PEV perto" not in nearest_names("1.001")


def test_municipality_with_a_lower_limit_is_respected(small_network):
    set_parameters(small_network["town"], small_volume_limit_m3=Decimal("0.5"))
    assert "PEV perto" not in nearest_names("0.8")


def test_the_small_volume_limit_is_the_one_in_force_on_the_day_searched(small_network):
    # Lei 3.978/2007 art. 12 §1-2: the municipality lowers its limit from 01/12/2026 on.
    MunicipalParameters.objects.create(
        municipality=small_network["town"],
        valid_from=D(2026, 12, 1),
        small_volume_limit_m3=Decimal("0.5"),
    )
    assert "PEV perto" in nearest_names("0.8")  # on 30/11: the first set's 1 m³
    found = services.nearest_legal_facilities(point(*ORIGIN), Decimal("0.8"), on=D(2026, 12, 1))
    assert "PEV perto" not in [f.name for f in found]


def test_waste_class_filters_out_facilities_that_do_not_accept_it(small_network):
    assert nearest_names("3", WasteClass.B) == ["ATT"]
    assert nearest_names("3", WasteClass.D) == []


def test_nearest_gives_distance_in_metres_and_zero_inside(small_network):
    found = services.nearest_legal_facilities(
        point(*ORIGIN), Decimal("0.5"), on=D(2026, 11, 30), limit=1
    )
    assert found[0].name == "PEV perto"
    assert found[0].distance_m == pytest.approx(200, abs=2)
    inside = services.nearest_legal_facilities(
        point(*offset(*ORIGIN, 210, 10)), Decimal("0.5"), on=D(2026, 11, 30), limit=1
    )
    assert inside[0].distance_m == 0


def test_nearest_uses_the_knn_index(small_network):
    queryset = services.legal_destinations_by_distance(point(*ORIGIN), Decimal("3"))[:5]
    with connection.cursor() as cursor:
        # With four rows a scan and a sort are cheapest; forbid them to see that the ORDER BY
        # is the indexed expression, which the planner can walk in distance order at scale.
        cursor.execute("SET enable_seqscan = off; SET enable_sort = off")
        try:
            plan = queryset.explain()
        finally:
            cursor.execute("RESET enable_seqscan; RESET enable_sort")
    assert "Index Scan using pev_facility_area_geog_idx" in plan, plan
    assert "Order By: ((area)::geography <->" in plan


def test_negative_volume_is_refused(small_network):
    with pytest.raises(services.NetworkError, match="O volume não pode ser negativo.") as raised:
        services.nearest_legal_facilities(point(*ORIGIN), Decimal("-1"))
    assert raised.value.code == "volume_negative"


# --- municipalities: subdivided boundaries, lookup ---------------------------------------------


@pytest.fixture
def guaratingueta():
    import_municipalities(FIXTURES / "municipio_3518404_guaratingueta.geojson")
    return Municipality.objects.get(ibge_code="3518404")


def test_real_boundary_is_stored_subdivided(guaratingueta):
    assert guaratingueta.name == "Guaratinguetá" and guaratingueta.uf == "SP"
    assert guaratingueta.pieces.count() > 5
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT max(ST_NPoints(geom)) FROM pev_network_municipalitypiece "
            "WHERE municipality_id = %s",
            [guaratingueta.pk],
        )
        assert cursor.fetchone()[0] <= services.SUBDIVIDE_MAX_VERTICES + 1


def test_lookup_finds_the_municipality_of_the_city_centre(guaratingueta):
    assert services.municipality_id_at(point(-45.1925, -22.8164)) == guaratingueta.pk
    assert services.municipality_id_at(point(-46.63, -23.55)) is None  # São Paulo, not loaded


def test_lookup_on_pieces_agrees_with_the_whole_boundary(guaratingueta):
    # A grid across the bounding box, including points on internal edges of the pieces:
    # the subdivided lookup must say exactly what ST_Covers on the whole boundary says.
    xmin, ymin, xmax, ymax = guaratingueta.boundary.extent
    steps = 25
    with connection.cursor() as cursor:
        for i in range(steps + 1):
            for j in range(steps + 1):
                lon = xmin + (xmax - xmin) * i / steps
                lat = ymin + (ymax - ymin) * j / steps
                cursor.execute(
                    "SELECT ST_Covers(boundary, ST_SetSRID(ST_MakePoint(%s, %s), 4326)) "
                    "FROM pev_network_municipality WHERE id = %s",
                    [lon, lat, guaratingueta.pk],
                )
                covered = cursor.fetchone()[0]
                found = services.municipality_id_at(point(lon, lat)) == guaratingueta.pk
                assert found == covered, (lon, lat)


def test_point_on_a_boundary_vertex_counts_as_inside(guaratingueta):
    lon, lat = guaratingueta.boundary[0][0][10]
    assert services.municipality_id_at(point(lon, lat)) == guaratingueta.pk


def test_point_on_an_internal_edge_between_pieces_is_found(guaratingueta):
    with connection.cursor() as cursor:
        # A point on the shared edge of two pieces (inside the municipality, on no real border).
        cursor.execute(
            """
            SELECT ST_AsText(ST_LineInterpolatePoint(ST_LineMerge(shared), 0.5)) FROM (
                SELECT ST_Intersection(a.geom, b.geom) AS shared
                FROM pev_network_municipalitypiece a
                JOIN pev_network_municipalitypiece b ON a.id < b.id
                 AND a.municipality_id = b.municipality_id
                WHERE ST_Dimension(ST_Intersection(a.geom, b.geom)) = 1
                  AND GeometryType(ST_LineMerge(ST_Intersection(a.geom, b.geom))) = 'LINESTRING'
                LIMIT 1
            ) s
            """
        )
        wkt = cursor.fetchone()[0]
    lon, lat = (float(v) for v in wkt.removeprefix("POINT(").removesuffix(")").split())
    assert services.municipality_id_at(point(lon, lat)) == guaratingueta.pk


def test_all_645_sp_municipalities_load_and_islands_are_found():
    report = import_municipalities(FIXTURES / "sp_estado_municipios_645_tbrugz.geojson")
    assert report.created == 645
    assert Municipality.objects.filter(uf="SP").count() == 645
    # Ilhabela is all islands (a multipolygon after the repair noted in fixtures/README.md).
    ilhabela = services.municipality_at(point(-45.358, -23.816))
    assert ilhabela is not None and ilhabela.ibge_code == "3520400"
    assert services.municipality_at(point(-46.6333, -23.5505)).ibge_code == "3550308"


def test_reimport_keeps_legal_parameters_and_replaces_the_boundary(guaratingueta):
    set_parameters(guaratingueta, gps_tolerance_m=Decimal("25"))
    report = import_municipalities(FIXTURES / "sp_estado_municipios_645_tbrugz.geojson")
    assert report.updated == 1 and report.created == 644
    guaratingueta.refresh_from_db()
    assert guaratingueta.parameters_on(datetime.date(2026, 6, 1)).gps_tolerance_m == Decimal("25")
    assert guaratingueta.boundary_source == "sp_estado_municipios_645_tbrugz.geojson"
