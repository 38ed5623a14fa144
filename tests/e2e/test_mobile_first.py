"""Mobile first: every page a transporter's driver or a facility's operator
uses, in every state it shows (a list filtered, a CTR issued, received, refused, a form sent
back with errors, a confirmation asked), at a phone's 390×844 in a real headless Chromium:

- no horizontal scrolling (`document.documentElement.scrollWidth <= window.innerWidth`);
- every visible tap target (a, button, input, select, textarea, summary, and the label of a
  checkbox or radio, which is what the finger hits) at least 44 × 44 CSS px (WCAG 2.5.5).

The one exception (WCAG 2.5.8's "inline"): a link whose box is inline inside a paragraph
(`<p>`) with words of the paragraph's own around it (not the text of a button, link or field
beside it), e.g. "as regras do CTR" in a sentence, or in the map's credit line (Leaflet's
attribution, which the tiles' licence asks for). A link alone in its paragraph or beside a
button, in a list item, a table cell, a definition or a menu is measured. Hidden elements and
those off-screen by design (the skip link until focused) are not measured.

The same pages at a desktop's 1280×800: no horizontal scrolling.

To cover a new page, append a `Visit` to TRANSPORTER or OPERATOR: its path may name the
world's CTRs and places as format fields ({issued}, {received}, {refused}, {onward}, {site});
`act` runs on the page before it is measured (fill and send a form, open a dialog); `status`
is the HTTP status the path answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

import pytest
from django.test import override_settings

from ctr import closing, services
from ctr.field import corrections
from ctr.field import templates as ctr_templates
from ctr.rules import WasteLine
from tests.ctr.onward_world import inbound, onward
from tests.ctr.test_ctr_csv import mixed_file
from tests.ctr_world import TODAY, build_world, issue_hours_ago
from tests.e2e.conftest import Recorder, log_in, map_ready
from tests.e2e.test_issue_ctr import click_on_map
from tests.e2e.test_issue_form_geolocation import location_refused
from tests.e2e.test_phone_layout import (
    MEASURE,
    MIN_TARGET,
    bad_csv,
    ctr_with_findings,
    onward_over_stock,
    processing_over_stock,
    submit,
)
from tests.webhooks.receiver import Receiver
from webhooks import delivery
from webhooks import services as webhooks
from webhooks.models import EventType

# The world issues CTRs against registrations of fixed dates: the clock on TODAY.
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

PHONE = (390, 844)
DESKTOP = (1280, 800)
# The blocks whose inline links are running text (see the module's docstring); the map's
# credit line ("Leaflet | © OpenStreetMap") is one sentence the tile licence asks for.
RUNNING_TEXT = "p, .leaflet-control-attribution"


@dataclass(frozen=True)
class Visit:
    path: str
    act: Callable | None = None
    status: int = 200  # of the page's GET (a list with invalid filters answers 400)

    def label(self, names: dict) -> str:
        path = self.path.format(**names)
        return f"{path} (after {self.act.__name__})" if self.act else path


# --- what is done on a page before it is measured ----------------------------------------------


def good_and_bad_csv(page):
    """The import's report: some rows issued, others refused with their problems."""
    page.set_input_files(
        "input[type=file]",
        files=[{"name": "ctrs.csv", "mimeType": "text/csv", "buffer": mixed_file(page.world)}],
    )
    submit(page, "main form[enctype]")
    assert page.locator("table").count(), "the import showed no report"


def empty_form(page):
    """The page's first POST form in <main> sent empty: its errors on the fields. Not a
    row's "Desativar"/"Reativar" button (a form of its own, which would switch the fleet off
    for every page measured after it)."""
    submit(page, "main form[method=post]:not([action$='ativar/'])")


def cancel_dialog(page):
    """The JavaScript confirmation of a cancellation, open."""
    page.fill("#id_cancel-reason", "Carga desistida pelo gerador")
    page.click("form[data-confirm] button[type=submit]")
    page.wait_for_selector("dialog.confirm-dialog[open]")


def cancel_confirm_page(page):
    """The server's confirmation page of a cancellation (what a browser without JS gets)."""
    page.fill("#id_cancel-reason", "Carga desistida pelo gerador")
    with page.expect_navigation():
        page.evaluate("document.querySelector('form[data-confirm]').submit()")


def refuse_open(page):
    """The found load's refusal open under its row."""
    page.click("details.refuse > summary")


def receive_dialog(page):
    page.click("form.receive-form button[type=submit]")
    page.wait_for_selector("dialog.confirm-dialog[open]")


def receive_confirm_page(page):
    with page.expect_navigation():
        page.evaluate("document.querySelector('form.receive-form').submit()")


def cards_labelled(page):
    """On a phone a table's rows are cards labelled by its headers: the label of a sortable
    column is its name, without the sort mark and state."""
    labels = page.eval_on_selector_all(
        "table.data-table tbody tr:first-child > [data-label]",
        "cells => cells.map(c => c.dataset.label)",
    )
    assert labels[:3] == ["Número", "Transporte", "Situação"], labels


# The pages of daily field work: templates, corrections, webhooks, offline, reception location.


def template_volume_emptied(page):
    """The template's short confirmation sent without its volume: the whole issue form comes
    back, filled in, with the finding beside the field."""
    page.fill("#id_waste-0-volume_m3", "")
    submit(page, "main form[method=post]")
    assert page.locator("#id_waste-0-volume_m3").count(), "the issue form did not come back"


def refuse_without_reason(page):
    """A correction's refusal sent without its reason: the error beside the field."""
    submit(page, "main .correction-actions form[action$='/recusar/']")
    assert page.locator(".field-invalid").count(), "the refusal came back without an error"


def register_webhook(page):
    """A webhook registered: its secret, shown once."""
    page.fill(
        "#id_url", page.world.receiver.url + "/um-caminho-bem-comprido-do-sistema-de-despacho"
    )
    page.get_by_label("CTR emitido", exact=True).check()
    page.get_by_label("Correção proposta").check()
    submit(page, "main form[method=post]")
    assert page.locator("#segredo").count(), "the secret was not shown"


def rotate_secret(page):
    submit(page, "main form[action$='/segredo/']")
    assert page.locator("#segredo").count(), "the new secret was not shown"


def replay_failed(page):
    submit(page, "main .delivery-failed form")
    assert "recolocada na fila" in page.inner_text("main")


def subnav_open(page):
    """The sub-menu's other entries open from "Mais" (a phone's; a desktop has no button)."""
    button = page.locator(".subnav-button")
    if button.is_visible():
        button.click()
        assert page.get_attribute(".subnav-button", "aria-expanded") == "true"


def location_ready(page):
    """A found load open, the device's location read into its receive form."""
    page.wait_for_selector("body[data-location-ready]", state="attached")
    assert "será enviada com o recebimento" in page.inner_text("#local-aparelho")


# The CTRs kept on the phone in each of their states; the browser told it is offline (without
# cutting the connection, so the page still loads its own files), so that none is sent.
KEPT_ON_THE_PHONE = """(official) => {
  Object.defineProperty(navigator, "onLine", { get: () => false, configurable: true });
  const hour = 3600 * 1000;
  const ago = (hours) => new Date(Date.now() - hours * hour).toISOString();
  const summary = "ABC-1D23 · Rua Doutor Martiniano de Oliveira Castro, 1234 — fundos";
  const finding = {
    code: "VOLUME_OVER_CAPACITY", severity: "warning",
    message: "O volume declarado passa da capacidade nominal da caçamba C-01.",
  };
  const records = [
    { number: "PROV-AB12-0004", state: "pending", departure: ago(1) },
    { number: "PROV-AB12-0003", state: "pending", departure: ago(30),
      problem: "O servidor não respondeu (502); nova tentativa depois." },
    { number: "PROV-AB12-0002", state: "synced", departure: ago(50),
      official: official, findings: [finding] },
    { number: "PROV-AB12-0001", state: "refused", departure: ago(60),
      problem: "Dados inválidos. A placa ZZZ9999 não é de um veículo ativo do transportador.",
      findings: [finding] },
  ];
  return Promise.all(records.map((r) => window.CTROfflineQueue.put(
    Object.assign({ summary: summary, payload: {}, transporter: null }, r))))
    .then(() => window.dispatchEvent(new Event("offline")));
}"""


def kept_on_the_phone(page):
    """The issue form's list of the CTRs kept on the phone (pending, late, sent, refused). Its
    Visit is the last of the transporter's pages under /transportador/ (where the offline
    script runs), so that the pending ones are never sent."""
    page.wait_for_selector("html[data-offline=pronto]", state="attached", timeout=20_000)
    page.evaluate(KEPT_ON_THE_PHONE, page.world.names["received"])
    page.wait_for_selector("#ctr-offline li[data-numero='PROV-AB12-0001']")
    assert page.locator("#ctr-offline .offline-late").count() == 1


TRANSPORTER = [
    Visit("/painel/"),
    Visit("/transportador/ctrs/", cards_labelled),
    Visit(
        "/transportador/ctrs/?status=issued&date_from=01/11/2026&date_to=30/11/2026"
        "&plate=ABC&number=2026"
    ),
    Visit("/transportador/ctrs/?date_from=31/02/2026&plate=AB%231&ordem=volume", status=400),
    Visit("/transportador/ctrs/novo/"),
    Visit("/transportador/ctrs/novo/", ctr_with_findings),
    # The location asked for without the permission: the refusal said beside the button.
    Visit("/transportador/ctrs/novo/", location_refused),
    Visit("/transportador/ctrs/{issued}/"),
    Visit("/transportador/ctrs/{issued}/", cancel_dialog),
    Visit("/transportador/ctrs/{issued}/", cancel_confirm_page),
    Visit("/transportador/ctrs/{received}/"),
    Visit("/transportador/ctrs/{refused}/"),
    Visit("/transportador/ctrs/importar/"),
    Visit("/transportador/ctrs/importar/", good_and_bad_csv),
    Visit("/transportador/ctrs/importar/", bad_csv),
    Visit("/transportador/veiculos/"),
    Visit("/transportador/veiculos/", empty_form),
    Visit("/transportador/veiculos/", subnav_open),
    Visit("/transportador/equipamentos/"),
    Visit("/transportador/equipamentos/", empty_form),
    Visit("/transportador/geradores/convites/"),
    Visit("/transportador/geradores/convites/", empty_form),
    # The templates.
    Visit("/transportador/modelos/"),
    Visit("/transportador/modelos/novo/"),
    Visit("/transportador/modelos/novo/", empty_form),
    Visit("/transportador/modelos/{template}/editar/"),
    Visit("/transportador/modelos/{template}/emitir/"),
    Visit("/transportador/modelos/{template}/emitir/", template_volume_emptied),
    # The corrections (the CTR's section, proposing, answering, disputing).
    Visit("/transportador/ctrs/{to_transporter}/"),
    Visit("/ctrs/{received}/correcoes/"),
    Visit("/ctrs/{received}/correcoes/", empty_form),
    Visit("/ctrs/{to_transporter}/correcoes/"),
    Visit("/ctrs/{to_transporter}/correcoes/", refuse_without_reason),
    Visit("/ctrs/{to_operator}/correcoes/"),
    Visit("/ctrs/{disputed}/correcoes/"),
    # The offline pieces of the issue form (last under /transportador/).
    Visit("/transportador/ctrs/novo/", kept_on_the_phone),
    # The webhooks.
    Visit("/integracoes/webhooks/"),
    Visit("/integracoes/webhooks/", empty_form),
    Visit("/integracoes/webhooks/", register_webhook),
    Visit("/integracoes/webhooks/{endpoint}/"),
    Visit("/integracoes/webhooks/{endpoint}/", replay_failed),
    Visit("/integracoes/webhooks/{endpoint}/", rotate_secret),
    Visit("/taxas/"),
    Visit("/obras/{site}/relatorio/"),
    Visit("/regras/"),
    Visit("/sair/"),
]

OPERATOR = [
    Visit("/painel/"),
    Visit("/recebimentos/"),
    Visit("/recebimentos/?busca={issued}"),
    Visit("/recebimentos/?busca={issued}", refuse_open),
    Visit("/recebimentos/?busca={issued}", receive_dialog),
    Visit("/recebimentos/?busca={issued}", receive_confirm_page),
    Visit("/recebimentos/?busca=ZZZ0000"),
    Visit("/recebimentos/saidas/nova/"),
    Visit("/recebimentos/saidas/nova/", onward_over_stock),
    Visit("/recebimentos/saidas/{onward}/"),
    Visit("/recebimentos/estoque/"),
    Visit("/recebimentos/estoque/", processing_over_stock),
    Visit("/verificar/{received}/"),
    # The reception with the device's location.
    Visit("/recebimentos/?busca={issued}", location_ready),
    # The corrections.
    Visit("/ctrs/{received}/correcoes/"),
    Visit("/ctrs/{to_operator}/correcoes/"),
    Visit("/ctrs/{to_operator}/correcoes/", refuse_without_reason),
    Visit("/ctrs/{to_transporter}/correcoes/"),
    Visit("/ctrs/{disputed}/correcoes/"),
    Visit("/verificar/{corrected}/"),
    # The webhooks.
    Visit("/integracoes/webhooks/"),
    Visit("/integracoes/webhooks/{op_endpoint}/"),
    Visit("/integracoes/webhooks/{op_endpoint}/", rotate_secret),
    Visit("/regras/"),
    Visit("/sair/"),
]

ROLES = {"transporter": ("alfa_user", TRANSPORTER), "operator": ("operator", OPERATOR)}


@pytest.fixture
def world():
    world = build_world()
    # Each party's webhook, to a real receiver on loopback that takes the
    # first delivery and answers 500 to every other one (out of attempts: failed).
    world.receiver = Receiver(statuses=[200, 500]).start()
    endpoint = webhooks.register(
        world.alfa_user,
        world.receiver.url,
        [EventType.ISSUED, EventType.REFUSED, EventType.CORRECTION_PROPOSED],
        "Sistema de despacho da Alfa",
    )
    op_endpoint = webhooks.register(
        world.operator, world.receiver.url, [EventType.ISSUED, EventType.RECEIVED]
    )
    issued = issue_hours_ago(world, 3)
    refused = issue_hours_ago(world, 2)
    closing.refuse(refused, world.operator, "Carga com gesso misturado")
    # Stock at the ATT, with a registered worksite (its report), and sorted waste shipped on.
    site = services.WorksiteData("Rua das Obras, 9", world.origin, "Centro")
    received = inbound(world, {"A": "4", "B": "1"}, received="5", worksite=site)
    inbound(world, {"A": "10", "B": "2"}, received="12")
    shipped = onward(world, {"A": "4"})
    # A template; a correction for each party to answer, one
    # refused (to send to the Núcleo) and one approved.
    template = ctr_templates.from_ctr(received, world.alfa_user, "Rua das Obras, 9 → ATT Vale")
    less = corrections.Proposal(received_volume_m3=Decimal("2.5"))
    to_transporter = inbound(world, {"A": "3"}, received="3")
    corrections.propose(to_transporter, world.operator, less, "A balança marcou 2,5 m³")
    to_operator = inbound(world, {"A": "3"}, received="3")
    corrections.propose(
        to_operator,
        world.alfa_user,
        corrections.Proposal(waste=[WasteLine("A", Decimal("2")), WasteLine("B", Decimal("1"))]),
        "Havia 1 m³ de madeira na caçamba",
    )
    disputed = inbound(world, {"A": "3"}, received="3")
    refused_correction = corrections.propose(disputed, world.alfa_user, less, "Caçamba rasa")
    corrections.refuse(refused_correction, world.operator, "A balança marcou 3 m³")
    corrected = inbound(world, {"A": "3"}, received="3")
    corrections.approve(
        corrections.propose(corrected, world.operator, less, "A balança marcou 2,5 m³"),
        world.alfa_user,
    )
    world.receiver.secret = endpoint.secret
    with override_settings(WEBHOOKS_MAX_ATTEMPTS=1):
        delivery.deliver_due()
    world.names = {
        "issued": issued.number,
        "received": received.number,
        "refused": refused.number,
        "onward": shipped.number,
        "site": received.worksite_id,
        "template": template.pk,
        "to_transporter": to_transporter.number,
        "to_operator": to_operator.number,
        "disputed": disputed.number,
        "corrected": corrected.number,
        "endpoint": endpoint.pk,
        "op_endpoint": op_endpoint.pk,
    }
    yield world
    world.receiver.stop()


def measure(chromium, live_server, world, role: str, size: tuple[int, int]) -> list[str]:
    """Every problem of the role's pages at `size`: (label, kind, what)."""
    user, visits = ROLES[role]
    width, height = size
    options = {}
    if role == "operator":  # its device at the ATT's gate, its location allowed
        gate = world.inside(world.att)
        options = {
            "geolocation": {"latitude": gate.y, "longitude": gate.x, "accuracy": 12},
            "permissions": ["geolocation"],
        }
    context = chromium.new_context(
        viewport={"width": width, "height": height}, locale="pt-BR", **options
    )
    page = context.new_page()
    page.world = world
    recorder = Recorder(page, live_server.url)
    log_in(page, live_server, getattr(world, user))
    problems: list[str] = []
    try:
        for visit in visits:
            path = visit.path.format(**world.names)
            response = page.goto(live_server.url + path)
            assert response.status == visit.status, f"{path}: HTTP {response.status}"
            if visit.act is not None:
                visit.act(page)
            page.wait_for_load_state("load")
            label = visit.label(world.names)
            measured = page.evaluate(MEASURE, {"runningText": RUNNING_TEXT})
            if measured["scrollWidth"] > measured["innerWidth"]:
                problems.append(
                    f"{label}: scrolls sideways ({measured['scrollWidth']} px in "
                    f"{measured['innerWidth']}): {measured['wide'][:3]}"
                )
            if size == PHONE:
                problems += [
                    f"{label}: tap target under {MIN_TARGET} px: {s}" for s in measured["small"]
                ]
    finally:
        context.close()
    assert recorder.page_errors == []
    return problems


@pytest.mark.parametrize("role", list(ROLES))
def test_a_phone_fits_the_page_and_the_finger(chromium, live_server, world, role):
    problems = measure(chromium, live_server, world, role, PHONE)
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)


@pytest.mark.parametrize("role", list(ROLES))
def test_a_desktop_does_not_scroll_sideways(chromium, live_server, world, role):
    problems = measure(chromium, live_server, world, role, DESKTOP)
    assert not problems, "\n".join(problems)


def test_the_exception_for_links_in_running_text_is_narrow(chromium, live_server, world):
    """The rule can fail: a small link alone in a list item, in a <div>'s text or beside a
    button is reported; one inside a sentence is not."""
    context = chromium.new_context(viewport={"width": PHONE[0], "height": PHONE[1]})
    page = context.new_page()
    try:
        page.goto(live_server.url + "/regras/")
        page.evaluate(
            """() => {
            const main = document.querySelector("main");
            main.insertAdjacentHTML("beforeend",
              '<p>Leia <a href="#" id="em-texto">as regras</a> do CTR.</p>' +
              '<ul><li><a href="#" id="sozinho" style="font-size:10px">só</a></li></ul>' +
              '<div>Texto e <a href="#" id="em-div" style="font-size:10px">link</a></div>' +
              '<p><button>Emitir</button> <a href="#" id="ao-lado">Voltar</a></p>');
            }"""
        )
        small = page.evaluate(MEASURE, {"runningText": RUNNING_TEXT})["small"]
    finally:
        context.close()
    assert any("a#sozinho" in s for s in small), small
    assert any("a#em-div" in s for s in small), small
    assert any("a#ao-lado" in s for s in small), small
    assert not any("a#em-texto" in s for s in small), small


# --- the transporter's sub-menu on a phone ------------------------------------------------------

DAILY = ["CTRs", "Emitir CTR", "Modelos"]
OFFICE = ["Importar CSV", "Veículos", "Equipamentos", "Convidar gerador", "Webhooks"]


def shown_entries(page) -> list[str]:
    return [a.inner_text() for a in page.locator(".subnav a").all() if a.is_visible()]


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_the_transporters_menu_takes_one_row_of_a_phone(chromium, live_server, world, javascript):
    """Eight entries took four rows of a 390 px phone (a quarter of its first screen): the
    driver's three stay in one row with "Mais", which opens the office's five, one tap each.
    Without JavaScript, and on a desktop, the row holds all eight."""
    context = chromium.new_context(
        viewport={"width": PHONE[0], "height": PHONE[1]}, java_script_enabled=javascript
    )
    page = context.new_page()
    try:
        log_in(page, live_server, world.alfa_user)
        page.goto(live_server.url + "/transportador/veiculos/")
        if not javascript:
            assert shown_entries(page) == DAILY + OFFICE
            assert not page.locator(".subnav-button").is_visible()
            return
        row = page.locator(".subnav").bounding_box()
        assert row["height"] < 2 * MIN_TARGET, row
        assert shown_entries(page) == DAILY
        button = page.get_by_role("button", name="Mais opções do transportador")
        # The page shown is one of the hidden entries: the button says it holds it.
        assert (
            page.eval_on_selector(".subnav-button", "b => getComputedStyle(b).color")
            == "rgb(255, 255, 255)"
        )
        button.click()
        assert button.get_attribute("aria-expanded") == "true"
        assert shown_entries(page) == DAILY + OFFICE
        for name in OFFICE:
            box = page.locator(".subnav a", has_text=name).bounding_box()
            assert box["height"] >= MIN_TARGET and box["width"] >= MIN_TARGET, (name, box)
        with page.expect_navigation():
            page.locator(".subnav a", has_text="Webhooks").click()
        assert page.url.endswith("/integracoes/webhooks/")

        page.set_viewport_size({"width": DESKTOP[0], "height": DESKTOP[1]})
        assert shown_entries(page) == DAILY + OFFICE
        assert not button.is_visible()
    finally:
        context.close()


# --- the driver's journey: from opening the issue form to issued --------------------------------

# What a driver with one truck and one caçamba does on a phone, from "Emitir CTR" to the
# issued CTR (without a template): each entry one gesture; a typed field counts once.
DRIVER_GESTURES = 9


def test_a_driver_issues_from_a_phone_in_a_handful_of_gestures(chromium, live_server, world):
    """The day is today and the fleet of one truck and one caçamba is chosen already: the
    driver types the generator, the worksite and the volume, marks the origin on the map,
    picks the destination area (its point is placed inside it) and the class, and sends."""
    context = chromium.new_context(
        viewport={"width": PHONE[0], "height": PHONE[1]}, locale="pt-BR", has_touch=True
    )
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    log_in(page, live_server, world.alfa_user)
    gestures: list[str] = []

    def gesture(what: str, act: Callable) -> None:
        gestures.append(what)
        act()

    try:
        page.goto(live_server.url + "/transportador/ctrs/novo/")
        assert page.input_value("#id_transport_date") == TODAY.isoformat()
        assert page.locator("#id_vehicle option:checked").inner_text() == "ABC-1D23"
        assert page.locator("#id_equipment option:checked").inner_text().startswith("C-01")
        for name in ("waste-0-volume_m3", "origin_lat", "origin_lon"):
            assert page.get_attribute(f"#id_{name}", "inputmode") == "decimal", name
        assert page.get_attribute("#id_generator_document", "inputmode") == "numeric"

        gesture("nome", lambda: page.fill("#id_generator_name", "Maria da Obra"))
        gesture("CPF", lambda: page.fill("#id_generator_document", "52998224725"))
        gesture("endereço", lambda: page.fill("#id_worksite_address", "Rua das Flores, 10"))
        name = map_ready(page)
        origin = world.origin
        # The driver zooms in to the worksite (a pinch), then taps it.
        gesture(
            "zoom",
            lambda: page.evaluate(
                f"window['{name}'].setView([{origin.y}, {origin.x}], 15, {{animate: false}})"
            ),
        )
        gesture("origem", lambda: click_on_map(page, name, origin.x, origin.y))
        gesture(
            "destino",
            lambda: page.select_option("#id_destination_facility", str(world.att.pk)),
        )
        gesture("classe", lambda: page.select_option("#id_waste-0-waste_class", "A"))
        gesture("volume", lambda: page.fill("#id_waste-0-volume_m3", "2,5"))

        def send():
            with page.expect_navigation():
                page.get_by_role("button", name="Emitir CTR").tap()

        gesture("emitir", send)
        assert page.locator("#numero-ctr").count() == 1, page.inner_text("main")[:600]
    finally:
        context.close()
    assert recorder.page_errors == []
    assert len(gestures) <= DRIVER_GESTURES, gestures
