"""Errors speak Portuguese, with their own status, even for URLs no view matches."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_unknown_url_is_a_portuguese_404():
    response = Client().get("/obras/abc/relatorio/nada")
    assert response.status_code == 404
    assert "Página não encontrada" in response.content.decode()


def test_unknown_api_url_is_a_portuguese_404():
    response = Client().get("/api/v1/nada/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    # The request id, also in the header, to trace a support call (config/logs.py).
    assert body.pop("request_id") == response["X-Request-ID"]
    assert body == {
        "type": "about:blank",
        "title": "Não encontrado",
        "status": 404,
        "detail": "O endereço pedido não existe nesta API.",
        "instance": "/api/v1/nada/",
    }


def test_csrf_refusal_is_explained_in_portuguese():
    client = Client(enforce_csrf_checks=True)
    response = client.post("/entrar/", {"username": "x", "password": "y"})
    assert response.status_code == 403
    assert "Formulário expirado" in response.content.decode()
