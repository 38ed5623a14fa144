"""Logs you can follow (config/logs.py), in-process: the request id (taken, validated, returned
in the header and in problem+json bodies), one JSON line per request with its fields, none for
the probes, one line per job run, and no personal data in the JSON lines either. The JSON
lines of a real gunicorn: test_observability_server."""

from __future__ import annotations

import logging
import re

import pytest
from django.test import Client

from config.logs import job_run
from tests.ctr.test_ctr_api import client_for
from tests.ctr_world import build_world

pytestmark = pytest.mark.django_db
GENERATED = re.compile(r"^[0-9a-f]{32}$")


@pytest.fixture
def world():
    return build_world()


def test_a_valid_incoming_request_id_is_kept_and_returned():
    response = Client().get("/regras/", HTTP_X_REQUEST_ID="chamado-2026.12_0042")
    assert response["X-Request-ID"] == "chamado-2026.12_0042"


@pytest.mark.parametrize(
    "given",
    [
        "curto",
        "x" * 65,
        "tem espaço aqui",
        "quebra\nde-linha",
        "<script>alert(1)</script>",
        "ç" * 10,
    ],
)
def test_an_implausible_request_id_is_replaced(given):
    response = Client().get("/regras/", HTTP_X_REQUEST_ID=given)
    assert GENERATED.match(response["X-Request-ID"]), response["X-Request-ID"]


def test_each_request_gets_its_own_id():
    ids = {Client().get("/healthz")["X-Request-ID"] for _ in range(3)}
    assert len(ids) == 3 and all(GENERATED.match(i) for i in ids)


def test_problem_details_carry_the_request_id(world):
    """DRF's handler (404 of the API), and the rate limit's own problem (config.security)."""
    missing = client_for(world.alfa_user).get(
        "/api/v1/ctrs/CTR-3518404-2026-999999/", HTTP_X_REQUEST_ID="suporte-0001"
    )
    assert missing.status_code == 404
    assert missing["Content-Type"].startswith("application/problem+json")
    assert missing.json()["request_id"] == "suporte-0001" == missing["X-Request-ID"]
    assert missing.json()["title"] == "Não encontrado"  # the body is otherwise what it was


def test_a_rate_limited_problem_carries_the_request_id(settings, fresh_rate_limits):
    settings.CTR_RATE_LIMITS = {**settings.CTR_RATE_LIMITS, "nearest": "1/m"}
    url = "/api/v1/facilities/nearest/?lon=-45.19&lat=-22.81"
    Client().get(url)
    limited = Client().get(url)
    assert limited.status_code == 429
    assert limited["Content-Type"].startswith("application/problem+json")
    assert limited.json()["request_id"] == limited["X-Request-ID"]


def test_one_json_line_per_request_with_its_fields(world, json_lines):
    number = "CTR-3518404-2026-999999"
    client_for(world.nucleo).get(f"/api/v1/ctrs/{number}/", HTTP_X_REQUEST_ID="suporte-0002")
    [line] = json_lines()
    assert line["event"] == "request" and line["logger"] == "ctr.access"
    assert line["request_id"] == "suporte-0002"
    assert line["method"] == "GET" and line["status"] == 404
    assert line["route"] == "ctr-detail"
    assert line["user_id"] == world.nucleo.pk
    # The staff member's current municipality, read by the request's scoping.
    assert line["municipality"] == world.town.ibge_code
    assert isinstance(line["duration_ms"], float) and line["time"].endswith("+00:00")
    text = json_lines.text()
    assert number not in text and "nucleo" not in text  # no raw path, no user name


def test_anonymous_requests_have_no_user(json_lines):
    Client().get("/regras/")
    [line] = json_lines()
    assert line["user_id"] is None and line["route"] == "ctr_web:rules"


def test_probes_and_scrapes_are_not_access_logged(settings, json_lines):
    settings.CTR_METRICS_TOKEN = "t"
    Client().get("/healthz")
    Client().get("/readyz")
    Client().get("/metrics", HTTP_AUTHORIZATION="Bearer t")
    Client().get("/regras/")
    assert [line["route"] for line in json_lines()] == ["ctr_web:rules"]


def test_a_job_run_is_one_line_with_its_own_id(json_lines):
    with job_run("purge_idempotency_keys") as summary:
        logging.getLogger("ctr.test").info("apagando chaves antigas")
        summary["apagadas"] = 12
    inner, line = json_lines()
    assert line["event"] == "job" and line["job"] == "purge_idempotency_keys"
    assert line["outcome"] == "ok" and line["apagadas"] == 12
    assert GENERATED.match(line["job_id"]) and inner["job_id"] == line["job_id"]
    with job_run("purge_idempotency_keys"):
        pass
    assert json_lines()[-1]["job_id"] != line["job_id"]


def test_a_failed_job_run_is_logged_and_raised(json_lines):
    with pytest.raises(RuntimeError), job_run("open_ctr_alerts"):
        raise RuntimeError("falhou")
    [line] = json_lines()
    assert line["level"] == "error" and line["outcome"] == "erro"
    assert line["error"] == "RuntimeError"


def test_json_lines_carry_no_cpf_cnpj_email_or_phone(json_lines):
    """Masked in the message, in the structured fields and in the traceback, and each line
    still a JSON object."""
    log = logging.getLogger("ctr.test")
    log.info(
        "Gerador 529.982.247-25 de ana.denunciante@example.org", extra={"cnpj": "11222333000181"}
    )
    try:
        raise ValueError("telefone (12) 99123-4567 e CNPJ 11.222.333/0001-81")
    except ValueError:
        log.exception("falha")
    with job_run("teste", contato="ana.denunciante@example.org"):
        pass
    lines = json_lines()
    assert len(lines) == 3
    text = json_lines.text()
    for personal in ("529.982.247-25", "ana.denunciante", "11222333000181", "99123-4567"):
        assert personal not in text, personal
    assert "[CPF]" in lines[0]["event"] and lines[0]["cnpj"] == "[número]"
    assert "[telefone]" in lines[1]["exception"] and "ValueError" in lines[1]["exception"]
    assert lines[2]["contato"] == "[e-mail]"
