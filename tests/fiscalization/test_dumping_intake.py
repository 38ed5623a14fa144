"""Citizens report dumping without an account: /denunciar/ and POST /api/v1/dumping-reports/.

Photos are checked by content, their EXIF location kept for inspectors and their metadata
stripped from the stored file; reports near open ones are offered first ("is it one of
these?"); a client gets a few reports per window; nothing is saved when anything is wrong.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import re
from pathlib import Path

import pytest
from django.test import Client
from django.utils import timezone
from PIL import Image

from config import clients, rate_limits
from fiscalization import intake, photos, throttle
from fiscalization.models import DumpingPhoto, DumpingReport, ReportStatus
from tests import dumping_fixtures as fx
from tests.builders import ORIGIN
from tests.ctr_world import build_world

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("private_media", "fresh_rate_limits")]

URL = "/api/v1/dumping-reports/"
PROTOCOL = re.compile(
    r"^\d{4}-[23456789ABCDEFGHJKMNPQRSTVWXYZ]{4}-[23456789ABCDEFGHJKMNPQRSTVWXYZ]{4}$"
)


@pytest.fixture
def world():
    return build_world()


def geojson(point) -> dict:
    return {"type": "Point", "coordinates": [point.x, point.y]}


def payload(point=None, **extra) -> dict:
    point = point or fx.at(east_m=-800, north_m=-600)
    return {
        "location": geojson(point),
        "category": "LOTE_VAGO",
        "description": "Entulho de reforma e um sofá no terreno baldio.",
        "estimated_volume_m3": "2.5",
        **extra,
    }


def post_json(client, data, **headers):
    return client.post(URL, json.dumps(data), content_type="application/json", **headers)


def stored_files(media: Path) -> list[Path]:
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


# --- the happy paths -------------------------------------------------------------------------


def test_json_report_returns_protocol_and_follow_url(client, world):
    response = post_json(client, payload(contact_name="Ana", contact="ana@example.org"))

    assert response.status_code == 201, response.content
    body = response.json()
    assert PROTOCOL.match(body["protocol"])
    assert body["status"] == "NEW"
    assert body["status_label"] == "Nova"
    assert body["follow_url"] == f"http://testserver/denuncia/{body['protocol']}/"
    report = DumpingReport.objects.get(protocol=body["protocol"])
    assert report.municipality == world.town
    assert report.reporter_kind == "CITIZEN" and report.reporter is None
    assert (report.contact_name, report.contact) == ("Ana", "ana@example.org")
    assert str(report.estimated_volume_m3) == "2.50"
    [event] = report.events.all()
    assert (event.from_status, event.to_status, event.actor) == ("", "NEW", None)


def test_multipart_with_lon_lat_and_three_kinds_of_photo(client, world, private_media):
    point = fx.at(east_m=-800, north_m=-600)
    response = client.post(
        URL,
        {
            "lon": str(point.x),
            "lat": str(point.y),
            "category": "VIA_PUBLICA",
            "photos": [
                fx.upload("IMG_0001.JPG", fx.jpeg_with_gps()),
                fx.upload("print.png", fx.png_with_text()),
                fx.upload("foto.webp", fx.webp()),
            ],
        },
    )

    assert response.status_code == 201, response.content
    report = DumpingReport.objects.get(protocol=response.json()["protocol"])
    stored = list(report.photos.order_by("pk"))
    assert [p.content_type for p in stored] == ["image/jpeg", "image/png", "image/webp"]
    assert [p.extension for p in stored] == ["jpg", "png", "webp"]
    assert len(stored_files(private_media)) == 3


def test_exif_location_is_kept_but_the_stored_file_has_no_metadata(client, world):
    original = fx.jpeg_with_gps()
    assert b"CameraDeTeste" in original and b"Fulano de Tal" in original

    response = client.post(
        URL,
        {
            "location": json.dumps(geojson(fx.at(east_m=-800, north_m=-600))),
            "category": "LOTE_VAGO",
            "photos": [fx.upload("IMG_0001.jpg", original)],
        },
    )

    assert response.status_code == 201, response.content
    photo = DumpingPhoto.objects.get()
    assert photo.exif_location.x == pytest.approx(fx.EXIF_POINT[0], abs=1e-6)
    assert photo.exif_location.y == pytest.approx(fx.EXIF_POINT[1], abs=1e-6)
    data = photo.image.open("rb").read()
    assert b"CameraDeTeste" not in data and b"Fulano de Tal" not in data
    assert b"Exif" not in data
    image = Image.open(io.BytesIO(data))
    assert image.format == "JPEG"
    assert len(image.getexif()) == 0
    assert (photo.width, photo.height) == image.size == (320, 240)
    assert photo.size_bytes == len(data)
    assert photo.sha256 == hashlib.sha256(data).hexdigest()


def test_png_text_chunks_are_stripped(client, world):
    response = client.post(
        URL,
        {
            **_form_point(),
            "category": "LOTE_VAGO",
            "photos": [fx.upload("a.png", fx.png_with_text())],
        },
    )
    assert response.status_code == 201, response.content
    data = DumpingPhoto.objects.get().image.open("rb").read()
    assert b"Fulano de Tal" not in data
    assert Image.open(io.BytesIO(data)).info.get("Author") is None


def test_orientation_is_applied_to_the_pixels_before_the_tag_goes():
    # Orientation 6: the camera was turned; the viewer must rotate 90°. The tag is dropped,
    # so the stored pixels must already be upright.
    checked = photos.check_photo("deitada.jpg", fx.jpeg_with_gps(size=(320, 240), orientation=6))
    assert (checked.width, checked.height) == (240, 320)


def test_mpo_from_a_phone_is_kept_as_a_plain_jpeg():
    # Portrait shots: a JPEG with a second frame (depth map) after the first.
    out = io.BytesIO()
    first, depth = Image.new("RGB", (64, 48), "red"), Image.new("RGB", (64, 48), "blue")
    first.save(out, "MPO", save_all=True, append_images=[depth])
    checked = photos.check_photo("retrato.jpg", out.getvalue())
    assert checked.content_type == "image/jpeg"
    stored = Image.open(io.BytesIO(checked.content))
    assert stored.format == "JPEG" and getattr(stored, "n_frames", 1) == 1
    assert stored.getpixel((10, 10))[0] > 200  # the red first frame


def _form_point(point=None) -> dict:
    point = point or fx.at(east_m=-800, north_m=-600)
    return {"lon": str(point.x), "lat": str(point.y)}


# --- bad photos: named, explained, nothing saved ---------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "code"),
    [
        ("animacao.gif", fx.gif(), "not_an_image"),
        ("foto.jpg", b"isto nao e uma foto, e um texto com extensao .jpg\n" * 20, "not_an_image"),
        ("vazia.jpg", b"", "empty"),
        ("cortada.jpg", fx.jpeg_plain()[:-200], "corrupt"),
    ],
)
def test_bad_photo_is_refused_naming_the_file(client, world, private_media, name, data, code):
    response = client.post(
        URL, {**_form_point(), "category": "LOTE_VAGO", "photos": [fx.upload(name, data)]}
    )

    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert name in body["detail"]
    [error] = body["errors"]
    assert (error["arquivo"], error["codigo"]) == (name, code)
    assert DumpingReport.objects.count() == 0
    assert stored_files(private_media) == []


def test_fake_jpeg_message_says_the_content_was_checked(client, world):
    response = client.post(
        URL,
        {**_form_point(), "category": "LOTE_VAGO", "photos": [fx.upload("x.jpg", b"GIF89a....")]},
    )
    assert "não é uma imagem JPEG, PNG ou WebP" in response.json()["detail"]
    assert "conteúdo do arquivo foi verificado" in response.json()["detail"]


def test_oversized_photo_is_413_and_nothing_is_saved(client, world, private_media):
    response = client.post(
        URL,
        {
            **_form_point(),
            "category": "LOTE_VAGO",
            "photos": [fx.upload("grande.jpg", fx.oversized_jpeg())],
        },
    )

    assert response.status_code == 413, response.content
    body = response.json()
    assert "grande.jpg" in body["detail"]
    assert "9,0 MB" in body["detail"] and "8,0 MB" in body["detail"]
    assert DumpingReport.objects.count() == 0
    assert stored_files(private_media) == []


def test_decompression_bomb_under_our_cap_is_refused_before_decoding(client, world):
    # 9,000 × 9,000 grey pixels (81 MP, under Pillow's own 89 MP warning) in a few kB.
    bomb = fx.png_bomb(9000, 9000)
    assert len(bomb) < 200_000
    response = client.post(
        URL, {**_form_point(), "category": "LOTE_VAGO", "photos": [fx.upload("b.png", bomb)]}
    )
    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    assert error["codigo"] == "too_many_pixels"
    assert "9000×9000" in error["mensagem"]
    assert DumpingReport.objects.count() == 0


def test_pillow_decompression_bomb_error_is_a_refusal_not_a_500(client, world):
    # 100,000 × 100,000 declared: Pillow itself raises DecompressionBombError on open.
    bomb = fx.png_bomb(100_000, 100_000, real_data=False)
    response = client.post(
        URL, {**_form_point(), "category": "LOTE_VAGO", "photos": [fx.upload("b.png", bomb)]}
    )
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["codigo"] == "too_many_pixels"


def test_more_than_five_photos_are_refused(client, world):
    files = [fx.upload(f"f{n}.jpg", fx.jpeg_plain()) for n in range(6)]
    response = client.post(URL, {**_form_point(), "category": "LOTE_VAGO", "photos": files})
    assert response.status_code == 400
    assert "no máximo 5 fotos" in response.json()["detail"]
    assert DumpingReport.objects.count() == 0


def test_one_bad_photo_among_good_ones_saves_nothing(client, world, private_media):
    response = client.post(
        URL,
        {
            **_form_point(),
            "category": "LOTE_VAGO",
            "photos": [
                fx.upload("boa.jpg", fx.jpeg_with_gps()),
                fx.upload("ruim.gif", fx.gif()),
                fx.upload("grande.jpg", fx.oversized_jpeg()),
            ],
        },
    )
    assert response.status_code == 400  # mixed reasons: not only size
    names = [e["arquivo"] for e in response.json()["errors"]]
    assert names == ["ruim.gif", "grande.jpg"]
    assert DumpingReport.objects.count() == 0
    assert stored_files(private_media) == []


def test_uploaded_file_names_are_not_trusted():
    error = pytest.raises(
        photos.PhotoError, photos.check_photo, "../../etc/passwd\x00.jpg", b"texto"
    ).value
    assert error.filename == "passwd.jpg"


def test_photos_under_another_field_name_are_refused(client, world):
    response = client.post(
        URL,
        {**_form_point(), "category": "LOTE_VAGO", "foto": fx.upload("a.jpg", fx.jpeg_plain())},
    )
    assert response.status_code == 400
    assert "photos" in response.json()["detail"]


def test_failure_after_the_photos_are_written_leaves_no_file(world, private_media, monkeypatch):
    checked = photos.check_photos([fx.upload("a.jpg", fx.jpeg_plain())])

    def broken(**kwargs):
        raise RuntimeError("disco cheio")

    monkeypatch.setattr(intake.DumpingReportEvent.objects, "create", broken)
    with pytest.raises(RuntimeError, match="disco cheio"):
        intake.create_report(
            intake.NewReport(fx.at(east_m=-800, north_m=-600), "LOTE_VAGO"), checked
        )
    assert DumpingReport.objects.count() == 0
    assert stored_files(private_media) == []


# --- where -----------------------------------------------------------------------------------


def test_coordinates_outside_every_municipality_are_400_in_portuguese(client, world):
    far = fx.at(east_m=50_000)  # the test municipality is 20 km across
    response = post_json(client, payload(far))

    assert response.status_code == 400
    body = response.json()
    assert "não fica em nenhum município" in body["detail"]
    assert body["errors"] == [{"campo": "location", "mensagem": body["detail"]}]
    assert DumpingReport.objects.count() == 0


def test_swapped_coordinates_are_caught_by_the_point_field(client, world):
    response = post_json(
        client, {**payload(), "location": {"type": "Point", "coordinates": [-22.81, -145.19]}}
    )
    assert response.status_code == 400
    assert "Latitude -145.19 fora do intervalo" in response.json()["detail"]


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"category": "PRAIA"}, "category", "não é uma escolha válida"),
        ({"location": None}, "location", None),
        ({"location": "não é json"}, "location", "Informe um ponto GeoJSON"),
        ({"lon": -45.19, "lat": -22.81}, "location", "não os dois"),
        ({"estimated_volume_m3": "-1"}, "estimated_volume_m3", None),
        ({"contact": "x" * 121}, "contact", None),
    ],
)
def test_invalid_fields_are_400_problems_naming_the_field(client, world, change, field, message):
    data = {**payload(), **change}
    if change.get("location") is None and "location" in change:
        del data["location"]
    response = post_json(client, data)
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    errors = response.json()["errors"]
    assert field in [e["campo"] for e in errors]
    if message:
        assert any(message in e["mensagem"] for e in errors), errors


def test_empty_optional_form_fields_are_absent(client, world):
    response = client.post(
        URL, {**_form_point(), "location": "", "category": "LOTE_VAGO", "estimated_volume_m3": ""}
    )
    assert response.status_code == 201, response.content
    assert DumpingReport.objects.get().estimated_volume_m3 is None


def test_malformed_json_is_400_not_500(client, world):
    response = client.post(URL, "{nada", content_type="application/json")
    assert response.status_code == 400


# --- is it one of these? ---------------------------------------------------------------------


def _report_at(point, world, **fields) -> DumpingReport:
    return DumpingReport.objects.create(
        municipality=world.town, location=point, category="LOTE_VAGO", **fields
    )


def test_duplicate_suggestion_at_249_m_but_not_at_251_m(world):
    centre = fx.at(east_m=-800, north_m=-600)
    near = _report_at(fx.geodesic_offset(centre.x, centre.y, 0, 249), world)
    far = _report_at(fx.geodesic_offset(centre.x, centre.y, 0, 251), world)

    found = intake.nearby_open_reports(centre)

    assert [r.pk for r in found] == [near.pk]
    assert found[0].distance_m == pytest.approx(249, abs=0.01)
    assert intake.point_distance_m(centre, far.location) == pytest.approx(251, abs=0.01)


def test_duplicate_suggestion_uses_metres_in_every_direction(world):
    centre = fx.at(east_m=-800, north_m=-600)
    for azimuth in (45, 90, 135, 200, 270, 315):
        _report_at(fx.geodesic_offset(centre.x, centre.y, azimuth, 249), world)
        _report_at(fx.geodesic_offset(centre.x, centre.y, azimuth, 251), world)
    assert len(intake.nearby_open_reports(centre)) == 6


def test_api_answers_409_with_nearby_reports_then_accepts_confirm_new(client, world):
    centre = fx.at(east_m=-800, north_m=-600)
    existing = _report_at(
        fx.geodesic_offset(centre.x, centre.y, 90, 249),
        world,
        contact_name="Ana",
        contact="ana@example.org",
        description="texto do outro munícipe",
    )

    response = post_json(client, payload(centre))

    assert response.status_code == 409, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    [item] = body["nearby"]
    assert item["protocol"] == existing.protocol
    assert item["distance_m"] == 249
    assert item["category_label"] == "Lote vago" and item["status_label"] == "Nova"
    assert item["follow_url"].endswith(f"/denuncia/{existing.protocol}/")
    text = response.content.decode()
    assert "ana@example.org" not in text and "Ana" not in text and "outro munícipe" not in text
    assert "confirm_new" in body["detail"]
    assert DumpingReport.objects.count() == 1

    response = post_json(client, payload(centre, confirm_new=True))
    assert response.status_code == 201
    assert DumpingReport.objects.count() == 2


def test_closed_and_old_reports_are_not_offered(world):
    centre = fx.at(east_m=-800, north_m=-600)
    close = fx.geodesic_offset(centre.x, centre.y, 0, 50)
    for status in (ReportStatus.CLEANED, ReportStatus.DUPLICATE, ReportStatus.UNFOUNDED):
        _report_at(close, world, status=status)
    _report_at(close, world, created_at=timezone.now() - datetime.timedelta(days=31))
    offered = [
        _report_at(close, world, status=status)
        for status in (ReportStatus.NEW, ReportStatus.CONFIRMED, ReportStatus.CLEANUP_SCHEDULED)
    ]
    _report_at(close, world, created_at=timezone.now() - datetime.timedelta(days=29))
    assert len(intake.nearby_open_reports(centre)) == len(offered) + 1


# --- rate limit ------------------------------------------------------------------------------


def test_sixth_report_in_ten_minutes_gets_429_with_retry_after(client, world, monkeypatch):
    clock = [1_800_000_000.0]
    monkeypatch.setattr(rate_limits, "now", lambda: clock[0])
    for n in range(5):
        # Far apart, so that no report is offered as "one of these".
        response = post_json(client, payload(fx.at(east_m=-4000 + n * 1000, north_m=-3000)))
        assert response.status_code == 201, response.content
        clock[0] += 60

    response = post_json(client, payload(fx.at(east_m=2000, north_m=3000)))

    assert response.status_code == 429
    assert response["Content-Type"] == "application/problem+json"
    assert 1 <= int(response["Retry-After"]) <= 600
    # The first report leaves the window 600 s after it was sent: 300 s from now.
    assert int(response["Retry-After"]) == 300
    assert "5 a cada 10 minutos" in response.json()["detail"]
    assert DumpingReport.objects.count() == 5

    clock[0] += 301
    response = post_json(client, payload(fx.at(east_m=2000, north_m=3000)))
    assert response.status_code == 201


def test_daily_limit_holds_beyond_the_short_window(world, monkeypatch):
    clock = [1_800_000_000.0]
    monkeypatch.setattr(rate_limits, "now", lambda: clock[0])
    for _ in range(20):
        throttle.REPORTS.check_and_hit("cliente")
        clock[0] += 700  # always outside the 10-minute window
    with pytest.raises(rate_limits.RateLimited) as caught:
        throttle.REPORTS.check("cliente")
    assert "20 a cada 24 horas" in caught.value.message


def test_clients_are_counted_apart_and_x_forwarded_for_is_ignored_by_default(world):
    for _ in range(5):
        throttle.REPORTS.hit(clients.client_key({"REMOTE_ADDR": "198.51.100.7"}))
    forged = {"REMOTE_ADDR": "198.51.100.7", "HTTP_X_FORWARDED_FOR": "203.0.113.9"}
    with pytest.raises(rate_limits.RateLimited, match="o limite é 5 a cada 10 minutos"):
        throttle.REPORTS.check(clients.client_key(forged))
    throttle.REPORTS.check(clients.client_key({"REMOTE_ADDR": "198.51.100.8"}))


def test_x_forwarded_for_is_used_behind_a_declared_proxy(settings):
    settings.CTR_TRUSTED_PROXY_COUNT = 1
    meta = {"REMOTE_ADDR": "10.0.0.1", "HTTP_X_FORWARDED_FOR": "1.2.3.4, 203.0.113.9"}
    # The right-most entry is the one our proxy appended; the left one is the client's say.
    assert clients.client_address(meta) == "203.0.113.9"


def test_ipv6_clients_are_counted_per_64_block():
    a = clients.client_key({"REMOTE_ADDR": "2001:db8:1:2::10"})
    b = clients.client_key({"REMOTE_ADDR": "2001:db8:1:2:ffff::99"})
    c = clients.client_key({"REMOTE_ADDR": "2001:db8:1:3::10"})
    assert a == b != c
    assert "2001" not in a  # hashed, never the address itself


def test_the_web_form_and_the_api_share_the_limit(client, world, monkeypatch):
    monkeypatch.setattr(rate_limits, "now", lambda: 1_800_000_000.0)
    key = clients.client_key({"REMOTE_ADDR": "127.0.0.1"})
    for _ in range(5):
        throttle.REPORTS.hit(key)
    response = client.post("/denunciar/", {**_web_fields(fx.at(east_m=-800, north_m=-600))})
    assert response.status_code == 429
    assert response["Retry-After"]
    assert "Envio bloqueado" in response.content.decode()
    assert DumpingReport.objects.count() == 0


def test_inspectors_filing_reports_are_not_rate_limited(client, world, monkeypatch):
    monkeypatch.setattr(rate_limits, "now", lambda: 1_800_000_000.0)
    client.force_login(world.fiscal)
    for n in range(7):
        response = post_json(client, payload(fx.at(east_m=-4000 + n * 800, north_m=-3000)))
        assert response.status_code == 201, response.content
    report = DumpingReport.objects.first()
    assert report.reporter_kind == "INSPECTOR" and report.reporter == world.fiscal


# --- the public pages ------------------------------------------------------------------------


def _web_fields(point, **extra) -> dict:
    return {
        "longitude": f"{point.x:.6f}".replace(".", ","),
        "latitude": f"{point.y:.6f}",
        "category": "VIA_PUBLICA",
        "description": "Restos de obra na calçada",
        "estimated_volume_m3": "1,5",
        **extra,
    }


def test_form_page_has_map_categories_and_lgpd_note(client, world):
    response = client.get("/denunciar/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Denunciar descarte irregular" in html
    assert 'enctype="multipart/form-data"' in html
    assert "leaflet/leaflet.js" in html and "unpkg.com" not in html and "cdn.jsdelivr" not in html
    assert "Usar minha localização" in html
    assert "Lote vago" in html and "Área protegida por lei" in html
    assert "só a fiscalização municipal" in html and "LGPD" in html


def test_form_submission_redirects_to_the_follow_page_with_the_protocol(client, world):
    response = client.post(
        "/denunciar/",
        {
            **_web_fields(fx.at(east_m=-800, north_m=-600)),
            "photos": [fx.upload("calcada.jpg", fx.jpeg_with_gps())],
        },
        follow=True,
    )
    assert response.status_code == 200
    report = DumpingReport.objects.get()
    assert response.redirect_chain[-1][0] == f"/denuncia/{report.protocol}/"
    html = response.content.decode()
    assert f"Denúncia registrada com o protocolo <strong>{report.protocol}</strong>" in html
    assert str(report.estimated_volume_m3) == "1.50"
    assert report.photos.count() == 1


def test_form_shows_nearby_reports_first_then_saves_when_confirmed(client, world):
    centre = fx.at(east_m=-800, north_m=-600)
    existing = _report_at(fx.geodesic_offset(centre.x, centre.y, 0, 120), world, contact="x@y.z")

    response = client.post(
        "/denunciar/", {**_web_fields(centre), "photos": [fx.upload("a.jpg", fx.jpeg_plain())]}
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert "É uma destas?" in html
    assert existing.protocol in html and "a 120 m" in html
    assert "x@y.z" not in html
    # The photo is kept for the confirmation (tests/fiscalization/test_dumping_photos_kept.py).
    assert "continuam anexadas" in html and "Fotos já anexadas (1)" in html
    assert DumpingReport.objects.count() == 1
    token = re.search(r'name="pending_photos" value="([^"]+)"', html).group(1)

    response = client.post(
        "/denunciar/", {**_web_fields(centre), "confirm_new": "on", "pending_photos": token}
    )
    assert response.status_code == 302
    assert DumpingReport.objects.count() == 2
    assert DumpingReport.objects.order_by("-pk").first().photos.count() == 1


def test_form_outside_every_municipality_explains_in_portuguese(client, world):
    response = client.post("/denunciar/", _web_fields(fx.at(east_m=50_000)))
    assert response.status_code == 400
    assert "não fica em nenhum município" in response.content.decode()


def test_form_bad_photo_names_the_file(client, world):
    response = client.post(
        "/denunciar/",
        {**_web_fields(fx.at(east_m=-800)), "photos": [fx.upload("meme.gif", fx.gif())]},
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "meme.gif: não é uma imagem JPEG, PNG ou WebP" in html
    assert DumpingReport.objects.count() == 0


def test_form_without_a_point_asks_for_the_map(client, world):
    response = client.post("/denunciar/", {"category": "LOTE_VAGO"})
    assert response.status_code == 400
    assert "Marque o local no mapa" in response.content.decode()


def test_nearby_lookup_returns_public_fields_only(client, world):
    centre = fx.at(east_m=-800, north_m=-600)
    existing = _report_at(
        fx.geodesic_offset(centre.x, centre.y, 0, 100), world, contact="x@y.z", description="seg"
    )
    response = client.get("/denunciar/proximas/", {"lon": centre.x, "lat": centre.y})
    assert response.status_code == 200
    body = response.json()
    [item] = body["reports"]
    assert item["protocol"] == existing.protocol
    assert set(item) == {
        "protocol", "created_at", "created_on", "category", "category_label", "status",
        "status_label", "distance_m", "follow_url",
    }  # fmt: skip
    assert body["municipality"].startswith("Guaratinguetá")
    assert client.get("/denunciar/proximas/", {"lon": "x", "lat": "1"}).status_code == 400


def test_follow_page_shows_status_and_history_without_private_data(client, world):
    report = intake.create_report(
        intake.NewReport(
            fx.at(east_m=-800, north_m=-600),
            "LOTE_VAGO",
            description="perto da casa do vizinho",
            contact_name="Ana",
            contact="ana@example.org",
        ),
        photos.check_photos([fx.upload("a.jpg", fx.jpeg_with_gps())]),
    )
    intake.change_status(report, "CONFIRMED", world.fiscal, "Vistoria: placa da Caçambas Alfa")

    response = client.get(f"/denuncia/{report.protocol.lower()}/")

    assert response.status_code == 200
    html = response.content.decode().replace("/static/fiscalization/", "/static/")
    assert report.protocol in html and "Confirmada" in html and "Lote vago" in html
    assert "Denúncia recebida." in html and "Situação alterada para “Confirmada”." in html
    for private in ("Ana", "ana@example.org", "vizinho", "Caçambas Alfa", "fiscal", "/fotos/"):
        assert private not in html, private
    assert "<img" not in html


def test_follow_page_of_a_duplicate_points_to_the_original(client, world):
    a = _report_at(fx.at(east_m=-800), world)
    b = _report_at(fx.at(east_m=-790), world)
    intake.merge_duplicate(b, a, world.fiscal, "mesmo monte")
    html = client.get(f"/denuncia/{b.protocol}/").content.decode()
    assert "Duplicada" in html and f"/denuncia/{a.protocol}/" in html
    assert "mesmo monte" not in html
    html = client.get(f"/denuncia/{a.protocol}/").content.decode()
    assert b.protocol not in html  # the original's page does not list other people's reports


def test_unknown_protocol_is_a_portuguese_404(client, world):
    response = client.get("/denuncia/2026-ZZZZ-ZZZZ/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "Denúncia não encontrada" in html and "2026-ZZZZ-ZZZZ" in html


def test_an_anonymous_citizen_cannot_list_reports(world):
    _report_at(fx.at(east_m=-800), world, contact="ana@example.org")
    response = Client().get(URL)
    assert response.status_code == 401
    assert "ana@example.org" not in response.content.decode()


def test_protocol_origin_is_the_same_town(world):
    # The fixture's points are well inside the test municipality around ORIGIN.
    assert world.town.boundary.contains(fx.at(east_m=-800, north_m=-600))
    assert fx.at().coords == pytest.approx(ORIGIN)
