"""Penalty frameworks as data: the same facts through the three shipped
frameworks, each giving its own deadlines, discounts and escalations, with the article that
gives each figure; a case keeps the framework in force when it opened; a framework that
governs a case cannot change; every parameter cites its source."""

import io
import json
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from pypdf import PdfReader

from fiscalization import deadlines, enforcement, fines
from fiscalization.enforcement.terms import terms_of
from fiscalization.models.enforcement import (
    DeliveryMethod,
    DeliveryOutcome,
    RecordStatus,
    UfespRate,
)
from fiscalization.models.frameworks import PARAMETERS, PenaltyFramework
from tests.ctr_world import build_world
from tests.enforcement_world import (
    FERRAZ,
    GUARATINGUETA,
    HOUR,
    RIO,
    D,
    at,
    entries,
    fine_applied,
    fixture_framework,
    govern_by,
    open_case,
)

pytestmark = pytest.mark.django_db
ALL = (GUARATINGUETA, FERRAZ, RIO)


@pytest.fixture
def world():
    return build_world()


def governed(world, ibge_code):
    if ibge_code != GUARATINGUETA:
        govern_by(ibge_code, world.town)
    return PenaltyFramework.objects.get(
        ibge_code=world.town.ibge_code, valid_from__gt=D(2001, 1, 1)
    )


def record_without_notice(world, drawn_up=None, **kw):
    """The same facts under any framework: found on Mon 10/03/2025 at 9:00, record drawn up at
    11:00 the same day (where the framework needs a notice first, after its hours)."""
    drawn_up = drawn_up or at(2025, 3, 10, 11)
    case = open_case(world, drawn_up - 2 * HOUR, **kw)
    if case.framework.notice_first == "NON_RECIDIVIST" and not enforcement.is_recidivist(case):
        notice = enforcement.issue_notice(
            case, "Remover o entulho.", DeliveryMethod.HAND, case.opened_at + HOUR
        )
        enforcement.register_notice_delivery(notice, case.opened_at + HOUR)
        drawn_up = case.opened_at + HOUR + deadlines.datetime.timedelta(hours=72, minutes=1)
    record = enforcement.draw_up_record(
        case,
        entries("INF-01"),
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True,
        drawn_up_at=drawn_up,
    )
    return fine_applied(world, record)


# --- the shipped frameworks -------------------------------------------------------------------


def test_three_frameworks_ship_each_parameter_citing_its_article():
    frameworks = {f.ibge_code: f for f in PenaltyFramework.objects.all()}
    assert set(ALL) <= set(frameworks)
    for framework in frameworks.values():
        framework.full_clean()
        for parameter in PARAMETERS:
            assert framework.cite(parameter).strip(), (framework.name, parameter)
    # Where the law gives no figure the citation says so.
    guara = frameworks[GUARATINGUETA]
    assert guara.obstruction_factor is None
    assert "sem valor fixado" in guara.cite("obstruction_factor")
    assert guara.recidivism_lookback_days is None


def test_a_framework_without_citations_is_refused():
    framework = fixture_framework()
    framework.citations = {k: v for k, v in framework.citations.items() if k != "payment_days"}
    with pytest.raises(ValidationError, match="Cite o artigo de: prazo de pagamento"):
        framework.full_clean()


def test_the_same_case_under_each_framework_has_its_own_notice_rule(world):
    # Lei 3.978/2007 art. 27-28: a non-recidivist is notified to repair before any record.
    case = open_case(world, at(2025, 3, 10, 9))
    assert case.framework.ibge_code == GUARATINGUETA
    with pytest.raises(enforcement.EnforcementError, match="72 horas") as info:
        enforcement.draw_up_record(
            case, entries("INF-01"), delivery_method="HAND", signed_by_offender=True,
            drawn_up_at=at(2025, 3, 10, 11),
        )  # fmt: skip
    assert "art. 27-28" in info.value.message
    # Lei 3.190/2013 art. 11: the procedure starts with the record; no notice to repair.
    ferraz = governed(world, FERRAZ)
    case = open_case(world, at(2025, 3, 10, 9))
    assert case.framework == ferraz
    with pytest.raises(enforcement.EnforcementError, match="Lei 3.190/2013 art. 11") as info:
        enforcement.issue_notice(case, "Remover", DeliveryMethod.HAND, at(2025, 3, 10, 10))
    assert info.value.code == "no_notice"
    assert not enforcement.notice_possible(case)
    record = record_without_notice(world)
    assert record.case.framework == ferraz


@pytest.mark.parametrize(
    "ibge_code, appeal_last, payment_last, citation",
    [
        # Record by hand on Mon 10/03/2025 (Guaratinguetá: after the 72 h, Thu 13/03 11:01).
        # Lei 3.978/2007 art. 36: 30 calendar days from the record.
        (GUARATINGUETA, D(2025, 4, 12), D(2025, 4, 12), "Lei 3.978/2007 art. 36"),
        # Lei 3.190/2013 art. 15: 30 working days from the final decision; with no appeal the
        # decision is final when the 30 days of art. 13 end (09/04): day 1 Thu 10/04, skipping
        # Good Friday 18/04, Tiradentes 21/04 and 1 May, day 30 is Mon 26/05.
        (FERRAZ, D(2025, 4, 9), D(2025, 5, 26), "Lei 3.190/2013 art. 15"),
        # Rio de Janeiro: art. 148 gives the appeal's 30 days; the law gives no payment
        # deadline (none invented; art. 189 refers omissions to the other
        # municipal norms, which the framework does not hold).
        (RIO, D(2025, 4, 9), None, "Art. 189"),
    ],
)
def test_each_framework_counts_its_own_deadlines(
    world, ibge_code, appeal_last, payment_last, citation
):
    framework = governed(world, ibge_code)
    record = record_without_notice(world)
    assert enforcement.appeal_last_day(record) == appeal_last
    assert enforcement.payment_last_day(record) == payment_last
    assert citation in framework.cite("payment_days") + framework.cite("payment_from")


@pytest.mark.parametrize(
    "ibge_code, first_day, citation",
    [
        # Lei 3.978/2007 art. 28 §2: from the first working day after the publication.
        (GUARATINGUETA, D(2025, 3, 17), "art. 28 §2"),
        # Lei 3.190/2013 art. 11 III, 12 III: received when the 5 days end (Wed 19/03).
        (FERRAZ, D(2025, 3, 20), "art. 12 III"),
        # Rio de Janeiro art. 148: from the publication.
        (RIO, D(2025, 3, 15), "Art. 148"),
    ],
)
def test_each_framework_reads_an_edital_published_on_a_friday_its_way(
    world, ibge_code, first_day, citation
):
    framework = governed(world, ibge_code)
    case = open_case(world, at(2025, 3, 10, 9))
    if framework.notice_first == "NON_RECIDIVIST":
        notice = enforcement.issue_notice(case, "Remover", "HAND", at(2025, 3, 10, 10))
        enforcement.register_notice_delivery(notice, at(2025, 3, 10, 10))
    record = enforcement.draw_up_record(
        case, entries("INF-01"), delivery_method="MAIL", signed_by_offender=True,
        drawn_up_at=at(2025, 3, 13, 11),
    )  # fmt: skip
    enforcement.register_record_failure(
        record, DeliveryOutcome.RETURNED, at(2025, 3, 13, 15), "AR devolvido: mudou-se."
    )
    enforcement.publish_record_edital(record, D(2025, 3, 14))  # a Friday
    record.refresh_from_db()
    assert enforcement.receipt_of(record).first_day == first_day
    assert citation in framework.cite("edital_receipt")


def test_rio_grants_30_percent_if_paid_within_10_days_and_the_others_do_not(world):
    UfespRate.objects.create(unit="UFIR_RIO", year=2025, value_brl=Decimal("4.5000"))
    rio = governed(world, RIO)
    record = record_without_notice(world)  # 100 UFIR, drawn up 10/03
    assert rio.discount_percent == 30 and "Art. 183" in rio.cite("discount_percent")
    assert enforcement.discount_last_day(record) == D(2025, 3, 20)
    paid = enforcement.register_payment(record, D(2025, 3, 20))
    assert paid.paid_brl == Decimal("315.00")  # 100 × 70 % × R$ 4,50 (art. 183)
    # Lei 3.978/2007 grants no discount: 100 UFESP × R$ 37,02 whenever paid in time.
    guara = fixture_framework(GUARATINGUETA)
    assert fines.with_discount(Decimal(100), at(2025, 3, 10), D(2025, 3, 11), guara) == 100
    assert "não concede desconto" in guara.cite("discount_percent")


def test_ferraz_fines_are_in_reais_with_no_conversion(world):
    governed(world, FERRAZ)
    record = record_without_notice(world)
    paid = enforcement.register_payment(record, D(2025, 4, 20))
    assert paid.paid_brl == Decimal("100.00")  # Lei 3.190/2013 art. 9 I-II: reais


def test_rio_appeal_does_not_suspend_payment_and_guaratingueta_does(world):
    # Rio de Janeiro art. 150 sole §: "os recursos interpostos não terão efeito suspensivo".
    UfespRate.objects.create(unit="UFIR_RIO", year=2025, value_brl=Decimal("4.5000"))
    governed(world, RIO)
    record = record_without_notice(world)
    enforcement.file_appeal(record, D(2025, 3, 12), "Razões")
    assert enforcement.register_payment(record, D(2025, 3, 25)).status == RecordStatus.PAID


def test_guaratingueta_appeal_suspends_payment(world):
    record = record_without_notice(world)
    enforcement.file_appeal(record, D(2025, 3, 20), "Razões")
    with pytest.raises(enforcement.EnforcementError, match="suspende a cobrança"):
        enforcement.register_payment(record, D(2025, 3, 25))


@pytest.mark.parametrize(
    "ibge_code, last, factors, citation",
    [
        # Lei 3.978/2007 art. 30: "em dobro", once.
        (GUARATINGUETA, "200", ("100.00", "200.00", "200.00", "200.00"), "art. 30"),
        # Lei 3.190/2013 art. 9 §1-2: doubled; persisting, 3 × the last fine (here 200).
        (FERRAZ, "200", ("100.00", "200.00", "600.00", "600.00"), "art. 9 §2"),
        # 3 × the last fine even when the doubled fine of §1 is more (no
        # max(…) the text lacks): last fine 50, persisting → 150, not 200.
        (FERRAZ, "50", ("100.00", "200.00", "150.00", "150.00"), "art. 9 §2"),
        # Rio de Janeiro: no recidivism rule (art. 177 §19 doubles the fines of a notice
        # disobeyed while it lasts, which is not recidivism).
        (RIO, "200", ("100.00", "100.00", "100.00", "100.00"), "177 §19"),
    ],
)
def test_each_framework_escalates_recidivism_its_way(ibge_code, last, factors, citation):
    framework = fixture_framework(ibge_code)
    last = Decimal(last)
    totals = [
        str(fines.record_fine([Decimal(100)], framework, earlier=n, last_fine=last).total_ufesp)
        for n in range(4)
    ]
    assert totals == list(factors)
    assert citation in framework.cite("recidivism_escalation")


def test_persisting_recidivism_under_ferraz_proposes_revocation_through_the_service(world):
    governed(world, FERRAZ)
    first = record_without_notice(world, drawn_up=at(2025, 1, 6, 11))
    second = record_without_notice(world, drawn_up=at(2025, 3, 10, 11))
    assert second.recidivist and second.total_ufesp == Decimal("200.00")  # art. 9 §1
    assert not second.proposes_revocation
    # Both earlier records final (no appeal within 30 days): the third is persistent.
    case = open_case(world, at(2025, 6, 2, 9))
    third = enforcement.draw_up_record(
        case, entries("INF-01"), delivery_method="HAND", signed_by_offender=True,
        drawn_up_at=at(2025, 6, 2, 11),
    )  # fmt: skip
    assert third.earlier_records == 2
    assert third.persistent_of_ufesp == second.total_ufesp
    assert third.total_ufesp == Decimal("600.00")  # 3 × the last fine (art. 9 §2)
    assert third.proposes_revocation  # "será cassada a Licença de Funcionamento"
    assert first.pk != second.pk


def test_embargo_daily_fine_and_suspension_exist_only_where_the_law_gives_them(world):
    governed(world, FERRAZ)
    record = record_without_notice(world)
    with pytest.raises(enforcement.EnforcementError, match="não prevê a suspensão"):
        enforcement.apply_suspension(record, D(2025, 3, 11), 5, by=world.authority)
    # Lei 3.190/2013 art. 9-10: fines, seizure and cassação; no embargo.
    with pytest.raises(enforcement.EnforcementError, match="não prevê o embargo") as refused:
        enforcement.apply_embargo(record, D(2025, 3, 11), "Depósito", by=world.authority)
    assert refused.value.code == "no_embargo" and "art. 9, 10" in refused.value.message


def test_rio_embargo_has_no_daily_fine(world):
    # Rio de Janeiro art. 163-168: embargo; its disobedience is a fine of its own (art. 177
    # §20), not a daily fine.
    governed(world, RIO)
    record = record_without_notice(world)
    embargo = enforcement.apply_embargo(record, D(2025, 3, 11), "Elevador", by=world.authority)
    enforcement.register_embargo_breach(embargo, D(2025, 3, 12))
    with pytest.raises(enforcement.EnforcementError, match="não prevê multa diária"):
        enforcement.assess_embargo_fine(embargo, D(2025, 3, 13))


def test_guaratingueta_suspension_is_at_most_15_days_from_the_framework(world):
    record = record_without_notice(world)
    with pytest.raises(enforcement.EnforcementError, match=r"1 a 15 dias \(Lei 3.978/2007 art"):
        enforcement.apply_suspension(record, D(2025, 3, 14), 16, by=world.authority)
    assert enforcement.apply_suspension(
        record, D(2025, 3, 14), 15, by=world.authority
    ).ends_on == D(2025, 3, 28)


# --- a case keeps its framework ---------------------------------------------------------------


def test_a_case_keeps_the_framework_in_force_when_it_opened(world):
    case = open_case(world, at(2025, 3, 10, 9))
    old = case.framework
    # The municipality adopts a new framework from 01/04/2025 (here: Ferraz's rules).
    new = PenaltyFramework.objects.get(ibge_code=FERRAZ)
    PenaltyFramework.objects.filter(pk=new.pk).update(
        ibge_code=world.town.ibge_code, valid_from=D(2025, 4, 1)
    )
    later = open_case(world, at(2025, 4, 2, 9))
    case.refresh_from_db()
    assert case.framework == old
    assert later.framework.pk == new.pk
    assert open_case(world, at(2025, 3, 31, 9)).framework == old


def test_a_framework_that_governs_a_case_cannot_change(world):
    case = open_case(world, at(2025, 3, 10, 9))
    framework = case.framework
    framework.payment_days = 45
    with pytest.raises(ValidationError, match="já rege processos"):
        framework.save()
    framework.refresh_from_db()
    framework.valid_until = D(2026, 12, 31)  # ending its validity is allowed
    framework.save()


def test_no_framework_in_force_is_a_clear_refusal(world):
    PenaltyFramework.objects.update(valid_from=D(2030, 1, 1))
    with pytest.raises(enforcement.EnforcementError, match="Não há regime de penalidades"):
        open_case(world, at(2025, 3, 10, 9))


def test_the_authority_is_the_one_the_framework_names(world):
    # Lei 3.978/2007 art. 35 names the Secretário; Lei 3.190/2013 art. 14 a commission.
    guara = record_without_notice(world)
    embargo = enforcement.apply_embargo(guara, D(2025, 3, 14), "Obra", by=world.authority)
    assert embargo.applied_as == "Autoridade: Secretário Municipal de Serviços Urbanos (art. 35)"
    governed(world, FERRAZ)
    ferraz = record_without_notice(world)
    # Lei 3.190/2013 art. 9 III, 10: seizure (it has no embargo).
    with pytest.raises(enforcement.EnforcementError, match="Comissão designada") as refused:
        enforcement.apply_seizure(ferraz, D(2025, 3, 11), "Botijões", by=world.fiscal)
    assert refused.value.code == "authority"
    seizure = enforcement.apply_seizure(ferraz, D(2025, 3, 11), "Botijões", by=world.authority)
    assert seizure.applied_as.startswith("Autoridade: Comissão designada pelo Chefe do Executivo")


# --- appeals without borrowed law -------------------------------------------------------------

OTHER_LAWS = {
    # The shipped frameworks' municipalities, and the laws that are not theirs.
    GUARATINGUETA: ("3.190", "9.784", "aparelhos de transporte"),
    FERRAZ: ("3.978", "9.784", "aparelhos de transporte"),
    RIO: ("3.978", "3.190", "9.784"),
}


@pytest.mark.parametrize("ibge_code", ALL)
def test_no_framework_cites_another_municipality_s_law(ibge_code):
    framework = PenaltyFramework.objects.get(ibge_code=ibge_code)
    printed = " ".join(
        [
            framework.notice_text,
            framework.record_text,
            framework.readings,
            framework.appeal_source,
            json.dumps(framework.citations, ensure_ascii=False),
        ]
    ).lower()
    for law in OTHER_LAWS[ibge_code]:
        assert law not in printed, (framework.name, law)
    assert "analogia" not in " ".join(
        framework.cite(p) for p in PARAMETERS if p.startswith(("appeal", "post_appeal"))
    )


def test_guaratingueta_ships_its_appeal_without_a_source_and_says_so(world):
    # Lei 3.978/2007 gives no appeal procedure: the source is the municipality's to fill.
    framework = PenaltyFramework.objects.get(ibge_code=GUARATINGUETA)
    assert framework.appeal_source == ""
    assert "não estabelece procedimento de recurso" in framework.appeal_notice()
    # Ferraz's and Rio's laws have one (Lei 3.190/2013 art. 13, 15; Rio art. 148, 150 p.ú.).
    assert "art. 13" in PenaltyFramework.objects.get(ibge_code=FERRAZ).appeal_source
    assert "art. 148" in PenaltyFramework.objects.get(ibge_code=RIO).appeal_source
    record = record_without_notice(world)
    client = Client()
    client.force_login(world.fiscal)
    page = client.get(f"/fiscalizacao/processos/{record.case_id}/").content.decode()
    assert "o município ainda não cadastrou a norma própria" in page
    pdf = client.get(f"/fiscalizacao/autos/{record.pk}/pdf/").content
    text = " ".join(" ".join(pg.extract_text() for pg in PdfReader(io.BytesIO(pdf)).pages).split())
    assert "o município ainda não cadastrou a norma própria" in text
    assert "3.190" not in text
    # Filled by the municipality (a new framework version, since this one governs a case):
    # the documents cite it and the notice goes.
    source = "Decreto Municipal nº 1.234/2026 (exemplo de teste), art. 5"
    PenaltyFramework.objects.filter(pk=framework.pk).update(appeal_source=source)
    page = client.get(f"/fiscalizacao/processos/{record.case_id}/").content.decode()
    assert source in page and "ainda não cadastrou a norma própria" not in page
    pdf = client.get(f"/fiscalizacao/autos/{record.pk}/pdf/").content
    text = " ".join(" ".join(pg.extract_text() for pg in PdfReader(io.BytesIO(pdf)).pages).split())
    assert source in text


# --- the sibling frameworks as their laws write them ------------------------------------------


def test_rio_revokes_after_a_suspension_and_lets_the_notice_deadline_be_extended():
    rio = fixture_framework(RIO)
    # Art. 124 a): "a empresa já tendo sofrido, anteriormente, suspensão e cometer infração
    # que justifique nova suspensão" — cancellation of the inscription.
    assert rio.revocation_after_suspension and "Art. 124 a)" in rio.cite(
        "revocation_after_suspension"
    )
    # Art. 162: the deadline of a notice may be extended on a justified request.
    assert rio.repair_extension and "Art. 162" in rio.cite("repair_extension")
    for other in (GUARATINGUETA, FERRAZ):
        assert not fixture_framework(other).repair_extension
    # Art. 149: only the competent body cancels or reduces a record.
    assert "Art. 149" in rio.cite("authority") and "art. 149" in rio.record_text
    # Art. 177-A: amounts in reais updated as the municipal tax credits.
    assert "art. 177-A" in rio.money_index and "177-A" in rio.cite("money_unit")


@pytest.mark.parametrize(
    "ibge_code, embargo, citation",
    [
        (GUARATINGUETA, True, "art. 25 II"),
        (FERRAZ, False, "não prevê embargo"),
        (RIO, True, "Art. 163-168"),
    ],
)
def test_each_framework_has_an_embargo_only_where_its_law_does(ibge_code, embargo, citation):
    framework = fixture_framework(ibge_code)
    assert framework.embargo is embargo
    assert citation in framework.cite("embargo")


def test_rio_notice_deadline_is_set_by_the_authority_in_each_notice(world):
    # Rio de Janeiro art. 155 p.ú.: "Este prazo será fixado pela autoridade autuante" — no
    # figure in the framework; each notice carries its own.
    rio = governed(world, RIO)
    assert rio.repair_hours is None and "Art. 155 p.ú." in rio.cite("repair_hours")
    rio.full_clean()
    case = open_case(world, at(2025, 3, 10, 9))
    with pytest.raises(enforcement.EnforcementError, match="Fixe o prazo") as refused:
        enforcement.issue_notice(case, "Consertar", DeliveryMethod.HAND, at(2025, 3, 10, 10))
    assert refused.value.field == "repair_hours"
    notice = enforcement.issue_notice(
        case, "Consertar", DeliveryMethod.HAND, at(2025, 3, 10, 10), repair_hours=240
    )
    enforcement.register_notice_delivery(notice, at(2025, 3, 10, 10))
    notice.refresh_from_db()
    assert notice.repair_hours == 240
    assert enforcement.facts.notice_due(notice) == at(2025, 3, 20, 10)
    # The form asks for it under Rio, and not where the law fixes the hours.
    client = Client()
    client.force_login(world.fiscal)
    other = open_case(world, at(2025, 3, 11, 9))
    page = client.get(f"/fiscalizacao/processos/{other.pk}/notificar/").content.decode()
    assert 'name="repair_hours"' in page
    posted = client.post(
        f"/fiscalizacao/processos/{other.pk}/notificar/",
        {
            "required_action": "Consertar",
            "delivery_method": "HAND",
            "issued_at": "2025-03-11T10:00",
            "repair_hours": "48",
        },
    )
    assert posted.status_code == 302, posted.content.decode()[:3000]
    assert other.notices.get().repair_hours == 48


def test_guaratingueta_notice_keeps_the_72_hours_of_the_law(world):
    # Lei 3.978/2007 art. 28 §1: 72 hours for everyone; the form has no field for it.
    case = open_case(world, at(2025, 3, 10, 9))
    client = Client()
    client.force_login(world.fiscal)
    page = client.get(f"/fiscalizacao/processos/{case.pk}/notificar/").content.decode()
    assert 'name="repair_hours"' not in page
    with pytest.raises(enforcement.EnforcementError, match="72 horas"):
        enforcement.issue_notice(
            case, "Remover", DeliveryMethod.HAND, at(2025, 3, 10, 10), repair_hours=24
        )
    notice = enforcement.issue_notice(case, "Remover", DeliveryMethod.HAND, at(2025, 3, 10, 10))
    assert notice.repair_hours == 72


def pdf_text(client: Client, record) -> str:
    pdf = client.get(f"/fiscalizacao/autos/{record.pk}/pdf/").content
    return " ".join(" ".join(pg.extract_text() for pg in PdfReader(io.BytesIO(pdf)).pages).split())


RIO_NO_PAYMENT_DEADLINE = "A lei não fixa prazo de pagamento da multa"


def test_rio_ships_no_payment_deadline_and_no_reading_by_analogy():
    # Rio de Janeiro: art. 148 is the appeal's deadline, art. 183 the discount's 10 days; no
    # article sets a deadline to pay, and art. 189 sends omissions to the other municipal norms.
    rio = fixture_framework(RIO)
    assert rio.payment_days is None
    assert rio.payment_day_count == "" and rio.payment_from == ""
    payment = " ".join(rio.cite(p) for p in ("payment_days", "payment_day_count", "payment_from"))
    assert "analogia" not in payment and "Art. 189" in payment
    assert "analogia" not in rio.readings
    rio.full_clean()
    # Where the law sets one, the framework must state it whole.
    guara = fixture_framework(GUARATINGUETA)
    guara.payment_from = ""
    with pytest.raises(ValidationError, match="pagamento"):
        guara.full_clean()
    assert terms_of(rio)["payment"].startswith(RIO_NO_PAYMENT_DEADLINE)


def test_a_rio_record_has_no_due_date_nor_divida_ativa_and_says_why(world):
    governed(world, RIO)
    record = record_without_notice(world)  # delivered by hand on 10/03/2025
    assert enforcement.payment_last_day(record) is None
    with pytest.raises(enforcement.EnforcementError) as refused:
        enforcement.send_to_divida_ativa(record, D(2025, 12, 1))
    assert refused.value.code == "no_payment_deadline" and refused.value.status == 409
    assert RIO_NO_PAYMENT_DEADLINE in refused.value.message
    assert "ainda não começou" not in refused.value.message
    client = Client()
    client.force_login(world.fiscal)
    page = client.get(f"/fiscalizacao/processos/{record.case_id}/").content.decode()
    assert RIO_NO_PAYMENT_DEADLINE in page
    assert "prazo ainda não iniciado" not in page
    text = pdf_text(client, record)
    assert RIO_NO_PAYMENT_DEADLINE in text and "Não pago no prazo" not in text
    timeline = enforcement.case_timeline(record.case)
    assert any(RIO_NO_PAYMENT_DEADLINE in f"{s.label} {s.detail}" for s in timeline.steps)
    # Paying stays possible (with the discount of art. 183 within its 10 days).
    UfespRate.objects.create(unit="UFIR_RIO", year=2025, value_brl=Decimal("4.5000"))
    assert enforcement.register_payment(record, D(2025, 4, 30)).paid_brl == Decimal("450.00")
