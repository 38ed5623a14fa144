"""Corrections after reception: the transporter or the receiver proposes, the
other party decides, the Núcleo settles a disagreement; the CTR's values change, the history
keeps the originals, and what reads the CTR (fees, stock, certificates, pages) follows."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from ctr import closing, errors, printing, reports
from ctr.custody import certificates, stock
from ctr.field import corrections
from ctr.field.corrections import Proposal
from ctr.models import (
    CTR,
    CorrectionStatus,
    CTRAction,
    CTRCorrection,
    CTREvent,
    Equipment,
)
from ctr.rules import WasteLine
from tests.builders import offset, point
from tests.ctr.test_ctr_documents import pdf_text
from tests.ctr_world import build_world, issue_hours_ago

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(frozen_today):
    return build_world()


def received(world, volume: str = "3") -> CTR:
    """Alfa's CTR of 3 m³ of class A, received at the ATT."""
    return closing.receive(issue_hours_ago(world, 2), world.operator, Decimal(volume))


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def snapshot(ctr: CTR) -> tuple:
    ctr.refresh_from_db()
    lines = tuple(ctr.waste.order_by("pk").values_list("waste_class", "volume_m3"))
    return (
        ctr.received_volume_m3,
        ctr.total_volume_m3,
        ctr.fee_ufesp,
        ctr.equipment_id,
        ctr.destination.coords,
        lines,
        ctr.events.count(),
        ctr.corrections.count(),
    )


# --- proposing -----------------------------------------------------------------------------------


def test_the_transporter_proposes_and_the_receiver_approves_a_received_volume(world):
    ctr = received(world, "3")
    correction = corrections.propose(
        ctr, world.alfa_user, Proposal(received_volume_m3=Decimal("2.5")), "Erro de digitação"
    )
    assert correction.status == CorrectionStatus.PROPOSED
    ctr.refresh_from_db()
    assert ctr.received_volume_m3 == Decimal("3")  # nothing changes before the approval
    proposed = ctr.events.get(action=CTRAction.CORRECTION_PROPOSED)
    assert proposed.data["original"] == {"received_volume_m3": "3.000"}
    assert proposed.data["proposed"] == {"received_volume_m3": "2.500"}
    assert proposed.data["side"] == "transporter"
    assert proposed.data["decides"] == "facility"  # whom the e-mail goes to

    corrections.approve(correction, world.operator)
    ctr.refresh_from_db()
    assert ctr.received_volume_m3 == Decimal("2.5")
    approved = ctr.events.get(action=CTRAction.CORRECTION_APPROVED)
    assert approved.data["original"] == {"received_volume_m3": "3.000"}
    assert approved.data["applied"] == {"received_volume_m3": "2.500"}
    assert ctr.status == "received"


def test_the_reception_rules_run_again_on_the_corrected_values(world):
    ctr = received(world, "3")  # 3 declared, 3 received: no mismatch
    assert not [f for f in ctr.findings if f["code"] == "RECEIVED_VOLUME_MISMATCH"]
    correction = corrections.propose(
        ctr, world.operator, Proposal(received_volume_m3=Decimal("2")), "A balança errou"
    )
    corrections.approve(correction, world.alfa_user)
    ctr.refresh_from_db()
    mismatch = [f for f in ctr.findings if f["code"] == "RECEIVED_VOLUME_MISMATCH"]
    assert len(mismatch) == 1 and "Recebido 2 m³" in mismatch[0]["message"]
    event = ctr.events.get(action=CTRAction.CORRECTION_APPROVED)
    assert event.data["original_findings"] == []
    assert event.data["findings"] == ["RECEIVED_VOLUME_MISMATCH"]

    # Back within the tolerance: the finding goes, the previous one stays in the history.
    again = corrections.propose(
        ctr, world.alfa_user, Proposal(received_volume_m3=Decimal("3")), "Recontagem"
    )
    corrections.approve(again, world.operator)
    ctr.refresh_from_db()
    assert not [f for f in ctr.findings if f["code"] == "RECEIVED_VOLUME_MISMATCH"]
    last = ctr.events.filter(action=CTRAction.CORRECTION_APPROVED).last()
    assert [f["code"] for f in last.data["original_findings"]] == ["RECEIVED_VOLUME_MISMATCH"]


def test_corrected_waste_lines_change_the_total_and_the_fee(world):
    ctr = received(world, "3")
    assert ctr.fee_ufesp == Decimal("1")  # 3 m³: above the small-volume limit (art. 12 §3)
    lines = [WasteLine("A", Decimal("0.5"), "entulho"), WasteLine("B", Decimal("0.3"), "")]
    correction = corrections.propose(ctr, world.alfa_user, Proposal(waste=lines), "Era menos")
    corrections.approve(correction, world.operator)
    ctr.refresh_from_db()
    assert ctr.total_volume_m3 == Decimal("0.8")
    assert ctr.fee_ufesp == Decimal("0")
    assert sorted(ctr.waste.values_list("waste_class", "volume_m3")) == [
        ("A", Decimal("0.5")),
        ("B", Decimal("0.3")),
    ]
    event = ctr.events.get(action=CTRAction.CORRECTION_APPROVED)
    assert event.data["original"]["waste"] == [
        {"class": "A", "volume_m3": "3.000", "description": "entulho de alvenaria"}
    ]


def test_equipment_and_discharge_point_are_corrected(world):
    ctr = received(world)
    other = Equipment.objects.create(
        transporter=world.alfa, code="C-02", nominal_capacity_m3=Decimal("4")
    )
    corner = world.att.area.centroid
    moved = point(*offset(corner.x, corner.y, 10, 10))
    correction = corrections.propose(
        ctr,
        world.operator,
        Proposal(equipment_code="C-02", destination=moved),
        "Caçamba trocada na obra; descarregou no pátio 2",
    )
    corrections.approve(correction, world.alfa_user)
    ctr.refresh_from_db()
    assert ctr.equipment_id == other.pk
    assert ctr.destination.coords == pytest.approx(moved.coords)


def test_the_proposer_cannot_approve_their_own_correction(world):
    ctr = received(world)
    correction = corrections.propose(
        ctr, world.alfa_user, Proposal(received_volume_m3=Decimal("2.8")), "Motivo"
    )
    before = snapshot(ctr)
    with pytest.raises(errors.NotAllowed, match="Quem propôs"):
        corrections.approve(correction, world.alfa_user)
    assert snapshot(ctr) == before


def test_the_nucleo_does_not_approve_a_correction_the_parties_have_not_disagreed_on(world):
    correction = corrections.propose(
        received(world), world.alfa_user, Proposal(received_volume_m3=Decimal("2.8")), "Motivo"
    )
    with pytest.raises(errors.NotAllowed):
        corrections.approve(correction, world.nucleo)
    with pytest.raises(errors.CorrectionConflict):
        corrections.decide(correction, world.nucleo, True, "nota")


def test_one_open_correction_per_ctr(world):
    ctr = received(world)
    corrections.propose(ctr, world.alfa_user, Proposal(received_volume_m3=Decimal("2.8")), "a")
    response = api(world.operator).post(
        f"/api/v1/ctrs/{ctr.number}/corrections/",
        {"reason": "outra", "received_volume_m3": "2.7"},
        format="json",
    )
    assert response.status_code == 409
    assert "já tem uma correção aguardando decisão" in response.json()["detail"]
    assert ctr.corrections.count() == 1


def test_the_database_keeps_one_open_correction_per_ctr(world):
    ctr = received(world)
    corrections.propose(ctr, world.alfa_user, Proposal(received_volume_m3=Decimal("2.8")), "a")
    from django.db import IntegrityError

    with pytest.raises(IntegrityError), transaction.atomic():
        CTRCorrection.objects.create(
            ctr=ctr,
            proposed_side="facility",
            proposed_by=world.operator,
            reason="b",
            original={},
            changes={"received_volume_m3": "1.000"},
        )


def test_only_a_received_ctr_is_corrected(world):
    ctr = issue_hours_ago(world, 1)
    with pytest.raises(errors.CorrectionConflict, match="Só um CTR recebido"):
        corrections.propose(
            ctr, world.alfa_user, Proposal(received_volume_m3=Decimal("2")), "Motivo"
        )
    assert not CTRCorrection.objects.exists()


def test_only_the_two_parties_propose(world):
    ctr = received(world)
    for user in (world.beta_user, world.pev_operator, world.nucleo, world.generator_user):
        with pytest.raises(errors.NotAllowed):
            corrections.propose(ctr, user, Proposal(received_volume_m3=Decimal("2")), "Motivo")
    assert not CTRCorrection.objects.exists()


@pytest.mark.parametrize(
    ("proposal", "field", "message"),
    [
        (Proposal(), None, "não altera nada"),
        (Proposal(received_volume_m3=Decimal("3")), None, "não altera nada"),
        (Proposal(received_volume_m3=Decimal("0")), "received_volume_m3", "maior que zero"),
        (Proposal(received_volume_m3=Decimal("-1")), "received_volume_m3", "maior que zero"),
        (Proposal(waste=[]), "waste", "ao menos uma linha"),
        (
            Proposal(waste=[WasteLine("A", Decimal("2"), ""), WasteLine("B", Decimal("0"), "")]),
            "waste[1].volume_m3",
            "linha 2 deve ser maior que zero",
        ),
        (Proposal(waste=[WasteLine("Z", Decimal("2"), "")]), "waste[0].class", "desconhecida"),
        (Proposal(equipment_code="B-01"), "equipment_code", "não tem equipamento ativo"),
    ],
)
def test_bad_input_is_refused_naming_the_field_and_nothing_is_written(
    world, proposal, field, message
):
    ctr = received(world)
    before = snapshot(ctr)
    with pytest.raises(errors.CorrectionError, match=message) as refused:
        corrections.propose(ctr, world.alfa_user, proposal, "Motivo")
    assert refused.value.status == 400 and refused.value.field == field
    assert snapshot(ctr) == before


def test_a_discharge_point_outside_the_facility_is_refused(world):
    ctr = received(world)
    before = snapshot(ctr)
    outside = point(*offset(*world.att.area.centroid.coords, 500, 0))
    with pytest.raises(errors.CorrectionError, match="não está dentro da área") as refused:
        corrections.propose(ctr, world.operator, Proposal(destination=outside), "Pátio 2")
    assert refused.value.field == "destination"
    assert snapshot(ctr) == before


def test_a_correction_without_reason_is_refused(world):
    with pytest.raises(errors.CorrectionError) as refused:
        corrections.propose(
            received(world), world.alfa_user, Proposal(received_volume_m3=Decimal("2")), "  "
        )
    assert refused.value.field == "reason"


# --- disagreeing ---------------------------------------------------------------------------------


def test_a_refusal_needs_a_reason_and_leaves_the_ctr_as_it_was(world):
    ctr = received(world)
    correction = corrections.propose(
        ctr, world.alfa_user, Proposal(received_volume_m3=Decimal("2")), "Motivo"
    )
    with pytest.raises(errors.CorrectionError):
        corrections.refuse(correction, world.operator, "")
    corrections.refuse(correction, world.operator, "A balança marcou 3 m³")
    correction.refresh_from_db()
    ctr.refresh_from_db()
    assert correction.status == CorrectionStatus.REFUSED and not correction.applied
    assert ctr.received_volume_m3 == Decimal("3")
    event = ctr.events.get(action=CTRAction.CORRECTION_REFUSED)
    assert event.data["reason"] == "A balança marcou 3 m³"


def test_the_nucleo_decides_a_disagreement(world):
    ctr = received(world)
    correction = corrections.propose(
        ctr, world.alfa_user, Proposal(received_volume_m3=Decimal("2")), "Motivo"
    )
    corrections.refuse(correction, world.operator, "Não confere")
    with pytest.raises(errors.NotAllowed):
        corrections.escalate(correction, world.beta_user)
    corrections.escalate(correction, world.operator, "Que o Núcleo confira a pesagem")
    escalated = ctr.events.get(action=CTRAction.CORRECTION_ESCALATED)
    assert escalated.data["decides"] == "management"
    # Only the Núcleo's own group decides (not the inspectors, not the authority).
    for user in (world.fiscal, world.authority, world.alfa_user):
        with pytest.raises(errors.NotAllowed):
            corrections.decide(correction, user, True, "nota")
    with pytest.raises(errors.CorrectionError):
        corrections.decide(correction, world.nucleo, True, "")
    corrections.decide(correction, world.nucleo, True, "Ticket da balança confere com 2 m³")
    correction.refresh_from_db()
    ctr.refresh_from_db()
    assert correction.status == CorrectionStatus.DECIDED and correction.applied
    assert ctr.received_volume_m3 == Decimal("2")
    assert ctr.events.get(action=CTRAction.CORRECTION_APPROVED).data["side"] == "management"


def test_the_nucleo_may_refuse_and_nothing_changes(world):
    ctr = received(world)
    correction = corrections.propose(
        ctr, world.operator, Proposal(received_volume_m3=Decimal("2")), "Motivo"
    )
    corrections.refuse(correction, world.alfa_user, "Não")
    corrections.escalate(correction, world.alfa_user)
    corrections.decide(correction, world.nucleo, False, "Sem comprovação")
    correction.refresh_from_db()
    ctr.refresh_from_db()
    assert correction.status == CorrectionStatus.DECIDED and not correction.applied
    assert ctr.received_volume_m3 == Decimal("3")
    assert ctr.events.filter(action=CTRAction.CORRECTION_REFUSED).last().data["final"] is True


def test_an_escalated_correction_blocks_another_proposal(world):
    ctr = received(world)
    correction = corrections.propose(
        ctr, world.operator, Proposal(received_volume_m3=Decimal("2")), "Motivo"
    )
    corrections.refuse(correction, world.alfa_user, "Não")
    # Refused: a new one may be proposed, and then the old one waits for it to be decided.
    newer = corrections.propose(
        ctr, world.alfa_user, Proposal(received_volume_m3=Decimal("2.9")), "Outra"
    )
    with pytest.raises(errors.CorrectionConflict):
        corrections.escalate(correction, world.operator)
    corrections.approve(newer, world.operator)
    corrections.escalate(correction, world.operator)
    with pytest.raises(errors.CorrectionConflict):
        corrections.propose(
            ctr, world.alfa_user, Proposal(received_volume_m3=Decimal("2.7")), "Mais uma"
        )


def test_a_decided_correction_is_not_decided_again(world):
    correction = corrections.propose(
        received(world), world.alfa_user, Proposal(received_volume_m3=Decimal("2")), "Motivo"
    )
    corrections.approve(correction, world.operator)
    with pytest.raises(errors.CorrectionConflict):
        corrections.refuse(correction, world.operator, "Mudei de ideia")


# --- the history stays ------------------------------------------------------------------------


def test_the_history_keeps_every_revision_and_refuses_to_change(world):
    ctr = received(world)
    for volume in ("2.5", "2.8"):
        c = corrections.propose(
            ctr, world.alfa_user, Proposal(received_volume_m3=Decimal(volume)), "Revisão"
        )
        corrections.approve(c, world.operator)
    applied = [
        (e.data["original"]["received_volume_m3"], e.data["applied"]["received_volume_m3"])
        for e in ctr.events.filter(action=CTRAction.CORRECTION_APPROVED)
    ]
    assert applied == [("3.000", "2.500"), ("2.500", "2.800")]
    event = ctr.events.get(action=CTRAction.RECEIVE)
    assert event.data["received_volume_m3"] == "3"  # the reception as it was
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {CTREvent._meta.db_table} SET data = '{{}}' WHERE id = %s", [event.pk]
        )


# --- what reads the CTR follows ------------------------------------------------------------------


def test_the_facility_stock_follows_a_corrected_received_volume(world):
    ctr = received(world, "3")
    day = ctr.transport_date
    assert stock.stock_on(world.att, day)["A"].closing == Decimal("3")
    correction = corrections.propose(
        ctr, world.operator, Proposal(received_volume_m3=Decimal("2")), "A balança errou"
    )
    corrections.approve(correction, world.alfa_user)
    assert stock.stock_on(world.att, day)["A"].closing == Decimal("2")


def test_a_certificate_issued_before_stays_as_issued_and_a_new_one_shows_the_correction(world):
    ctr = received(world, "3")
    scope = certificates.Scope(ctr.generator)  # the generator's loads
    before, built = certificates.issue(scope, world.nucleo)
    assert built.by_class[0].received_m3 == Decimal("3")
    content, digest = before.content, before.digest

    correction = corrections.propose(
        ctr, world.operator, Proposal(received_volume_m3=Decimal("2")), "Recontagem"
    )
    corrections.approve(correction, world.alfa_user)

    before.refresh_from_db()
    assert (before.content, before.digest) == (content, digest)  # the paper stays as issued
    assert certificates.verify(before.code).changed
    after, rebuilt = certificates.issue(scope, world.nucleo)
    assert after.code != before.code
    assert rebuilt.by_class[0].received_m3 == Decimal("2")


def test_the_fee_statement_reads_the_corrected_fee(world):
    ctr = received(world, "3")
    day = ctr.transport_date
    assert [
        line.number for line in reports.fee_statement(world.alfa, day.year, day.month).lines
    ] == [ctr.number]
    lines = [WasteLine("A", Decimal("0.8"), "")]
    corrections.approve(
        corrections.propose(ctr, world.alfa_user, Proposal(waste=lines), "Era 0,8"),
        world.operator,
    )
    # 0,8 m³: a small volume, no fee (art. 12 §3): the month's statement drops it.
    assert reports.fee_statement(world.alfa, day.year, day.month).lines == []


# --- pages and documents -------------------------------------------------------------------------


def test_the_public_verification_page_says_corrected_without_values(world, client):
    ctr = received(world, "3")
    correction = corrections.propose(
        ctr, world.operator, Proposal(received_volume_m3=Decimal("2")), "Balança: ticket 123"
    )
    page = client.get(f"/verificar/{ctr.number}/").content.decode()
    assert "Corrigido em" not in page  # proposed only: nothing changed yet
    corrections.approve(correction, world.alfa_user)
    page = client.get(f"/verificar/{ctr.number}/").content.decode()
    today = timezone.localdate().strftime("%d/%m/%Y")
    assert f"Corrigido em {today}: volume recebido." in page
    assert "ticket 123" not in page and "operador" not in page


def test_the_printed_ctr_says_corrected(world):
    ctr = received(world, "3")
    plain = pdf_text(printing.ctr_pdf(CTR.objects.get(pk=ctr.pk), "https://x/verificar/"))
    assert "Correções após o recebimento" not in plain
    corrections.approve(
        corrections.propose(
            ctr, world.operator, Proposal(received_volume_m3=Decimal("2.5")), "Recontagem"
        ),
        world.alfa_user,
    )
    text = pdf_text(printing.ctr_pdf(CTR.objects.get(pk=ctr.pk), "https://x/verificar/"))
    assert "Correções após o recebimento" in text
    assert "Volume recebido: 3 m³ → 2,5 m³" in " ".join(text.split())


def test_the_transporter_proposes_on_the_web_and_the_operator_approves(world, client):
    ctr = received(world, "3")
    client.force_login(world.alfa_user)
    detail = client.get(f"/transportador/ctrs/{ctr.number}/").content.decode()
    assert f"/ctrs/{ctr.number}/correcoes/" in detail
    page = client.get(f"/ctrs/{ctr.number}/correcoes/")
    assert page.status_code == 200 and "Propor uma correção" in page.content.decode()
    form = {
        "received_volume_m3": "2,5",
        "line-0-class": "A",
        "line-0-volume": "3",
        "equipment": "C-01",
        "destination_lat": f"{ctr.destination.y:.7f}".replace(".", ","),
        "destination_lon": f"{ctr.destination.x:.7f}".replace(".", ","),
        "reason": "Erro de digitação no recebimento",
    }
    response = client.post(f"/ctrs/{ctr.number}/correcoes/propor/", form)
    assert response.status_code == 302
    correction = ctr.corrections.get()
    assert correction.changes == {"received_volume_m3": "2.500"}

    client.force_login(world.operator)
    page = client.get(f"/ctrs/{ctr.number}/correcoes/").content.decode()
    assert "Aprovar a correção" in page and "Propor uma correção" not in page
    response = client.post(f"/correcoes/{correction.pk}/aprovar/")
    assert response.status_code == 302
    ctr.refresh_from_db()
    assert ctr.received_volume_m3 == Decimal("2.5")
    receptions = client.get("/recebimentos/").content.decode()
    assert f"/ctrs/{ctr.number}/correcoes/" in receptions


def test_the_web_form_shows_a_refusal_on_its_field(world, client):
    ctr = received(world, "3")
    client.force_login(world.operator)
    form = {
        "received_volume_m3": "0",
        "line-0-class": "A",
        "line-0-volume": "3",
        "equipment": "C-01",
        "reason": "Motivo",
    }
    response = client.post(f"/ctrs/{ctr.number}/correcoes/propor/", form)
    assert response.status_code == 400
    assert "O volume recebido deve ser maior que zero." in response.content.decode()
    assert not ctr.corrections.exists()
    form["received_volume_m3"] = "3"
    response = client.post(f"/ctrs/{ctr.number}/correcoes/propor/", form)
    assert response.status_code == 400 and "não altera nada" in response.content.decode()


def test_the_nucleo_queue_lists_and_decides_escalated_corrections(world, client):
    ctr = received(world)
    correction = corrections.propose(
        ctr, world.alfa_user, Proposal(received_volume_m3=Decimal("2")), "Motivo do transportador"
    )
    corrections.refuse(correction, world.operator, "Não confere")
    corrections.escalate(correction, world.alfa_user)
    client.force_login(world.nucleo)
    page = client.get("/nucleo/correcoes/").content.decode()
    assert ctr.number in page and "Motivo do transportador" in page
    response = client.post(f"/correcoes/{correction.pk}/decidir/", {"decision": "approve"})
    assert response.status_code == 400  # the note is required
    response = client.post(
        f"/correcoes/{correction.pk}/decidir/", {"decision": "approve", "note": "Confere"}
    )
    assert response.status_code == 302
    ctr.refresh_from_db()
    assert ctr.received_volume_m3 == Decimal("2")
    client.force_login(world.fiscal)
    assert client.get("/nucleo/correcoes/").status_code == 200
    response = client.post(
        f"/correcoes/{correction.pk}/decidir/", {"decision": "approve", "note": "x"}
    )
    assert response.status_code == 403


# --- API ---------------------------------------------------------------------------------------


def test_the_api_flow_from_proposal_to_the_nucleo(world):
    ctr = received(world)
    url = f"/api/v1/ctrs/{ctr.number}/corrections/"
    response = api(world.operator).post(
        url,
        {"reason": "Pátio errado", "waste": [{"class": "A", "volume_m3": "2.5"}]},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["decides"] == "transporter" and body["status"] == "proposed"
    assert body["changes"]["waste"][0]["volume_m3"] == "2.500"
    pk = body["id"]
    own = api(world.operator).post(f"/api/v1/corrections/{pk}/approve/")
    assert own.status_code == 403
    refused = api(world.alfa_user).post(f"/api/v1/corrections/{pk}/refuse/", {}, format="json")
    assert refused.status_code == 400
    refused = api(world.alfa_user).post(
        f"/api/v1/corrections/{pk}/refuse/", {"reason": "Não"}, format="json"
    )
    assert refused.status_code == 200 and refused.json()["status"] == "refused"
    up = api(world.operator).post(f"/api/v1/corrections/{pk}/escalate/", {}, format="json")
    assert up.status_code == 200 and up.json()["decides"] == "management"
    decided = api(world.nucleo).post(
        f"/api/v1/corrections/{pk}/decide/", {"approve": True, "note": "ok"}, format="json"
    )
    assert decided.status_code == 200 and decided.json()["applied"] is True
    listed = api(world.alfa_user).get(url).json()
    assert [c["id"] for c in listed] == [pk]
    assert api(world.alfa_user).get(f"/api/v1/corrections/{pk}/").status_code == 200
    assert api(world.beta_user).get(url).status_code == 404
    assert api(world.beta_user).get(f"/api/v1/corrections/{pk}/").status_code == 404
    ctr.refresh_from_db()
    assert ctr.total_volume_m3 == Decimal("2.5")


def test_the_api_names_the_field_of_bad_input(world):
    ctr = received(world)
    response = api(world.alfa_user).post(
        f"/api/v1/ctrs/{ctr.number}/corrections/",
        {"reason": "x", "received_volume_m3": "-2"},
        format="json",
    )
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    problem = response.json()
    assert "maior que zero" in problem["detail"]
    assert problem["errors"][0]["campo"] == "received_volume_m3"
    assert not ctr.corrections.exists()


def test_a_stranger_is_refused_before_the_body_is_read(world):
    ctr = received(world)
    response = api(world.nucleo).post(
        f"/api/v1/ctrs/{ctr.number}/corrections/", {"reason": "x"}, format="json"
    )
    assert response.status_code == 403


def test_concurrent_proposals_leave_one_open_correction(world, transactional_db):
    """Two proposals at once: the CTR's row lock queues them, the second sees the first."""
    import threading

    ctr = received(world)
    results: list = []
    barrier = threading.Barrier(2)

    def propose(user, volume):
        barrier.wait()
        try:
            corrections.propose(
                CTR.objects.get(pk=ctr.pk), user, Proposal(received_volume_m3=volume), "x"
            )
            results.append("ok")
        except errors.CorrectionConflict:
            results.append("409")
        finally:
            connection.close()

    threads = [
        threading.Thread(target=propose, args=(world.alfa_user, Decimal("2"))),
        threading.Thread(target=propose, args=(world.operator, Decimal("2.5"))),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["409", "ok"]
    assert ctr.corrections.count() == 1


def test_dates_in_events_are_the_correction_times(world):
    ctr = received(world)
    at = timezone.now() + datetime.timedelta(minutes=5)
    c = corrections.propose(
        ctr, world.alfa_user, Proposal(received_volume_m3=Decimal("2")), "x", at=at
    )
    assert c.proposed_at == at
    assert ctr.events.get(action=CTRAction.CORRECTION_PROPOSED).at == at
