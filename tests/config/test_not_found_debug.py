"""Every 404 is the Portuguese page, with DEBUG on as `make run` serves: Django's
technical 404 (English, listing the URL patterns) never reaches a user."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.ctr_world import build_world

pytestmark = pytest.mark.django_db

PORTUGUESE = "Página não encontrada"
TECHNICAL = ("DEBUG = True", "URLconf", "Page not found")


def assert_portuguese_404(response):
    assert response.status_code == 404
    html = response.content.decode()
    assert PORTUGUESE in html
    assert '<html lang="pt-BR"' in html
    for text in TECHNICAL:
        assert text not in html


@pytest.fixture(params=[True, False], ids=["debug-on", "debug-off"])
def debug(request, settings):
    settings.DEBUG = request.param
    return request.param


@pytest.mark.parametrize("path", ["/denunciar/nada/", "/nada/por/aqui/", "/transportador/nada/"])
def test_unmatched_url_is_the_portuguese_page(debug, path):
    assert_portuguese_404(Client().get(path))


def test_http404_raised_by_a_view_is_the_portuguese_page(debug):
    world = build_world()
    client = Client()
    client.force_login(get_user_model().objects.get(pk=world.alfa_user.pk))
    # ctr_detail: get_object_or_404 raises Http404 for a number the transporter has not.
    assert_portuguese_404(client.get("/transportador/ctrs/CTR-3518404-2026-999999/"))


def test_a_missing_slash_still_redirects(debug):
    response = Client().get("/denunciar")
    assert response.status_code == 301
    assert response["Location"] == "/denunciar/"


def test_api_404_stays_problem_json(debug):
    response = Client().get("/api/v1/nada/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"


def test_report_page_without_a_protocol_asks_for_it(debug):
    # The address the issue found showing Django's English URL list with DEBUG on.
    response = Client().get("/denuncia/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "Acompanhar uma denúncia" in page
    assert 'name="protocolo"' in page
    assert "Using the URLconf" not in page
