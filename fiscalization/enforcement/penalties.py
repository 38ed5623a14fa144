"""The penalties of art. 25 II-V and their ends: embargo (art. 31), seizure (art. 32),
suspension (≤ 15 days) and revocation (art. 34), and their effect on the CTR rules (the
transporter's licence in the case's municipality, the facility's licenses)."""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from config.br import br_date
from ctr.models import LicenceStatus, TransporterLicence
from pev_network.models import FacilityLicense, LicenseStatus

from .. import deadlines, fines
from ..deadlines import ONE_DAY
from ..models.enforcement import (
    EmbargoBreach,
    EmbargoFineCharge,
    InfractionRecord,
    Penalty,
    PenaltyKind,
    RecordStatus,
)
from .actions import PENALTIES, check
from .authorship import sign, signed
from .errors import EnforcementError
from .facts import uncharged_breaches
from .procedure import close_if_settled


def _record_for_penalty(
    record: InfractionRecord, starts_on: datetime.date, kind: PenaltyKind, by
) -> InfractionRecord:
    record = (
        InfractionRecord.objects.select_for_update(of=("self",))
        .select_related("case__offender__transporter", "case__offender__facility")
        .get(pk=record.pk)
    )
    check(PENALTIES[kind].name, record, by)
    if starts_on < deadlines.local_date(record.drawn_up_at):
        raise EnforcementError(
            "A penalidade não pode começar antes do auto de infração.", "date", "starts_on"
        )
    return record


@transaction.atomic
def apply_fine(
    record: InfractionRecord, applied_at: datetime.datetime | None = None, *, by=None
) -> InfractionRecord:
    """The authority applies the fine the inspector's record proposes (Lei 3.978/2007 art. 25
    I, art. 35: "As penalidades … serão aplicadas pelo Secretário Municipal de Serviços
    Urbanos"), where the case's framework gives the fine to the authority: the payment's days
    and the Dívida Ativa count from this act (facts.payment_last_day)."""
    record = (
        InfractionRecord.objects.select_for_update(of=("self",))
        .select_related("case__framework")
        .get(pk=record.pk)
    )
    check("apply_fine", record, by)
    applied_at = applied_at or timezone.localtime()
    if applied_at > timezone.now() + datetime.timedelta(minutes=5):
        raise EnforcementError("A data da aplicação está no futuro.", "future", "applied_at")
    if applied_at < record.drawn_up_at:
        raise EnforcementError(
            "A multa não pode ser aplicada antes da lavratura do auto.", "date", "applied_at"
        )
    record.fine_applied_at = applied_at
    record.save(update_fields=["fine_applied_at", *sign(record, "fine_applied", by, True)])
    return record


def records_awaiting_authority(municipality_ids) -> int:
    """How many records of these municipalities wait for the authority to apply their fine
    (art. 35): the count of the queue `enforcement:records-awaiting` lists."""
    return awaiting_authority(InfractionRecord.objects.in_municipalities(municipality_ids)).count()


def awaiting_authority(records: QuerySet) -> QuerySet:
    """The records among `records` whose proposed fine the authority has not applied yet."""
    return records.filter(
        fine_applied_at__isnull=True,
        status__in=(RecordStatus.ISSUED, RecordStatus.APPEALED, RecordStatus.UPHELD),
    )


@transaction.atomic
def apply_embargo(
    record: InfractionRecord, starts_on: datetime.date, details: str, *, by=None
) -> Penalty:
    """Embargo of the worksite (art. 25 II); disobeyed, a daily fine of one UFESP (art. 31).
    By the authority (art. 35), as every penalty."""
    record = _record_for_penalty(record, starts_on, PenaltyKind.EMBARGO, by)
    framework = record.case.framework
    if not framework.embargo:  # Lei 3.190/2013: no embargo among its penalties (art. 9-10)
        raise EnforcementError(
            f"{framework.law} não prevê o embargo ({framework.cite('embargo')}).", "no_embargo"
        )
    if not details.strip():
        raise EnforcementError("Identifique a obra embargada.", "details", "details")
    return Penalty.objects.create(
        record=record,
        kind=PenaltyKind.EMBARGO,
        starts_on=starts_on,
        details=details.strip(),
        **signed("applied", by, record, authority=True),
    )


@transaction.atomic
def register_embargo_breach(
    penalty: Penalty, day: datetime.date, note: str = "", *, by=None
) -> EmbargoBreach:
    """A day on which the embargo was found disobeyed: one UFESP (art. 31)."""
    penalty = Penalty.objects.select_for_update().get(pk=penalty.pk)
    check("register_embargo_breach", penalty, by)
    if day < penalty.starts_on or (penalty.lifted_on and day >= penalty.lifted_on):
        raise EnforcementError("Nesse dia o embargo não estava em vigor.", "date", "day")
    if day > timezone.localdate():
        raise EnforcementError("O dia do descumprimento está no futuro.", "future", "day")
    try:
        with transaction.atomic():
            return EmbargoBreach.objects.create(
                penalty=penalty, day=day, note=note.strip(), **signed("registered", by, penalty)
            )
    except IntegrityError:
        raise EnforcementError(
            f"O descumprimento de {br_date(day)} já foi registrado.", "duplicate", "day"
        ) from None


@transaction.atomic
def assess_embargo_fine(penalty: Penalty, on: datetime.date, *, by=None) -> EmbargoFineCharge:
    """Make the daily fines of the days of breach registered up to `on` and not yet charged
    payable (art. 31: one UFESP a day, the framework's daily fine): one charge, its amount
    frozen now, paid at the unit's value of the payment date (art. 36), due the framework's
    payment days after `on`."""
    penalty = (
        Penalty.objects.select_for_update(of=("self",))
        .select_related("record__case__framework")
        .get(pk=penalty.pk)
    )
    check("assess_embargo_fine", penalty, by)
    framework = penalty.record.case.framework
    if framework.embargo_daily_fine is None:
        raise EnforcementError(
            f"{framework.law} não prevê multa diária por embargo descumprido "
            f"({framework.cite('embargo_daily_fine')}).",
            "no_daily_fine",
        )
    if penalty.record.status == RecordStatus.ANNULLED:
        raise EnforcementError("O auto foi anulado: não cabe multa diária.", "annulled")
    if on > timezone.localdate():
        raise EnforcementError("A data do lançamento está no futuro.", "future", "on")
    days = list(uncharged_breaches(penalty).filter(day__lte=on).select_for_update())
    if not days:
        raise EnforcementError(
            f"Não há dia de descumprimento do embargo até {br_date(on)} ainda sem cobrança.",
            "no_breach",
            "on",
        )
    charge = EmbargoFineCharge.objects.create(
        penalty=penalty,
        assessed_on=on,
        amount_ufesp=fines.embargo_fine(len(days), framework),
        **signed("assessed", by, penalty),
    )
    EmbargoBreach.objects.filter(pk__in=[b.pk for b in days]).update(charge=charge)
    return charge


@transaction.atomic
def apply_seizure(
    record: InfractionRecord, starts_on: datetime.date, details: str, *, by=None
) -> Penalty:
    """Seizure of equipment (art. 25 III), kept where the municipality defines (art. 32)."""
    record = _record_for_penalty(record, starts_on, PenaltyKind.SEIZURE, by)
    if not details.strip():
        raise EnforcementError(
            "Liste os equipamentos apreendidos e onde ficam guardados.", "details", "details"
        )
    return Penalty.objects.create(
        record=record,
        kind=PenaltyKind.SEIZURE,
        starts_on=starts_on,
        details=details.strip(),
        **signed("applied", by, record, authority=True),
    )


@transaction.atomic
def register_seizure_costs(
    penalty: Penalty, custody_costs_brl: Decimal, paid_on: datetime.date | None, *, by=None
) -> Penalty:
    """The costs of seizure, removal and custody, computed and (when paid) their payment."""
    penalty = Penalty.objects.select_for_update().get(pk=penalty.pk)
    check("register_seizure_costs", penalty, by)
    if penalty.lifted_on:
        raise EnforcementError("Os equipamentos já foram liberados.", "released")
    if custody_costs_brl is None or custody_costs_brl < 0:
        raise EnforcementError("Informe o valor dos custos.", "costs", "custody_costs_brl")
    if paid_on is not None and (paid_on < penalty.starts_on or paid_on > timezone.localdate()):
        raise EnforcementError(
            "A data do pagamento dos custos está fora do período da apreensão.", "date", "paid_on"
        )
    penalty.custody_costs_brl, penalty.costs_paid_on = custody_costs_brl, paid_on
    penalty.save(update_fields=["custody_costs_brl", "costs_paid_on", *sign(penalty, "costs", by)])
    return penalty


@transaction.atomic
def release_seizure(
    penalty: Penalty, on: datetime.date, irregularity_fixed: bool, *, by=None
) -> Penalty:
    """Release of seized equipment: only once the irregularity is fixed and the costs of
    seizure, removal and custody are paid (art. 32 sole §)."""
    penalty = (
        Penalty.objects.select_for_update(of=("self",))
        .select_related("record__case")
        .get(pk=penalty.pk)
    )
    check("release_seizure", penalty, by)
    if penalty.lifted_on:
        raise EnforcementError("Os equipamentos já foram liberados.", "released")
    if not irregularity_fixed:
        raise EnforcementError(
            "A liberação exige que a irregularidade objeto do auto tenha sido sanada "
            "(art. 32 p.ú.).",
            "not_fixed",
            "irregularity_fixed",
        )
    if penalty.custody_costs_brl is None or penalty.costs_paid_on is None:
        raise EnforcementError(
            "A liberação exige o recolhimento dos custos de apreensão, remoção e guarda "
            "(art. 32 p.ú.): registre antes o valor e o pagamento.",
            "costs_unpaid",
        )
    if on < penalty.costs_paid_on or on > timezone.localdate():
        raise EnforcementError(
            "A liberação deve ser posterior ao pagamento dos custos e não futura.", "date", "on"
        )
    penalty.lifted_on = on
    penalty.save(update_fields=["lifted_on", *sign(penalty, "lifted", by)])
    close_if_settled(penalty.record.case, on)
    return penalty


@transaction.atomic
def apply_suspension(
    record: InfractionRecord, starts_on: datetime.date, days: int, details: str = "", *, by=None
) -> Penalty:
    """Suspension of the activity for up to the framework's days (art. 25 IV: 15). A
    transporter offender's licence in the case's municipality is SUSPENDED from `starts_on` to
    the last day (rule TRANSPORTER_SUSPENDED; its licences elsewhere are other
    municipalities' to judge, art. 35); a facility's licenses in force are SUSPENDED from
    `starts_on` (rule FACILITY_NOT_LICENSED)."""
    record = _record_for_penalty(record, starts_on, PenaltyKind.SUSPENSION, by)
    framework = record.case.framework
    longest = framework.suspension_max_days
    if longest is None:
        raise EnforcementError(
            f"{framework.law} não prevê a suspensão da atividade "
            f"({framework.cite('suspension_max_days')}).",
            "no_suspension",
        )
    if days < 1 or days > longest:
        raise EnforcementError(
            f"A suspensão dura de 1 a {longest} dias ({framework.cite('suspension_max_days')}): "
            f"{days} dias não é possível.",
            "suspension_too_long",
            "days",
        )
    ends_on = deadlines.suspension_end(starts_on, days)
    licence = _licence(record.case)
    if licence is not None:
        current = licence.restricted_on(starts_on)
        if current is not None:
            label = LicenceStatus(current).label.lower()
            raise EnforcementError(
                f"A licença do transportador em {licence.place} já está {label} em "
                f"{br_date(starts_on)}.",
                "already_restricted",
            )
    penalty = Penalty.objects.create(
        record=record,
        kind=PenaltyKind.SUSPENSION,
        starts_on=starts_on,
        ends_on=ends_on,
        details=details.strip(),
        **signed("applied", by, record, authority=True),
    )
    _restrict(record.case, PenaltyKind.SUSPENSION, starts_on, ends_on)
    return penalty


@transaction.atomic
def apply_revocation(
    record: InfractionRecord, starts_on: datetime.date, details: str = "", *, by=None
) -> Penalty:
    """Revocation of the permit (art. 25 V), the due penalty for a new infraction after a
    suspension (art. 34): the transporter's licence in the case's municipality is REVOKED,
    the facility's licenses in force too."""
    record = _record_for_penalty(record, starts_on, PenaltyKind.REVOCATION, by)
    if record.penalties.filter(kind=PenaltyKind.REVOCATION).exists():
        raise EnforcementError("A cassação já foi aplicada neste auto.", "duplicate")
    penalty = Penalty.objects.create(
        record=record,
        kind=PenaltyKind.REVOCATION,
        starts_on=starts_on,
        details=details.strip(),
        **signed("applied", by, record, authority=True),
    )
    _restrict(record.case, PenaltyKind.REVOCATION, starts_on, None)
    close_if_settled(record.case, starts_on)  # the revocation was what kept it open (art. 34)
    return penalty


@transaction.atomic
def lift_penalty(
    penalty: Penalty,
    on: datetime.date,
    requirements_met: str = "",
    requirements_met_on: datetime.date | None = None,
    *,
    by=None,
) -> Penalty:
    """Cancel an embargo (the offender complied, art. 31 sole §: "O embargo deve ser cancelado
    caso o infrator tenha cumprido todas as exigências dentro dos prazos legais determinados no
    respectivo auto", so the cancellation records which requirements were met and when) or
    lift a suspension early: from `on` the transporter or facility works again. Seized
    equipment is released with release_seizure; a revocation falls only with the annulment of
    the record."""
    penalty = (
        Penalty.objects.select_for_update(of=("self",))
        .select_related("record__case__offender__transporter", "record__case__offender__facility")
        .get(pk=penalty.pk)
    )
    check("lift_penalty", penalty, by)
    if penalty.lifted_on:
        raise EnforcementError("A penalidade já foi levantada.", "lifted")
    if penalty.kind == PenaltyKind.SUSPENSION and penalty.ends_on < on:
        raise EnforcementError(
            f"A suspensão já terminou em {br_date(penalty.ends_on)}.", "ended", "on"
        )
    if on > timezone.localdate():
        raise EnforcementError("A data do levantamento está no futuro.", "future", "on")
    if penalty.kind == PenaltyKind.EMBARGO:
        _check_requirements(penalty, on, requirements_met, requirements_met_on)
        penalty.requirements_met = requirements_met.strip()
        penalty.requirements_met_on = requirements_met_on
        penalty.save(update_fields=["requirements_met", "requirements_met_on"])
    end_penalty(penalty, on, by)
    close_if_settled(penalty.record.case, on)
    return penalty


def _check_requirements(
    penalty: Penalty, on: datetime.date, met: str, met_on: datetime.date | None
) -> None:
    """Art. 31 sole §: what the offender did of the record's requirements, and the day."""
    if not met.strip():
        raise EnforcementError(
            "Diga quais exigências do auto o infrator cumpriu: o embargo só é cancelado com "
            "todas cumpridas (art. 31 p.ú.).",
            "requirements",
            "requirements_met",
        )
    if met_on is None:
        raise EnforcementError(
            "Informe a data em que as exigências foram cumpridas (art. 31 p.ú.).",
            "requirements_met_on",
            "requirements_met_on",
        )
    if met_on > on:
        raise EnforcementError(
            "As exigências não podem ter sido cumpridas depois do cancelamento.",
            "date",
            "requirements_met_on",
        )
    if met_on < penalty.starts_on:
        raise EnforcementError(
            f"O embargo começou em {br_date(penalty.starts_on)}: as exigências cumpridas "
            "contam a partir dele.",
            "date",
            "requirements_met_on",
        )


def end_penalty(penalty: Penalty, on: datetime.date, by, authority: bool = False) -> None:
    """Lifted by `by`; `authority`: it falls with the record, by the appeal's decision."""
    penalty.lifted_on = on
    penalty.save(update_fields=["lifted_on", *sign(penalty, "lifted", by, authority)])
    if penalty.kind in (PenaltyKind.SUSPENSION, PenaltyKind.REVOCATION):
        _unrestrict(penalty, on)


def _licence(case, lock: bool = False) -> TransporterLicence | None:
    """The transporter offender's licence in the case's municipality (where the facts
    happened, art. 35), or None: the offender is no transporter, or not licensed there."""
    transporter_id = case.offender.transporter_id
    if not transporter_id:
        return None
    licences = TransporterLicence.objects.select_related("municipality").filter(
        transporter_id=transporter_id, municipality_id=case.municipality_id
    )
    if lock:
        licences = licences.select_for_update(of=("self",))
    return licences.first()


def _restrict(case, kind: str, starts_on: datetime.date, ends_on: datetime.date | None) -> None:
    """The effect of a suspension or revocation on the CTR rules, from `starts_on`: on the
    transporter's licence in the case's municipality only (a suspension in one municipality
    does not stop the transporter's CTRs in another), on the facility's licenses."""
    status = LicenceStatus.SUSPENDED if kind == PenaltyKind.SUSPENSION else LicenceStatus.REVOKED
    offender = case.offender
    if offender.transporter_id:
        TransporterLicence.objects.filter(
            transporter_id=offender.transporter_id, municipality_id=case.municipality_id
        ).update(status=status, status_since=starts_on, suspended_until=ends_on)
    if offender.facility_id:
        # The licenses in force that day; a license's status has no end date, so the end of a
        # suspension is applied by restore_ended_suspensions (enforcement_deadlines --apply).
        FacilityLicense.objects.valid_on(starts_on).filter(facility_id=offender.facility_id).update(
            status=LicenseStatus(status.value), status_since=starts_on
        )


def _unrestrict(penalty: Penalty, on: datetime.date) -> None:
    """Undo _restrict from `on`: the transporter or facility may work on `on`."""
    case = penalty.record.case
    offender = case.offender
    status = (
        LicenceStatus.SUSPENDED if penalty.kind == PenaltyKind.SUSPENSION else LicenceStatus.REVOKED
    )
    licence = _licence(case, lock=True)
    # Only if it is still this penalty that holds the licence.
    if (
        licence is not None
        and licence.status == status
        and licence.status_since == penalty.starts_on
    ):
        if on <= penalty.starts_on or status == LicenceStatus.REVOKED:
            licence.status = LicenceStatus.ACTIVE
            licence.status_since = None
            licence.suspended_until = None
        else:
            # Still SUSPENDED for the days served: restricted_on() honours suspended_until.
            licence.suspended_until = min(penalty.ends_on, on - ONE_DAY)
        licence.save(update_fields=["status", "status_since", "suspended_until"])
    if offender.facility_id:
        _restore_licenses(offender.facility_id, status, penalty.starts_on)


def _restore_licenses(facility_id: int, status: str, since: datetime.date) -> int:
    # FacilityLicense keeps one status: restoring ACTIVE forgets the suspended days.
    return FacilityLicense.objects.filter(
        facility_id=facility_id, status=status, status_since=since
    ).update(status=LicenseStatus.ACTIVE, status_since=None)


def ended_facility_suspensions(today: datetime.date) -> QuerySet:
    """Suspensions of facilities whose last day has passed and whose licenses are still
    suspended by them."""
    still_suspended = FacilityLicense.objects.filter(
        facility_id=OuterRef("record__case__offender__facility_id"),
        status=LicenseStatus.SUSPENDED,
        status_since=OuterRef("starts_on"),
    )
    return (
        Penalty.objects.filter(
            kind=PenaltyKind.SUSPENSION,
            ends_on__lt=today,
            lifted_on__isnull=True,
            record__case__offender__facility__isnull=False,
        )
        .filter(Exists(still_suspended))
        .select_related("record__case__offender__facility")
    )


@transaction.atomic
def restore_ended_suspensions(today: datetime.date | None = None) -> list[Penalty]:
    """Give back the licenses of facilities whose suspension is over (the transporter's
    licence needs nothing: suspended_until already ends it)."""
    today = today or timezone.localdate()
    restored = []
    for penalty in ended_facility_suspensions(today):
        facility_id = penalty.record.case.offender.facility_id
        if _restore_licenses(facility_id, LicenseStatus.SUSPENDED, penalty.starts_on):
            restored.append(penalty)
        close_if_settled(penalty.record.case, today)
    return restored
