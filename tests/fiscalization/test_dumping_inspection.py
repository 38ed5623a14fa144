"""Inspectors query and decide dumping reports: GET /api/v1/dumping-reports/ with its filters,
status changes and merges with their history, category suggestions from the map layers, the
private photos, and the pages under /fiscalizacao/. Nobody else sees any of it."""

from __future__ import annotations

import datetime
import json
import re

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from fiscalization import intake, intake_views, photos
from fiscalization.models import DumpingReport, DumpingReportEvent, ReportStatus
from pev_network.models import CatchmentBasin, FacilityKind
from tests import dumping_fixtures as fx
from tests.builders import licensed_facility, multi, municipality, square
from tests.ctr_world import build_world

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("private_media", "fresh_rate_limits")]

URL = "/api/v1/dumping-reports/"


@pytest.fixture
def world():
    return build_world()


@pytest.fixture
def inspector(client, world):
    client.force_login(world.fiscal)
    return client


def report(world, point, category="LOTE_VAGO", status=ReportStatus.NEW, days_ago=0, **fields):
    created = timezone.now() - datetime.timedelta(days=days_ago)
    return DumpingReport.objects.create(
        municipality=fields.pop("town", world.town),
        location=point,
        category=category,
        status=status,
        created_at=created,
        **fields,
    )


def protocols(response) -> set[str]:
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["type"] == "FeatureCollection"
    return {f["properties"]["protocol"] for f in body["features"]}


# --- the list and its filters ----------------------------------------------------------------


def test_list_is_geojson_with_contacts_for_inspectors(inspector, world):
    r = report(world, fx.at(east_m=-800), contact_name="Ana", contact="ana@example.org")
    body = inspector.get(URL).json()
    [feature] = body["features"]
    assert feature["geometry"]["type"] == "Point"
    assert feature["geometry"]["coordinates"] == pytest.approx([r.location.x, r.location.y])
    props = feature["properties"]
    assert props["protocol"] == r.protocol
    assert props["municipality"] == "3518404"
    assert (props["contact_name"], props["contact"]) == ("Ana", "ana@example.org")
    assert props["category_label"] == "Lote vago" and props["status_label"] == "Nova"
    assert props["photo_count"] == 0


def test_filter_bbox_is_explicit_wgs84_and_inclusive(inspector, world):
    inside = report(world, fx.at(east_m=-800, north_m=-800))
    report(world, fx.at(east_m=800, north_m=800))
    x, y = inside.location.x, inside.location.y
    box = f"{x - 0.001},{y - 0.001},{x},{y}"
    # The report lies on the box's north-east corner: intersects counts it.
    assert protocols(inspector.get(URL, {"bbox": box})) == {inside.protocol}


def test_filter_polygon_in_geojson_and_wkt(inspector, world):
    inside = report(world, fx.at(east_m=-800, north_m=-800))
    report(world, fx.at(east_m=800, north_m=800))
    area = square(inside.location.x - 0.002, inside.location.y - 0.002, 400)
    as_geojson = json.dumps({"type": "Polygon", "coordinates": area.coords})
    assert protocols(inspector.get(URL, {"polygon": as_geojson})) == {inside.protocol}
    assert protocols(inspector.get(URL, {"polygon": area.wkt})) == {inside.protocol}
    assert protocols(inspector.get(URL, {"polygon": f"SRID=4326;{area.wkt}"})) == {inside.protocol}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("POINT(1 2)", "Polígono ilegível"),
        ('{"type": "Point", "coordinates": [1, 2]}', "Esperava um Polygon"),
        ("SRID=31983;POLYGON((0 0, 1 0, 1 1, 0 0))", "SRID 31983"),
        ("POLYGON((0 0, 2 2, 2 0, 0 2, 0 0))", "Polígono inválido"),
        ("POLYGON((0 0, 500 0, 500 1, 0 0))", "fora de WGS 84"),
        ("isto não é um polígono", "Polígono ilegível"),
    ],
)
def test_bad_polygon_is_400_naming_the_parameter(inspector, world, value, message):
    response = inspector.get(URL, {"polygon": value})
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["campo"] == "polygon"
    assert message in error["mensagem"]


def test_filter_bacia(inspector, world):
    inside = report(world, fx.at(east_m=-800, north_m=-800))
    report(world, fx.at(east_m=800, north_m=800))
    basin = CatchmentBasin.objects.create(
        municipality=world.town,
        name="Bacia Sul",
        area=multi(square(inside.location.x - 0.003, inside.location.y - 0.003, 600)),
    )
    assert protocols(inspector.get(URL, {"bacia": basin.pk})) == {inside.protocol}
    response = inspector.get(URL, {"bacia": 999999})
    assert response.status_code == 400
    assert "A bacia 999999 não existe" in response.json()["detail"]


def test_filter_municipality_by_ibge_code(inspector, world):
    ours = report(world, fx.at(east_m=-800))
    other_town = municipality("3550308", "São Paulo (teste)", size_m=100)
    report(world, fx.at(east_m=-800), town=other_town)
    assert protocols(inspector.get(URL, {"municipality": "3518404"})) == {ours.protocol}
    assert inspector.get(URL, {"municipality": "35"}).status_code == 400


def test_filter_period_uses_local_dates_both_ends_included(inspector, world):
    today = timezone.localdate()
    recent = report(world, fx.at(east_m=-800), days_ago=2)
    old = report(world, fx.at(east_m=-700), days_ago=40)
    report(world, fx.at(east_m=-600), days_ago=0)
    two_days_ago = (today - datetime.timedelta(days=2)).isoformat()
    yesterday = (today - datetime.timedelta(days=1)).isoformat()
    assert protocols(inspector.get(URL, {"date_from": two_days_ago, "date_to": yesterday})) == {
        recent.protocol
    }
    until = (today - datetime.timedelta(days=30)).isoformat()
    assert protocols(inspector.get(URL, {"date_to": until})) == {old.protocol}
    response = inspector.get(URL, {"date_from": "31/12/2026"})
    assert response.status_code == 400 and "AAAA-MM-DD" in response.json()["detail"]
    bad = inspector.get(URL, {"date_from": yesterday, "date_to": two_days_ago})
    assert bad.status_code == 400


def test_filter_status_and_category_accept_lists(inspector, world):
    a = report(world, fx.at(east_m=-800), status="CONFIRMED", category="ENCOSTA")
    b = report(world, fx.at(east_m=-700), status="CLEANED", category="LOTE_VAGO")
    report(world, fx.at(east_m=-600), status="NEW", category="LOTE_VAGO")
    assert protocols(inspector.get(URL, {"status": "CONFIRMED,cleaned"})) == {
        a.protocol,
        b.protocol,
    }
    assert protocols(inspector.get(URL, {"category": "ENCOSTA"})) == {a.protocol}
    response = inspector.get(URL, {"status": "ABERTA"})
    assert response.status_code == 400
    assert "ABERTA" in response.json()["detail"]


def test_filter_near_with_radius_in_metres(inspector, world):
    centre = fx.at(east_m=-800, north_m=-600)
    within = report(world, fx.geodesic_offset(centre.x, centre.y, 30, 499))
    report(world, fx.geodesic_offset(centre.x, centre.y, 30, 501))
    params = {"near": f"{centre.x},{centre.y}", "radius_m": "500"}
    assert protocols(inspector.get(URL, params)) == {within.protocol}
    assert inspector.get(URL, {"near": f"{centre.x},{centre.y}"}).status_code == 400
    response = inspector.get(URL, {"near": "abc", "radius_m": "10"})
    assert response.status_code == 400 and response.json()["errors"][0]["campo"] == "near"
    assert inspector.get(URL, {"near": "1,2", "radius_m": "999999"}).status_code == 400


def test_filters_combine(inspector, world):
    centre = fx.at(east_m=-800, north_m=-600)
    match = report(world, centre, status="NEW", category="ENCOSTA")
    report(world, centre, status="NEW", category="LOTE_VAGO")
    report(world, fx.at(east_m=3000), status="NEW", category="ENCOSTA")
    params = {
        "near": f"{centre.x},{centre.y}",
        "radius_m": "100",
        "category": "ENCOSTA",
        "status": "NEW",
        "municipality": "3518404",
    }
    assert protocols(inspector.get(URL, params)) == {match.protocol}


# --- detail ----------------------------------------------------------------------------------


def test_detail_has_photos_with_private_urls_exif_distance_events_and_suggestions(inspector, world):
    point = fx.at(east_m=-800, north_m=-600)
    r = intake.create_report(
        intake.NewReport(point, "AREA_NAO_LICENCIADA"),
        photos.check_photos([fx.upload("a.jpg", fx.jpeg_with_gps())]),
    )
    body = inspector.get(f"{URL}{r.pk}/").json()
    props = body["properties"]
    [photo] = props["photos"]
    assert photo["url"] == f"http://testserver/fiscalizacao/fotos/{photo['id']}/"
    assert photo["exif_location"]["coordinates"] == pytest.approx(fx.EXIF_POINT)
    expected = intake.point_distance_m(point, fx.at())
    assert photo["distance_from_report_m"] == pytest.approx(expected, abs=0.2)
    assert [e["to_status"] for e in props["events"]] == ["NEW"]
    assert props["suggestions"] == []
    assert props["follow_url"].endswith(f"/denuncia/{r.protocol}/")
    assert props["suspects_url"].endswith(f"/fiscalizacao/denuncias/{r.pk}/suspeitos/")


# --- status changes --------------------------------------------------------------------------


def test_status_change_records_an_event_with_the_note(inspector, world):
    r = report(world, fx.at(east_m=-800))
    response = inspector.post(
        f"{URL}{r.pk}/status/",
        {"status": "CONFIRMED", "note": "Vistoria: 3 m³ de entulho"},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["properties"]["status"] == "CONFIRMED"
    event = DumpingReportEvent.objects.filter(report=r).last()
    assert (event.from_status, event.to_status, event.actor, event.note) == (
        "NEW",
        "CONFIRMED",
        world.fiscal,
        "Vistoria: 3 m³ de entulho",
    )


def test_cleaning_sets_cleaned_at_and_reopening_clears_it(world):
    r = report(world, fx.at(east_m=-800))
    r = intake.change_status(r, "CLEANED", world.fiscal)
    assert r.cleaned_at is not None
    with pytest.raises(intake.IntakeError, match="Explique na observação"):
        intake.change_status(r, "CONFIRMED", world.fiscal)
    r = intake.change_status(r, "CONFIRMED", world.fiscal, "Voltaram a jogar entulho")
    assert r.cleaned_at is None


def test_unfounded_needs_a_note(inspector, world):
    r = report(world, fx.at(east_m=-800))
    response = inspector.post(
        f"{URL}{r.pk}/status/", {"status": "UNFOUNDED"}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["campo"] == "note"
    assert DumpingReport.objects.get(pk=r.pk).status == "NEW"


def test_duplicate_is_reached_only_by_merging(inspector, world):
    r = report(world, fx.at(east_m=-800))
    response = inspector.post(
        f"{URL}{r.pk}/status/", {"status": "DUPLICATE"}, content_type="application/json"
    )
    assert response.status_code == 400
    assert "mescle" in response.json()["detail"]


def test_impossible_transition_is_409(inspector, world):
    r = report(world, fx.at(east_m=-800), status="CLEANED")
    response = inspector.post(
        f"{URL}{r.pk}/status/",
        {"status": "CLEANUP_SCHEDULED", "note": "x"},
        content_type="application/json",
    )
    assert response.status_code == 409
    assert "Não é possível passar de “Limpa” para “Limpeza agendada”" in response.json()["detail"]


# --- merges ----------------------------------------------------------------------------------


def test_merge_marks_the_duplicate_and_records_on_both(inspector, world):
    original = report(world, fx.at(east_m=-800), status="CONFIRMED")
    duplicate = report(world, fx.at(east_m=-790))
    response = inspector.post(
        f"{URL}{duplicate.pk}/merge/",
        {"into": original.pk, "note": "mesma caçamba"},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    duplicate.refresh_from_db()
    original.refresh_from_db()
    assert duplicate.status == "DUPLICATE" and duplicate.duplicate_of == original
    assert original.status == "CONFIRMED"
    d_event = duplicate.events.last()
    assert (d_event.from_status, d_event.to_status) == ("NEW", "DUPLICATE")
    assert original.protocol in d_event.note and "mesma caçamba" in d_event.note
    o_event = original.events.last()
    assert (o_event.from_status, o_event.to_status) == ("CONFIRMED", "CONFIRMED")
    assert duplicate.protocol in o_event.note
    assert response.json()["properties"]["duplicate_of"] == {
        "id": original.pk,
        "protocol": original.protocol,
    }
    detail = inspector.get(f"{URL}{original.pk}/").json()["properties"]
    assert detail["duplicates"] == [{"id": duplicate.pk, "protocol": duplicate.protocol}]


def test_merging_a_report_that_has_duplicates_moves_them_to_the_new_original(world):
    a, b, c = (report(world, fx.at(east_m=-800 + n)) for n in range(3))
    intake.merge_duplicate(c, b, world.fiscal)
    intake.merge_duplicate(b, a, world.fiscal)
    c.refresh_from_db()
    assert c.duplicate_of == a  # chains stay one level deep
    assert "Passa a ser duplicata" in c.events.last().note


@pytest.mark.parametrize("case", ["self", "into_duplicate", "already", "missing"])
def test_merge_refusals(inspector, world, case):
    a = report(world, fx.at(east_m=-800))
    b = report(world, fx.at(east_m=-790))
    c = report(world, fx.at(east_m=-780))
    intake.merge_duplicate(c, a, world.fiscal)
    source, into = {
        "self": (a, a.pk),
        "into_duplicate": (b, c.pk),
        "already": (c, b.pk),
        "missing": (a, 999999),
    }[case]
    response = inspector.post(
        f"{URL}{source.pk}/merge/", {"into": into}, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    if case == "into_duplicate":
        assert (
            f"mescle em {a.protocol}" in response.json()["detail"]
            or a.protocol in (response.json()["detail"])
        )


def test_leaving_duplicate_detaches_from_the_original(world):
    a = report(world, fx.at(east_m=-800))
    b = report(world, fx.at(east_m=-790))
    intake.merge_duplicate(b, a, world.fiscal)
    b.refresh_from_db()
    b = intake.change_status(b, "NEW", world.fiscal, "Não era o mesmo: outro lote")
    assert b.duplicate_of is None


def test_services_refuse_users_without_a_municipal_role(world):
    r = report(world, fx.at(east_m=-800))
    with pytest.raises(intake.IntakeError) as caught:
        intake.change_status(r, "CONFIRMED", world.alfa_user)
    assert caught.value.status == 403


# --- who sees what ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "data"),
    [
        ("get", "", None),
        ("get", "{pk}/", None),
        ("post", "{pk}/status/", {"status": "CONFIRMED"}),
        ("post", "{pk}/merge/", {"into": 1}),
    ],
)
def test_anonymous_401_and_other_users_403(world, method, path, data):
    r = report(world, fx.at(east_m=-800), contact="ana@example.org")
    url = URL + path.format(pk=r.pk)
    send = {"data": json.dumps(data), "content_type": "application/json"} if data else {}

    anonymous = getattr(Client(), method)(url, **send)
    assert anonymous.status_code == 401
    assert anonymous["Content-Type"] == "application/problem+json"
    assert "WWW-Authenticate" in anonymous

    for user in (world.alfa_user, world.operator, world.outsider):
        client = Client()
        client.force_login(user)
        response = getattr(client, method)(url, **send)
        assert response.status_code == 403, (user, response.content)
        assert "ana@example.org" not in response.content.decode()
    assert DumpingReport.objects.get(pk=r.pk).status == "NEW"


def test_nucleo_sees_the_reports_too(client, world):
    r = report(world, fx.at(east_m=-800))
    client.force_login(world.nucleo)
    response = client.get(URL)
    assert response.status_code == 200
    assert r.protocol in response.content.decode()


def _report_with_photo(world):
    return intake.create_report(
        intake.NewReport(fx.at(east_m=-800, north_m=-600), "LOTE_VAGO"),
        photos.check_photos([fx.upload("a.jpg", fx.jpeg_with_gps())]),
    )


def test_photo_is_served_to_inspectors_with_its_type_and_nosniff(inspector, world):
    photo = _report_with_photo(world).photos.get()
    response = inspector.get(f"/fiscalizacao/fotos/{photo.pk}/")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/jpeg"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "private" in response["Cache-Control"]
    body = b"".join(response.streaming_content)
    assert body.startswith(b"\xff\xd8") and b"CameraDeTeste" not in body


def test_photo_is_not_served_to_anyone_else(world):
    photo = _report_with_photo(world).photos.get()
    anonymous = Client().get(f"/fiscalizacao/fotos/{photo.pk}/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/entrar/")
    client = Client()
    client.force_login(world.alfa_user)
    assert client.get(f"/fiscalizacao/fotos/{photo.pk}/").status_code == 403
    # MEDIA_URL is not routed: the files are reachable only through the view.
    assert Client().get(f"/arquivos/{photo.image.name}").status_code == 404


# --- category suggestions --------------------------------------------------------------------


def test_inside_a_licensed_facility_is_probably_not_dumping(world):
    [suggestion] = intake.suggest_categories(world.inside(world.pev))
    assert suggestion.category is None and suggestion.kind == "warning"
    assert "provavelmente não é descarte irregular" in suggestion.reason
    assert "PEV" in suggestion.reason


def test_inside_a_facility_without_valid_license_suggests_unlicensed_area(world):
    expired = licensed_facility(
        FacilityKind.ATT,
        square(*fx.at(east_m=-2000, north_m=-2000).coords, 100),
        "ATT Vencida",
        world.town,
        valid_until=datetime.date(2024, 12, 31),
    )
    [suggestion] = intake.suggest_categories(world.inside(expired))
    assert suggestion.category == "AREA_NAO_LICENCIADA"
    assert "ATT Vencida" in suggestion.reason and "licença válida" in suggestion.reason


@pytest.fixture
def overlay_tables():
    """Protected areas and water bodies, as a municipality would load them (these layers do
    not exist in the project: any table with a 4326 geometry column works)."""
    centre = fx.at(east_m=1000, north_m=1000)
    park = square(centre.x, centre.y, 300)
    river_start = fx.at(east_m=2000, north_m=-1000)
    river_end = fx.at(east_m=2000, north_m=1000)
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE test_app (nome text, geom geometry(Polygon, 4326))")
        cursor.execute(
            "INSERT INTO test_app VALUES ('Parque do Ribeirão', ST_GeomFromText(%s, 4326))",
            [park.wkt],
        )
        cursor.execute("CREATE TABLE test_rios (nome text, geom geometry(LineString, 4326))")
        cursor.execute(
            "INSERT INTO test_rios VALUES ('Ribeirão Guaratinguetá', "
            "ST_MakeLine(ST_MakePoint(%s, %s), ST_MakePoint(%s, %s)))",
            [river_start.x, river_start.y, river_end.x, river_end.y],
        )
    return [
        intake.OverlayLayer(
            table="test_app",
            category="AREA_PROTEGIDA",
            label="Área de Preservação Permanente",
            name_column="nome",
        ),
        intake.OverlayLayer(
            table="test_rios",
            category="CORPO_DAGUA",
            label="corpo d’água",
            within_m=30,
            name_column="nome",
        ),
    ]


def test_overlays_suggest_protected_area_and_water_body_when_loaded(world, overlay_tables):
    in_park = fx.at(east_m=1100, north_m=1100)
    [s] = intake.suggest_categories(in_park, overlay_tables)
    assert s.category == "AREA_PROTEGIDA"
    assert s.reason == "Dentro de Área de Preservação Permanente “Parque do Ribeirão”."

    by_river = fx.at(east_m=2029)  # 29 m from the river line
    [s] = intake.suggest_categories(by_river, overlay_tables)
    assert s.category == "CORPO_DAGUA"
    assert "A 29 m de corpo d’água “Ribeirão Guaratinguetá”" in s.reason
    assert intake.suggest_categories(fx.at(east_m=2031), overlay_tables) == []


def test_overlays_come_from_settings(world, overlay_tables, settings):
    settings.CTR_DUMPING_OVERLAYS = [
        {"table": "test_app", "category": "AREA_PROTEGIDA", "label": "APP", "name_column": "nome"}
    ]
    [s] = intake.suggest_categories(fx.at(east_m=1100, north_m=1100))
    assert s.category == "AREA_PROTEGIDA"


def test_overlay_layer_refuses_sql_in_its_names():
    with pytest.raises(ValueError, match="Invalid SQL identifier in overlay layer: 'x; DROP"):
        intake.OverlayLayer(table="x; DROP TABLE y", category="AREA_PROTEGIDA", label="x")


# --- the inspectors' pages -------------------------------------------------------------------


def test_pages_need_a_municipal_role(world):
    r = report(world, fx.at(east_m=-800))
    for path in ("/fiscalizacao/", f"/fiscalizacao/denuncias/{r.pk}/"):
        anonymous = Client().get(path)
        assert anonymous.status_code == 302 and anonymous["Location"].startswith("/entrar/")
        client = Client()
        client.force_login(world.alfa_user)
        assert client.get(path).status_code == 403
    client = Client()
    client.force_login(world.alfa_user)
    response = client.post(f"/fiscalizacao/denuncias/{r.pk}/situacao/", {"status": "CONFIRMED"})
    assert response.status_code == 403
    assert DumpingReport.objects.get(pk=r.pk).status == "NEW"


def test_index_lists_and_maps_the_filtered_reports(inspector, world):
    a = report(world, fx.at(east_m=-800), category="ENCOSTA")
    b = report(world, fx.at(east_m=-700), category="LOTE_VAGO")
    response = inspector.get("/fiscalizacao/", {"category": "ENCOSTA"})
    assert response.status_code == 200
    html = response.content.decode()
    assert a.protocol in html and b.protocol not in html
    assert "leaflet/leaflet.js" in html
    assert "1</strong> denúncia encontrada" in html


def test_index_aggregates_to_cells_above_the_limit(inspector, world, monkeypatch):
    monkeypatch.setattr(intake_views, "MAP_POINT_LIMIT", 3)
    for n in range(5):
        report(world, fx.at(east_m=-800 + 10 * n))
    response = inspector.get("/fiscalizacao/")
    html = response.content.decode()
    assert "o mapa mostra a contagem por área" in html
    counts = [int(n) for n in re.findall(r"(\d+) denúncias? nesta área", html)]
    assert sum(counts) == 5 and len(counts) <= 2  # 40 m apart: one cell, or two at an edge


def test_index_bad_filter_is_400_with_the_message(inspector, world):
    response = inspector.get("/fiscalizacao/", {"polygon": "POINT(1 2)"})
    assert response.status_code == 400
    assert "Polígono ilegível" in response.content.decode()


def test_report_page_shows_photos_exif_suggestions_and_the_suspects_link(inspector, world):
    r = _report_with_photo(world)
    html = inspector.get(f"/fiscalizacao/denuncias/{r.pk}/").content.decode()
    photo = r.photos.get()
    assert f'src="/fiscalizacao/fotos/{photo.pk}/"' in html
    assert "Local no EXIF" in html and "Local das fotos (EXIF)" in html
    assert f"/fiscalizacao/denuncias/{r.pk}/suspeitos/" in html


def test_report_page_changes_status_and_merges(inspector, world):
    a = report(world, fx.at(east_m=-800))
    b = report(world, fx.at(east_m=-790))
    response = inspector.post(
        f"/fiscalizacao/denuncias/{a.pk}/situacao/", {"status": "CONFIRMED", "note": "visto"}
    )
    assert response.status_code == 302
    assert DumpingReport.objects.get(pk=a.pk).status == "CONFIRMED"
    page = inspector.get(f"/fiscalizacao/denuncias/{b.pk}/").content.decode()
    assert a.protocol in page  # offered as a merge candidate (10 m away)
    response = inspector.post(
        f"/fiscalizacao/denuncias/{b.pk}/mesclar/", {"into": a.protocol.lower(), "note": ""}
    )
    assert response.status_code == 302
    b.refresh_from_db()
    assert b.status == "DUPLICATE" and b.duplicate_of == a
    response = inspector.post(f"/fiscalizacao/denuncias/{a.pk}/situacao/", {"status": "UNFOUNDED"})
    assert response.status_code == 400
    assert "Explique na observação" in response.content.decode()


def test_report_page_changes_category_with_an_event(inspector, world):
    r = report(world, fx.at(east_m=-800))
    response = inspector.post(
        f"/fiscalizacao/denuncias/{r.pk}/categoria/", {"category": "ENCOSTA", "note": "morro"}
    )
    assert response.status_code == 302
    r.refresh_from_db()
    assert r.category == "ENCOSTA"
    assert r.events.last().note == "Categoria alterada de “Lote vago” para “Encosta”. morro"


def test_admin_shows_reports_with_photos_and_history(client, world, django_user_model):
    r = _report_with_photo(world)
    admin = django_user_model.objects.create_superuser("chefe", "c@example.org", "x")
    client.force_login(admin)
    listing = client.get("/admin/fiscalization/dumpingreport/")
    assert listing.status_code == 200 and r.protocol in listing.content.decode()
    html = client.get(f"/admin/fiscalization/dumpingreport/{r.pk}/change/").content.decode()
    assert r.protocol in html
    assert f"/fiscalizacao/fotos/{r.photos.get().pk}/" in html
    assert "Recebida." in html
