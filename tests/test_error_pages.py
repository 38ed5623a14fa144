"""Errors speak Portuguese, with their own status, even for URLs no view matches."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_unknown_url_is_a_portuguese_404():
    response = Client().get("/obras/abc/relatorio/nada")
    assert response.status_code == 404
    assert "Página não encontrada" in response.content.decode()


def test_unknown_api_url_is_404():
    assert Client().get("/api/v1/nada/").status_code == 404


def test_csrf_refusal_is_explained_in_portuguese():
    client = Client(enforce_csrf_checks=True)
    response = client.post("/entrar/", {"username": "x", "password": "y"})
    assert response.status_code == 403
    assert "Formulário expirado" in response.content.decode()
