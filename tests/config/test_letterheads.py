"""Printed documents and e-mails carry the letterhead of the municipality they
belong to, "Prefeitura Municipal de <name>/<UF>", and that municipality's law; one whose law is
not on record says so, and none cites another municipality's law (config.letterhead,
pev_network.letterhead, Municipality.waste_law).

Two municipalities: the test town (Guaratinguetá's IBGE code: the platform knows its law, Lei
3.978/2007, whose articles the documents cite) and a neighbour 20 km east (no law on record).
PDFs are read with poppler's pdftotext, as tests/ctr/test_certificates.py reads them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.template.loader import render_to_string

from config import mail
from config.letterhead import PLATFORM, Letterhead
from ctr import closing, printing, reports, services
from ctr.custody import certificates
from ctr.models import CTR, Worksite
from fiscalization import enforcement, enforcement_pdf, intake, photos
from fiscalization.models import EnforcementCase
from fiscalization.models.enforcement import DeliveryMethod
from generators import accounts, declaration_pdf
from pev_network import boundaries
from pev_network.letterhead import letterhead_of
from pev_network.models import Municipality
from pev_network.services import save_municipality
from tests import dumping_fixtures as fx
from tests.builders import ORIGIN, multi, municipality, square
from tests.ctr.onward_world import inbound
from tests.ctr_world import build_world, issue_hours_ago, make_user
from tests.enforcement_world import at, open_case
from tests.generators.declaration_world import destined_declaration
from webhooks import delivery

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]

TOWN_HEAD = "Prefeitura Municipal de Guaratinguetá (teste)/SP"
NEIGHBOUR_HEAD = "Prefeitura Municipal de Aparecida (teste)/SP"
TOWN_LAW = "Lei Municipal nº 3.978/2007 de Guaratinguetá (teste)/SP"
NOT_ON_RECORD = "de Aparecida (teste)/SP (ainda não informada na plataforma)"


@pytest.fixture
def world():
    world = build_world()
    world.neighbour = municipality("3502507", "Aparecida (teste)", east_m=20_000)
    return world


def pdf_text(content: bytes) -> str:
    text = subprocess.run(
        ["pdftotext", "-", "-"], input=content, capture_output=True, check=True
    ).stdout.decode()
    return " ".join(text.split())


def moved_to(obj, municipality: Municipality):
    """The same object as if it belonged to `municipality` (what the letterhead reads)."""
    type(obj).objects.filter(pk=obj.pk).update(municipality=municipality)
    obj.refresh_from_db()
    return obj


# --- the letterhead -------------------------------------------------------------------------


def test_the_model_law_cites_its_articles_and_another_law_only_what_they_say():
    provisions = [("art. 3 VI", "o CTR acompanha cada carga")]
    model = Letterhead("Guaratinguetá/SP", "Lei Municipal nº 3.978/2007", cites_articles=True)
    other = Letterhead("Lorena/SP", "Lei Municipal nº 1.234/2010")
    unknown = Letterhead("Lorena/SP")
    assert model.legal_basis(provisions) == (
        "Base legal: Lei Municipal nº 3.978/2007 de Guaratinguetá/SP, art. 3 VI (o CTR "
        "acompanha cada carga)."
    )
    assert other.legal_basis(provisions) == (
        "Base legal: Lei Municipal nº 1.234/2010 de Lorena/SP: o CTR acompanha cada carga."
    )
    assert unknown.legal_basis(provisions) == (
        "Base legal: a lei municipal de resíduos da construção civil e volumosos de Lorena/SP "
        "(ainda não informada na plataforma): o CTR acompanha cada carga."
    )
    assert model.cite("art. 9") == "Lei Municipal nº 3.978/2007, art. 9"
    assert other.cite("art. 9") == "Lei Municipal nº 1.234/2010 de Lorena/SP"
    assert unknown.cite("art. 9") == "lei municipal de Lorena/SP"
    assert PLATFORM.issuer == "Plataforma CTR" and PLATFORM.cite("art. 9") == "lei municipal"
    assert Letterhead.from_dict(other.as_dict()) == other


def test_only_guaratingueta_with_its_own_law_cites_the_catalogues_articles(world):
    assert letterhead_of(world.town).cites_articles
    assert not letterhead_of(world.neighbour).cites_articles
    # The neighbour given the same text: another municipality's law, not the catalogue's.
    world.neighbour.waste_law = "Lei Municipal nº 3.978/2007"
    assert not letterhead_of(world.neighbour).cites_articles
    # Guaratinguetá under a new law: its article numbers are no longer the catalogue's.
    world.town.waste_law = "Lei Municipal nº 5.000/2030"
    assert not letterhead_of(world.town).cites_articles


def test_a_new_municipality_starts_with_the_law_the_platform_knows_and_keeps_an_edit():
    town, _ = save_municipality("3518404", "Guaratinguetá", "SP", multi(square(*ORIGIN, 1000)))
    other, _ = save_municipality("3502507", "Aparecida", "SP", multi(square(*ORIGIN, 500)))
    assert town.waste_law == "Lei Municipal nº 3.978/2007"
    assert other.waste_law == ""
    Municipality.objects.filter(pk=town.pk).update(waste_law="Lei Municipal nº 3.978/2007 (rev.)")
    town, created = save_municipality("3518404", "Guaratinguetá", "SP", town.boundary)
    assert not created and town.waste_law == "Lei Municipal nº 3.978/2007 (rev.)"


def test_the_boundaries_import_gives_guaratingueta_its_law(db):
    """make run's demo loads Guaratinguetá's boundary file after the migrations: the import
    fills the law in, as migration 0011 does for a database that had it already."""
    fixtures = Path(__file__).resolve().parents[2] / "fixtures"
    boundaries.import_municipalities(str(fixtures / "municipio_3518404_guaratingueta.geojson"))
    town = Municipality.objects.get(ibge_code="3518404")
    assert town.waste_law == "Lei Municipal nº 3.978/2007"
    assert letterhead_of(town).cites_articles


# --- printed documents -------------------------------------------------------------------------


def test_the_ctr_pdf_carries_its_municipalitys_letterhead_and_law(world):
    ctr = issue_hours_ago(world, 1)
    url = f"http://testserver/verificar/{ctr.number}/"
    town = pdf_text(printing.ctr_pdf(ctr, url))
    assert TOWN_HEAD in town
    assert f"Base legal: {TOWN_LAW}, art. 3 VI (o CTR acompanha cada carga)" in town

    neighbour = pdf_text(printing.ctr_pdf(moved_to(ctr, world.neighbour), url))
    assert NEIGHBOUR_HEAD in neighbour
    assert NOT_ON_RECORD in neighbour
    assert "3.978" not in neighbour and "Guaratinguetá" not in neighbour
    assert "art. 3 VI" not in neighbour  # Guaratinguetá's article numbers

    Municipality.objects.filter(pk=world.neighbour.pk).update(
        waste_law="Lei Municipal nº 1.234/2010"
    )
    ctr = CTR.objects.get(pk=ctr.pk)
    neighbour = pdf_text(printing.ctr_pdf(ctr, url))
    assert (
        "Base legal: Lei Municipal nº 1.234/2010 de Aparecida (teste)/SP: o CTR acompanha cada "
        "carga; o transportador destina"
    ) in neighbour


def worksite_load(world) -> Worksite:
    world.recycling_operator = make_user("operador_reciclagem", facility=world.recycling)
    site = services.WorksiteData("Rua das Obras, 77", world.origin, neighbourhood="Vila Bela")
    ctr = inbound(world, {"A": "3"}, received="3", worksite=site, facility=world.recycling)
    return ctr.worksite


def test_the_worksite_report_and_its_certificate_carry_the_worksites_municipality(world):
    worksite = worksite_load(world)
    report = pdf_text(printing.worksite_report_pdf(reports.worksite_report(worksite)))
    assert TOWN_HEAD in report and "Lei Municipal nº 3.978/2007, art. 9 p.ú. II" in report
    issued, cdf = certificates.issue(certificates.Scope.of_worksite(worksite), world.nucleo)
    text = pdf_text(printing.cdf_pdf(issued, cdf, "http://testserver/verificar/cdf/x/"))
    assert TOWN_HEAD in text and f"Base legal: {TOWN_LAW}, art. 3 III" in text

    # A worksite with the neighbour's permit is the neighbour's paper.
    Worksite.objects.filter(pk=worksite.pk).update(municipality=world.neighbour)
    worksite.refresh_from_db()
    report = pdf_text(printing.worksite_report_pdf(reports.worksite_report(worksite)))
    assert NEIGHBOUR_HEAD in report and "3.978" not in report
    issued.refresh_from_db()
    text = pdf_text(printing.cdf_pdf(issued, cdf, "http://testserver/verificar/cdf/x/"))
    assert NEIGHBOUR_HEAD in text and NOT_ON_RECORD in text and "3.978" not in text


def test_a_worksite_without_a_permit_is_the_municipality_where_it_lies(world):
    worksite = worksite_load(world)
    # First named on a CTR: it takes the CTR's municipality, where it lies.
    assert worksite.municipality_id == world.town.pk
    assert certificates.worksite_municipality(worksite) == world.town
    # A row from before that (no municipality recorded) is placed by its location.
    worksite.municipality = None
    assert certificates.worksite_municipality(worksite) == world.town


def test_a_generators_certificate_over_two_municipalities_is_the_platforms(world):
    worksite = worksite_load(world)
    scope = certificates.Scope(worksite.generator)
    issued, cdf = certificates.issue(scope, world.nucleo)
    assert TOWN_HEAD in pdf_text(printing.cdf_pdf(issued, cdf, "http://x/"))
    # A second load of the same generator, in the neighbour.
    other = issue_hours_ago(world, 2)
    CTR.objects.filter(pk=other.pk).update(
        municipality=world.neighbour, generator=worksite.generator
    )
    issued, cdf = certificates.issue(scope, world.nucleo)
    text = pdf_text(printing.cdf_pdf(issued, cdf, "http://x/"))
    assert "Prefeitura Municipal" not in text
    assert "a lei municipal de resíduos da construção civil e volumosos" in text
    assert "3.978" not in text


def test_the_habite_se_declaration_carries_its_worksites_municipality(world):
    declaration = destined_declaration(world)
    town = pdf_text(declaration_pdf.declaration_pdf(declaration, "http://x/", "http://y/"))
    assert f"{TOWN_HEAD} · Núcleo Permanente de Gestão" in town
    assert f"Base legal: {TOWN_LAW}, art. 9 p.ú. II" in town
    Worksite.objects.filter(pk=declaration.worksite_id).update(municipality=world.neighbour)
    declaration.worksite.refresh_from_db()
    neighbour = pdf_text(declaration_pdf.declaration_pdf(declaration, "http://x/", "http://y/"))
    assert NEIGHBOUR_HEAD in neighbour and NOT_ON_RECORD in neighbour
    assert "3.978" not in neighbour


def test_the_enforcement_notice_carries_the_cases_municipality(world):
    case = open_case(world, at(2025, 3, 3, 9))
    notice = enforcement.issue_notice(
        case, "Remover o entulho", DeliveryMethod.HAND, at(2025, 3, 3, 10)
    )
    assert f"{TOWN_HEAD} · Fiscalização · Plataforma CTR" in pdf_text(
        enforcement_pdf.notice_pdf(notice)
    )
    EnforcementCase.objects.filter(pk=case.pk).update(municipality=world.neighbour)
    notice.refresh_from_db()
    notice.case.refresh_from_db()
    text = pdf_text(enforcement_pdf.notice_pdf(notice))
    assert f"{NEIGHBOUR_HEAD} · Fiscalização" in text and TOWN_HEAD not in text


# --- e-mails ----------------------------------------------------------------------------------


def deliver(smtp_server):
    with smtp_server.commit():
        return delivery.deliver_due()


def citizen_report(point, contact: str):
    return intake.create_report(
        intake.NewReport(point, "LOTE_VAGO", contact=contact),
        photos.check_photos([fx.upload("a.jpg", fx.jpeg_plain())]),
    )


def test_a_citizens_e_mail_is_signed_by_the_municipality_of_the_report(
    world, smtp_server, private_media
):
    town = citizen_report(fx.at(east_m=-800, north_m=-600), "maria@example.org")
    neighbour = citizen_report(fx.at(east_m=20_000, north_m=300), "joao@example.org")
    assert neighbour.municipality == world.neighbour
    fiscal_b = make_user("fiscal_b", "fiscal", world.neighbour)
    intake.change_status(town, "CONFIRMED", world.fiscal)
    intake.change_status(neighbour, "CONFIRMED", fiscal_b)
    assert deliver(smtp_server) == {"delivered": 2}
    (maria,) = smtp_server.to("maria@example.org")
    (joao,) = smtp_server.to("joao@example.org")
    maria, joao = smtp_server.body(maria), smtp_server.body(joao)
    assert TOWN_HEAD in maria and f"Conforme a {TOWN_LAW}" in maria
    assert NEIGHBOUR_HEAD in joao and NOT_ON_RECORD in joao
    assert "Guaratinguetá" not in joao and "3.978" not in joao


def test_a_refused_load_cites_its_municipalitys_law(world, smtp_server):
    ctr = issue_hours_ago(world, 1)
    closing.refuse(ctr, world.operator, "Carga misturada")
    deliver(smtp_server)
    (message,) = smtp_server.to(world.alfa_user.email)
    body = smtp_server.body(message).replace("\r\n", "\n")
    assert "(Lei Municipal nº 3.978/2007, art. 13 p.ú.)" in body
    assert f"—\n{TOWN_HEAD}\nCTR — Controle de Transporte de Resíduos\nConforme a {TOWN_LAW}" in (
        body
    )


def test_the_nucleo_hears_of_a_habite_se_request_under_its_municipalitys_name(world, smtp_server):
    with smtp_server.commit():
        destined_declaration(world)
    (request, *_) = smtp_server.to(world.nucleo.email)
    body = smtp_server.body(request)
    assert "(Lei Municipal nº 3.978/2007, art. 9 p.ú. II)" in body
    assert TOWN_HEAD in body
    (issued,) = smtp_server.to(world.generator_user.email)
    assert f"Apresente a declaração à {TOWN_HEAD}" in smtp_server.body(issued)


def test_an_e_mail_of_no_municipality_is_the_platforms(world):
    message = mail.build(
        ["x@example.org"],
        "Convite",
        "generators/accounts/mail/invitation.txt",
        {
            "generator": world.gama,
            "inviter": "a transportadora",
            "link": "http://l/",
            "expires": "",
        },
    )
    assert "Prefeitura Municipal" not in message.body and "3.978" not in message.body
    assert "conforme a lei municipal de resíduos da construção civil e volumosos de cada" in (
        message.body
    )
    assert message.body.endswith(
        f"\n—\nCTR — Controle de Transporte de Resíduos\n{settings.SITE_URL}\n"
    )
    assert message.body.count("CTR — Controle de Transporte de Resíduos\n") == 1


def test_no_e_mail_template_hard_codes_a_municipalitys_law():
    """The law comes from the letterhead (the `cite` filter): no template names Lei 3.978."""
    root = Path(__file__).resolve().parents[2]
    templates = [
        path
        for app in ("generators", "webhooks", "fiscalization", "ctr")
        for path in (root / app / "templates").rglob("*.txt")
    ]
    assert templates
    offenders = [str(path) for path in templates if "3.978" in path.read_text()]
    assert offenders == []


def test_a_nucleo_account_signs_with_its_current_municipality(world):
    nucleo_b = make_user("nucleo_b", "nucleo", world.neighbour)
    user = get_user_model().objects.get(pk=nucleo_b.pk)
    head = accounts.signed_by(user)
    assert head.issuer == NEIGHBOUR_HEAD
    text = render_to_string(
        "generators/accounts/mail/invitation.txt",
        {"generator": world.gama, "inviter": "o Núcleo", "link": "", "letterhead": head},
    )
    assert NOT_ON_RECORD in text
