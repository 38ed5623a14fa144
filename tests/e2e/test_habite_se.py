"""The Habite-se declaration in a real headless Chromium, at a phone's 390×844 and a desktop's
1280×800: the generator sees why it cannot be issued yet (waste still in stock at the ATT) and asks
for it; the Núcleo finds the request in its queue, tries to issue it and is told why not, with
nothing written; once the stock reached the recycling area it issues it; anyone opens the public
verification page. No sideways scrolling, no network beyond the live server, no JavaScript
errors."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from generators.models import DeclarationStatus, HabiteSeDeclaration
from tests.ctr_world import build_world
from tests.e2e.conftest import Recorder, log_in
from tests.e2e.test_onward_pages import WIDTHS, submit
from tests.e2e.test_phone_layout import MEASURE, MIN_TARGET
from tests.generators.declaration_world import ADDRESS, gama_site, load, ship

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]


def fits(page) -> bool:
    """No sideways scrolling, and every tap target big enough for a finger (as
    tests/e2e/test_phone_layout.py measures them)."""
    measured = page.evaluate(MEASURE)
    small = measured["small"]
    assert not small, f"{page.url}: tap targets under {MIN_TARGET} px: {small}"
    return measured["scrollWidth"] <= measured["innerWidth"]


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_generator_asks_and_the_nucleo_issues_once_destined(chromium, live_server, shot, width):
    world = build_world()
    site = gama_site(world)
    load(world, site, {"A": "6"}, received="6")
    ship(world, {"A": "4"})  # 2 m³ still in stock at the ATT
    w, h = WIDTHS[width]
    recorders = []

    def new_page(user=None):
        context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
        page = context.new_page()
        recorders.append(Recorder(page, live_server.url))
        if user is not None:
            log_in(page, live_server, user)
        return page

    generator = new_page(world.generator_user)
    generator.goto(f"{live_server.url}/gerador/obras/{site.pk}/habite-se/")
    assert "2 m³ de classe A ainda em estoque na área “ATT”" in generator.inner_text("#pode-emitir")
    assert generator.locator("#previsto-transportado").is_visible()
    assert fits(generator), "the generator's page scrolls sideways"
    shot(generator, f"habite-se-gerador-{width}.png")
    # While the page lists a blocker, there is no request to send.
    assert generator.get_by_role("button", name="Pedir a declaração").count() == 0
    assert "quando não houver pendências" in generator.inner_text("#pedir-depois")

    ship(world, {"A": "2"})
    generator.reload()
    # A date after today is refused beside its field, and nothing is written.
    generator.fill("#id_ended_on", "2026-12-05")
    submit(generator, "Pedir a declaração")
    assert "é depois de hoje (30/11/2026)" in generator.inner_text("#id_ended_on_error")
    assert not HabiteSeDeclaration.objects.exists()
    assert fits(generator)
    generator.fill("#id_ended_on", "2026-11-20")
    generator.fill("#id_note", "Obra concluída; última caçamba em 02/11.")
    submit(generator, "Pedir a declaração")
    declaration = HabiteSeDeclaration.objects.get()
    assert f"Pedido nº {declaration.pk} em análise" in generator.inner_text("main")
    assert fits(generator)
    shot(generator, f"habite-se-pedido-{width}.png")

    nucleo = new_page(world.nucleo)
    nucleo.goto(f"{live_server.url}/nucleo/habite-se/")
    assert ADDRESS in nucleo.inner_text("main")
    assert fits(nucleo), "the queue scrolls sideways"
    shot(nucleo, f"habite-se-fila-{width}.png")
    with nucleo.expect_navigation():
        nucleo.get_by_role("link", name=f"Nº {declaration.pk}").click()
    assert urlsplit(nucleo.url).path == f"/nucleo/habite-se/{declaration.pk}/"
    assert fits(nucleo), "the review page scrolls sideways"
    shot(nucleo, f"habite-se-analise-{width}.png")
    submit(nucleo, "Emitir a declaração")
    declaration.refresh_from_db()
    assert declaration.status == DeclarationStatus.ISSUED
    assert f"Declaração emitida: código {declaration.code}." in nucleo.inner_text("main")
    assert fits(nucleo)
    shot(nucleo, f"habite-se-emitida-{width}.png")

    public = new_page()
    public.goto(f"{live_server.url}/verificar/habite-se/{declaration.code}/")
    text = public.inner_text("main")
    assert "Declaração autêntica" in text and ADDRESS not in text
    assert fits(public), "the verification page scrolls sideways"
    shot(public, f"habite-se-verificacao-{width}.png")

    for page in (generator, nucleo, public):
        page.context.close()
    # The refusals' own status (400, 409): the pages that said why.
    refusals = "Failed to load resource: the server responded with a status of 4"
    for recorder in recorders:
        assert [e for e in recorder.js_errors() if not e.startswith(refusals)] == []


@pytest.mark.parametrize("width", list(WIDTHS))
def test_a_load_after_the_page_opened_keeps_the_request_from_going(
    chromium, live_server, shot, width
):
    """The page offered the form, then a load left the worksite; the request sent from the open page
    is refused by the service (as the API's): the page says why and lists the blocker, offers no
    form until it is destined, and writes nothing."""
    world = build_world()
    site = gama_site(world)
    load(world, site, {"A": "2"}, received="2", facility=world.recycling)
    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    log_in(page, live_server, world.generator_user)
    page.goto(f"{live_server.url}/gerador/obras/{site.pk}/habite-se/")
    page.fill("#id_ended_on", "2026-11-20")
    late = load(world, site, {"A": "3"})  # on its way to the ATT

    submit(page, "Pedir a declaração")

    assert page.get_by_role("button", name="Pedir a declaração").count() == 0
    assert "quando não houver pendências" in page.inner_text("#pedir-depois")
    alert = page.inner_text(".flash-error")
    assert alert == (
        "O pedido não foi enviado: ainda há 1 pendência na destinação dos resíduos da obra: "
        f"o {late.number} (3 m³) ainda não foi recebido pela área “ATT”."
    )
    assert not HabiteSeDeclaration.objects.exists()
    assert fits(page)
    shot(page, f"habite-se-pendencia-{width}.png")
    refusal = "Failed to load resource: the server responded with a status of 409"
    assert [e for e in recorder.js_errors() if not e.startswith(refusal)] == []
    context.close()
