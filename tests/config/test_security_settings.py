"""Security settings and their effects (docs/security.md): `check --deploy` with production
settings, the Content Security Policy, the login lockout (django-axes), the rate limits of the
public endpoints, private photos served with their own type, logs without personal data, and
the LGPD access log."""

from __future__ import annotations

import datetime
import io
import json
import logging
import os
import re
import secrets
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import folium
import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import DatabaseError, connection, transaction
from django.test import Client

from audit.models import AccessLog
from ctr import services
from ctr.models import CTR
from ctr.rules import WasteLine
from fiscalization import intake, photos
from maps import base
from tests import dumping_fixtures as fx
from tests.ctr_world import CPF_GENERATOR, TODAY, World, build_world
from tests.enforcement_world import open_case

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "senha-teste"  # tests.ctr_world.make_user


@pytest.fixture
def world() -> World:
    return build_world()


@pytest.fixture(autouse=True)
def empty_cache():
    # The rate limits count in the cache (a database table, rolled back after each test).
    cache.clear()


def client_for(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(get_user_model().objects.get(pk=user.pk))
    return client


def issue(world: World) -> CTR:
    request = services.IssueRequest(
        transport_date=TODAY,
        vehicle_plate="ABC1D23",
        equipment_code="C-01",
        origin=world.origin,
        destination=world.inside(world.att),
        waste=[WasteLine("A", Decimal("3"), "entulho de alvenaria")],
        generator=services.GeneratorData(name="Maria da Obra", document=CPF_GENERATOR),
        worksite=services.WorksiteData(
            address="Rua das Flores, 10", location=world.origin, neighbourhood="Centro"
        ),
    )
    return services.issue(world.alfa, world.alfa_user, request)


# --- production settings: manage.py check --deploy ----------------------------------------------


def production_env(**extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
        "DJANGO_HSTS_SECONDS": "31536000",
        "DJANGO_ALLOWED_HOSTS": "ctr.guaratingueta.example.gov.br",
    }
    # Set by tests/conftest.py for Playwright; a deployment never has it.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    env.update(extra)
    return env


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_check_deploy_is_clean_with_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=production_env())
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "System check identified no issues" in output


def test_check_deploy_warns_while_hsts_is_off():
    """HSTS is the operator's promise: until DJANGO_HSTS_SECONDS is set, the check says so
    (it is not silenced)."""
    env = production_env()
    del env["DJANGO_HSTS_SECONDS"]
    result = manage("check", "--deploy", env=env)
    assert "security.W004" in result.stdout + result.stderr


def test_production_refuses_to_start_without_a_secret_key():
    env = production_env()
    del env["DJANGO_SECRET_KEY"]
    result = manage("check", env=env)
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY é obrigatória" in result.stderr


PRINT_SETTINGS = """
import json, django
django.setup()
from django.conf import settings as s
policy = s.CONTENT_SECURITY_POLICY["DIRECTIVES"]
print(json.dumps({
    "session_secure": s.SESSION_COOKIE_SECURE, "csrf_secure": s.CSRF_COOKIE_SECURE,
    "ssl_redirect": s.SECURE_SSL_REDIRECT, "hsts": s.SECURE_HSTS_SECONDS,
    "hsts_subdomains": s.SECURE_HSTS_INCLUDE_SUBDOMAINS,
    "proxy_header": s.SECURE_PROXY_SSL_HEADER, "frame": s.X_FRAME_OPTIONS,
    "upgrade": policy["upgrade-insecure-requests"], "img": policy["img-src"],
}))
"""


def test_production_settings_from_the_environment():
    env = production_env(
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_SECURE_PROXY_SSL_HEADER="true",
        CTR_MAP_TILE_URL="https://{s}.tiles.prefeitura.example/{z}/{x}/{y}.png",
    )
    result = subprocess.run(
        [sys.executable, "-c", PRINT_SETTINGS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout.strip().splitlines()[-1])
    assert values["session_secure"] and values["csrf_secure"] and values["ssl_redirect"]
    assert values["hsts"] == 31536000 and values["hsts_subdomains"]
    assert values["proxy_header"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert values["frame"] == "DENY"
    assert values["upgrade"] is True
    assert "https://*.tiles.prefeitura.example" in values["img"]


# --- Content Security Policy -----------------------------------------------------------------


def policy_of(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


def assert_scripts_carry_the_nonce(response) -> str:
    """Every inline <script> of the page carries the nonce of the response's policy."""
    policy = policy_of(response)
    [nonce] = [v for v in policy["script-src"] if v.startswith("'nonce-")]
    nonce = nonce[len("'nonce-") : -1]
    page = response.content.decode()
    for tag in re.findall(r"<script\b[^>]*>", page):
        if "src=" in tag or 'type="application/json"' in tag:
            continue
        assert f'nonce="{nonce}"' in tag, tag
    return nonce


@pytest.mark.parametrize("path", ["/onde-descartar/", "/denunciar/", "/verificar/", "/entrar/"])
def test_public_pages_have_the_policy_and_nonced_scripts(world, path):
    response = Client().get(path)
    assert response.status_code == 200
    policy = policy_of(response)
    assert policy["default-src"] == ["'self'"]
    assert "'unsafe-inline'" not in policy["script-src"]
    assert "'unsafe-eval'" not in policy["script-src"]
    assert policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["base-uri"] == ["'none'"]
    assert django_settings.MAP_TILE_ORIGIN in policy["img-src"]
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    if path in ("/onde-descartar/", "/denunciar/"):
        assert_scripts_carry_the_nonce(response)


def test_each_response_has_its_own_nonce(world):
    first = assert_scripts_carry_the_nonce(Client().get("/onde-descartar/"))
    second = assert_scripts_carry_the_nonce(Client().get("/onde-descartar/"))
    assert first != second


def test_api_docs_script_carries_the_nonce():
    response = Client().get("/api/v1/docs/")
    assert response.status_code == 200
    assert_scripts_carry_the_nonce(response)


def test_map_header_keeps_no_inline_script():
    """render_parts moves an inline script a folium element put in the header into the script
    the page writes with its nonce."""
    m = base.base_map()
    m.get_root().header.add_child(folium.Element("<script>var extra = 1;</script>"), name="x")
    parts = base.render_parts(m)
    assert "var extra = 1;" not in parts.header
    assert "var extra = 1;" in parts.script
    assert re.search(r"<script[^>]*src=", parts.header)  # Leaflet, from our static files
    assert parts.script.index("var extra") < parts.script.index("L.map(")


def test_json_and_pdf_are_not_given_a_document_policy(world):
    ctr = issue(world)
    pdf = client_for(world.nucleo).get(f"/ctrs/{ctr.number}/pdf/")
    assert pdf["Content-Type"] == "application/pdf"
    assert "Content-Security-Policy" not in pdf
    assert "Content-Security-Policy" not in Client().get("/api/v1/rules/")


# --- uploaded photos -----------------------------------------------------------------------------


def report_with_contact_and_photo():
    return intake.create_report(
        intake.NewReport(
            fx.at(east_m=-800, north_m=-600),
            "LOTE_VAGO",
            contact_name="Ana Denunciante",
            contact="ana.denunciante@example.org",
        ),
        photos.check_photos([fx.upload("a.jpg", fx.jpeg_with_gps())]),
    )


def test_photos_are_served_with_their_stored_type_nosniff_and_a_sandbox(world, private_media):
    photo = report_with_contact_and_photo().photos.get()
    response = client_for(world.fiscal).get(f"/fiscalizacao/fotos/{photo.pk}/")
    assert response.status_code == 200
    assert response["Content-Type"] == photo.content_type == "image/jpeg"
    assert response["X-Content-Type-Options"] == "nosniff"
    # The view's own policy stays: a file opened directly can run nothing.
    assert response["Content-Security-Policy"] == "default-src 'none'; sandbox"


# --- login lockout (django-axes) ----------------------------------------------------------------


def test_login_form_locks_a_user_out_after_repeated_failures(world):
    client = Client()
    limit = django_settings.AXES_FAILURE_LIMIT
    for _ in range(limit - 1):
        response = client.post("/entrar/", {"username": "alfa", "password": "errada"})
        assert response.status_code == 200
        assert "Usuário ou senha incorretos" in response.content.decode()
    response = client.post("/entrar/", {"username": "alfa", "password": "errada"})
    assert response.status_code == 429
    page = response.content.decode()
    assert "Acesso bloqueado temporariamente" in page
    assert int(response["Retry-After"]) == int(django_settings.AXES_COOLOFF_TIME.total_seconds())
    # Even the right password is refused during the cool-off.
    response = client.post("/entrar/", {"username": "alfa", "password": PASSWORD})
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    # Another user from the same address is not locked out (user and address together).
    response = client.post("/entrar/", {"username": "beta", "password": PASSWORD})
    assert response.status_code == 302


def test_admin_login_locks_out_too(world):
    admin = get_user_model().objects.create_superuser("chefe", "chefe@example.org", PASSWORD)
    client = Client()
    for _ in range(django_settings.AXES_FAILURE_LIMIT):
        response = client.post("/admin/login/", {"username": admin.username, "password": "x"})
    assert response.status_code == 429
    assert "Acesso bloqueado temporariamente" in response.content.decode()
    response = client.post("/admin/login/", {"username": admin.username, "password": PASSWORD})
    assert response.status_code == 429


def test_token_endpoint_locks_out_with_a_problem_in_portuguese(world):
    client = Client()
    url = "/api/v1/auth/token/"
    for _ in range(django_settings.AXES_FAILURE_LIMIT - 1):
        response = client.post(url, {"username": "alfa", "password": "errada"})
        assert response.status_code == 400
    response = client.post(url, {"username": "alfa", "password": "errada"})
    assert response.status_code == 429
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == 429 and "bloqueado" in body["detail"]
    assert int(response["Retry-After"]) > 0
    assert client.post(url, {"username": "alfa", "password": PASSWORD}).status_code == 429
    assert client.post(url, {"username": "beta", "password": PASSWORD}).status_code == 200


def test_success_resets_the_failure_count(world):
    client = Client()
    for _ in range(django_settings.AXES_FAILURE_LIMIT - 1):
        client.post("/entrar/", {"username": "alfa", "password": "errada"})
    assert client.post("/entrar/", {"username": "alfa", "password": PASSWORD}).status_code == 302
    client.logout()
    response = client.post("/entrar/", {"username": "alfa", "password": "errada"})
    # One more failure is a wrong password again, not a lockout.
    assert response.status_code == 200
    assert "Usuário ou senha incorretos." in response.content.decode()


# --- a lost laptop: tokens and sessions end ------------------------------------------------------


def test_a_regenerated_token_locks_the_old_one_out(world):
    """A token from a lost laptop is revoked by regenerating it (manage.py drf_create_token -r
    USER, or deleting it in the admin): the old one gets 401 at once."""
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    token = Client().post("/api/v1/auth/token/", {"username": "alfa", "password": PASSWORD})
    old = token.json()["token"]
    auth = {"HTTP_AUTHORIZATION": f"Token {old}"}
    assert Client().get("/api/v1/ctrs/", **auth).status_code == 200
    call_command("drf_create_token", "-r", "alfa", stdout=io.StringIO())
    assert Token.objects.get(user=world.alfa_user).key != old
    assert Client().get("/api/v1/ctrs/", **auth).status_code == 401


def test_sessions_end_within_a_working_day_and_cookies_are_not_for_scripts():
    assert django_settings.SESSION_COOKIE_AGE <= 12 * 3600
    assert django_settings.SESSION_COOKIE_HTTPONLY
    assert django_settings.SESSION_COOKIE_SAMESITE == "Lax"


# --- rate limits of the public endpoints -----------------------------------------------------


def assert_limited(response, api: bool):
    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    if api:
        assert response["Content-Type"] == "application/problem+json"
        body = response.json()
        assert body["title"] == "Muitas requisições"
        assert body["detail"].startswith("Muitas ")
        assert "Tente de novo em" in body["detail"]
    else:
        page = response.content.decode()
        assert "Muitas requisições" in page and "Tente de novo em" in page


def test_failed_logins_from_one_address_are_limited_across_user_names(settings, world):
    settings.CTR_RATE_LIMITS = {"login": "3/10m"}
    client = Client()
    for name in ("ana", "bia", "caio"):
        response = client.post("/api/v1/auth/token/", {"username": name, "password": "x"})
        assert response.status_code == 400
    assert_limited(client.post("/api/v1/auth/token/", {"username": "davi", "password": "x"}), True)
    assert_limited(client.post("/entrar/", {"username": "alfa", "password": PASSWORD}), False)


def test_successful_logins_do_not_count(settings, world):
    settings.CTR_RATE_LIMITS = {"login": "2/10m"}
    for _ in range(4):
        response = Client().post("/api/v1/auth/token/", {"username": "alfa", "password": PASSWORD})
        assert response.status_code == 200
        assert len(response.json()["token"]) == 40


def test_nearest_is_limited(settings, world):
    settings.CTR_RATE_LIMITS = {"nearest": "3/m"}
    lon, lat = world.origin.coords
    url = f"/api/v1/facilities/nearest/?lon={lon}&lat={lat}&volume_m3=1"
    client = Client()
    for _ in range(3):
        assert client.get(url).status_code == 200
    response = client.get(url)
    assert_limited(response, True)
    assert "consultas" in response.json()["detail"]


def test_verification_is_limited(settings, world):
    settings.CTR_RATE_LIMITS = {"verify": "2/m"}
    ctr = issue(world)
    client = Client()
    assert client.get(f"/verificar/{ctr.number}/").status_code == 200
    assert client.get(f"/verificar/?numero={ctr.number}").status_code == 302
    assert_limited(client.get("/verificar/CTR-3518404-2026-999999/"), False)


def test_report_follow_up_is_limited(settings, world, private_media):
    settings.CTR_RATE_LIMITS = {"follow": "2/m"}
    report = report_with_contact_and_photo()
    client = Client()
    assert client.get(f"/denuncia/{report.protocol}/").status_code == 200
    assert client.get("/denuncia/2026-AAAA-BBBB/").status_code == 404
    assert_limited(client.get(f"/denuncia/{report.protocol}/"), False)


def test_limits_are_per_client(settings, world):
    settings.CTR_RATE_LIMITS = {"verify": "1/m"}
    first = Client(REMOTE_ADDR="203.0.113.1").get("/verificar/")
    assert first.status_code == 200 and "<h1>Verificar um CTR</h1>" in first.content.decode()
    assert_limited(Client(REMOTE_ADDR="203.0.113.1").get("/verificar/"), False)
    other = Client(REMOTE_ADDR="203.0.113.2").get("/verificar/")
    assert other.status_code == 200 and "<h1>Verificar um CTR</h1>" in other.content.decode()


# --- logs without personal data ------------------------------------------------------------------


@pytest.fixture(params=["console", "json"])
def log_output(request):
    """What the configured handlers write, whatever the logger, in each of the two formats
    (CTR_LOG_FORMAT: `make run`'s console lines, production's JSON lines)."""
    from config.logs import JsonFormatter

    stream = io.StringIO()
    handlers = {
        h
        for name in ("", "django", "django.server", "axes", "ctr.access")
        for h in logging.getLogger(name).handlers
        if isinstance(h, logging.StreamHandler) and h.filters
    }
    assert handlers
    previous = [(h, h.setStream(stream), h.formatter) for h in handlers]
    if request.param == "json":
        for handler in handlers:
            handler.setFormatter(JsonFormatter())
    yield stream
    for handler, old, formatter in previous:
        handler.setStream(old)
        handler.setFormatter(formatter)
    if request.param == "json":  # every line an object, tracebacks inside theirs
        assert all(json.loads(line) for line in stream.getvalue().splitlines())


PERSONAL = [
    "529.982.247-25",
    "52998224725",
    "11.222.333/0001-81",
    "11222333000181",
    "ana.denunciante@example.org",
    "(12) 99123-4567",
    "12991234567",
]


def test_request_logs_carry_no_cpf_cnpj_email_or_phone(world, log_output):
    query = "cpf=529.982.247-25&email=ana.denunciante%40example.org&fone=%2812%29+99123-4567"
    response = Client().get(f"/verificar/52998224725/?{query}")
    assert response.status_code == 404
    Client().get("/nada/11.222.333/0001-81/ana.denunciante@example.org/12991234567/")
    # The development server's request line, as runserver logs it.
    logging.getLogger("django.server").info(
        '"%s" %s %s', "GET /transportador/ctrs/?gerador=Maria+da+Obra&pagina=2 HTTP/1.1", 200, 10
    )
    # An error whose message and traceback carry personal data.
    try:
        raise ValueError("CPF inválido: 529.982.247-25 de ana.denunciante@example.org")
    except ValueError:
        logging.getLogger("django.request").exception("Falha com (12) 99123-4567")
    # A failed login with an e-mail typed as the user name (axes logs the user name).
    Client().post("/entrar/", {"username": "ana.denunciante@example.org", "password": "x"})
    text = log_output.getvalue()
    assert "Not Found: /verificar/" in text and "ValueError" in text and "AXES" in text
    for value in PERSONAL:
        assert value not in text, value
    assert "ana.denunciante" not in text
    assert "127.0.0.1" not in text  # axes names the client by a hash of its address
    assert "Maria" not in text  # a query-string value: dropped
    assert "pagina=2" in text  # paging is kept
    assert "[CPF]" in text and "[e-mail]" in text and "[telefone]" in text


def test_public_verification_never_shows_a_full_cpf(world):
    """The public page of a CTR whose generator is a person: the CPF only masked, and no run of
    digits anywhere in the page (text, attributes, scripts) that could be a whole CPF."""
    ctr = issue(world)
    response = Client().get(f"/verificar/{ctr.number}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert ctr.number in page
    assert "***.982.247-**" in page
    for full in (CPF_GENERATOR, "529.982.247-25", "529982247"):
        assert full not in page, full
    digits = re.sub(r"[^0-9]", "", page.replace(ctr.number, ""))
    assert CPF_GENERATOR not in digits
    assert not re.search(r"(?<![0-9])[0-9]{3}\.?[0-9]{3}\.?[0-9]{3}-?[0-9]{2}(?![0-9])", page)


# --- LGPD: who saw whose personal data -----------------------------------------------------------


def test_access_log_of_a_ctr_detail_in_the_api(world):
    ctr = issue(world)
    response = client_for(world.nucleo).get(f"/api/v1/ctrs/{ctr.number}/")
    assert response.status_code == 200
    [entry] = AccessLog.objects.all()
    assert entry.user_id == world.nucleo.pk and entry.username == "nucleo"
    assert entry.object_label == ctr.number and entry.object_id == str(ctr.pk)
    assert entry.content_type.model == "ctr"
    assert entry.purpose == "API: detalhe do CTR"
    assert entry.path == f"/api/v1/ctrs/{ctr.number}/"
    assert entry.client_hash and "127.0.0.1" not in entry.client_hash


def test_access_log_of_the_printed_ctr_and_the_web_detail(world):
    ctr = issue(world)
    assert client_for(world.nucleo).get(f"/ctrs/{ctr.number}/pdf/").status_code == 200
    page = client_for(world.alfa_user).get(f"/transportador/ctrs/{ctr.number}/")
    assert page.status_code == 200
    logged = list(AccessLog.objects.order_by("at", "pk").values_list("username", "purpose"))
    assert logged == [("nucleo", "CTR impresso (PDF)"), ("alfa", "Detalhe do CTR")]


def test_access_log_of_a_dumping_report_with_contact(world, private_media):
    report = report_with_contact_and_photo()
    page = client_for(world.nucleo).get(f"/fiscalizacao/denuncias/{report.pk}/")
    assert page.status_code == 200
    assert "ana.denunciante@example.org" in page.content.decode()
    [entry] = AccessLog.objects.all()
    assert entry.username == "nucleo" and entry.object_label == report.protocol
    assert entry.purpose == "Denúncia: página de inspeção"


def test_access_log_of_a_dumping_report_in_the_api(world, private_media):
    report = report_with_contact_and_photo()
    response = client_for(world.fiscal).get(f"/api/v1/dumping-reports/{report.pk}/")
    assert response.status_code == 200
    assert "ana.denunciante@example.org" in response.content.decode()
    [entry] = AccessLog.objects.all()
    assert entry.username == "fiscal" and entry.object_label == report.protocol
    assert entry.purpose == "API: detalhe da denúncia"
    assert entry.path == f"/api/v1/dumping-reports/{report.pk}/"


def test_access_log_of_an_enforcement_case(world):
    case = open_case(world)
    assert client_for(world.nucleo).get(f"/fiscalizacao/processos/{case.pk}/").status_code == 200
    [entry] = AccessLog.objects.all()
    assert entry.username == "nucleo" and entry.content_type.model == "enforcementcase"
    assert entry.object_id == str(case.pk)


def test_public_pages_and_refusals_are_not_logged(world):
    ctr = issue(world)
    assert Client().get(f"/verificar/{ctr.number}/").status_code == 200
    assert client_for(world.beta_user).get(f"/api/v1/ctrs/{ctr.number}/").status_code == 404
    assert not AccessLog.objects.exists()


def test_access_log_is_append_only_in_the_database(world):
    ctr = issue(world)
    client_for(world.nucleo).get(f"/api/v1/ctrs/{ctr.number}/")
    entry = AccessLog.objects.get()
    for sql in (
        "UPDATE audit_accesslog SET username = 'outro' WHERE id = %s",
        "DELETE FROM audit_accesslog WHERE id = %s",
    ):
        with pytest.raises(DatabaseError, match="somente inclusão"), transaction.atomic():
            connection.cursor().execute(sql, [entry.pk])


def test_access_log_admin_is_read_only(world):
    admin = get_user_model().objects.create_superuser("chefe", "chefe@example.org", PASSWORD)
    ctr = issue(world)
    client_for(world.nucleo).get(f"/api/v1/ctrs/{ctr.number}/")
    client = client_for(admin)
    listing = client.get("/admin/audit/accesslog/")
    assert listing.status_code == 200
    assert (
        ctr.number in listing.content.decode() and "API: detalhe do CTR" in listing.content.decode()
    )
    entry = AccessLog.objects.get()
    detail = client.get(f"/admin/audit/accesslog/{entry.pk}/change/")
    assert detail.status_code == 200
    assert ctr.number in detail.content.decode()
    assert 'name="_save"' not in detail.content.decode()  # nothing to save: read only
    assert client.get("/admin/audit/accesslog/add/").status_code == 403
    assert client.post(f"/admin/audit/accesslog/{entry.pk}/delete/").status_code == 403


def test_cooloff_setting_is_a_duration():
    assert isinstance(django_settings.AXES_COOLOFF_TIME, datetime.timedelta)
