"""The printed CTR and its public verification (LGPD), the worksite destination report for the
Habite-se (art. 9 p.ú. II) and the monthly fee statement (art. 12 §3)."""

from __future__ import annotations

import csv
import datetime
import io
from decimal import Decimal

import pypdfium2
import pytest
import zxingcpp
from django.contrib.auth import get_user_model
from django.test import Client
from pypdf import PdfReader

from config.pdf import qr_matrix
from ctr import closing, reports, services
from ctr.models import CTR, Membership, Worksite
from ctr.rules import WasteLine
from pev_network.models import UfespRate
from tests.builders import licence, municipality
from tests.ctr.onward_world import onward
from tests.ctr_world import (
    CPF_GENERATOR,
    TODAY,
    World,
    build_world,
    large_generator_site,
    make_user,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> World:
    return build_world()


def client_for(user=None) -> Client:
    client = Client()
    if user is not None:
        # A fresh user, as in a real request: no membership cached from the fixture.
        client.force_login(get_user_model().objects.get(pk=user.pk))
    return client


FLEET = {"alfa": ("ABC1D23", "C-01"), "beta": ("XYZ9876", "B-01")}


def issue(
    world: World,
    facility=None,
    waste=(("A", "3"),),
    transporter=None,
    day: datetime.date = TODAY,
    worksite_id: int | None = None,
    address: str = "Rua das Flores, 10",
) -> CTR:
    """Issue through the service, as the API does: 3 m³ of class A from the town to the ATT."""
    transporter = transporter or world.alfa
    key = "alfa" if transporter == world.alfa else "beta"
    plate, equipment = FLEET[key]
    user = world.alfa_user if key == "alfa" else world.beta_user
    request = services.IssueRequest(
        transport_date=day,
        vehicle_plate=plate,
        equipment_code=equipment,
        origin=world.origin,
        destination=world.inside(facility or world.att),
        waste=[WasteLine(cls, Decimal(volume), "entulho de alvenaria") for cls, volume in waste],
        generator=None
        if worksite_id
        else services.GeneratorData(name="Maria da Obra", document=CPF_GENERATOR),
        worksite=None
        if worksite_id
        else services.WorksiteData(address=address, location=world.origin, neighbourhood="Centro"),
        worksite_id=worksite_id,
    )
    return services.issue(transporter, user, request)


def operator_of(world: World, facility):
    member = Membership.objects.filter(facility=facility).select_related("user").first()
    return member.user if member else make_user(f"operador_{facility.pk}", facility=facility)


def receive(world: World, ctr: CTR, volume: str | None = None) -> CTR:
    operator = operator_of(world, ctr.destination_facility)
    return closing.receive(ctr, operator, Decimal(volume or ctr.total_volume_m3))


def refuse(world: World, ctr: CTR) -> CTR:
    return closing.refuse(ctr, world.operator, "carga com resíduo domiciliar")


def cancel(world: World, ctr: CTR) -> CTR:
    user = world.alfa_user if ctr.transporter == world.alfa else world.beta_user
    return closing.cancel(ctr, user, "caçamba não foi retirada")


def pdf_text(content: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


def verify_url(ctr: CTR) -> str:
    return f"http://testserver/verificar/{ctr.number}/"


# --- the printed CTR --------------------------------------------------------------------------


def test_pdf_is_served_to_the_issuing_transporter(world):
    ctr = issue(world)
    response = client_for(world.alfa_user).get(f"/ctrs/{ctr.number}/pdf/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response.content.startswith(b"%PDF-")
    assert f'filename="{ctr.number}.pdf"' in response["Content-Disposition"]


def test_pdf_of_another_transporters_ctr_is_not_found(world):
    ctr = issue(world)
    response = client_for(world.beta_user).get(f"/ctrs/{ctr.number}/pdf/")
    assert response.status_code == 404
    assert "CTR não encontrado" in response.content.decode()


@pytest.mark.parametrize(
    ("who", "status"),
    [("nucleo", 200), ("fiscal", 200), ("operator", 200), ("pev_operator", 404), ("outsider", 404)],
)
def test_pdf_follows_who_may_see_the_ctr(world, who, status):
    ctr = issue(world)  # destined to the ATT, whose operator is `operator`
    response = client_for(getattr(world, who)).get(f"/ctrs/{ctr.number}/pdf/")
    assert response.status_code == status
    if status == 200:
        assert response["Content-Type"] == "application/pdf"
        assert response.content.startswith(b"%PDF-")


def test_pdf_asks_an_anonymous_visitor_to_log_in(world):
    ctr = issue(world)
    response = Client().get(f"/ctrs/{ctr.number}/pdf/")
    assert response.status_code == 302
    assert response["Location"].startswith("/entrar/")


def test_pdf_carries_the_document_content(world):
    ctr = issue(world, facility=world.landfill)  # class A to a landfill: a warning (art. 18 p.ú.)
    text = pdf_text(client_for(world.alfa_user).get(f"/ctrs/{ctr.number}/pdf/").content)
    for expected in (
        ctr.number,
        verify_url(ctr),
        "CTR — Controle de Transporte de Resíduos",
        "Guaratinguetá (teste)/SP",
        "Emitido",
        "Caçambas Alfa Ltda.",
        "11.222.333/0001-81",  # transporter's CNPJ, formatted
        "TR-001",
        "ABC-1D23",
        "C-01",
        "Maria da Obra",
        "529.982.247-25",  # the authorised viewer sees the generator's CPF in full
        "Rua das Flores, 10",
        "Aterro de RCC",
        f"LO-{world.landfill.pk}",
        "Classe A",
        "1,00 UFESP",
        "art. 18 p.ú.",  # the finding
        "art. 3 VI",
        "art. 13 p.ú.",
        "Gerador",
        "Transportador",
        "Receptor",
        "Assinatura",
    ):
        assert expected in text, expected


def test_pdf_qr_code_decodes_to_the_verification_url(world):
    ctr = issue(world)
    content = client_for(world.alfa_user).get(f"/ctrs/{ctr.number}/pdf/").content
    page = pypdfium2.PdfDocument(content)[0]
    image = page.render(scale=200 / 72).to_pil()  # 200 dpi, as a phone camera would see it
    decoded = [code.text for code in zxingcpp.read_barcodes(image)]
    assert decoded == [verify_url(ctr)]


def test_qr_matrix_is_segnos_for_the_url():
    # The drawing reads segno's matrix; a quiet zone of four modules surrounds it.
    matrix = qr_matrix("http://example.org/verificar/CTR-3518404-2026-000001/")
    assert len(matrix) == len(matrix[0]) >= 21
    assert matrix[0][:7] == (True,) * 7  # the top-left finder pattern


def test_pdf_of_a_cancelled_ctr_says_so(world):
    ctr = cancel(world, issue(world))
    text = pdf_text(client_for(world.alfa_user).get(f"/ctrs/{ctr.number}/pdf/").content)
    assert "Situação: Cancelado" in text


# --- public verification ----------------------------------------------------------------------


def test_verification_is_public_and_masks_the_generator(world):
    ctr = issue(world)
    response = Client().get(f"/verificar/{ctr.number}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert ctr.number in page
    assert "Emitido" in page
    assert "30/11/2026" in page
    assert "Caçambas Alfa Ltda." in page
    assert "ATT" in page and "Área de Transbordo e Triagem (ATT)" in page
    assert "***.982.247-**" in page
    assert "Maria O." in page
    assert "Centro — Guaratinguetá (teste)/SP" in page
    assert "entulho de alvenaria" in page


def test_verification_never_shows_cpf_address_or_coordinates(world):
    ctr = issue(world)
    page = Client().get(f"/verificar/{ctr.number}/").content.decode()
    lon, lat = world.origin.coords
    for secret in (
        "529.982.247-25",
        CPF_GENERATOR,
        "Maria da Obra",
        "Rua das Flores",
        f"{lat:.4f}",
        f"{lat:.4f}".replace(".", ","),
        f"{lon:.4f}",
        f"{lon:.4f}".replace(".", ","),
        "ABC1D23",
    ):
        assert secret not in page, secret


def test_verification_shows_a_company_generator_in_full(world):
    site = large_generator_site(world, [world.alfa], [world.att])
    ctr = issue(world, worksite_id=site.pk)
    page = Client().get(f"/verificar/{ctr.number}/").content.decode()
    assert "Construtora Grande S.A." in page
    assert "11.444.777/0001-61" in page  # a CNPJ is public
    assert "Av. Principal" not in page


def test_verification_shows_reception(world):
    ctr = receive(world, issue(world), "2.5")
    page = Client().get(f"/verificar/{ctr.number}/").content.decode()
    assert "Recebido" in page
    assert "destinação comprovada" in page
    assert "2,5" in page


@pytest.mark.parametrize("number", ["CTR-3518404-2026-999999", "nada-disso", "CTR-35-2026-1"])
def test_unknown_or_malformed_number_is_a_portuguese_404(world, number):
    issue(world)
    response = Client().get(f"/verificar/{number}/")
    assert response.status_code == 404
    assert "CTR não encontrado" in response.content.decode()


def test_verification_form_redirects_to_the_number_typed(world):
    ctr = issue(world)
    response = Client().get("/verificar/", {"numero": f"  {ctr.number.lower()} "})
    assert response.status_code == 302
    assert response["Location"] == f"/verificar/{ctr.number}/"
    empty = Client().get("/verificar/")
    assert empty.status_code == 200 and "<h1>Verificar um CTR</h1>" in empty.content.decode()
    bad = Client().get("/verificar/", {"numero": "xyz"})
    assert bad.status_code == 200 and "Número inválido" in bad.content.decode()


@pytest.mark.parametrize(
    "typed",
    [
        lambda n: n.removeprefix("CTR-"),  # 3518404-2026-000001
        lambda n: n.replace("-", ""),  # CTR35184042026000001
        lambda n: " ".join(n.removeprefix("CTR-").split("-")),  # 3518404 2026 000001
        lambda n: n.lower().replace("-", " "),
    ],
)
def test_verification_takes_the_number_as_the_gate_search_does(world, typed):
    """The CTR's number with or without the prefix and the dashes (ctr.reports.lookup_q)."""
    ctr = issue(world)
    response = Client().get("/verificar/", {"numero": typed(ctr.number)})
    assert response.status_code == 302
    assert response["Location"] == f"/verificar/{ctr.number}/"


def test_verification_takes_the_last_digits_with_the_municipality_chosen(world):
    first, second = issue(world), issue(world)
    ibge = world.town.ibge_code
    chosen = Client().get("/verificar/", {"numero": str(second.sequence), "municipio": ibge})
    assert chosen.status_code == 302
    assert chosen["Location"] == f"/verificar/{second.number}/"
    # At the municipality's own address the municipality is the page's.
    at_town = Client().get(f"/m/{ibge}/verificar/", {"numero": f"{first.sequence:06d}"})
    assert at_town.status_code == 302
    assert at_town["Location"] == f"/verificar/{first.number}/"
    # Without a municipality the digits name no CTR: the page asks for it.
    unchosen = Client().get("/verificar/", {"numero": str(second.sequence)})
    assert unchosen.status_code == 200
    assert "escolha o município" in unchosen.content.decode()
    # Digits no CTR of the municipality ends with: said so, not a 500 nor a redirect.
    missing = Client().get("/verificar/", {"numero": "999999", "municipio": ibge})
    assert missing.status_code == 200
    assert "Nenhum CTR" in missing.content.decode()
    # A plate is the gate's search, not a public one.
    plate = Client().get("/verificar/", {"numero": "ABC1D23", "municipio": ibge})
    assert plate.status_code == 200 and "Número inválido" in plate.content.decode()


def test_the_last_digits_name_the_chosen_municipality_s_ctr_only(world):
    """A CTR looked up by its last digits with two municipalities: A's and B's first CTRs end in the
    same digits; the municipality chosen (or the page's) says which one the digits name."""
    from tests.config.test_authorization_matrix import other_municipality

    in_a = issue(world)
    in_b = CTR.objects.get(number=other_municipality(world)["ctr_b"])
    assert in_a.sequence == in_b.sequence and in_a.municipality_id != in_b.municipality_id
    for ctr in (in_a, in_b):
        ibge = ctr.municipality.ibge_code
        for page, query in (
            ("/verificar/", {"numero": str(ctr.sequence), "municipio": ibge}),
            (f"/m/{ibge}/verificar/", {"numero": f"{ctr.sequence:06d}"}),
        ):
            response = Client().get(page, query)
            assert response.status_code == 302, (page, response.content.decode()[-2000:])
            assert response["Location"] == f"/verificar/{ctr.number}/"


def test_verification_takes_cdf_and_habite_se_codes_and_says_so(world):
    cdf = Client().get("/verificar/", {"numero": "cdf abcd efgh jkmn"})
    assert cdf.status_code == 302
    assert cdf["Location"] == "/verificar/cdf/CDF-ABCD-EFGH-JKMN/"
    habite_se = Client().get("/verificar/", {"numero": "hababcdefghjkmn"})
    assert habite_se.status_code == 302
    assert habite_se["Location"] == "/verificar/habite-se/HAB-ABCD-EFGH-JKMN/"
    page = Client().get("/verificar/").content.decode()
    for said in ("últimos dígitos", "CDF", "Habite-se", "sem o “CTR”"):
        assert said in page, said


# --- worksite destination report --------------------------------------------------------------


@pytest.fixture
def site_with_history(world) -> Worksite:
    """Two received loads, one open, one refused (beta's), one cancelled."""
    first = receive(world, issue(world), "3.2")
    receive(world, issue(world, facility=world.recycling, waste=(("A", "2"),)))
    issue(world, waste=(("A", "1.5"), ("B", "2.5")))
    refuse(world, issue(world, transporter=world.beta, waste=(("VOLUMOSO", "2"),)))
    cancel(world, issue(world, waste=(("A", "1"),)))
    return first.worksite


def report_page(user, site) -> str:
    response = client_for(user).get(f"/obras/{site.pk}/relatorio/")
    assert response.status_code == 200
    return response.content.decode()


def test_report_lists_every_ctr_and_flags_open_refused_cancelled(world, site_with_history):
    page = report_page(world.nucleo, site_with_history)
    assert page.count(">CTR-3518404-2026-") == 5
    assert page.count('class="flagged"') == 3
    for flag in ("Em aberto", "Recusado", "Cancelado"):
        assert f'<span class="doc-flag">{flag}</span>' in page
    assert (
        "Há 2 CTR(s) em aberto ou recusados: a destinação não está integralmente comprovada."
        in (page)
    )


def test_report_totals_count_only_received_loads_as_proven(world, site_with_history):
    report = reports.worksite_report(site_with_history)
    by_class = {t.label[:8]: (t.received, t.open, t.refused) for t in report.by_class}
    assert by_class == {
        "Classe A": ("5", "1,5", "0"),  # 3 + 2 received; the cancelled 1 m³ is left out
        "Classe B": ("0", "2,5", "0"),
        "Resíduos": ("0", "0", "2"),  # volumosos, refused
    }
    by_facility = {t.label: (t.received_count, t.received, t.measured, t.open, t.refused)
                   for t in report.by_facility}  # fmt: skip
    assert by_facility == {
        "ATT (Área de Transbordo e Triagem (ATT))": (1, "3", "3,2", "4", "2"),
        "Reciclagem (Área de Reciclagem)": (1, "2", "2", "0", "0"),
    }
    assert (report.received_count, report.open_count, report.refused_count) == (2, 1, 1)
    assert report.cancelled_count == 1
    assert not report.proven


def test_report_of_a_site_with_every_load_received_is_conclusive(world):
    ctr = receive(world, issue(world))
    page = report_page(world.fiscal, ctr.worksite)
    assert "Todos os 1 CTR(s) da obra foram recebidos" in page
    # Received at the ATT, which has not shipped it on yet, the load is sorted but
    # not yet destined (art. 3 III, art. 9 p.ú. II); once shipped to the recycling area, it is.
    assert "a destinação final ainda não está comprovada" in page
    assert "3 m³ de classe A ainda em estoque na área “ATT”" in page
    receive(world, onward(world, {"A": "3"}))
    page = report_page(world.fiscal, ctr.worksite)
    assert "destinação comprovada" in page


def test_transporter_sees_only_its_own_ctrs_of_the_site(world, site_with_history):
    alfa_page = report_page(world.alfa_user, site_with_history)
    assert alfa_page.count(">CTR-3518404-2026-") == 4
    assert "Entulhos Beta ME" not in alfa_page
    assert "Somente os CTRs do transportador Caçambas Alfa Ltda." in alfa_page
    beta_page = report_page(world.beta_user, site_with_history)
    assert beta_page.count(">CTR-3518404-2026-") == 1


def test_transporter_without_ctrs_at_the_site_gets_404(world):
    ctr = issue(world)
    response = client_for(world.beta_user).get(f"/obras/{ctr.worksite_id}/relatorio/")
    assert response.status_code == 404
    assert "Obra não encontrada" in response.content.decode()


@pytest.mark.parametrize("who", ["operator", "outsider"])
def test_report_is_closed_to_other_roles(world, who):
    ctr = issue(world)
    assert (
        client_for(getattr(world, who)).get(f"/obras/{ctr.worksite_id}/relatorio/").status_code
        == 404
    )


def test_report_of_an_unknown_site_is_404_and_anonymous_must_log_in(world):
    assert client_for(world.nucleo).get("/obras/999999/relatorio/").status_code == 404
    ctr = issue(world)
    assert Client().get(f"/obras/{ctr.worksite_id}/relatorio/").status_code == 302


def test_report_pdf(world, site_with_history):
    response = client_for(world.nucleo).get(f"/obras/{site_with_history.pk}/relatorio.pdf")
    assert response.status_code == 200
    assert response.content.startswith(b"%PDF-")
    text = pdf_text(response.content)
    assert "Relatório de destinação de resíduos da obra" in text
    assert "Há 2 CTR(s) em aberto ou recusados" in text
    assert "Em aberto" in text and "Recusado" in text and "Cancelado" in text
    assert "Rua das Flores, 10" in text


def test_report_pdf_follows_the_same_access_rules(world):
    ctr = issue(world)
    assert (
        client_for(world.beta_user).get(f"/obras/{ctr.worksite_id}/relatorio.pdf").status_code
        == 404
    )


# --- fee statement ----------------------------------------------------------------------------


def set_ufesp(year: int, value: str | None) -> None:
    """The UFESP of `year` (None: not registered): global, as São Paulo's unit is."""
    UfespRate.objects.filter(unit="UFESP", year=year).delete()
    if value is not None:
        UfespRate.objects.create(unit="UFESP", year=year, value_brl=Decimal(value))


@pytest.fixture
def fee_month(world):
    """November 2026 for alfa: a PEV load (no fee), one received and one open ATT load, one
    cancelled and one refused (no discharge), one in October; and one of beta's."""
    set_ufesp(2026, "1234.56")
    small = receive(world, issue(world, facility=world.pev, waste=(("A", "0.5"),)))
    due = receive(world, issue(world))
    pending = issue(world, waste=(("A", "4"),))
    cancel(world, issue(world))
    refuse(world, issue(world))
    issue(world, day=datetime.date(2026, 10, 31))
    beta = receive(world, issue(world, transporter=world.beta))
    return {"small": small, "due": due, "pending": pending, "beta": beta}


def test_fee_is_one_ufesp_above_the_small_volume_limit(world, fee_month):
    assert fee_month["small"].fee_ufesp == 0  # 0,5 m³ at the PEV
    assert fee_month["due"].fee_ufesp == 1  # 3 m³ at the ATT


def test_statement_lists_due_and_pending_discharges_of_the_month(world, fee_month):
    response = client_for(world.alfa_user).get("/taxas/2026-11/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "novembro de 2026" in page
    assert fee_month["due"].number in page
    assert fee_month["pending"].number in page
    assert fee_month["small"].number not in page
    assert fee_month["beta"].number not in page
    assert page.count(">CTR-3518404-2026-") == 2  # cancelled, refused and October's left out
    assert "Pendente (aguardando recebimento)" in page
    assert "R$ 1.234,56" in page  # due: 1 UFESP; pending: 1 UFESP
    assert "do ano da descarga: R$ 1.234,56 em 2026" in page


def test_statement_totals(world, fee_month):
    statement = reports.fee_statement(world.alfa, 2026, 11)
    assert [line.number for line in statement.lines] == [
        fee_month["due"].number,
        fee_month["pending"].number,
    ]
    assert (statement.due_count, statement.due_ufesp, statement.due_brl) == (
        1,
        Decimal("1"),
        Decimal("1234.56"),
    )
    assert (statement.pending_count, statement.pending_ufesp) == (1, Decimal("1"))
    assert statement.fmt()["due_brl"] == "R$ 1.234,56"


def test_each_discharge_is_worth_the_ufesp_of_its_year(world, fee_month):
    """Art. 12 §3: one UFESP per discharge, at its year's value. December 2025's discharge read
    in 2026 (a new UFESP in force) is still worth 2025's."""
    set_ufesp(2025, "37.02")
    december = receive(world, issue(world, day=datetime.date(2025, 12, 15)))
    statement = reports.fee_statement(world.alfa, 2025, 12)
    assert [line.number for line in statement.lines] == [december.number]
    assert statement.due_brl == Decimal("37.02")  # not 2026's R$ 1.234,56
    assert statement.ufesp == reports.YearRate(2025, "R$ 37,02")
    page = client_for(world.alfa_user).get("/taxas/2025-12/").content.decode()
    assert "pelo valor da UFESP" in page and "do ano da descarga: R$ 37,02 em 2025" in page
    assert "R$ 1.234,56" not in page
    # The CTR prints the same value, and to whom it is paid (art. 12 §3: "CODESG").
    text = pdf_text(client_for(world.alfa_user).get(f"/ctrs/{december.number}/pdf/").content)
    assert "R$ 37,02 pela UFESP de 2025" in text
    assert "CODESG" in text


def test_a_year_without_its_ufesp_shows_no_value_and_says_so(world, fee_month):
    set_ufesp(2025, None)
    december = receive(world, issue(world, day=datetime.date(2025, 12, 15)))
    statement = reports.fee_statement(world.alfa, 2025, 12)
    assert statement.lines[0].value_brl is None and statement.lines[0].value == "—"
    assert statement.due_ufesp == 1
    page = client_for(world.alfa_user).get("/taxas/2025-12/").content.decode()
    assert "O valor da UFESP de 2025 ainda não está" in page
    summary = client_for(world.nucleo).get("/taxas/2025-12/").content.decode()
    assert "O valor da UFESP de 2025 ainda não está" in summary
    assert "Companhia de Desenvolvimento de Guaratinguetá (CODESG)" in summary
    rows = list(
        csv.reader(
            io.StringIO(
                client_for(world.alfa_user).get("/taxas/2025-12.csv").content.decode("utf-8-sig")
            ),
            delimiter=";",
        )
    )
    assert rows[1][0] == december.number and rows[1][-1] == ""


def test_statement_csv_opens_in_brazilian_excel(world, fee_month):
    response = client_for(world.alfa_user).get("/taxas/2026-11.csv")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert "attachment" in response["Content-Disposition"]
    raw = response.content
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig")), delimiter=";"))
    assert rows[0][0] == "Número do CTR" and "Valor (R$)" in rows[0]
    assert len(rows) == 3
    due = rows[1]
    assert due[0] == fee_month["due"].number
    assert due[1] == "30/11/2026"
    assert due[3] == "Devida"
    assert due[-3:] == ["3,000", "1,00", "1234,56"]
    assert rows[2][3] == "Pendente"


def test_nucleo_sees_a_summary_and_any_transporters_statement(world, fee_month):
    client = client_for(world.nucleo)
    summary = client.get("/taxas/2026-11/").content.decode()
    assert "Caçambas Alfa Ltda." in summary and "Entulhos Beta ME" in summary
    assert f"?transportador={world.alfa.pk}" in summary
    assert "R$ 2.469,12" in summary  # the month's total due: alfa's and beta's UFESP
    beta = client.get(f"/taxas/2026-11/?transportador={world.beta.pk}").content.decode()
    assert fee_month["beta"].number in beta and fee_month["due"].number not in beta
    beta_csv = client.get(f"/taxas/2026-11.csv?transportador={world.beta.pk}").content.decode()
    assert fee_month["beta"].number in beta_csv and fee_month["due"].number not in beta_csv
    rows = list(
        csv.reader(
            io.StringIO(client.get("/taxas/2026-11.csv").content.decode("utf-8-sig")),
            delimiter=";",
        )
    )
    assert [r[0] for r in rows[1:]] == ["Caçambas Alfa Ltda.", "Entulhos Beta ME"]
    # Per municipality, with the transporter's licence there.
    assert rows[0][2:4] == ["Município", "Licença"]
    assert rows[1][2:4] == ["Guaratinguetá (teste)/SP", "TR-001"]
    assert rows[1][4:7] == ["1", "1,00", "1234,56"]
    assert rows[1][7:10] == ["1", "1,00", "1234,56"]


def test_a_month_without_lines_names_the_licence_here_not_the_ones_elsewhere(world):
    """A transporter also licensed in another municipality: the Núcleo here reads its
    licence here, never the number or fee collector of the other municipality's licence;
    the transporter itself reads both."""
    elsewhere = municipality("3500303", "Outra Cidade (teste)", east_m=20_000)
    licence(world.alfa, elsewhere, "TR-OUTRA-77")
    page = client_for(world.nucleo).get(f"/taxas/2026-01/?transportador={world.alfa.pk}")
    text = page.content.decode()
    assert "TR-001" in text
    assert "TR-OUTRA-77" not in text and "Outra Cidade" not in text
    own = client_for(world.alfa_user).get("/taxas/2026-01/").content.decode()
    assert "TR-001" in own and "TR-OUTRA-77" in own


def test_transporter_cannot_read_anothers_statement(world, fee_month):
    client = client_for(world.alfa_user)
    assert client.get(f"/taxas/2026-11/?transportador={world.beta.pk}").status_code == 404
    assert client_for(world.operator).get("/taxas/2026-11/").status_code == 403
    assert client_for(world.nucleo).get("/taxas/2026-11/?transportador=abc").status_code == 404


@pytest.mark.parametrize("path", ["/taxas/2026-13/", "/taxas/lixo/", "/taxas/2026-13.csv"])
def test_bad_month_is_a_portuguese_400(world, path):
    response = client_for(world.alfa_user).get(path)
    assert response.status_code == 400
    assert "Mês inválido" in response.content.decode()


def test_empty_month_and_neighbour_links(world):
    page = client_for(world.alfa_user).get("/taxas/2026-01/").content.decode()
    assert "Nenhuma descarga com taxa neste mês." in page
    assert "/taxas/2025-12/" in page and "/taxas/2026-02/" in page
