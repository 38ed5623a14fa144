"""Every form of the enforcement pages (fiscalization/enforcement_views.py) submitted once
through its page, as a browser would: follow the action's link on the case page, GET the form,
post back the fields the page rendered (its initial values, the CSRF token) with what the
inspector fills in, and check the state the service left and the message on the case page.

The clock is frozen in 2025 (the seeded UFESP rates end there) and moved between steps, as the
days of a real procedure go by; the dates the forms default to are the frozen "today"."""

from __future__ import annotations

import html
import re
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from ctr.models import LicenceStatus, TransporterLicence
from fiscalization import enforcement
from fiscalization.models.enforcement import (
    CaseStatus,
    DeliveryMethod,
    EnforcementCase,
    InfractionRecord,
    Penalty,
    PenaltyKind,
    RecordStatus,
)
from tests.ctr_world import CNPJ_ALFA, build_world
from tests.enforcement_world import D, at, entries, notified_and_expired, open_case, record_for

pytestmark = pytest.mark.django_db


class PageForms(HTMLParser):
    """The POST forms of a page with the values a browser would send untouched, and its links."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.forms: list[dict] = []
        self.links: list[tuple[str, str]] = []  # (text, href)
        self._form = None
        self._select = None
        self._textarea = None
        self._link = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        a = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "form":
            self._form = {"action": a.get("action", ""), "method": a.get("method", "get"),
                          "fields": {}}  # fmt: skip
            self.forms.append(self._form)
        elif tag == "a" and "href" in a:
            self._link = [a["href"], ""]
        elif self._form is None:
            return
        elif tag == "input" and a.get("name"):
            kind = a.get("type", "text")
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self._add(a["name"], a.get("value", "on"))
                else:
                    self._form["fields"].setdefault(a["name"], [])
            elif kind not in ("submit", "button", "reset", "file"):
                self._add(a["name"], a.get("value", ""))
        elif tag == "select" and a.get("name"):
            self._select = {"name": a["name"], "options": [], "selected": []}
        elif tag == "option" and self._select is not None:
            value = a.get("value", "")
            self._select["options"].append(value)
            if "selected" in a:
                self._select["selected"].append(value)
        elif tag == "textarea" and a.get("name"):
            self._textarea = [a["name"], ""]

    def handle_data(self, data):
        if self._textarea is not None:
            self._textarea[1] += data
        if self._link is not None:
            self._link[1] += data

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "a" and self._link is not None:
            self.links.append((" ".join(self._link[1].split()), self._link[0]))
            self._link = None
        elif tag == "select" and self._select is not None:
            s = self._select
            self._add(s["name"], *(s["selected"] or s["options"][:1]))
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            self._add(self._textarea[0], self._textarea[1].removeprefix("\n"))
            self._textarea = None

    def _add(self, name: str, *values: str):
        self._form["fields"].setdefault(name, []).extend(values)

    def post_form(self) -> dict:
        """The page's own form: the POST form that submits to the page itself."""
        [form] = [f for f in self.forms if f["method"].lower() == "post" and not f["action"]]
        return form["fields"]

    def link(self, text: str) -> str:
        hrefs = [href for label, href in self.links if label == text]
        assert len(hrefs) == 1, (text, self.links)
        return hrefs[0]


@pytest.fixture
def world():
    return build_world()


@pytest.fixture
def web(world):
    client = Client(enforce_csrf_checks=True)  # the token must come from the page
    client.force_login(world.fiscal)
    return client


@pytest.fixture
def authority(world):
    """The authority's browser: penalties and appeal decisions are his (art. 35)."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.authority)
    return client


@pytest.fixture
def clock(time_machine):
    """clock(2025, 6, 2, 9): the inspector's "now" (America/Sao_Paulo), standing still."""

    def move(*moment):
        time_machine.move_to(at(*moment), tick=False)

    return move


def case_page(web, case: EnforcementCase) -> PageForms:
    response = web.get(reverse("enforcement:case-detail", args=[case.pk]))
    assert response.status_code == 200
    return PageForms(response.content.decode())


def submit(web, url: str, expected_initial: dict | None = None, **filled) -> str:
    """GET the form at `url`, check the initial values named, post the page's fields with
    `filled` over them; the case page it redirects to (its text, with the flash message)."""
    response = web.get(url)
    assert response.status_code == 200, url
    fields = PageForms(response.content.decode()).post_form()
    assert fields["csrfmiddlewaretoken"] != [""]
    for name, value in (expected_initial or {}).items():
        assert fields[name] == (value if isinstance(value, list) else [value]), (name, fields[name])
    for name, value in filled.items():
        assert name in fields, f"o formulário de {url} não tem o campo {name}: {sorted(fields)}"
        fields[name] = value if isinstance(value, list) else [value]
    response = web.post(url, fields)
    assert response.status_code == 302, response.content.decode()[:3000]
    page = web.get(response["Location"])
    assert page.status_code == 200
    return html.unescape(page.content.decode())


def flash(page: str) -> list[str]:
    return [re.sub(r"\s+", " ", m) for m in re.findall(r'class="flash[^"]*">([^<]*)<', page)]


def test_a_case_from_opening_to_payment_through_its_pages(world, web, authority, clock):
    clock(2025, 6, 2, 9)
    page = submit(
        web,
        reverse("enforcement:case-new"),
        expected_initial={"opened_at": "2025-06-02T09:00", "municipality": str(world.town.pk)},
        description="Caçamba descarregada no lote vago da Rua B.",
        offender_role="TRANSPORT_DIRECTOR",
        offender_name="João Dirigente",
        offender_document="11.222.333/0001-81",
        offender_address="Rua A, 1",
        transporter=str(world.alfa.pk),
        latitude="-22.8100",
        longitude="-45.1900",
    )
    case = EnforcementCase.objects.get()
    assert flash(page) == [f"Processo {case.number} aberto."]
    assert (case.status, case.inspector, case.opened_at) == (
        CaseStatus.OPEN, world.fiscal, at(2025, 6, 2, 9)
    )  # fmt: skip
    assert (case.offender.document, case.offender.transporter) == (CNPJ_ALFA, world.alfa)
    assert case.location.coords == pytest.approx((-45.19, -22.81))

    clock(2025, 6, 2, 9, 30)
    page = submit(
        web,
        case_page(web, case).link("Emitir notificação (72 h)"),
        expected_initial={"issued_at": "2025-06-02T09:30"},
        required_action="Remover o entulho do lote.",
        delivery_method="HAND",
    )
    notice = case.notices.get()
    assert flash(page) == [
        f"Notificação {notice.number} emitida. Registre a entrega para o prazo começar a correr."
    ]
    assert notice.required_action == "Remover o entulho do lote."

    clock(2025, 6, 2, 10, 15)
    page = submit(
        web,
        case_page(web, case).link("Registrar a entrega"),
        expected_initial={"delivered_date": "2025-06-02"},
        delivered_time="10:00",
    )
    notice.refresh_from_db()
    assert notice.delivered_on == at(2025, 6, 2, 10)
    assert flash(page) == ["Entrega registrada: o prazo para reparar vence em 05/06/2025 às 10h00."]

    clock(2025, 6, 5, 11)  # the 72 hours are over, nothing repaired
    [inf01] = entries("INF-01")
    page = submit(
        web,
        case_page(web, case).link("Lavrar auto de infração"),
        expected_initial={"drawn_up_at": "2025-06-05T11:00", "entries": []},
        entries=[str(inf01.pk)],
        delivery_method="MAIL",
        signed_by_offender="on",
    )
    record = case.records.get()
    assert flash(page) == [
        f"Auto {record.number} lavrado: multa proposta de 100,00 UFESP, que aguarda a "
        "aplicação pela autoridade — Secretário Municipal de Serviços Urbanos (art. 35)."
    ]
    assert (record.status, record.delivery_method, record.total_ufesp) == (
        RecordStatus.ISSUED, DeliveryMethod.MAIL, Decimal("100.00")
    )  # fmt: skip
    assert list(record.items.values_list("entry__code", flat=True)) == ["INF-01"]

    clock(2025, 6, 5, 15)  # the authority applies the fine the record proposes (art. 35)
    page = submit(
        authority,
        case_page(authority, case).link("Aplicar a multa"),
        expected_initial={"applied_at": "2025-06-05T15:00"},
    )
    record.refresh_from_db()
    assert record.fine_applied_at == at(2025, 6, 5, 15)
    assert flash(page) == [f"Multa de 100,00 UFESP do auto {record.number} aplicada (art. 35)."]

    clock(2025, 6, 9, 14)
    page = submit(
        web,
        case_page(web, case).link("Registrar a entrega"),
        expected_initial={"delivered_date": "2025-06-09"},
    )
    record.refresh_from_db()
    assert record.delivered_on.date() == D(2025, 6, 9)
    last = enforcement.appeal_last_day(record)
    assert flash(page) == [f"Entrega registrada: recurso até {last:%d/%m/%Y}."]

    clock(2025, 6, 16, 10)
    page = submit(
        web,
        case_page(web, case).link("Registrar recurso"),
        expected_initial={"filed_on": "2025-06-16"},
        text="O entulho não era da empresa.",
    )
    record.refresh_from_db()
    assert record.status == RecordStatus.APPEALED
    assert record.appeal.filed_on == D(2025, 6, 16)
    assert flash(page) == ["Recurso registrado; o auto aguarda a decisão."]

    clock(2025, 6, 30, 10)
    page = submit(
        authority,
        case_page(authority, case).link("Registrar a decisão do recurso"),
        expected_initial={"decided_on": "2025-06-30", "upheld": []},
        upheld="1",
        decision="Fotos e CTR provam o descarte.",
    )
    record.refresh_from_db()
    assert record.status == RecordStatus.UPHELD
    assert (record.appeal.decided_on, record.appeal.upheld) == (D(2025, 6, 30), True)
    assert flash(page) == ["Auto mantido."]

    clock(2025, 7, 7, 10)
    page = submit(
        web,
        case_page(web, case).link("Registrar pagamento"),
        expected_initial={"paid_on": "2025-07-07"},
        amount_brl="3.702,00",  # the treasury's figure, as the guia prints it
        guide="DAM 2025/000321",
    )
    record.refresh_from_db()
    assert (record.status, record.paid_on) == (RecordStatus.PAID, D(2025, 7, 7))
    assert record.paid_brl == Decimal("3702.00")  # 100 UFESP × R$ 37,02 (2025)
    assert record.payment_guide == "DAM 2025/000321"
    assert flash(page) == ["Pagamento no prazo da multa registrado: R$ 3.702,00, exato."]


def test_repair_in_time_through_the_page(world, web, clock):
    case = open_case(world, at(2025, 6, 2, 9))
    notified_and_expired(case)  # notified and delivered at 10h00; due 05/06 at 10h00
    clock(2025, 6, 4, 16)
    page = submit(
        web,
        case_page(web, case).link("Registrar a reparação"),
        expected_initial={"repaired_at": "2025-06-04T16:00"},
    )
    case.refresh_from_db()
    assert case.status == CaseStatus.REPAIRED
    assert case.notices.get().repaired_at == at(2025, 6, 4, 16)
    assert flash(page) == ["Dano reparado no prazo: processo sem penalidade (art. 27)."]


def test_divida_ativa_through_the_page(world, web, clock):
    record = record_for(world, opened_at=at(2025, 3, 3, 9), delivery=DeliveryMethod.MAIL)
    enforcement.register_record_delivery(record, at(2025, 3, 10, 12))
    clock(2025, 6, 2, 10)  # appeal and payment deadlines long over, nothing paid
    page = submit(
        web,
        case_page(web, record.case).link("Enviar à Dívida Ativa"),
        expected_initial={"on": "2025-06-02"},
    )
    record.refresh_from_db()
    assert record.status == RecordStatus.DIVIDA_ATIVA
    assert flash(page) == [f"Auto {record.number} enviado à Dívida Ativa."]


def penalty_link(page: PageForms, name: str, penalty: Penalty) -> str:
    url = reverse(f"enforcement:{name}", args=[penalty.pk])
    assert url in [href for _, href in page.links], url
    return url


def test_every_penalty_form_through_its_page(world, web, authority, clock):
    record = record_for(world, opened_at=at(2025, 5, 5, 9))
    case = record.case
    clock(2025, 6, 2, 10)
    label = {kind: f"Aplicar {kind.label.lower()}" for kind in PenaltyKind}

    page = submit(
        authority,
        case_page(authority, case).link(label[PenaltyKind.EMBARGO]),
        expected_initial={"starts_on": "2025-06-02"},
        details="Obra da Rua B, 20: parar a descarga.",
    )
    embargo = record.penalties.get(kind=PenaltyKind.EMBARGO)
    assert embargo.details == "Obra da Rua B, 20: parar a descarga."
    assert flash(page) == [
        f"Penalidade aplicada: {PenaltyKind.EMBARGO.label}, a partir de 02/06/2025."
    ]

    clock(2025, 6, 4, 10)
    page = submit(
        web,
        penalty_link(case_page(web, case), "embargo-breach", embargo),
        expected_initial={"day": "2025-06-04"},
        note="Nova descarga no lote.",
    )
    assert list(embargo.breaches.values_list("day", "note")) == [
        (D(2025, 6, 4), "Nova descarga no lote.")
    ]
    assert flash(page) == ["Descumprimento de 04/06/2025 registrado: total de 1 UFESP."]

    lift = penalty_link(case_page(web, case), "penalty-lift", embargo)
    fields = PageForms(web.get(lift).content.decode()).post_form()
    refused = web.post(lift, fields)  # art. 31 p.ú.: which requirements, and when
    assert refused.status_code == 400
    assert "Diga quais exigências do auto o infrator cumpriu" in refused.content.decode()
    page = submit(
        web,
        lift,
        requirements_met="Entulho removido e descarga encerrada.",
        requirements_met_on="2025-06-04",
    )
    embargo.refresh_from_db()
    assert embargo.lifted_on == D(2025, 6, 4)
    assert (embargo.requirements_met, embargo.requirements_met_on) == (
        "Entulho removido e descarga encerrada.",
        D(2025, 6, 4),
    )
    assert flash(page) == [
        "Embargo cancelado em 04/06/2025: exigências cumpridas em 04/06/2025 (art. 31 p.ú.)."
    ]

    page = submit(
        authority,
        case_page(authority, case).link(label[PenaltyKind.SEIZURE]),
        details="Caçamba C-01, no pátio municipal.",
    )
    seizure = record.penalties.get(kind=PenaltyKind.SEIZURE)
    assert seizure.starts_on == D(2025, 6, 4)
    assert flash(page) == [
        f"Penalidade aplicada: {PenaltyKind.SEIZURE.label}, a partir de 04/06/2025."
    ]

    page = submit(
        web,
        penalty_link(case_page(web, case), "seizure-costs", seizure),
        expected_initial={"paid_on": ""},
        custody_costs_brl="350.00",
        paid_on="2025-06-04",
    )
    seizure.refresh_from_db()
    assert (seizure.custody_costs_brl, seizure.costs_paid_on) == (Decimal("350.00"), D(2025, 6, 4))
    assert flash(page) == ["Custos de R$ 350,00 registrados, pagos em 04/06/2025."]

    page = submit(
        web,
        penalty_link(case_page(web, case), "seizure-release", seizure),
        expected_initial={"on": "2025-06-04", "irregularity_fixed": []},
        irregularity_fixed="on",
    )
    seizure.refresh_from_db()
    assert seizure.lifted_on == D(2025, 6, 4)
    assert flash(page) == ["Equipamentos liberados em 04/06/2025."]

    page = submit(
        authority,
        case_page(authority, case).link(label[PenaltyKind.SUSPENSION]),
        expected_initial={"starts_on": "2025-06-04"},
        days="5",
    )
    suspension = record.penalties.get(kind=PenaltyKind.SUSPENSION)
    assert (suspension.starts_on, suspension.ends_on) == (D(2025, 6, 4), D(2025, 6, 8))
    alfa = TransporterLicence.objects.get(transporter=world.alfa, municipality=world.town)
    assert alfa.restricted_on(D(2025, 6, 5)) == LicenceStatus.SUSPENDED
    assert flash(page) == [
        f"Penalidade aplicada: {PenaltyKind.SUSPENSION.label}, a partir de 04/06/2025."
    ]

    clock(2025, 6, 6, 10)
    page = submit(web, penalty_link(case_page(web, case), "penalty-lift", suspension))
    suspension.refresh_from_db()
    assert suspension.lifted_on == D(2025, 6, 6)
    alfa.refresh_from_db()
    assert alfa.restricted_on(D(2025, 6, 6)) is None
    assert flash(page) == [f"Penalidade levantada: {PenaltyKind.SUSPENSION.label}, em 06/06/2025."]

    page = submit(
        authority,
        case_page(authority, case).link(label[PenaltyKind.REVOCATION]),
        details="Reincidência após a suspensão.",
    )
    revocation = record.penalties.get(kind=PenaltyKind.REVOCATION)
    assert revocation.starts_on == D(2025, 6, 6)
    alfa.refresh_from_db()
    assert alfa.restricted_on(D(2025, 6, 6)) == LicenceStatus.REVOKED
    assert flash(page) == [
        f"Penalidade aplicada: {PenaltyKind.REVOCATION.label}, a partir de 06/06/2025."
    ]
    assert InfractionRecord.objects.get(pk=record.pk).status == RecordStatus.ISSUED
