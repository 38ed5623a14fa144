"""The Certificado de Destinação Final: a worksite's loads, or a generator's over a period, followed
through the ATTs to their final destinations (art. 9 p.ú. II, art. 13 p.ú.); conclusive only when
every cubic metre got there, and why not otherwise. Its PDF with a QR code, its public page
(personal data masked), its code, and the API."""

from __future__ import annotations

import datetime
import subprocess
from decimal import Decimal

import pypdfium2
import pytest
import zxingcpp
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from ctr import closing, services
from ctr.custody import certificates, processing
from ctr.custody.certificates import Place, Scope, Share
from ctr.custody.chain import Outcome
from ctr.documents import public_person_name
from ctr.models import DestinationCertificate, ProcessingKind, Worksite
from ctr.rules import WasteLine
from tests.ctr.onward_world import inbound, onward
from tests.ctr_world import CPF_GENERATOR, build_world, make_user

pytestmark = pytest.mark.django_db

D = datetime.date
M3 = Decimal
ADDRESS = "Rua das Obras, 77"
LOAD_DAY, SHIP_DAY = D(2026, 11, 1), D(2026, 11, 10)


@pytest.fixture
def world(frozen_today):
    world = build_world()
    world.recycling_operator = make_user("operador_reciclagem", facility=world.recycling)
    world.landfill_operator = make_user("operador_aterro", facility=world.landfill)
    return world


def site(world):
    return services.WorksiteData(ADDRESS, world.origin, neighbourhood="Vila Bela")


def load(world, lines, received=None, day=LOAD_DAY, **kwargs):
    """A load of the worksite (Alfa's, to the ATT unless `facility`)."""
    return inbound(world, lines, received=received, day=day, worksite=site(world), **kwargs)


def ship(world, lines, to=None, received=True, day=SHIP_DAY):
    """Sorted waste from the ATT to the recycling area (or `to`), received there in full."""
    ctr = onward(world, lines, day=day, destination=to or world.recycling)
    if received:
        operator = world.recycling_operator if (to or world.recycling) == world.recycling else None
        closing.receive(ctr, operator or world.landfill_operator, ctr.total_volume_m3)
    return ctr


def certificate(world) -> certificates.Certificate:
    return certificates.build(Scope.of_worksite(the_site()))


def the_site() -> Worksite:
    return Worksite.objects.select_related("generator").get(address=ADDRESS)


def place(facility) -> Place:
    return Place(facility.pk, facility.name, facility.kind)


def client_for(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(get_user_model().objects.get(pk=user.pk))
    return client


def pdf_text(content: bytes) -> str:
    """The PDF's text as poppler's pdftotext reads it (a reader's copy and paste), one line."""
    text = subprocess.run(
        ["pdftotext", "-", "-"], input=content, capture_output=True, check=True
    ).stdout.decode()
    return " ".join(text.split())


# --- what the certificate says -----------------------------------------------------------------


def test_a_load_sorted_at_the_att_and_recycled_is_conclusive(world):
    first = load(world, {"A": "6"}, received="6")
    ship(world, {"A": "6"})

    cdf = certificate(world)
    assert cdf.conclusive
    assert cdf.statement == (
        "Destinação final comprovada: os 6 m³ dos 1 CTR(s) chegaram a áreas de reciclagem ou "
        "aterros licenciados ou foram beneficiados na área que os recebeu."
    )
    (row,) = cdf.loads
    assert (row.number, row.first_place, row.transporter) == (
        first.number,
        place(world.att),
        "Caçambas Alfa Ltda.",
    )
    assert row.shares == (Share(Outcome.DESTINED, place(world.recycling), "A", M3("6.000")),)


def test_stock_transit_and_a_refused_load_each_say_why_it_is_not_conclusive(world):
    load(world, {"A": "6"}, received="6")
    ship(world, {"A": "4"})
    ship(world, {"A": "1"}, to=world.landfill, received=False)  # on its way to the landfill
    refused = load(world, {"A": "3"}, day=D(2026, 11, 2))
    closing.refuse(refused, world.operator, "carga misturada com lixo")

    cdf = certificate(world)
    assert not cdf.conclusive
    assert cdf.statement == (
        "Não conclusivo: 1 m³ de classe A ainda em estoque na área “ATT”; 1 m³ de classe A em "
        "trânsito para a área “Aterro”; "
        f"o {refused.number} foi recusado pela área “ATT” (3 m³): o destino dessa carga não "
        "está comprovado."
    )
    assert [(s.outcome, s.place.name, s.volume_m3) for s in cdf.destinations] == [
        (Outcome.DESTINED, "Reciclagem", M3("4.000")),
        (Outcome.STOCK, "ATT", M3("1.000")),
        (Outcome.TRANSIT, "Aterro", M3("1.000")),
        (Outcome.REFUSED, "ATT", M3("3.000")),
    ]
    (a,) = cdf.by_class
    assert (a.declared_m3, a.received_m3, a.destined_m3, a.stock_m3) == (9, 6, 4, 1)
    assert (a.transit_m3, a.refused_m3, a.processed_m3) == (1, 3, 0)


def test_a_load_still_on_its_way_is_in_transit_to_its_first_facility(world):
    load(world, {"A": "3"})
    cdf = certificate(world)
    assert cdf.reasons == ["3 m³ de classe A em trânsito para a área “ATT”"]
    assert cdf.loads[0].lines[0].received_m3 is None


def test_waste_reused_at_the_att_is_conclusive(world):
    load(world, {"B": "2"}, received="2")
    processing.record_processing(
        world.operator, world.att, "B", M3("2"), D(2026, 11, 3), ProcessingKind.REUSED
    )
    cdf = certificate(world)
    assert cdf.conclusive
    assert cdf.destinations == [Share(Outcome.PROCESSED, place(world.att), "B", M3("2.000"))]


def test_each_class_declared_and_received(world):
    load(world, {"A": "5", "B": "2"}, received="6.3")  # 90 % of what was declared
    (row,) = certificate(world).loads
    assert [(line.waste_class, line.declared_m3, line.received_m3) for line in row.lines] == [
        ("A", M3("5.000"), M3("4.500")),
        ("B", M3("2.000"), M3("1.800")),
    ]
    assert certificate(world).reasons == [
        "4,5 m³ de classe A ainda em estoque na área “ATT”",
        "1,8 m³ de classe B ainda em estoque na área “ATT”",
    ]


def test_cancelled_loads_are_counted_apart(world):
    closing.cancel(load(world, {"A": "3"}), world.alfa_user, "obra adiada")
    cdf = certificate(world)
    assert (cdf.loads, cdf.cancelled_count, cdf.conclusive) == ((), 1, False)
    assert cdf.statement == "Nenhuma carga registrada: não há destinação a certificar."


def test_a_generator_over_a_period(world):
    load(world, {"A": "3"}, received="3", facility=world.recycling, day=D(2026, 10, 20))
    november = load(world, {"A": "2"}, day=D(2026, 11, 5))
    generator = the_site().generator
    cdf = certificates.build(Scope(generator, None, D(2026, 11, 1), D(2026, 11, 30)))
    assert [row.number for row in cdf.loads] == [november.number]
    assert cdf.subject.period_label == "de 01/11/2026 a 30/11/2026"
    assert len(certificates.build(Scope(generator)).loads) == 2


def test_the_stored_facts_read_back_as_they_were(world):
    load(world, {"A": "5", "B": "2"}, received="6.3")
    ship(world, {"A": "2.5"})
    cdf = certificate(world)
    assert certificates.from_content(certificates.content_of(cdf)) == cdf


# --- who may see it -----------------------------------------------------------------------------


def beta_load(world):
    """A load of the worksite carried by Beta, to the ATT."""
    return services.issue(
        world.beta,
        world.beta_user,
        services.IssueRequest(
            transport_date=D(2026, 11, 3),
            vehicle_plate="XYZ9876",
            origin=world.origin,
            destination=world.inside(world.att),
            waste=[WasteLine("A", M3("2"), "entulho")],
            worksite_id=the_site().pk,
        ),
    )


def test_a_transporter_certifies_only_the_loads_it_carried(world):
    mine = load(world, {"A": "3"}, received="3")
    scope = Scope.of_worksite(the_site())
    assert certificates.for_user(world.beta_user, scope) is None  # carried nothing there
    beta_load(world)
    alfa = certificates.for_user(world.alfa_user, scope)
    assert [row.number for row in certificates.build(alfa).loads] == [mine.number]
    assert certificates.build(alfa).subject.transporter_name == "Caçambas Alfa Ltda."
    assert certificates.for_user(world.nucleo, scope) == scope
    for outsider in (world.operator, world.outsider):
        assert certificates.for_user(outsider, scope) is None


# --- the issued certificate and its public page ------------------------------------------------


def test_issuing_again_unchanged_gives_the_same_certificate_and_a_change_a_new_one(world):
    load(world, {"A": "6"}, received="6")
    scope = Scope.of_worksite(the_site())
    first, _ = certificates.issue(scope, world.nucleo)
    again, _ = certificates.issue(scope, world.fiscal)
    assert again.pk == first.pk and again.issued_by == world.nucleo
    assert not first.conclusive
    assert certificates.normalize_code(first.code.lower().replace("-", " ")) == first.code

    ship(world, {"A": "6"})
    second, cdf = certificates.issue(scope, world.nucleo)
    assert second.code != first.code and second.conclusive and cdf.conclusive
    old = certificates.verify(first.code)
    assert old.changed and not old.certificate.conclusive and old.current.conclusive
    assert not certificates.verify(second.code).changed
    assert DestinationCertificate.objects.count() == 2


def test_the_public_page_shows_the_certificate_with_personal_data_masked(world):
    number = load(world, {"A": "6"}, received="6").number
    issued, _ = certificates.issue(Scope.of_worksite(the_site()), world.nucleo)
    response = Client().get(f"/verificar/cdf/{issued.code}/")
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    page = response.content.decode()
    for shown in (
        issued.code,
        "Certificado autêntico",
        "Maria O.",
        "***.982.247-**",
        "Vila Bela — Guaratinguetá (teste)/SP",
        number,
        "6 m³ de classe A ainda em estoque na área “ATT”",
    ):
        assert shown in page, shown
    lon, lat = world.origin.coords
    for secret in ("Maria da Obra", CPF_GENERATOR, "529.982.247-25", ADDRESS, f"{lat:.4f}"):
        assert secret not in page, secret


def test_the_public_page_says_when_the_chain_changed_since(world):
    load(world, {"A": "6"}, received="6")
    issued, _ = certificates.issue(Scope.of_worksite(the_site()), world.nucleo)
    ship(world, {"A": "6"})
    page = Client().get(f"/verificar/cdf/{issued.code}/").content.decode()
    assert "A cadeia de custódia mudou desde a emissão" in page
    today = page.index("Situação hoje")
    assert page.index("Destinação final comprovada", today) < page.index("Conteúdo emitido")
    assert "6 m³ de classe A ainda em estoque" in page  # what it said when issued


@pytest.mark.parametrize("code", ["CDF-2222-3333-4444", "CTR-nada", "xyz"])
def test_an_unknown_code_is_a_portuguese_404(world, code):
    response = Client().get(f"/verificar/cdf/{code}/")
    assert response.status_code == 404
    assert "Certificado não encontrado" in response.content.decode()


def test_the_verification_box_takes_a_certificate_code(world):
    response = Client().get("/verificar/", {"numero": " cdf abcd efgh jkmn "})
    assert response.status_code == 302
    assert response["Location"] == "/verificar/cdf/CDF-ABCD-EFGH-JKMN/"


# --- the pages and the PDF ----------------------------------------------------------------------


def test_the_pdf_carries_the_certificate_and_a_qr_code_to_its_public_page(world):
    first = load(world, {"A": "6"}, received="6")
    ship(world, {"A": "4"})
    response = client_for(world.alfa_user).get(f"/obras/{first.worksite_id}/cdf.pdf")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    issued = DestinationCertificate.objects.get()
    url = f"http://testserver/verificar/cdf/{issued.code}/"
    text = pdf_text(response.content)
    for expected in (
        "Certificado de Destinação Final (CDF)",
        f"Nº {issued.code}",
        url,
        "Não conclusivo: a destinação final de 2 m³ dos 6 m³ ainda não está comprovada.",
        "• 2 m³ de classe A ainda em estoque na área “ATT”.",
        ADDRESS,
        "Maria da Obra",
        "529.982.247-25",  # in full: only who may see the certificate gets the PDF
        "Somente os CTRs do transportador Caçambas Alfa Ltda.",
        first.number,
        "Destinação final: Reciclagem — 4 m³",
        "Em estoque: ATT — 2 m³",
        "art. 9 p.ú. II",
        issued.digest,
    ):
        assert expected in text, expected
    page = pypdfium2.PdfDocument(response.content)[0]
    image = page.render(scale=200 / 72).to_pil()
    assert [code.text for code in zxingcpp.read_barcodes(image)] == [url]


def test_the_page_issues_the_certificate_and_links_its_pdf_and_public_page(world):
    first = load(world, {"A": "6"}, received="6")
    page = client_for(world.nucleo).get(f"/obras/{first.worksite_id}/cdf/").content.decode()
    issued = DestinationCertificate.objects.get()
    assert f"/verificar/cdf/{issued.code}/" in page
    assert f"/obras/{first.worksite_id}/cdf.pdf" in page
    assert "Rua das Obras, 77" in page and "529.982.247-25" in page


@pytest.mark.parametrize(
    ("who", "status"),
    [("nucleo", 200), ("fiscal", 200), ("alfa_user", 200), ("beta_user", 404), ("operator", 404)],
)
def test_the_certificate_pages_follow_the_worksite_report(world, who, status):
    first = load(world, {"A": "3"}, received="3")
    for path in (f"/obras/{first.worksite_id}/cdf/", f"/obras/{first.worksite_id}/cdf.pdf"):
        assert client_for(getattr(world, who)).get(path).status_code == status
    assert Client().get(f"/obras/{first.worksite_id}/cdf/").status_code == 302  # to log in


def test_the_generator_certificate_and_its_bad_periods(world):
    load(world, {"A": "3"}, received="3", facility=world.recycling)
    generator = the_site().generator
    client = client_for(world.nucleo)
    ok = client.get(f"/geradores/{generator.pk}/cdf/?date_from=2026-11-01&date_to=2026-11-30")
    assert ok.status_code == 200
    page = ok.content.decode()
    assert "de 01/11/2026 a 30/11/2026" in page and "Destinação final comprovada" in page
    assert f"/geradores/{generator.pk}/cdf.pdf?date_from=2026-11-01" in page
    for query in ("?date_from=01/11/2026", "?date_from=2026-12-01&date_to=2026-11-01"):
        bad = client.get(f"/geradores/{generator.pk}/cdf/{query}")
        assert bad.status_code == 400 and "Período inválido" in bad.content.decode()
    assert client.get("/geradores/999999/cdf/").status_code == 404


def test_the_worksite_report_shows_where_each_load_is_now(world):
    first = load(world, {"A": "6"}, received="6")
    ship(world, {"A": "4"})
    page = client_for(world.nucleo).get(f"/obras/{first.worksite_id}/relatorio/").content.decode()
    assert "Destinação final: Reciclagem — 4 m³ (Classe A)" in page
    assert "Em estoque: ATT — 2 m³ (Classe A)" in page
    assert "Não conclusivo: a destinação final de 2 m³ dos 6 m³ ainda não está comprovada." in page
    assert "<li>2 m³ de classe A ainda em estoque na área “ATT”.</li>" in page
    assert "a destinação final ainda não está comprovada" in page
    pdf = pdf_text(
        client_for(world.nucleo).get(f"/obras/{first.worksite_id}/relatorio.pdf").content
    )
    assert "Não conclusivo: a destinação final de 2 m³ dos 6 m³" in pdf
    assert "• 2 m³ de classe A ainda em estoque na área “ATT”." in pdf
    assert "Onde estão os resíduos" in pdf


# --- the API ------------------------------------------------------------------------------------


def api(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(get_user_model().objects.get(pk=user.pk))
    return client


def test_the_api_gives_each_ctr_and_each_place_with_the_reasons(world):
    first = load(world, {"A": "6"}, received="6")
    ship(world, {"A": "4"})
    response = api(world.nucleo).get(f"/api/v1/worksites/{first.worksite_id}/destinations/")
    assert response.status_code == 200
    body = response.json()
    assert body["conclusive"] is False
    assert body["reasons"] == ["2 m³ de classe A ainda em estoque na área “ATT”"]
    (ctr,) = body["ctrs"]
    assert ctr["number"] == first.number and ctr["first_facility"]["kind"] == "ATT"
    assert [(d["outcome"], d["facility"]["name"], d["volume_m3"]) for d in ctr["destinations"]] == [
        ("destined", "Reciclagem", "4.000"),
        ("stock", "ATT", "2.000"),
    ]
    assert body["by_class"][0]["destined_m3"] == "4.000"
    assert body["certificate"]["pdf"] == (f"http://testserver/obras/{first.worksite_id}/cdf.pdf")
    assert body["subject"]["transporter_id"] is None
    own = api(world.alfa_user).get(f"/api/v1/worksites/{first.worksite_id}/destinations/")
    assert own.json()["subject"]["transporter_id"] == world.alfa.pk


def test_the_api_refuses_in_portuguese(world):
    first = load(world, {"A": "3"}, received="3")
    url = f"/api/v1/worksites/{first.worksite_id}/destinations/"
    assert api().get(url).status_code == 401
    for user in (world.beta_user, world.operator, world.outsider):
        response = api(user).get(url)
        assert response.status_code == 403
        assert "Só o Núcleo, a fiscalização e os transportadores" in response.json()["detail"]
    missing = api(world.nucleo).get("/api/v1/worksites/999999/destinations/")
    assert missing.status_code == 404 and missing.json()["detail"] == "Obra não encontrada."


def test_the_generator_api_over_a_period(world):
    load(world, {"A": "3"}, received="3", facility=world.recycling, day=D(2026, 10, 20))
    generator = the_site().generator
    url = f"/api/v1/generators/{generator.pk}/destinations/"
    body = api(world.nucleo).get(url, {"date_from": "2026-10-01", "date_to": "2026-10-31"}).json()
    assert body["conclusive"] is True and len(body["ctrs"]) == 1
    assert body["certificate"]["html"].endswith(
        f"/geradores/{generator.pk}/cdf/?date_from=2026-10-01&date_to=2026-10-31"
    )
    empty = api(world.nucleo).get(url, {"date_from": "2026-11-01"}).json()
    assert empty["ctrs"] == [] and empty["conclusive"] is False
    inverted = {"date_from": "2026-11-02", "date_to": "2026-11-01"}
    for query in ({"date_from": "31/10/2026"}, inverted):
        response = api(world.nucleo).get(url, query)
        assert response.status_code == 400
        assert response["Content-Type"].startswith("application/problem+json")
    assert api(world.nucleo).get("/api/v1/generators/999999/destinations/").status_code == 404


def test_the_endpoints_are_in_the_openapi_schema(world):
    schema = APIClient().get("/api/v1/schema/?format=json").json()
    worksite = schema["paths"]["/api/v1/worksites/{id}/destinations/"]["get"]
    assert {"200", "401", "403", "404"} <= set(worksite["responses"])
    generator = schema["paths"]["/api/v1/generators/{id}/destinations/"]["get"]
    assert {p["name"] for p in generator["parameters"]} >= {"date_from", "date_to"}
    assert "certificate" in schema["components"]["schemas"]["DestinationsOutput"]["properties"]


def test_a_name_in_brackets_is_masked_by_its_first_letter():
    # "(fictícia)" in the demo's names gave "(." on the public pages.
    assert public_person_name("Maria Exemplo da Silva (fictícia)", CPF_GENERATOR) == (
        "Maria E. S. F."
    )
