"""Every page a citizen, transporter, operator, inspector or the Núcleo uses, at a desktop's
1366×900 and a phone's 390×844 in a real headless Chromium: no horizontal scrolling
(`document.documentElement.scrollWidth <= window.innerWidth`), and every visible tap target
(a, button, input, select, textarea, summary, and the label of a checkbox or radio) at least
44 × 44 px, also after a form comes back with errors.

The tap-target rule (WCAG 2.5.8's inline exception): a link whose box is inline and whose
block has other text around it (a link in running text, e.g. "as regras do CTR" in a
sentence) is exempt; a checkbox or radio is measured by its label (the label is what the
finger hits); elements off-screen by design (the skip link until focused) or hidden are not
measured. Leaflet's own controls count (zoom buttons, the layer list's rows).

One test per role and width: each visits that role's pages in turn (the world is built once
per test), and the failure lists every page and element that breaks the rule."""

from __future__ import annotations

import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from django.utils import timezone

from ctr import closing, services
from ctr.custody import certificates
from fiscalization.models import DumpingReport
from tests.builders import offset, point
from tests.ctr.onward_world import inbound, onward
from tests.ctr_world import build_world, issue_hours_ago
from tests.e2e.conftest import Recorder, log_in
from tests.enforcement_world import at, open_case
from tests.nucleo.flows_world import build_flows

# The world issues CTRs against registrations of fixed dates: the clock on TODAY.
pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

WIDTHS = {"desktop": (1366, 900), "phone": (390, 844)}
MIN_TARGET = 44

# What the page measures: its scroll width, and every tap target under 44 px (described).
MEASURE = (Path(__file__).parent / "measure_layout.js").read_text(encoding="utf-8")


@pytest.fixture
def world():
    world = build_world()
    world.ctr = issue_hours_ago(
        world, 100
    )  # overdue: the Núcleo map and the suspects have something
    issue_hours_ago(world, 3)
    base = world.origin.coords
    now = timezone.now()
    for east, north in [(0, 0), (15, 5), (5, 20), (25, 25)]:
        DumpingReport.objects.create(
            municipality=world.town,
            location=point(*offset(*base, east + 400, north + 300)),
            category="LOTE_VAGO",
            created_at=now - datetime.timedelta(days=2),
        )
    world.report = DumpingReport.objects.order_by("pk").first()
    world.case = open_case(world, opened_at=at(2025, 3, 3, 9))
    # Loads on to their final destinations: the Núcleo's flow diagram, recycling rate and
    # stock charts have something to draw.
    build_flows(world)
    # Stock at the ATT and sorted waste shipped onward: the operator's stock pages.
    inbound(world, {"A": "10", "B": "2"}, received="12")
    world.onward = onward(world, {"A": "4"})
    # A worksite's load through the ATT, partly on to the recycling area: its certificate.
    site = services.WorksiteData("Rua das Obras, 9", world.origin, "Centro")
    load = inbound(world, {"A": "4", "B": "1"}, received="5", worksite=site)
    closing.receive(onward(world, {"A": "3"}), world.recycling_operator, Decimal("3"))
    world.site, world.generator = load.worksite_id, load.generator_id
    world.cdf = certificates.issue(certificates.Scope.of_worksite(load.worksite), world.nucleo)[
        0
    ].code
    return world


def submit(page, selector: str) -> None:
    """Submit a form as it is (the server's validation answers, not the browser's)."""
    with page.expect_navigation():
        page.evaluate(f"document.querySelector({selector!r}).requestSubmit()")


def fill_if_present(page, selector: str, value: str) -> None:
    if page.locator(selector).count():
        page.fill(selector, value)


def wrong_password(page):
    page.fill("input[name=username]", "alfa")
    page.fill("input[name=password]", "errada")
    submit(page, "main form")


def empty_report(page):
    submit(page, "#denuncia")


def ctr_with_findings(world):
    """The issue form sent back with several findings: 50 m³ in a 5 m³ caçamba, the discharge
    point outside every licensed area, the transport date a year ahead."""

    def act(page):
        page.select_option("#id_vehicle", index=1)
        page.select_option("#id_equipment", index=1)
        fill_if_present(page, "#id_transport_date", "2099-01-01")
        fill_if_present(page, "#id_generator_name", "Maria da Obra com um nome bem comprido")
        fill_if_present(page, "#id_generator_document", "529.982.247-25")
        fill_if_present(page, "#id_worksite_address", "Rua das Flores, 10")
        x, y = world.origin.coords
        fill_if_present(page, "#id_origin_lat", f"{y:.6f}".replace(".", ","))
        fill_if_present(page, "#id_origin_lon", f"{x:.6f}".replace(".", ","))
        fill_if_present(page, "#id_destination_lat", f"{y + 0.01:.6f}".replace(".", ","))
        fill_if_present(page, "#id_destination_lon", f"{x + 0.01:.6f}".replace(".", ","))
        page.select_option("#id_waste-0-waste_class", index=1)
        page.fill("#id_waste-0-volume_m3", "50")
        submit(page, "#form-ctr")
        assert page.locator("#erros li").count() >= 2, "the form came back without findings"

    act.__name__ = "ctr_with_findings"
    return act


def bad_csv(page):
    page.set_input_files(
        "input[type=file]",
        files=[
            {
                "name": "ctrs.csv",
                "mimeType": "text/csv",
                "buffer": b"data;placa\n31/02/2026;ZZZ\n",
            }
        ],
    )
    submit(page, "main form[enctype]")


def empty_action(page):
    submit(page, "main form.narrow")


def onward_over_stock(page):
    """The onward form sent back: more class A than the ATT holds, and no transporter."""
    page.select_option("#id_destination_facility", index=1)
    page.select_option("#id_waste-0-waste_class", "A")
    page.fill("#id_waste-0-volume_m3", "50")
    submit(page, "#form-ctr")
    assert page.locator("#erros li").count() >= 2, "the form came back without findings"


def processing_over_stock(page):
    page.select_option("#id_b-waste_class", "A")
    page.select_option("#id_b-kind", index=1)
    page.fill("#id_b-volume_m3", "50")
    submit(page, "#form-beneficiamento")
    assert page.locator("#id_b-volume_m3_error").count() == 1


def pages_of(role: str, world) -> list[tuple[str, object]]:
    """(path, what to do there before measuring) for each page of the role."""
    ctr, case = world.ctr.number, world.case.pk
    if role == "public":
        return [
            ("/", None),
            ("/onde-descartar/", None),
            (f"/onde-descartar/?lat={world.origin.y}&lon={world.origin.x}", None),
            ("/denunciar/", None),
            ("/denunciar/", empty_report),
            (f"/denuncia/{world.report.protocol}/", None),
            ("/verificar/", None),
            (f"/verificar/{ctr}/", None),
            (f"/verificar/cdf/{world.cdf}/", None),
            ("/regras/", None),
            ("/entrar/", None),
            ("/entrar/", wrong_password),
        ]
    if role == "transporter":
        return [
            ("/transportador/ctrs/", None),
            ("/transportador/ctrs/novo/", None),
            ("/transportador/ctrs/novo/", ctr_with_findings(world)),
            (f"/transportador/ctrs/{ctr}/", None),
            ("/transportador/ctrs/importar/", None),
            ("/transportador/ctrs/importar/", bad_csv),
            ("/transportador/veiculos/", None),
            ("/transportador/equipamentos/", None),
            ("/taxas/", None),
            (f"/obras/{world.site}/relatorio/", None),
            (f"/obras/{world.site}/cdf/", None),
        ]
    if role == "operator":
        return [
            ("/recebimentos/", None),
            ("/recebimentos/saidas/nova/", None),
            ("/recebimentos/saidas/nova/", onward_over_stock),
            (f"/recebimentos/saidas/{world.onward.number}/", None),
            ("/recebimentos/estoque/", None),
            ("/recebimentos/estoque/", processing_over_stock),
        ]
    if role == "inspector":
        return [
            ("/fiscalizacao/", None),
            (f"/fiscalizacao/denuncias/{world.report.pk}/", None),
            ("/fiscalizacao/pontos-criticos/", None),
            (f"/fiscalizacao/denuncias/{world.report.pk}/suspeitos/", None),
            ("/fiscalizacao/veiculo/", None),
            ("/fiscalizacao/processos/", None),
            (f"/fiscalizacao/processos/{case}/", None),
            (f"/fiscalizacao/processos/{case}/notificar/", None),
            (f"/fiscalizacao/processos/{case}/notificar/", empty_action),
            (f"/fiscalizacao/processos/{case}/auto/", None),
        ]
    return [
        ("/nucleo/", None),
        ("/nucleo/mapa/", None),
        ("/nucleo/exportar/", None),
        (f"/geradores/{world.generator}/cdf/", None),
    ]


USERS = {
    "public": None,
    "transporter": "alfa_user",
    "operator": "operator",
    "inspector": "fiscal",
    "nucleo": "nucleo",
}


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("role", list(USERS))
def test_pages_fit_the_screen_and_the_finger(chromium, live_server, world, role, width):
    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    if USERS[role]:
        log_in(page, live_server, getattr(world, USERS[role]))
    problems: list[str] = []
    try:
        for path, act in pages_of(role, world):
            response = page.goto(live_server.url + path)
            assert response.status == 200, f"{path}: HTTP {response.status}"
            label = path
            if act is not None:
                act(page)
                label = f"{path} (after {act.__name__})"
            page.wait_for_load_state("load")
            measured = page.evaluate(MEASURE)
            if measured["scrollWidth"] > measured["innerWidth"]:
                problems.append(
                    f"{label}: scrolls sideways ({measured['scrollWidth']} px in "
                    f"{measured['innerWidth']}): {measured['wide'][:3]}"
                )
            problems += [
                f"{label}: tap target under {MIN_TARGET} px: {s}" for s in measured["small"]
            ]
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    assert recorder.page_errors == []
