"""The public report limits on a shared address (CGNAT, a city hall's NAT): each browser of the
form is counted apart by its device cookie, the address only has a ceiling over all of them
(fiscalization/throttle.py, docs/security.md)."""

import pytest
from django.test import Client

from config import clients, rate_limits
from fiscalization import throttle
from fiscalization.models import DumpingReport
from tests import dumping_fixtures as fx
from tests.ctr_world import build_world

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("private_media", "fresh_rate_limits")]

CARRIER_ADDRESS = "177.12.34.56"  # one public address for a carrier's many phones


@pytest.fixture
def world():
    return build_world()


@pytest.fixture
def frozen_rate_clock(monkeypatch):
    monkeypatch.setattr(rate_limits, "now", lambda: 1_800_000_000.0)


def phone() -> Client:
    """A browser behind the carrier's address that has opened the form (and got its cookie)."""
    browser = Client(REMOTE_ADDR=CARRIER_ADDRESS)
    assert browser.get("/denunciar/").status_code == 200
    assert throttle.DEVICE_COOKIE in browser.cookies
    return browser


def report(browser: Client, n: int):
    # Each report far from the others, so that none is offered as "one of these".
    point = fx.at(east_m=-4000 + (n % 40) * 200, north_m=-3000 + (n // 40) * 200)
    return browser.post(
        "/denunciar/",
        {
            "latitude": f"{point.y:.6f}".replace(".", ","),
            "longitude": f"{point.x:.6f}".replace(".", ","),
            "category": "VIA_PUBLICA",
            "description": "Restos de obra na calçada",
            "confirm_new": "on",
        },
    )


def test_one_citizens_limit_does_not_block_the_next_phone_on_the_address(world, frozen_rate_clock):
    first = phone()
    for n in range(5):
        assert report(first, n).status_code == 302
    assert report(first, 5).status_code == 429

    second = phone()
    response = report(second, 6)

    assert response.status_code == 302
    assert DumpingReport.objects.count() == 6


def test_the_address_has_a_ceiling_over_all_its_phones(world, frozen_rate_clock):
    ceiling = throttle.ADDRESS_REPORTS.windows[0].limit
    n = 0
    while n < ceiling:
        browser = phone()
        for _ in range(throttle.REPORTS.windows[0].limit):
            if n == ceiling:
                break
            assert report(browser, n).status_code == 302
            n += 1

    response = report(phone(), n)

    assert response.status_code == 429
    assert f"o limite é {ceiling} a cada 10 minutos" in response.content.decode()
    assert DumpingReport.objects.count() == ceiling


def test_a_forged_device_cookie_counts_as_the_address(world, frozen_rate_clock):
    for _ in range(5):
        throttle.REPORTS.hit(clients.client_key({"REMOTE_ADDR": CARRIER_ADDRESS}))
    browser = Client(REMOTE_ADDR=CARRIER_ADDRESS)
    browser.cookies[throttle.DEVICE_COOKIE] = "id-inventado"  # not signed by us

    response = report(browser, 0)

    assert response.status_code == 429
    assert DumpingReport.objects.count() == 0


def test_the_device_cookie_holds_no_address_and_is_http_only(world):
    browser = Client(REMOTE_ADDR=CARRIER_ADDRESS)
    cookie = browser.get("/denunciar/").cookies[throttle.DEVICE_COOKIE]

    assert cookie["httponly"]
    assert cookie["samesite"] == "Lax"
    assert CARRIER_ADDRESS not in cookie.value
