"""Generator accounts in a real headless Chromium on a phone (390×844): a generator fills the
registration form (a wrong CPF first, then the right one) and lands on its status page; an
invited person opens the link of the e-mail the SMTP server received and creates the account;
the Núcleo's queue and invitation pages and the transporter's invitation page. Every page:
no horizontal scroll, tap targets of 44 px (tests/e2e/test_phone_layout.py's rule), no
JavaScript error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from ctr import roles
from generators import accounts
from generators.models import GeneratorRegistration
from tests.ctr_world import CNPJ_GAMA, build_world
from tests.e2e.conftest import Recorder, log_in
from tests.generators.account_world import pending_registration
from tests.mail_server import Received

# fresh_rate_limits: the cache table is not flushed between transactional tests.
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.usefixtures("transactional_db", "frozen_today", "fresh_rate_limits"),
]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 900}
MIN_TARGET = 44
MEASURE = (Path(__file__).parent / "measure_layout.js").read_text(encoding="utf-8")
LINK = re.compile(r"https?://\S+(/gerador/convite/[A-Za-z0-9_-]+/)")
PASSWORD = "entulho-certo-2026"


@pytest.fixture
def phone(chromium, live_server):
    context = chromium.new_context(viewport=PHONE, locale="pt-BR", is_mobile=True, has_touch=True)
    page = context.new_page()
    page.recorder = Recorder(page, live_server.url)
    yield page
    context.close()


def assert_fits(page, name: str) -> None:
    result = page.evaluate(MEASURE)
    assert result["scrollWidth"] <= result["innerWidth"], (name, result["wide"])
    assert not result["small"], (name, result["small"])


def test_a_generator_registers_from_a_phone(phone, live_server, shot):
    build_world()
    page = phone
    assert page.goto(f"{live_server.url}/gerador/cadastro/").status == 200
    assert_fits(page, "cadastro")
    shot(page, "gerador-cadastro-celular.png")

    page.get_by_label("Nome ou razão social").fill("Maria da Obra")
    page.get_by_label("CPF ou CNPJ").fill("529.982.247-26")  # wrong check digit
    page.get_by_label("E-mail").fill("maria@exemplo.com.br")
    page.get_by_label("Usuário").fill("maria")
    page.get_by_label("Senha", exact=True).fill(PASSWORD)
    page.get_by_label("Repita a senha").fill(PASSWORD)
    with page.expect_navigation():
        page.get_by_role("button", name="Enviar cadastro").click()

    assert "CPF inválido" in page.inner_text("#id_document_error")
    assert not GeneratorRegistration.objects.exists()
    assert_fits(page, "cadastro com erro")
    shot(page, "gerador-cadastro-erro-celular.png")

    page.get_by_label("CPF ou CNPJ").fill("529.982.247-25")
    page.get_by_label("Senha", exact=True).fill(PASSWORD)  # a browser never refills passwords
    page.get_by_label("Repita a senha").fill(PASSWORD)
    with page.expect_navigation():
        page.get_by_role("button", name="Enviar cadastro").click()

    assert page.url.endswith("/gerador/cadastro/situacao/")
    assert "Aguardando o Núcleo" in page.inner_text("main")
    assert_fits(page, "situação do cadastro")
    shot(page, "gerador-cadastro-situacao-celular.png")
    user = get_user_model().objects.get(username="maria")
    assert roles.membership(user) is None
    # The form sent back with the wrong CPF answered 400, as it should.
    assert page.recorder.js_errors(expected_error_page=f"{live_server.url}/gerador/cadastro/") == []


def test_an_invited_person_opens_the_link_of_the_email_on_a_phone(
    phone, live_server, shot, smtp_server
):
    world = build_world()
    accounts.invite(world.nucleo, "gama@exemplo.com.br", CNPJ_GAMA)  # sent on commit
    [message] = smtp_server.to("gama@exemplo.com.br")
    path = LINK.search(Received.body(message)).group(1)
    page = phone

    assert page.goto(live_server.url + path).status == 200
    assert "Construtora Gama Ltda." in page.inner_text("main")
    assert_fits(page, "convite")
    shot(page, "gerador-convite-celular.png")
    page.get_by_label("Usuário").fill("gama-obras")
    page.get_by_label("Senha", exact=True).fill(PASSWORD)
    page.get_by_label("Repita a senha").fill(PASSWORD)
    with page.expect_navigation():
        page.get_by_role("button", name="Criar a conta").click()

    user = get_user_model().objects.get(username="gama-obras")
    assert roles.membership(user).generator == world.gama
    # Signed in as the new account: the dashboard sends a generator to its own pages.
    assert page.url.endswith("/gerador/")
    assert page.locator(".nav-user").text_content() == "(gama-obras)"
    again = page.goto(live_server.url + path)
    assert again.status == 410
    assert "já foi usado" in page.inner_text("main")
    assert_fits(page, "convite usado")
    shot(page, "gerador-convite-usado-celular.png")
    # Script errors only: the used link's 410 is what the page must answer.
    assert page.recorder.page_errors == []


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["celular", "computador"])
def test_the_nucleo_and_transporter_pages_fit(chromium, live_server, shot, viewport):
    world = build_world()
    registration = pending_registration("cadastro-pendente", CNPJ_GAMA, municipality=world.town)
    accounts.invite(world.nucleo, "gama@exemplo.com.br", CNPJ_GAMA)
    width = "celular" if viewport == PHONE else "computador"
    pages = {
        world.nucleo: [
            ("/nucleo/geradores/cadastros/", "fila"),
            (f"/nucleo/geradores/cadastros/{registration.pk}/", "analise"),
            ("/nucleo/geradores/convites/", "convites-nucleo"),
        ],
        world.alfa_user: [("/transportador/geradores/convites/", "convites-transportador")],
    }
    for user, paths in pages.items():
        context = chromium.new_context(viewport=viewport, locale="pt-BR")
        page = context.new_page()
        page.recorder = Recorder(page, live_server.url)
        log_in(page, live_server, user)
        for path, name in paths:
            assert page.goto(live_server.url + path).status == 200, path
            assert_fits(page, f"{name} {width}")
            shot(page, f"gerador-{name}-{width}.png")
        assert page.recorder.js_errors() == []
        context.close()
