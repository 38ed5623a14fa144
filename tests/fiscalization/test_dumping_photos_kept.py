"""Photos on /denunciar/ survive a form that comes back: a browser cannot fill a
file input again, so the photos that passed the checks are kept under a signed token, shown as
"Fotos já anexadas", and attached by the submission that goes through."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image

from config import clients, rate_limits
from fiscalization import pending_photos, throttle
from fiscalization.models import DumpingReport
from tests import dumping_fixtures as fx
from tests.ctr_world import build_world

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("private_media", "fresh_rate_limits")]

TOKEN_RE = re.compile(r'name="pending_photos" value="([^"]+)"')


@pytest.fixture
def world():
    return build_world()


def fields(point=None, **extra) -> dict:
    point = point or fx.at(east_m=-800, north_m=-600)
    return {
        "longitude": f"{point.x:.6f}".replace(".", ","),
        "latitude": f"{point.y:.6f}",
        "category": "VIA_PUBLICA",
        "description": "Restos de obra na calçada",
        **extra,
    }


def token_of(html: str) -> str:
    match = TOKEN_RE.search(html)
    assert match, "the form carries no token of kept photos"
    return match.group(1)


def pending_files(media: Path) -> list[Path]:
    root = media / pending_photos.PENDING_ROOT
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_photo_is_kept_when_the_form_comes_back_and_attached_on_the_corrected_post(
    client, world, private_media
):
    photo = fx.jpeg_with_gps()
    response = client.post(
        "/denunciar/", {**fields(category=""), "photos": [fx.upload("calcada.jpg", photo)]}
    )

    assert response.status_code == 400
    html = response.content.decode()
    assert "Escolha onde está o descarte." in html
    assert "Fotos já anexadas (1)" in html
    assert 'src="data:image/jpeg;base64,' in html and "calcada.jpg" in html
    assert DumpingReport.objects.count() == 0
    token = token_of(html)

    # The corrected submission, without the file (the browser has dropped it).
    response = client.post("/denunciar/", {**fields(), "pending_photos": token})

    assert response.status_code == 302, response.content.decode()[:3000]
    report = DumpingReport.objects.get()
    assert report.photos.count() == 1
    stored = report.photos.get()
    assert stored.exif_location is not None  # the GPS read from the original is kept
    with Image.open(stored.image.path) as image:
        assert image.size == (320, 240)
    assert pending_files(private_media) == []  # nothing left behind


def test_photos_are_kept_through_is_it_one_of_these(client, world):
    centre = fx.at(east_m=-800, north_m=-600)
    first = client.post(
        "/denunciar/", {**fields(centre), "photos": [fx.upload("a.jpg", fx.jpeg_plain())]}
    )
    assert first.status_code == 302  # no report nearby yet
    response = client.post(
        "/denunciar/", {**fields(centre), "photos": [fx.upload("b.jpg", fx.jpeg_plain())]}
    )
    html = response.content.decode()
    assert "É uma destas?" in html
    assert "continuam anexadas" in html and "Fotos já anexadas (1)" in html

    confirmed = client.post(
        "/denunciar/", {**fields(centre), "confirm_new": "on", "pending_photos": token_of(html)}
    )

    assert confirmed.status_code == 302
    newest = DumpingReport.objects.order_by("-pk").first()
    assert newest.photos.count() == 1


def test_a_refused_file_does_not_drop_the_good_one(client, world):
    response = client.post(
        "/denunciar/",
        {
            **fields(),
            "photos": [fx.upload("boa.jpg", fx.jpeg_plain()), fx.upload("ruim.gif", fx.gif())],
        },
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "ruim.gif: não é uma imagem" in html
    assert "Fotos já anexadas (1)" in html and "boa.jpg" in html

    done = client.post("/denunciar/", {**fields(), "pending_photos": token_of(html)})
    assert done.status_code == 302
    assert DumpingReport.objects.get().photos.count() == 1


def test_kept_photos_can_be_removed_and_new_ones_added(client, world, private_media):
    response = client.post(
        "/denunciar/",
        {
            **fields(category=""),
            "photos": [fx.upload("1.jpg", fx.jpeg_plain()), fx.upload("2.png", fx.webp())],
        },
    )
    token = token_of(response.content.decode())
    again = client.post(
        "/denunciar/",
        {
            **fields(category=""),
            "pending_photos": token,
            "remove_pending": "0",
            "photos": [fx.upload("3.jpg", fx.jpeg_with_gps())],
        },
    )
    html = again.content.decode()
    assert "Fotos já anexadas (2)" in html
    assert "1.jpg" not in html and "2.png" in html and "3.jpg" in html

    done = client.post("/denunciar/", {**fields(), "pending_photos": token_of(html)})
    assert done.status_code == 302
    report = DumpingReport.objects.get()
    assert sorted(p.content_type for p in report.photos.all()) == ["image/jpeg", "image/webp"]
    assert pending_files(private_media) == []


def test_no_more_than_five_photos_counting_the_kept_ones(client, world):
    files = [fx.upload(f"{i}.jpg", fx.jpeg_plain()) for i in range(4)]
    response = client.post("/denunciar/", {**fields(category=""), "photos": files})
    token = token_of(response.content.decode())
    more = [fx.upload(f"x{i}.jpg", fx.jpeg_plain()) for i in range(2)]
    response = client.post("/denunciar/", {**fields(), "pending_photos": token, "photos": more})
    assert response.status_code == 400
    html = response.content.decode()
    assert "no máximo 5 fotos por denúncia (contando as já anexadas)" in html
    assert "Fotos já anexadas (4)" in html
    assert DumpingReport.objects.count() == 0


def test_a_forged_or_expired_token_says_to_attach_again(client, world):
    response = client.post("/denunciar/", {**fields(category=""), "pending_photos": "forjado:x"})
    assert response.status_code == 400
    assert "selecione-as de novo" in response.content.decode()
    done = client.post("/denunciar/", {**fields(), "pending_photos": "forjado:x"})
    assert done.status_code == 302
    assert DumpingReport.objects.get().photos.count() == 0


def test_a_blocked_submission_says_its_photos_were_not_kept(client, world, monkeypatch):
    monkeypatch.setattr(rate_limits, "now", lambda: 1_800_000_000.0)
    key = clients.client_key({"REMOTE_ADDR": "127.0.0.1"})
    for _ in range(5):
        throttle.REPORTS.hit(key)
    response = client.post(
        "/denunciar/", {**fields(), "photos": [fx.upload("a.jpg", fx.jpeg_plain())]}
    )
    assert response.status_code == 429
    assert "As fotos selecionadas neste envio não foram guardadas" in response.content.decode()
