"""The JavaScript of what each role needs next, in a real headless Chromium: the operator reads the
QR code of a printed CTR (from a photo: the same decoder as the camera's frames), confirms in a
dialog before an irreversible step, sees "Enviando…" while the post is on its way (and cannot send
it twice), and the inspector's generator box suggests as one types. No network beyond the live
server, no JavaScript errors."""

from __future__ import annotations

import datetime
import os
from decimal import Decimal

import pytest
import segno
import time_machine
from playwright.sync_api import expect

from config.pdf import qr_matrix
from ctr import rules, services
from ctr.models import CTR, CTRStatus, Generator, Worksite
from tests.ctr_world import CPF_GENERATOR, TODAY, build_world
from tests.e2e.conftest import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]

SHOTS = os.environ.get("CTR_SCREENSHOT_DIR", "/tmp")
NOON = datetime.datetime(2026, 11, 30, 12, 0, tzinfo=datetime.UTC)


@pytest.fixture
def clock():
    # The live server runs in this process: its clock is frozen too (ticking, for the session).
    with time_machine.travel(NOON, tick=True):
        yield


@pytest.fixture
def world(clock):
    return build_world()


def issue(world, volume="3") -> CTR:
    request = services.IssueRequest(
        transport_date=TODAY,
        vehicle_plate="ABC1D23",
        origin=world.origin,
        destination=world.inside(world.att),
        waste=[rules.WasteLine("A", Decimal(volume), "entulho")],
        generator=services.GeneratorData("Maria da Obra", CPF_GENERATOR),
    )
    return services.issue(world.alfa, world.alfa_user, request)


def qr_png(path, url: str) -> None:
    """The QR code exactly as config/pdf.py draws it on the PDF (same matrix), as a photo."""
    printed = qr_matrix(url)
    qr = segno.make(url, error="m", micro=False, boost_error=False)
    assert tuple(tuple(bool(c) for c in row) for row in qr.matrix) == printed
    qr.save(str(path), scale=10, border=4)


def test_operator_reads_the_qr_code_and_lands_on_the_load(
    browser_page, live_server, world, tmp_path
):
    page = browser_page
    wanted, other = issue(world), issue(world, volume="2")
    image = tmp_path / "qr.png"
    qr_png(image, f"https://ctr.example.gov.br/verificar/{wanted.number}/")
    log_in(page, live_server, world.operator)
    page.goto(f"{live_server.url}/recebimentos/")
    # jsQR is there (served from our static files): the camera and photo buttons show.
    assert page.evaluate("typeof window.jsQR") == "function"
    assert page.locator("#ler-qr").is_visible()
    page.screenshot(path=f"{SHOTS}/roles-recebimentos-1366.png", full_page=True)
    with page.expect_navigation():
        page.locator("#foto-qr").set_input_files(str(image))
    assert f"busca={wanted.number}" in page.url
    assert page.locator("#busca").input_value() == wanted.number
    assert page.locator(".rr-number").all_inner_texts() == [wanted.number]
    assert (
        page.locator(f'[id="{wanted.number}"] details.reception-row').get_attribute("open")
        is not None
    )
    assert other.number not in page.locator("#secao-abertos").inner_text()
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=f"{SHOTS}/roles-recebimentos-390.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.recorder.js_errors() == [] and page.recorder.aborted == []


def test_a_qr_code_that_is_not_a_ctr_is_explained(browser_page, live_server, world, tmp_path):
    page = browser_page
    image = tmp_path / "other.png"
    segno.make("https://example.org/promo", error="m").save(str(image), scale=10)
    log_in(page, live_server, world.operator)
    page.goto(f"{live_server.url}/recebimentos/")
    page.locator("#foto-qr").set_input_files(str(image))
    expect(page.locator("#leitor-qr-status")).to_contain_text("não é de um CTR")
    assert page.url.endswith("/recebimentos/")


def test_confirming_a_reception_asks_in_a_dialog_then_sends(browser_page, live_server, world):
    page = browser_page
    ctr = issue(world)
    log_in(page, live_server, world.operator)
    page.goto(f"{live_server.url}/recebimentos/?busca={ctr.number}")
    page.locator(f"#id_r-{ctr.pk}-received_volume_m3").fill("2,5")
    page.get_by_role("button", name=f"Confirmar recebimento do {ctr.number}").click()
    dialog = page.locator("dialog.confirm-dialog")
    assert dialog.is_visible()
    assert "com 2,5 m³" in dialog.inner_text() and "não pode ser desfeito" in dialog.inner_text()
    page.screenshot(path=f"{SHOTS}/roles-confirmar-dialogo.png")
    dialog.get_by_role("button", name="Voltar").click()
    assert not dialog.is_visible()
    ctr.refresh_from_db()
    assert ctr.status == CTRStatus.ISSUED
    page.get_by_role("button", name=f"Confirmar recebimento do {ctr.number}").click()
    with page.expect_navigation():
        dialog.get_by_role("button", name="Sim, confirmar").click()
    assert f"Recebimento do {ctr.number} confirmado." in page.content()
    ctr.refresh_from_db()
    assert ctr.status == CTRStatus.RECEIVED and ctr.received_volume_m3 == Decimal("2.5")
    assert page.recorder.js_errors() == []


@pytest.mark.parametrize("width", [390, 1366])
def test_refusing_a_load_asks_for_the_reason_before_the_dialog(
    browser_page, live_server, world, width
):
    page = browser_page
    page.set_viewport_size({"width": width, "height": 844})
    ctr = issue(world)
    log_in(page, live_server, world.operator)
    page.goto(f"{live_server.url}/recebimentos/?busca={ctr.number}")
    page.get_by_text("Recusar a carga").click()
    reason = page.locator(f"#id_x-{ctr.pk}-reason")
    reason.fill("   ")
    refuse = page.get_by_role("button", name=f"Recusar o {ctr.number}")
    refuse.click()
    dialog = page.locator("dialog.confirm-dialog")
    # No "are you sure?" for a refusal the server would send back: the reason is asked first.
    assert dialog.count() == 0 or not dialog.is_visible()
    error = page.locator(f"#id_x-{ctr.pk}-reason-erro")
    expect(error).to_have_text("Informe o motivo.")
    assert reason.get_attribute("aria-invalid") == "true"
    assert page.evaluate("document.activeElement.id") == f"id_x-{ctr.pk}-reason"
    page.screenshot(path=f"{SHOTS}/roles-recusar-sem-motivo-{width}.png")
    reason.fill("Caçamba com lixo doméstico")
    expect(error).to_be_hidden()
    refuse.click()
    assert dialog.is_visible()
    with page.expect_navigation():
        dialog.get_by_role("button", name="Sim, recusar").click()
    ctr.refresh_from_db()
    assert ctr.status == CTRStatus.REFUSED
    assert page.recorder.js_errors() == []


def test_a_slow_post_shows_enviando_and_cannot_be_sent_twice(browser_page, live_server, world):
    page = browser_page
    ctr = issue(world)
    held = []
    log_in(page, live_server, world.alfa_user)
    page.goto(f"{live_server.url}/transportador/ctrs/{ctr.number}/")
    # Hold the cancellation post, as a slow mobile network would.
    page.route("**/cancelar/", lambda route: held.append(route))
    page.locator("#id_cancel-reason").fill("Obra adiada pelo cliente")
    page.get_by_role("button", name="Cancelar o CTR").click()
    assert page.locator("#confirm-dialog-yes").inner_text() == "Sim, cancelar o CTR"
    # "Sim" and, while the post is held, the button's state and a second submit: in one
    # evaluate, since Playwright's locators wait for the pending navigation.
    state = page.evaluate(
        """async () => {
            document.getElementById('confirm-dialog-yes').click();
            await new Promise((done) => setTimeout(done, 50));
            const button = document.querySelector('.danger-zone button[type=submit]');
            const again = new Event('submit', {bubbles: true, cancelable: true});
            button.form.dispatchEvent(again);
            return [button.disabled, button.textContent, again.defaultPrevented];
        }"""
    )
    assert state == [True, "Enviando…", True]
    # The route's handler runs when Playwright next dispatches the browser's events, which may
    # be after `evaluate` returned: wait for the held post (up to 10 s), then count.
    for _ in range(200):
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1
    with page.expect_navigation():
        held[0].continue_()
    assert f"{ctr.number} cancelado." in page.content()
    assert CTR.objects.get(pk=ctr.pk).status == CTRStatus.CANCELLED


def test_generator_box_suggests_as_you_type(browser_page, live_server, world):
    page = browser_page
    # Generators of the town, each with a worksite there (the suggestions are the
    # inspector's municipalities' generators).
    for name, document in (
        ("Maria da Silva Obras", CPF_GENERATOR),
        ("Construtora Silvana", "11144477735"),
        ("José Pereira", "39053344705"),
    ):
        Worksite.objects.create(
            generator=Generator.objects.create(name=name, document=document),
            address="Rua A, 1",
            location=world.origin,
            municipality=world.town,
        )
    log_in(page, live_server, world.fiscal)
    page.goto(f"{live_server.url}/fiscalizacao/processos/novo/")
    page.locator("#id_generator").press_sequentially("silv", delay=30)
    expect(page.locator("#geradores-sugestoes option")).to_have_count(2)
    values = page.eval_on_selector_all("#geradores-sugestoes option", "os => os.map(o => o.value)")
    assert values == [
        "111.444.777-35 — Construtora Silvana",
        "529.982.247-25 — Maria da Silva Obras",
    ]
    assert "2 gerador(es) encontrado(s)." in page.locator("#geradores-status").inner_text()
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=f"{SHOTS}/roles-processo-novo-390.png", full_page=True)
    assert page.recorder.js_errors() == []


def y4m_of(png, path, size=(640, 480), frames=10) -> None:
    """A still video (Y4M, 4:2:0) of the QR image, for Chromium's fake camera."""
    from PIL import Image

    width, height = size
    canvas = Image.new("RGB", size, "white")
    qr = Image.open(png).convert("RGB")
    qr.thumbnail((height - 40, height - 40))
    canvas.paste(qr, ((width - qr.width) // 2, (height - qr.height) // 2))
    y, cb, cr = canvas.convert("YCbCr").split()
    half = (width // 2, height // 2)
    frame = y.tobytes() + cb.resize(half).tobytes() + cr.resize(half).tobytes()
    with open(path, "wb") as out:
        out.write(f"YUV4MPEG2 W{width} H{height} F10:1 Ip A1:1 C420jpeg\n".encode())
        for _ in range(frames):
            out.write(b"FRAME\n" + frame)


def test_operator_reads_the_qr_code_with_the_camera(chromium, live_server, world, tmp_path):
    """The camera path: Chromium's fake camera films the printed QR code (a browser of its
    own, launched by the session's Playwright, for the camera's flags)."""
    from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, Recorder

    wanted, other = issue(world), issue(world, volume="2")
    image, video = tmp_path / "qr.png", tmp_path / "qr.y4m"
    qr_png(image, f"https://ctr.example.gov.br/verificar/{wanted.number}/")
    y4m_of(image, video)
    browser = chromium.browser_type.launch(
        executable_path=CHROMIUM,
        args=[
            *CHROMIUM_ARGS,
            "--use-fake-ui-for-media-stream",
            "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-video-capture={video}",
        ],
    )
    try:
        context = browser.new_context(
            viewport={"width": 390, "height": 844}, locale="pt-BR", permissions=["camera"]
        )
        page = context.new_page()
        page.recorder = Recorder(page, live_server.url)
        log_in(page, live_server, world.operator)
        page.goto(f"{live_server.url}/recebimentos/")
        with page.expect_navigation(timeout=20_000):
            page.get_by_role("button", name="Ler QR code").click()
        assert f"busca={wanted.number}" in page.url
        assert page.locator(".rr-number").all_inner_texts() == [wanted.number]
        assert other.number not in page.locator("#secao-abertos").inner_text()
        assert page.recorder.js_errors() == [] and page.recorder.aborted == []
    finally:
        browser.close()
