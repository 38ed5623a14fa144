"""Many people behind one public address.

Brazilian mobile networks put thousands of subscribers behind one address (CGNAT), and a city
hall's staff leave through one NAT. Login failures lock the pair account + address after
AXES_FAILURE_LIMIT (django-axes); the per-address ceiling over all accounts
(CTR_RATE_LIMITS["login"]) is high enough that other people's typos never shut anyone out.
These tests run with the project's real limits, not the generous ones of tests/conftest.py, and
sign in through the real page /entrar/ with its CSRF token, one browser (client) per person.
"""

from __future__ import annotations

import importlib
import re

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client

from config.rate_limits import parse_rate

pytestmark = pytest.mark.django_db

PASSWORD = "senha-certa-123"
CARRIER_NAT = "177.79.10.20"  # one public address of a mobile carrier's CGNAT
ELSEWHERE = "189.1.2.3"
TOKEN_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')

# The limits as config/settings.py sets them (tests/conftest.py replaces them in every test).
PROJECT_SETTINGS = importlib.import_module("config.settings")


@pytest.fixture(autouse=True)
def real_limits(settings):
    settings.CTR_RATE_LIMITS = dict(PROJECT_SETTINGS.CTR_RATE_LIMITS)
    cache.clear()


@pytest.fixture
def staff():
    model = get_user_model()
    return [model.objects.create_user(f"servidor{i:02d}", password=PASSWORD) for i in range(50)]


class Browser:
    """One person's browser: its own cookies, CSRF checked as in production."""

    def __init__(self, address: str):
        self.client = Client(enforce_csrf_checks=True, REMOTE_ADDR=address)

    def sign_in(self, username: str, password: str):
        page = self.client.get("/entrar/")
        assert page.status_code == 200
        token = TOKEN_RE.search(page.content.decode())
        assert token, "the login page has no CSRF token"
        return self.client.post(
            "/entrar/",
            {"username": username, "password": password, "csrfmiddlewaretoken": token[1]},
        )

    @property
    def signed_in_as(self) -> str | None:
        user_id = self.client.session.get("_auth_user_id")
        if user_id is None:
            return None
        return get_user_model().objects.get(pk=user_id).username


def test_fifty_people_behind_one_address_all_get_in(staff):
    typists = {3, 11, 17, 29, 41}  # a few mistype their password first, some twice
    for i, user in enumerate(staff):
        browser = Browser(CARRIER_NAT)
        if i in typists:
            for _ in range(2 if i % 2 else 1):
                response = browser.sign_in(user.username, "senha-errada")
                assert response.status_code == 200
                assert "Usuário ou senha incorretos" in response.content.decode()
                assert browser.signed_in_as is None
        response = browser.sign_in(user.username, PASSWORD)
        assert response.status_code == 302, (user.username, response.status_code)
        assert response["Location"] == django_settings.LOGIN_REDIRECT_URL
        assert browser.signed_in_as == user.username


def test_a_morning_of_typos_behind_one_address_shuts_nobody_out(staff):
    """Forty people, each mistyping up to four times (under the lock of their own account):
    100 failures from one address in minutes. Every right password still gets in."""
    for i, user in enumerate(staff[:40]):
        browser = Browser(CARRIER_NAT)
        for _ in range(1 + i % (django_settings.AXES_FAILURE_LIMIT - 1)):
            assert browser.sign_in(user.username, "senha-errada").status_code == 200
        response = browser.sign_in(user.username, PASSWORD)
        assert response.status_code == 302, (user.username, response.status_code)
        assert browser.signed_in_as == user.username


def test_wrong_passwords_lock_that_account_from_that_address_only(staff):
    victim, colleague = staff[0], staff[1]
    browser = Browser(CARRIER_NAT)
    for _ in range(django_settings.AXES_FAILURE_LIMIT - 1):
        assert browser.sign_in(victim.username, "senha-errada").status_code == 200
    locked = browser.sign_in(victim.username, "senha-errada")
    assert locked.status_code == 429
    assert "Acesso bloqueado temporariamente" in locked.content.decode()
    # Locked from that address, even with the right password, in any browser there.
    assert Browser(CARRIER_NAT).sign_in(victim.username, PASSWORD).status_code == 429
    # Someone else behind the same address is not.
    other = Browser(CARRIER_NAT)
    assert other.sign_in(colleague.username, PASSWORD).status_code == 302
    assert other.signed_in_as == colleague.username
    # The same account from another address is not either.
    away = Browser(ELSEWHERE)
    assert away.sign_in(victim.username, PASSWORD).status_code == 302
    assert away.signed_in_as == victim.username


def test_the_per_address_ceiling_is_high_but_still_there():
    """Hundreds of failures in 10 minutes pass (a carrier's NAT); past the ceiling the address
    gets 429 whatever the account, which bounds password guessing over many user names."""
    windows = parse_rate(PROJECT_SETTINGS.CTR_RATE_LIMITS["login"])
    short = min(windows, key=lambda w: w.seconds)
    assert short.seconds <= 600 and short.limit >= 200
    client = Client(REMOTE_ADDR=CARRIER_NAT)
    for i in range(short.limit):
        response = client.post("/entrar/", {"username": f"tentativa{i}", "password": "x"})
        assert response.status_code == 200, i
    response = client.post("/entrar/", {"username": "mais-uma", "password": "x"})
    assert response.status_code == 429
    assert "Muitas tentativas de entrada" in response.content.decode()
    # Another address is not affected.
    response = Client(REMOTE_ADDR=ELSEWHERE).post("/entrar/", {"username": "x", "password": "x"})
    assert response.status_code == 200
