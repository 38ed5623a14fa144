"""The illustrated tour (docs/tour.md): each role's main journey through the demo, photographed
in headless Chromium at a desktop and a phone width.

`manage.py tour` runs it against the demo and rewrites docs/tour.md and docs/tour/; the e2e
suite runs the same journeys against a live server, so a change that breaks one of these pages
(an error status, a JavaScript error, a page wider than the phone) fails a test and shows in
the next tour.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from django.utils import timezone

DEMO_PASSWORD = "demo12345"

# Debian's Chromium as Playwright drives it here (the tour and tests/e2e): no sandbox as root,
# and none of the background connections that this machine's closed network refuses.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass(frozen=True)
class Width:
    slug: str
    label: str
    viewport: tuple[int, int]
    phone: bool
    # Width of the picture in docs/tour.md (the file keeps the viewport's size).
    shown_px: int


DESKTOP = Width("computador", "Computador (1366 × 900)", (1366, 900), False, 560)
PHONE = Width("celular", "Celular (390 × 844)", (390, 844), True, 200)
WIDTHS = (DESKTOP, PHONE)


@dataclass(frozen=True)
class Step:
    slug: str
    caption: str
    path: str
    # Done on the page before the picture (fill a form and send it, to show its errors); it
    # returns the response of the page it leads to.
    act: Callable | None = None
    # A form that comes back with its errors answers 400 or 422 by design.
    expected_statuses: tuple[int, ...] = (200,)
    # Shown before the journey's user signs in (the sign-in page itself).
    before_login: bool = False
    # The path as docs/tour.md writes it, where the visited one depends on the day or on the
    # demo's load (a period, a CTR's number, a protocol): the tracked page stays the same.
    shown: str | None = None


@dataclass(frozen=True)
class Journey:
    slug: str
    title: str
    summary: str
    username: str | None
    steps: list[Step]


@dataclass
class Shot:
    journey: Journey
    step: Step
    width: Width
    file: Path
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DemoReferences:
    """Records of the demo that the journeys open (looked up, never assumed)."""

    ctr_number: str
    report_id: int
    report_protocol: str
    case_id: int


def demo_references() -> DemoReferences:
    from ctr.models import CTR
    from fiscalization.models import DumpingReport, EnforcementCase

    ctr = (
        CTR.objects.filter(transporter__members__user__username="transportador")
        .order_by("-transport_date", "-number")
        .first()
    )
    report = DumpingReport.objects.order_by("-id").first()
    case = EnforcementCase.objects.order_by("id").first()
    missing = [
        name
        for name, value in (("CTR", ctr), ("denúncia", report), ("processo", case))
        if not value
    ]
    if missing:
        raise LookupError(
            "A demonstração não está carregada (faltam: "
            + ", ".join(missing)
            + "): rode manage.py load_demo."
        )
    return DemoReferences(ctr.number, report.id, report.protocol, case.id)


def _send(page, form_selector: str):
    with page.expect_navigation(wait_until="load") as navigation:
        page.locator(f"{form_selector} button[type=submit]").last.click()
    return navigation.value


def _submit_empty_ctr(page):
    """The issue form sent with no origin and no waste: the page comes back with its errors."""
    return _send(page, "main form[method=post]")


def _wrong_password(page):
    page.fill("input[name=username]", "transportador")
    page.fill("input[name=password]", "senha-errada")
    return _send(page, "main form[method=post]")


def journeys(refs: DemoReferences) -> list[Journey]:
    today = timezone.localdate()
    nearest = urlencode(
        # A point in central Guaratinguetá, 3 m³: the nearest legal destinations (no PEV).
        {"latitude": "-22,8164", "longitude": "-45,1927", "volume_m3": "3"}
    )
    period = urlencode(
        {
            "date_from": (today - datetime.timedelta(days=90)).isoformat(),
            "date_to": today.isoformat(),
        }
    )
    return [
        Journey(
            "municipe",
            "Munícipe",
            "Encontra o ponto legal mais próximo, denuncia um descarte irregular, acompanha a "
            "denúncia e confere um CTR.",
            None,
            [
                Step("inicio", "Página inicial", "/"),
                Step(
                    "onde-descartar",
                    "Onde descartar: os pontos para 3 m³",
                    f"/onde-descartar/?{nearest}",
                ),
                Step("denunciar", "Denunciar descarte irregular", "/denunciar/"),
                Step(
                    "denuncia",
                    "Acompanhar a denúncia pelo protocolo",
                    f"/denuncia/{refs.report_protocol}/",
                    shown="/denuncia/<protocolo>/",
                ),
                Step(
                    "verificar",
                    "Verificar um CTR (dados pessoais mascarados)",
                    f"/verificar/{refs.ctr_number}/",
                    shown="/verificar/<número do CTR>/",
                ),
                Step("regras", "As regras do CTR, com os artigos da lei", "/regras/"),
            ],
        ),
        Journey(
            "transportador",
            "Transportador",
            "Entra, vê os seus CTRs, emite um novo (o formulário volta com todas as "
            "constatações de uma vez), abre um CTR e importa uma planilha.",
            "transportador",
            [
                Step(
                    "entrar-erro",
                    "Entrar (senha errada)",
                    "/entrar/",
                    _wrong_password,
                    expected_statuses=(200, 400, 401),
                    before_login=True,
                ),
                Step("lista", "Meus CTRs", "/transportador/ctrs/"),
                Step("novo", "Emitir CTR", "/transportador/ctrs/novo/"),
                Step(
                    "novo-erros",
                    "Emitir CTR: o formulário volta com os erros",
                    "/transportador/ctrs/novo/",
                    _submit_empty_ctr,
                    expected_statuses=(200, 400, 422),
                ),
                Step(
                    "detalhe",
                    "Um CTR e o seu histórico",
                    f"/transportador/ctrs/{refs.ctr_number}/",
                    shown="/transportador/ctrs/<número do CTR>/",
                ),
                Step("importar", "Importar CTRs de uma planilha", "/transportador/ctrs/importar/"),
            ],
        ),
        Journey(
            "operador",
            "Operador da área de recebimento",
            "Confere as cargas que chegam à ATT e confirma ou recusa cada uma.",
            "operador",
            [Step("recebimentos", "Recebimentos", "/recebimentos/")],
        ),
        Journey(
            "fiscal",
            "Fiscalização",
            "Triagem das denúncias, pontos críticos, abordagem de veículo e o procedimento.",
            "fiscal",
            [
                Step("denuncias", "Denúncias", "/fiscalizacao/"),
                Step("denuncia", "Uma denúncia", f"/fiscalizacao/denuncias/{refs.report_id}/"),
                Step("pontos-criticos", "Pontos críticos", "/fiscalizacao/pontos-criticos/"),
                Step("veiculo", "Abordagem de veículo", "/fiscalizacao/veiculo/"),
                Step("processos", "Processos", "/fiscalizacao/processos/"),
                Step("processo", "Um processo", f"/fiscalizacao/processos/{refs.case_id}/"),
            ],
        ),
        Journey(
            "nucleo",
            "Núcleo Permanente de Gestão",
            "Painel de números do município e o mapa dos fluxos.",
            "nucleo",
            [
                Step(
                    "painel",
                    "Painel",
                    f"/nucleo/?{period}",
                    shown="/nucleo/?date_from=<hoje − 90 dias>&date_to=<hoje>",
                ),
                Step("mapa", "Mapa", "/nucleo/mapa/"),
                Step("exportar", "Exportações", "/nucleo/exportar/"),
            ],
        ),
    ]


def _log_in(page, base_url: str, username: str) -> None:
    page.goto(base_url + "/entrar/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.locator("form button[type=submit]").last.click()
    page.wait_for_load_state("load")
    if urlsplit(page.url).path.startswith("/entrar"):
        raise RuntimeError(f"não foi possível entrar como {username!r} com a senha da demonstração")


def _check(page, step: Step, response, width: Width) -> list[str]:
    problems = []
    if response is None or response.status not in step.expected_statuses:
        problems.append(f"HTTP {response.status if response else 'sem resposta'}")
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    if overflow > 0:
        problems.append(f"rolagem horizontal de {overflow} px a {width.viewport[0]} px")
    return problems


def run(base_url: str, out_dir: Path, browser, journeys_: list[Journey]) -> list[Shot]:
    """Photograph every step of every journey at both widths into `out_dir`. Returns the shots,
    each with the problems seen on its page (error status, JavaScript error, overflow)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    server = urlsplit(base_url).netloc
    shots = []
    for width in WIDTHS:
        for journey in journeys_:
            context = browser.new_context(
                viewport={"width": width.viewport[0], "height": width.viewport[1]},
                locale="pt-BR",
                is_mobile=width.phone,
                has_touch=width.phone,
            )
            page = context.new_page()
            # Only our server is reached: the base map's tiles stay blank, nothing leaves.
            page.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if urlsplit(route.request.url).netloc == server
                    else route.abort()
                ),
            )
            errors: list[str] = []
            page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
            signed_in = journey.username is None
            for step in journey.steps:
                if not signed_in and not step.before_login:
                    _log_in(page, base_url, journey.username)
                    signed_in = True
                errors.clear()
                response = page.goto(base_url + step.path, wait_until="load")
                if step.act:
                    response = step.act(page)
                page.wait_for_timeout(300)  # maps draw after load
                file = out_dir / f"{journey.slug}-{step.slug}-{width.slug}.jpg"
                page.screenshot(path=str(file), type="jpeg", quality=70)
                problems = _check(page, step, response, width)
                problems += [f"erro de JavaScript: {error}" for error in errors]
                shots.append(Shot(journey, step, width, file, problems))
            context.close()
    return shots


def markdown(shots: list[Shot], image_dir: str) -> str:
    """docs/tour.md: per journey, per step, the desktop and phone pictures side by side."""
    lines = [
        "# Visita guiada",
        "",
        "Cada perfil no seu caminho principal pela demonstração (`make run`), em um computador",
        "(1366 × 900) e em um celular (390 × 844). Gerada por `make tour` (`manage.py tour`),",
        "que abre as páginas no Chromium headless; o mapa base aparece em branco porque a",
        "visita não sai do servidor local, e os campos de data aparecem no formato do Chromium",
        "sem o pacote de idiomas (mm/dd/aaaa; no celular de um usuário, dd/mm/aaaa). Os mesmos",
        "caminhos rodam na suíte",
        "(`tests/e2e/test_tour.py`): uma página que quebre (erro, JavaScript, largura maior que",
        "o celular) falha lá.",
        "",
    ]
    by_step: dict[tuple[str, str], dict[str, Shot]] = {}
    order: list[tuple[Journey, Step]] = []
    for shot in shots:
        key = (shot.journey.slug, shot.step.slug)
        if key not in by_step:
            by_step[key] = {}
            order.append((shot.journey, shot.step))
        by_step[key][shot.width.slug] = shot
    current = None
    for journey, step in order:
        if journey.slug != current:
            current = journey.slug
            who = f" (conta `{journey.username}`)" if journey.username else ""
            lines += [f"## {journey.title}{who}", "", journey.summary, ""]
        lines += [f"### {step.caption}", "", f"`{step.shown or step.path}`", "", "<p>"]
        for width in WIDTHS:
            shot = by_step[(journey.slug, step.slug)].get(width.slug)
            if shot:
                lines.append(
                    f'  <img src="{image_dir}/{shot.file.name}" width="{width.shown_px}" '
                    f'alt="{step.caption}, {width.label}">'
                )
        lines += ["</p>", ""]
    return "\n".join(lines)
