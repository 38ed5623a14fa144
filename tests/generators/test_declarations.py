"""The Habite-se destination declaration (Lei 3.978/2007 art. 9 p.ú. II): the
generator asks for it when the work ends; the Núcleo issues it only when every load was
received and, through the ATTs, destined, or refuses it with reasons; its PDF with a QR code to
the public page (personal data masked), and its e-mails."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from decimal import Decimal

import pypdfium2
import pytest
import zxingcpp
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from audit.models import AccessLog
from ctr import closing, roles
from ctr.custody import certificates
from ctr.models import DestinationCertificate, Worksite
from generators import declarations
from generators.declarations import DeclarationError
from generators.models import DeclarationStatus, HabiteSeDeclaration, PlannedVolume, WastePlan
from tests.ctr_world import CNPJ_GAMA, CPF_GENERATOR, build_world, make_user
from tests.generators.declaration_world import (
    ADDRESS,
    ENDED,
    NEIGHBOURHOOD,
    D,
    asked,
    gama_site,
    load,
    person_site,
    ship,
    waiting,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(frozen_today):
    return build_world()


@pytest.fixture
def site(world):
    return gama_site(world)


def refusal(world, declaration) -> DeclarationError:
    with pytest.raises(DeclarationError) as caught:
        declarations.issue(declaration, world.nucleo)
    return caught.value


def untouched(declaration) -> bool:
    """Nothing written by a refused issue: still waiting, no certificate issued."""
    declaration.refresh_from_db()
    return (
        declaration.status == DeclarationStatus.REQUESTED
        and declaration.code is None
        and not DestinationCertificate.objects.exists()
    )


def web(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(get_user_model().objects.get(pk=user.pk))
    return client


# --- when it can be issued ----------------------------------------------------------------------


def test_not_issued_while_a_load_is_in_transit_to_the_att(world, site):
    on_its_way = load(world, site, {"A": "3"})
    declaration = waiting(world, site)

    error = refusal(world, declaration)

    assert error.status == 409 and error.code == "not_destined"
    assert error.message == (
        f"A declaração não pode ser emitida: o {on_its_way.number} (3 m³) ainda não foi "
        "recebido pela área “ATT”."
    )
    assert untouched(declaration)


def test_not_issued_while_its_waste_is_still_in_stock_at_the_att(world, site):
    load(world, site, {"A": "6"}, received="6")
    ship(world, {"A": "4"})
    declaration = waiting(world, site)

    error = refusal(world, declaration)

    assert error.message == (
        "A declaração não pode ser emitida: 2 m³ de classe A ainda em estoque na área “ATT”."
    )
    assert untouched(declaration)


def test_not_issued_while_sorted_waste_is_on_its_way_to_the_landfill(world, site):
    load(world, site, {"A": "6"}, received="6")
    ship(world, {"A": "5"})
    ship(world, {"A": "1"}, received=False, to=world.landfill)
    error = refusal(world, waiting(world, site))
    assert error.message == (
        "A declaração não pode ser emitida: 1 m³ de classe A em trânsito para a área “Aterro”."
    )


def test_issued_once_the_waste_sorted_at_the_att_reached_the_recycling_area(world, site):
    first = load(world, site, {"A": "6"}, received="6")
    load(world, site, {"A": "2"}, received="2", facility=world.recycling)
    ship(world, {"A": "6"})
    declaration = asked(world, site)

    issued = declarations.issue(declaration, world.nucleo)

    assert issued.status == DeclarationStatus.ISSUED and issued.decided_by == world.nucleo
    assert re.fullmatch(r"HAB-[2-9A-Z]{4}-[2-9A-Z]{4}-[2-9A-Z]{4}", issued.code)
    cdf = DestinationCertificate.objects.get()
    assert issued.certificate == cdf and cdf.conclusive and cdf.worksite_id == site.pk
    canonical = json.dumps(issued.content, sort_keys=True, separators=(",", ":"))
    assert issued.digest == hashlib.sha256(canonical.encode()).hexdigest()
    facts = declarations.facts(issued)
    assert (facts.ctr_count, facts.destined_m3, facts.certificate_code) == (2, Decimal(8), cdf.code)
    assert [(c.waste_class, c.transported_m3, c.destined_m3) for c in facts.classes] == [
        ("A", Decimal(8), Decimal(8))
    ]
    assert facts.statement.startswith(
        "Declara-se que os 8 m³ de resíduos da construção civil transportados em 2 CTR(s)"
    )
    assert first.number in json.dumps(cdf.content)


def test_the_stored_facts_carry_the_approved_plan(world, site):
    plan = WastePlan.objects.create(worksite=site, version=2, status="approved")
    PlannedVolume.objects.create(plan=plan, waste_class="A", volume_m3=Decimal("10"))
    load(world, site, {"A": "4"}, received="4", facility=world.recycling)
    facts = declarations.facts(declarations.issue(asked(world, site), world.nucleo))
    assert facts.plan_version == 2 and facts.expected_m3 == Decimal(10)
    assert facts.classes[0].expected_m3 == Decimal(10)


def test_a_refused_load_needs_the_nucleos_explanation(world, site):
    refused = load(world, site, {"A": "3"})
    closing.refuse(refused, world.operator, "carga misturada com lixo doméstico")
    load(world, site, {"A": "3"}, received="3", facility=world.recycling)
    declaration = asked(world, site)

    error = refusal(world, declaration)
    assert error.message == (
        f"A declaração não pode ser emitida: o {refused.number} foi recusado pela área “ATT” "
        "(3 m³): o destino dessa carga não está comprovado."
    )
    assert declarations.review(site).can_issue  # with the explanation, it can

    explanation = "A carga voltou à obra e seguiu no CTR seguinte, à área de reciclagem."
    issued = declarations.issue(declaration, world.nucleo, refused_note=explanation)
    facts = declarations.facts(issued)
    assert (facts.ctr_count, facts.destined_m3) == (1, Decimal(3))  # the refused load is apart
    assert facts.refused_numbers == (refused.number,)
    assert facts.statement.endswith(f"({refused.number}): {explanation}")


def test_a_worksite_without_loads_has_nothing_to_declare(world, site):
    error = refusal(world, waiting(world, site))
    assert "nenhuma carga registrada para a obra" in error.message


def test_no_request_while_the_review_lists_blockers(world, site):
    """The generator's request is refused, by the service the page and the
    API call, while the review lists what keeps the declaration from being issued."""
    with pytest.raises(DeclarationError) as caught:
        asked(world, site)
    assert "nenhuma carga registrada para a obra" in caught.value.message
    on_its_way = load(world, site, {"A": "3"})
    with pytest.raises(DeclarationError) as caught:
        asked(world, site)
    assert (caught.value.status, caught.value.code, caught.value.message) == (
        409,
        "not_destined",
        "O pedido não foi enviado: ainda há 1 pendência na destinação dos resíduos da obra: o "
        f"{on_its_way.number} (3 m³) ainda não foi recebido pela área “ATT”.",
    )
    assert not HabiteSeDeclaration.objects.exists()
    assert Worksite.objects.get(pk=site.pk).ended_on is None


def test_two_nucleo_decisions_one_declaration(world, site):
    load(world, site, {"A": "2"}, received="2", facility=world.recycling)
    declaration = asked(world, site)
    declarations.issue(declaration, world.nucleo)
    other = make_user("nucleo2", roles.NUCLEO, world.town)
    for act in (
        lambda: declarations.issue(declaration, other),
        lambda: declarations.refuse(declaration, other, "tarde demais"),
    ):
        with pytest.raises(DeclarationError) as caught:
            act()
        assert caught.value.status == 409 and "já foi emitida" in caught.value.message
    assert HabiteSeDeclaration.objects.get().status == DeclarationStatus.ISSUED


# --- who asks and who decides ---------------------------------------------------------------


def test_asking_sets_the_end_of_the_work(world, site):
    load(world, site, {"A": "2"}, received="2", facility=world.recycling)
    declaration = asked(world, site, ended_on=D(2026, 11, 20))
    site.refresh_from_db()
    assert site.ended_on == D(2026, 11, 20)
    assert (declaration.status, declaration.requested_by) == (
        DeclarationStatus.REQUESTED,
        world.generator_user,
    )


@pytest.mark.parametrize("who", ["alfa_user", "operator", "nucleo", "fiscal", "outsider"])
def test_only_the_worksites_generator_asks(world, site, who):
    with pytest.raises(DeclarationError) as caught:
        declarations.request(site, getattr(world, who), ENDED)
    assert caught.value.status == 403
    assert not HabiteSeDeclaration.objects.exists()


def test_the_generator_of_another_worksite_cannot_ask(world, site):
    other, maria = person_site(world)
    load(world, other, {"A": "2"}, received="2", facility=world.recycling)
    with pytest.raises(DeclarationError):
        declarations.request(site, maria, ENDED)
    assert declarations.request(other, maria, ENDED).worksite == other


@pytest.mark.parametrize(
    ("ended_on", "code", "message"),
    [
        (
            D(2026, 12, 1),
            "ended_in_future",
            "O término da obra (01/12/2026) é depois de hoje (30/11/2026): peça a declaração "
            "quando a obra tiver terminado.",
        ),
        (
            D(2026, 3, 1),
            "ended_before_start",
            "O término da obra (01/03/2026) é antes do seu início (02/03/2026).",
        ),
    ],
)
def test_a_bad_end_date_is_refused_at_its_field(world, site, ended_on, code, message):
    with pytest.raises(DeclarationError) as caught:
        declarations.request(site, world.generator_user, ended_on)
    assert (caught.value.code, caught.value.field, caught.value.message) == (
        code,
        "ended_on",
        message,
    )
    site.refresh_from_db()
    assert site.ended_on is None and not HabiteSeDeclaration.objects.exists()


def test_one_open_request_at_a_time_and_none_once_issued(world, site):
    load(world, site, {"A": "1"}, received="1", facility=world.recycling)
    first = asked(world, site)
    with pytest.raises(DeclarationError) as caught:
        asked(world, site)
    assert caught.value.status == 409
    assert caught.value.message == (
        f"Já há um pedido de declaração desta obra em análise pelo Núcleo (nº {first.pk}, de "
        "30/11/2026)."
    )
    declarations.refuse(first, world.nucleo, "Falta o CTR da demolição do muro.")
    second = asked(world, site)  # refused: it may ask again
    issued = declarations.issue(second, world.nucleo)
    with pytest.raises(DeclarationError) as caught:
        asked(world, site)
    assert caught.value.message == (
        f"A declaração de destinação desta obra já foi emitida em 30/11/2026 (código "
        f"{issued.code})."
    )


@pytest.mark.parametrize("who", ["fiscal", "authority", "generator_user", "alfa_user"])
def test_only_the_nucleo_issues_or_refuses(world, site, who):
    load(world, site, {"A": "1"}, received="1", facility=world.recycling)
    declaration = asked(world, site)
    user = getattr(world, who)
    for act in (
        lambda: declarations.issue(declaration, user),
        lambda: declarations.refuse(declaration, user, "motivo"),
    ):
        with pytest.raises(DeclarationError) as caught:
            act()
        assert caught.value.status == 403
    assert untouched(declaration)


def test_a_refusal_needs_its_reasons(world, site):
    declaration = waiting(world, site)
    with pytest.raises(DeclarationError) as caught:
        declarations.refuse(declaration, world.nucleo, "   ")
    assert (caught.value.field, caught.value.code) == ("reasons", "reasons_required")
    refused = declarations.refuse(declaration, world.nucleo, " Alvará vencido. ")
    assert (refused.status, refused.reasons) == (DeclarationStatus.REFUSED, "Alvará vencido.")


# --- the PDF and the public page ----------------------------------------------------------------


def pdf_text(content: bytes) -> str:
    text = subprocess.run(
        ["pdftotext", "-", "-"], input=content, capture_output=True, check=True
    ).stdout.decode()
    return " ".join(text.split())


def issued_on(world, site):
    load(world, site, {"A": "6"}, received="6")
    ship(world, {"A": "6"})
    return declarations.issue(asked(world, site), world.nucleo)


def test_the_pdf_carries_the_declaration_and_a_qr_code_to_its_public_page(world, site):
    issued = issued_on(world, site)
    response = web(world.generator_user).get(f"/habite-se/{issued.pk}/declaracao.pdf")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    url = f"http://testserver/verificar/habite-se/{issued.code}/"
    text = pdf_text(response.content)
    for expected in (
        "Declaração de Destinação — Habite-se",
        f"Nº {issued.code}",
        url,
        ADDRESS,
        "Construtora Gama Ltda.",
        "33.644.555/0001-25",
        "Declara-se que os 6 m³ de resíduos da construção civil transportados em 1 CTR(s)",
        issued.certificate.code,
        f"http://testserver/verificar/cdf/{issued.certificate.code}/",
        issued.digest,
        "art. 9 p.ú. II",
        "Núcleo Permanente de Gestão",
    ):
        assert expected in text, expected
    page = pypdfium2.PdfDocument(response.content)[0]
    image = page.render(scale=200 / 72).to_pil()
    assert [code.text for code in zxingcpp.read_barcodes(image)] == [url]
    assert AccessLog.objects.filter(purpose="Habite-se: declaração (PDF)").count() == 1


@pytest.mark.parametrize(
    ("who", "status"),
    [("generator_user", 200), ("nucleo", 200), ("fiscal", 200), ("alfa_user", 404)],
)
def test_the_pdf_is_for_the_generator_and_the_municipality(world, site, who, status):
    issued = issued_on(world, site)
    assert web(getattr(world, who)).get(f"/habite-se/{issued.pk}/declaracao.pdf").status_code == (
        status
    )


def test_no_pdf_before_it_is_issued(world, site):
    declaration = waiting(world, site)
    response = web(world.nucleo).get(f"/habite-se/{declaration.pk}/declaracao.pdf")
    assert response.status_code == 404 and "Declaração não encontrada" in response.content.decode()


def test_the_public_page_masks_personal_data(world):
    person, maria = person_site(world)
    load(world, person, {"A": "2"}, received="2", facility=world.recycling)
    issued = declarations.issue(asked(world, person, user=maria), world.nucleo)

    response = Client().get(f"/verificar/habite-se/{issued.code}/")

    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    page = response.content.decode()
    for shown in (
        issued.code,
        "Declaração autêntica",
        "Maria O.",
        "***.982.247-**",
        f"{NEIGHBOURHOOD} — Guaratinguetá (teste)/SP",
        issued.certificate.code,
        "20/11/2026",
        'id="previsto-transportado"',  # the figures as issued, in the comparison's partial
    ):
        assert shown in page, shown
    for secret in ("Maria da Obra", CPF_GENERATOR, "529.982.247-25", "Rua Particular"):
        assert secret not in page, secret


def test_the_public_page_says_when_the_chain_changed_since(world, site):
    issued = issued_on(world, site)
    load(world, site, {"A": "1"})  # a load after the declaration: the chain is not the same
    page = Client().get(f"/verificar/habite-se/{issued.code}/").content.decode()
    assert "A cadeia de custódia mudou desde a emissão" in page
    assert "Declaração autêntica" not in page
    assert "1 m³ de classe A em trânsito para a área “ATT”" in page  # the situation today


@pytest.mark.parametrize("code", ["HAB-2222-3333-4444", "CDF-2222-3333-4444", "nada"])
def test_an_unknown_code_is_a_portuguese_404(world, code):
    response = Client().get(f"/verificar/habite-se/{code}/")
    assert response.status_code == 404
    assert "Declaração não encontrada" in response.content.decode()


def test_a_code_as_typed_is_found(world, site):
    issued = issued_on(world, site)
    typed = issued.code.lower().replace("-", " ")
    assert declarations.verify(typed).declaration == issued
    assert certificates.normalize_code(issued.code) is None  # not a certificate's code


# --- the pages ----------------------------------------------------------------------------------


def test_the_generator_sees_the_comparison_and_why_it_cannot_be_issued_yet(world, site):
    in_transit = load(world, site, {"A": "3"})
    response = web(world.generator_user).get(f"/gerador/obras/{site.pk}/habite-se/")
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="previsto-transportado"' in page  # generators/_comparison.html
    assert "Ainda não: 1 pendência" in page
    assert f"O {in_transit.number} (3 m³) ainda não foi recebido pela área “ATT”." in page
    # No request the page itself says cannot be granted: the form waits for the blockers.
    assert "Pedir a declaração</button>" not in page
    assert "Você poderá pedir a declaração quando não houver pendências" in page
    response = web(world.generator_user).post(
        f"/gerador/obras/{site.pk}/habite-se/", {"ended_on": "2026-11-20"}
    )
    assert response.status_code == 409
    assert "O pedido não foi enviado: ainda há 1 pendência" in response.content.decode()
    assert not HabiteSeDeclaration.objects.exists()


def test_the_generator_asks_from_its_worksite_page(world, site):
    load(world, site, {"A": "6"}, received="6")
    ship(world, {"A": "6"})
    url = f"/gerador/obras/{site.pk}/habite-se/"
    assert "Pedir a declaração</button>" in web(world.generator_user).get(url).content.decode()
    client = web(world.generator_user)
    response = client.post(url, {"ended_on": "2026-11-20", "note": "Obra concluída."})
    assert response.status_code == 302 and response["Location"] == url
    declaration = HabiteSeDeclaration.objects.get()
    assert (declaration.ended_on, declaration.note) == (D(2026, 11, 20), "Obra concluída.")
    page = client.get(url).content.decode()
    assert f"Pedido nº {declaration.pk} enviado ao Núcleo" in page
    assert f"Pedido nº {declaration.pk} em análise pelo Núcleo" in page
    assert "Pedir a declaração</button>" not in page


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"ended_on": "2026-12-01"}, "é depois de hoje (30/11/2026)"),
        ({"ended_on": ""}, "Este campo é obrigatório."),
        ({"ended_on": "31/02/2026"}, "Informe uma data válida."),
    ],
)
def test_a_bad_request_is_a_4xx_in_portuguese_and_writes_nothing(world, site, data, message):
    load(world, site, {"A": "6"}, received="6")
    ship(world, {"A": "6"})
    response = web(world.generator_user).post(f"/gerador/obras/{site.pk}/habite-se/", data)
    assert response.status_code == 400
    page = response.content.decode()
    assert "O pedido não foi enviado" in page and message in page
    assert not HabiteSeDeclaration.objects.exists()
    assert Worksite.objects.get(pk=site.pk).ended_on is None


def test_a_second_request_from_the_page_is_a_409(world, site):
    waiting(world, site)
    client = web(world.generator_user)
    # The page shows no form while a request is open; a stale tab may still post one.
    response = client.post(f"/gerador/obras/{site.pk}/habite-se/", {"ended_on": "2026-11-20"})
    assert response.status_code == 409
    assert "Já há um pedido de declaração desta obra em análise" in response.content.decode()
    assert HabiteSeDeclaration.objects.count() == 1


def test_another_generators_worksite_is_not_found(world):
    other, _ = person_site(world)
    response = web(world.generator_user).get(f"/gerador/obras/{other.pk}/habite-se/")
    assert response.status_code == 404


def test_the_nucleo_reviews_and_issues_from_its_pages(world, site):
    load(world, site, {"A": "6"}, received="6")
    ship(world, {"A": "6"})
    declaration = asked(world, site)
    client = web(world.nucleo)
    queue = client.get("/nucleo/habite-se/").content.decode()
    assert f"/nucleo/habite-se/{declaration.pk}/" in queue and ADDRESS in queue
    review = client.get(f"/nucleo/habite-se/{declaration.pk}/").content.decode()
    assert 'id="previsto-transportado"' in review
    assert "Destinação final comprovada" in review  # the certificate's conclusion
    assert "Sim: todas as cargas da obra (1) foram recebidas" in review
    assert "33.644.555/0001-25" in review
    assert AccessLog.objects.filter(purpose="Habite-se: análise do Núcleo").exists()

    response = client.post(f"/nucleo/habite-se/{declaration.pk}/emitir/")
    assert response.status_code == 302
    declaration.refresh_from_db()
    assert declaration.status == DeclarationStatus.ISSUED
    page = client.get(f"/nucleo/habite-se/{declaration.pk}/").content.decode()
    assert f"Declaração emitida: código {declaration.code}." in page
    assert f"/habite-se/{declaration.pk}/declaracao.pdf" in page


def test_issuing_too_early_from_the_page_says_why_and_writes_nothing(world, site):
    load(world, site, {"A": "6"}, received="6")
    declaration = waiting(world, site)
    response = web(world.nucleo).post(f"/nucleo/habite-se/{declaration.pk}/emitir/")
    assert response.status_code == 409
    page = response.content.decode()
    assert "A declaração não pode ser emitida: 6 m³ de classe A ainda em estoque" in page
    assert untouched(declaration)


def test_refusing_from_the_page_needs_the_reasons(world, site):
    load(world, site, {"A": "6"}, received="6")
    ship(world, {"A": "6"})
    declaration = asked(world, site)
    client = web(world.nucleo)
    empty = client.post(f"/nucleo/habite-se/{declaration.pk}/recusar/", {"recusar-reasons": ""})
    assert empty.status_code == 400 and "O pedido não foi recusado" in empty.content.decode()
    done = client.post(
        f"/nucleo/habite-se/{declaration.pk}/recusar/", {"recusar-reasons": "Alvará vencido."}
    )
    assert done.status_code == 302
    declaration.refresh_from_db()
    assert (declaration.status, declaration.reasons) == ("refused", "Alvará vencido.")
    page = web(world.generator_user).get(f"/gerador/obras/{site.pk}/habite-se/").content.decode()
    assert "recusado pelo Núcleo" in page and "Alvará vencido." in page
    assert "Pedir a declaração</button>" in page  # it may ask again


def test_an_inspector_sees_the_review_but_cannot_decide(world, site):
    declaration = waiting(world, site)
    client = web(world.fiscal)
    page = client.get(f"/nucleo/habite-se/{declaration.pk}/").content.decode()
    assert "Só o Núcleo Permanente de Gestão emite ou recusa" in page
    assert "Emitir a declaração</button>" not in page
    assert client.post(f"/nucleo/habite-se/{declaration.pk}/emitir/").status_code == 403


# --- the e-mails ----------------------------------------------------------------------------------


def subject(message) -> str:
    # A long subject is folded onto the next header line: its words, as a mail client shows them.
    return " ".join(str(message["Subject"]).split())


def no_personal_data(subject: str) -> bool:
    return not any(
        secret in subject for secret in (ADDRESS, "Gama", CNPJ_GAMA, "33.644.555", "Jardim")
    )


def test_a_request_mails_the_nucleo(world, site, smtp_server):
    load(world, site, {"A": "2"}, received="2", facility=world.recycling)
    with smtp_server.commit():
        declaration = asked(world, site)
    (message,) = smtp_server.messages
    assert message["X-Envelope-To"] == "nucleo@example.org"
    assert subject(message) == (
        f"Habite-se: novo pedido de declaração de destinação (nº {declaration.pk})"
    )
    assert no_personal_data(subject(message))
    body = smtp_server.body(message)
    assert ADDRESS in body and "Construtora Gama Ltda." in body and "20/11/2026" in body
    assert f"/nucleo/habite-se/{declaration.pk}/" in body


def test_an_issued_declaration_mails_the_generator_with_its_verification_link(
    world, site, smtp_server
):
    load(world, site, {"A": "2"}, received="2", facility=world.recycling)
    declaration = asked(world, site)
    with smtp_server.commit():
        issued = declarations.issue(declaration, world.nucleo)
    (message,) = smtp_server.to("gerador@example.org")
    assert subject(message) == f"Habite-se: declaração de destinação emitida ({issued.code})"
    assert no_personal_data(subject(message))
    body = smtp_server.body(message)
    assert f"{settings.SITE_URL}/verificar/habite-se/{issued.code}/" in body
    assert f"/habite-se/{issued.pk}/declaracao.pdf" in body


def test_a_refused_request_mails_the_generator_the_reasons(world, site, smtp_server):
    declaration = waiting(world, site)
    with smtp_server.commit():
        declarations.refuse(declaration, world.nucleo, "Falta o CTR da caçamba de 12/11.")
    (message,) = smtp_server.to("gerador@example.org")
    assert subject(message) == f"Habite-se: pedido de declaração recusado (nº {declaration.pk})"
    assert no_personal_data(subject(message))
    assert "Falta o CTR da caçamba de 12/11." in smtp_server.body(message)


def test_a_refused_operation_mails_no_one(world, site, smtp_server):
    load(world, site, {"A": "2"})
    declaration = waiting(world, site)
    with smtp_server.commit(), pytest.raises(DeclarationError):
        declarations.issue(declaration, world.nucleo)
    assert smtp_server.messages == []
