"""Authorship of the enforcement acts (Lei 3.978/2007 art. 35): every act
stores who did it and in what capacity, fixed when it was done; the penalties of art. 25 II-V
and the appeal decisions are the authority's ("As penalidades serão aplicadas pelo Secretário
Municipal de Serviços Urbanos"), refused to an inspector by the service, the pages and the
case page's buttons."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from ctr import roles
from fiscalization import enforcement
from fiscalization.enforcement import PENALTIES, AuthorityRequired, authorship
from fiscalization.models.enforcement import (
    Appeal,
    DeliveryMethod,
    DeliveryOutcome,
    EmbargoFineCharge,
    Penalty,
    PenaltyKind,
    RecordStatus,
)
from jurisdiction.models import StaffRole
from jurisdiction.scope import OutsideJurisdiction, forget
from tests.builders import municipality
from tests.ctr_world import build_world, make_user
from tests.enforcement_world import D, at, entries, fine_applied, open_case

pytestmark = pytest.mark.django_db

INSPECTOR = "Fiscal municipal"
AUTHORITY = "Autoridade: Secretário Municipal de Serviços Urbanos (art. 35)"  # the framework
NUCLEO = "Núcleo Permanente de Gestão"


@pytest.fixture
def world():
    return build_world()


def authored(row, act: str) -> tuple[str | None, str]:
    row.refresh_from_db()
    user = getattr(row, f"{act}_by")
    return (user.username if user else None, getattr(row, f"{act}_as"))


def drawn_up(world, method: str):
    """Case, notice and its delivery, and a record delivered `method`: all by the inspector."""
    case = open_case(world, at(2025, 3, 3, 9))
    notice = enforcement.issue_notice(
        case, "Remover o entulho.", DeliveryMethod.HAND, at(2025, 3, 3, 10), by=world.fiscal
    )
    enforcement.register_notice_delivery(notice, at(2025, 3, 3, 10), by=world.fiscal)
    record = enforcement.draw_up_record(
        case,
        entries("INF-01"),
        delivery_method=method,
        signed_by_offender=True,
        drawn_up_at=at(2025, 3, 7, 10),
        by=world.fiscal,
    )
    return case, notice, fine_applied(world, record)


def record_by_mail(world):
    return drawn_up(world, DeliveryMethod.MAIL)


def by_hand(world):
    """A record drawn up and handed over by the inspector."""
    return drawn_up(world, DeliveryMethod.HAND)[2]


# --- every act stores its author and his capacity ---------------------------------------------


def test_the_notice_and_the_record_store_who_issued_delivered_and_drew_them_up(world):
    case, notice, record = record_by_mail(world)
    assert case.opened_as == INSPECTOR
    assert authored(notice, "issued") == ("fiscal", INSPECTOR)
    assert authored(notice, "delivery") == ("fiscal", INSPECTOR)
    assert authored(record, "drawn_up") == ("fiscal", INSPECTOR)
    assert authored(record, "delivery") == (None, "")  # by mail: not delivered yet
    enforcement.register_record_delivery(record, at(2025, 3, 10, 12), by=world.nucleo)
    assert authored(record, "delivery") == ("nucleo", NUCLEO)


def test_a_record_by_hand_is_delivered_by_whoever_drew_it_up(world):
    record = by_hand(world)
    assert authored(record, "delivery") == ("fiscal", INSPECTOR)


def test_a_failed_delivery_and_the_edital_store_their_authors(world):
    _, _, record = record_by_mail(world)
    attempt = enforcement.register_record_failure(
        record, DeliveryOutcome.RETURNED, at(2025, 3, 12, 9), "AR devolvido.", by=world.fiscal
    )
    assert authored(attempt, "registered") == ("fiscal", INSPECTOR)
    enforcement.publish_record_edital(record, D(2025, 3, 14), by=world.nucleo)
    assert authored(record, "delivery") == ("nucleo", NUCLEO)


def test_a_failed_delivery_by_hand_undoes_the_delivery_and_its_author(world):
    record = by_hand(world)
    enforcement.register_record_failure(
        record, DeliveryOutcome.REFUSED, at(2025, 3, 7, 10), "Recusou a cópia.", by=world.fiscal
    )
    assert authored(record, "delivery") == (None, "")


def test_the_notice_repair_stores_its_author(world):
    case = open_case(world, at(2025, 3, 3, 9))
    notice = enforcement.issue_notice(
        case, "Remover o entulho.", DeliveryMethod.HAND, at(2025, 3, 3, 10), by=world.fiscal
    )
    enforcement.register_notice_delivery(notice, at(2025, 3, 3, 10), by=world.fiscal)
    enforcement.mark_repaired(notice, at(2025, 3, 4, 10), by=world.fiscal)
    assert authored(notice, "repair") == ("fiscal", INSPECTOR)


def test_the_appeal_stores_who_registered_it_and_who_decided_it(world):
    _, _, record = record_by_mail(world)
    enforcement.register_record_delivery(record, at(2025, 3, 10, 12), by=world.fiscal)
    appeal = enforcement.file_appeal(record, D(2025, 3, 20), "Não fui eu.", by=world.fiscal)
    assert authored(appeal, "filed") == ("fiscal", INSPECTOR)
    enforcement.decide_appeal(
        record, D(2025, 4, 1), upheld=True, decision="Mantido.", by=world.authority
    )
    assert authored(appeal, "decided") == ("autoridade", AUTHORITY)
    enforcement.register_payment(record, D(2025, 4, 10), by=world.nucleo)
    assert authored(record, "payment") == ("nucleo", NUCLEO)
    enforcement.register_repair(record, at(2025, 4, 11, 9), by=world.fiscal)
    assert authored(record, "repair") == ("fiscal", INSPECTOR)


def test_the_penalties_fall_with_the_record_by_the_authority_that_annulled_it(world):
    record = by_hand(world)
    embargo = enforcement.apply_embargo(record, D(2025, 3, 8), "Obra", by=world.authority)
    enforcement.file_appeal(record, D(2025, 3, 20), "Não fui eu.", by=world.fiscal)
    enforcement.decide_appeal(
        record, D(2025, 4, 1), upheld=False, decision="Anulado.", by=world.authority
    )
    assert authored(embargo, "lifted") == ("autoridade", AUTHORITY)


def test_sending_a_record_to_divida_ativa_stores_its_author(world):
    record = by_hand(world)  # received 07/03/2025: appeal and payment deadlines long over
    enforcement.send_to_divida_ativa(record, D(2025, 6, 2), by=world.nucleo)
    assert authored(record, "divida_ativa") == ("nucleo", NUCLEO)
    assert record.status == RecordStatus.DIVIDA_ATIVA


def test_every_act_on_an_embargo_and_its_daily_fines_stores_its_author(world):
    record = by_hand(world)
    embargo = enforcement.apply_embargo(record, D(2025, 3, 8), "Obra", by=world.authority)
    assert authored(embargo, "applied") == ("autoridade", AUTHORITY)
    breach = enforcement.register_embargo_breach(embargo, D(2025, 3, 9), by=world.fiscal)
    assert authored(breach, "registered") == ("fiscal", INSPECTOR)
    paid = enforcement.assess_embargo_fine(embargo, D(2025, 3, 10), by=world.fiscal)
    assert authored(paid, "assessed") == ("fiscal", INSPECTOR)
    enforcement.register_charge_payment(paid, D(2025, 3, 20), by=world.nucleo)
    assert authored(paid, "payment") == ("nucleo", NUCLEO)
    enforcement.register_embargo_breach(embargo, D(2025, 3, 11), by=world.fiscal)
    unpaid = enforcement.assess_embargo_fine(embargo, D(2025, 3, 12), by=world.fiscal)
    enforcement.send_charge_to_divida_ativa(unpaid, D(2025, 6, 2), by=world.fiscal)
    assert authored(unpaid, "divida_ativa") == ("fiscal", INSPECTOR)
    enforcement.lift_penalty(
        embargo, D(2025, 6, 3), "Obra regularizada.", D(2025, 6, 2), by=world.fiscal
    )
    assert authored(embargo, "lifted") == ("fiscal", INSPECTOR)


def test_seizure_costs_and_release_store_their_authors(world):
    record = by_hand(world)
    seizure = enforcement.apply_seizure(record, D(2025, 3, 8), "Caçamba C-01", by=world.authority)
    assert authored(seizure, "applied") == ("autoridade", AUTHORITY)
    enforcement.register_seizure_costs(seizure, 100, D(2025, 3, 9), by=world.nucleo)
    assert authored(seizure, "costs") == ("nucleo", NUCLEO)
    enforcement.release_seizure(seizure, D(2025, 3, 10), irregularity_fixed=True, by=world.fiscal)
    assert authored(seizure, "lifted") == ("fiscal", INSPECTOR)


def test_suspension_and_revocation_store_the_authority(world):
    record = by_hand(world)
    suspension = enforcement.apply_suspension(record, D(2025, 3, 8), 5, by=world.authority)
    assert authored(suspension, "applied") == ("autoridade", AUTHORITY)
    revocation = enforcement.apply_revocation(record, D(2025, 3, 20), by=world.authority)
    assert authored(revocation, "applied") == ("autoridade", AUTHORITY)


# --- the capacity is the one at the time of the act --------------------------------------------


def test_the_capacity_stays_as_recorded_when_the_users_roles_change(world):
    record = by_hand(world)
    embargo = enforcement.apply_embargo(record, D(2025, 3, 8), "Obra", by=world.authority)
    # The secretary leaves office and becomes an inspector; the record keeps his act's capacity.
    StaffRole.objects.filter(user=world.authority).update(role=roles.FISCAL)
    forget(world.authority)
    assert authorship.capacity(world.authority, municipality_id=world.town.pk) == INSPECTOR
    assert authored(embargo, "applied") == ("autoridade", AUTHORITY)
    steps = enforcement.case_timeline(record.case, at(2025, 3, 9)).steps
    [applied] = [s for s in steps if s.label.startswith("Penalidade aplicada")]
    assert applied.by == f"autoridade — {AUTHORITY}"
    # ...and, an inspector now (as his next request loads him), he may no longer apply one.
    former = get_user_model().objects.get(pk=world.authority.pk)
    with pytest.raises(AuthorityRequired):
        enforcement.apply_seizure(record, D(2025, 3, 8), "Caçamba", by=former)


def test_the_timeline_says_who_did_each_act(world):
    case, notice, record = record_by_mail(world)
    enforcement.register_record_delivery(record, at(2025, 3, 10, 12), by=world.nucleo)
    by = {s.label: s.by for s in enforcement.case_timeline(case, at(2025, 3, 11)).steps}
    assert by["Irregularidade constatada; processo aberto"] == f"fiscal — {INSPECTOR}"
    assert by[f"Auto de infração {record.number} lavrado"] == f"fiscal — {INSPECTOR}"
    assert by["Recebida pelo correio (data e hora do AR)"] == f"nucleo — {NUCLEO}"
    assert by["Prazo de recurso (30 dias corridos do recebimento)"] == ""  # a deadline


def test_acts_before_authorship_was_kept_show_no_author(world):
    """Rows of migration 0009's past: null author, empty capacity, nothing invented."""
    record = by_hand(world)
    embargo = enforcement.apply_embargo(record, D(2025, 3, 8), "Obra", by=world.authority)
    Penalty.objects.filter(pk=embargo.pk).update(applied_by=None, applied_as="")
    steps = enforcement.case_timeline(record.case, at(2025, 3, 9)).steps
    [applied] = [s for s in steps if s.label.startswith("Penalidade aplicada")]
    assert applied.by == ""


# --- penalties and appeal decisions are the authority's (art. 35) ------------------------------


@pytest.mark.parametrize("kind", list(PenaltyKind))
def test_an_inspector_cannot_apply_a_penalty(world, kind):
    record = by_hand(world)
    arguments = {
        PenaltyKind.EMBARGO: (D(2025, 3, 8), "Obra"),
        PenaltyKind.SEIZURE: (D(2025, 3, 8), "Caçamba"),
        PenaltyKind.SUSPENSION: (D(2025, 3, 8), 5),
        PenaltyKind.REVOCATION: (D(2025, 3, 8),),
    }[kind]
    service = getattr(enforcement, PENALTIES[kind].name)
    for user in (world.fiscal, world.nucleo, None):
        with pytest.raises(AuthorityRequired, match="art. 35") as refused:
            service(record, *arguments, by=user)
        assert "Secretário Municipal de Serviços Urbanos" in refused.value.message
        assert refused.value.status == 403
    assert not Penalty.objects.exists()
    assert service(record, *arguments, by=world.authority).kind == kind


def test_an_inspector_cannot_decide_an_appeal(world):
    record = by_hand(world)
    enforcement.file_appeal(record, D(2025, 3, 20), "Não fui eu.", by=world.fiscal)
    for user in (world.fiscal, world.nucleo, None):
        with pytest.raises(AuthorityRequired, match="art. 35"):
            enforcement.decide_appeal(
                record, D(2025, 4, 1), upheld=False, decision="Anulado.", by=user
            )
    assert Appeal.objects.get().decided_on is None
    enforcement.decide_appeal(
        record, D(2025, 4, 1), upheld=False, decision="Anulado.", by=world.authority
    )
    record.refresh_from_db()
    assert record.status == RecordStatus.ANNULLED


def test_the_authority_role_in_the_case_municipality_is_what_counts(world):
    """An inspector of the town who is also the authority there applies the penalty as the
    authority; the authority of another municipality does not even find the case
    (art. 35 gives the power to the municipality's own Secretary)."""
    secretary = make_user("secretario", roles.FISCAL, world.town)
    StaffRole.objects.create(user=secretary, municipality=world.town, role=roles.AUTORIDADE)
    record = by_hand(world)
    embargo = enforcement.apply_embargo(record, D(2025, 3, 8), "Obra", by=secretary)
    assert authored(embargo, "applied") == ("secretario", AUTHORITY)
    elsewhere = municipality("3502507", "Aparecida (teste)", east_m=20_000)
    neighbour = make_user("secretario_vizinho", roles.AUTORIDADE, elsewhere)
    with pytest.raises(OutsideJurisdiction):
        enforcement.apply_seizure(record, D(2025, 3, 9), "Caçamba C-01", by=neighbour)


def test_the_other_acts_stay_with_the_inspectors(world):
    """Art. 35 names the authority for the penalties only: the inspector still draws up the
    record, registers deliveries, the appeal, payments, breaches and charges."""
    record = by_hand(world)
    fiscal_steps = {row.name for row in enforcement.offered(record, world.fiscal)}
    authority_steps = {row.name for row in enforcement.offered(record, world.authority)}
    penalties = {row.name for row in PENALTIES.values()}
    assert not fiscal_steps & penalties
    assert penalties <= authority_steps
    assert fiscal_steps == authority_steps - penalties
    # Given no user, the table's own view: every step the state allows.
    assert penalties <= {row.name for row in enforcement.offered(record)}


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_case_page_offers_the_penalties_and_the_decision_to_the_authority_only(world):
    record = by_hand(world)
    enforcement.file_appeal(record, D(2025, 3, 20), "Não fui eu.", by=world.fiscal)
    url = reverse("enforcement:case-detail", args=[record.case_id])
    inspector_page = client_for(world.fiscal).get(url).content.decode()
    authority_page = client_for(world.authority).get(url).content.decode()
    for label in ["Registrar a decisão do recurso"] + [a.label for a in PENALTIES.values()]:
        assert label not in inspector_page, label
        assert label in authority_page, label


def test_an_inspector_is_refused_the_penalty_and_decision_pages_with_the_reason(world):
    record = by_hand(world)
    enforcement.file_appeal(record, D(2025, 3, 20), "Não fui eu.", by=world.fiscal)
    pages = [reverse("enforcement:appeal-decision", args=[record.pk])] + [
        reverse("enforcement:penalty-new", args=[record.pk, slug])
        for slug in ("embargo", "apreensao", "suspensao", "cassacao")
    ]
    fiscal = client_for(world.fiscal)
    for url in pages:
        for response in (fiscal.get(url), fiscal.post(url, {"starts_on": "2025-03-08"})):
            assert response.status_code == 403, url
            text = response.content.decode()
            assert "Secretário Municipal de Serviços Urbanos" in text and "art. 35" in text
    assert not Penalty.objects.exists()
    assert client_for(world.authority).get(pages[1]).status_code == 200


def test_the_authority_applies_an_embargo_through_the_page_and_is_its_author(world):
    record = by_hand(world)
    url = reverse("enforcement:penalty-new", args=[record.pk, "embargo"])
    response = client_for(world.authority).post(
        url, {"starts_on": "2025-03-08", "details": "Obra da Rua A, 1"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    embargo = Penalty.objects.get()
    assert authored(embargo, "applied") == ("autoridade", AUTHORITY)
    page = client_for(world.fiscal).get(response["Location"]).content.decode()
    assert f"Por autoridade — {AUTHORITY}" in page


def test_a_page_step_stores_the_signed_in_user_as_its_author(world):
    record = by_hand(world)
    embargo = enforcement.apply_embargo(record, D(2025, 3, 8), "Obra", by=world.authority)
    url = reverse("enforcement:embargo-breach", args=[embargo.pk])
    response = client_for(world.fiscal).post(url, {"day": "2025-03-09", "note": "Descarga."})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert authored(embargo.breaches.get(), "registered") == ("fiscal", INSPECTOR)
    assert not EmbargoFineCharge.objects.exists()


def test_only_the_authority_role_holds_both_powers(world):
    record = by_hand(world)
    apply = enforcement.ACTIONS["apply_embargo"]
    decide = enforcement.ACTIONS["decide_appeal"]
    assert apply.permits(world.authority, record) and decide.permits(world.authority, record)
    assert not apply.permits(world.fiscal, record)
    assert not decide.permits(world.nucleo, record)
    assert roles.is_municipal(world.authority)


def test_the_record_pdf_prints_each_author_and_capacity(world):
    # The documents say who did each act, and in what capacity (art. 35).
    from tests.fiscalization.test_enforcement_procedure import pdf_text

    world.authority.first_name = "Ana"
    world.authority.last_name = "Secretária"
    world.authority.save()
    record = by_hand(world)
    enforcement.apply_embargo(record, D(2025, 3, 8), "Obra da Rua A, 1", by=world.authority)
    enforcement.file_appeal(record, D(2025, 3, 10), "Razões", by=world.fiscal)
    enforcement.decide_appeal(record, D(2025, 3, 20), True, "Mantido.", by=world.authority)
    text = pdf_text(client_for(world.fiscal).get(f"/fiscalizacao/autos/{record.pk}/pdf/").content)
    assert INSPECTOR in text  # who drew up the record signs as what he was
    assert f"Ana Secretária — {AUTHORITY}" in text  # the embargo, and the appeal's decision
    assert f"decidido em 20/03/2025 por Ana Secretária — {AUTHORITY}: auto mantido" in text
