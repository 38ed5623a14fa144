"""The PGRCC of a large generator's worksite (Lei 3.978/2007 art. 9): the
generator writes a version (volumes by class, prefilled by generators.estimator, and the
transporters and destinations it will use, only among those licensed today, art. 9 p.ú. I),
submits it; the Núcleo Permanente de Gestão (art. 4 §2 V, art. 20) approves it or returns it
for changes with a note. Every step is a WastePlanEvent with the data at the time.

An approved version is the PGRCC in force: it is copied to ctr.Worksite.plan_transporters and
plan_facilities (what NOT_IN_GENERATOR_PLAN reads, on the per-CTR path and in the CSV import)
and marks the worksite a large generator's, in the same transaction; the version it replaces
becomes SUPERSEDED. A change to an approved plan is a new version.

Services take domain objects, do one transaction each and raise PlanError (a DomainError) with
nothing written."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Prefetch, Q
from django.urls import reverse
from django.utils import timezone

from config import mail
from config.br import br_date
from config.errors import DomainError
from ctr import roles
from ctr.custody import certificates
from ctr.models import LicenceStatus, Transporter, TransporterLicence, Worksite
from jurisdiction.scope import OutsideJurisdiction, jurisdiction_of, staff_of
from pev_network.letterhead import letterhead_of
from pev_network.models import FacilityLicense, Municipality, ReceivingFacility, WasteClass
from pev_network.services import municipality_at

from .models import PlanAction, PlannedVolume, PlanStatus, WastePlan, WastePlanEvent

# The versions the generator may still change; SUBMITTED waits for the Núcleo.
EDITABLE = (PlanStatus.DRAFT, PlanStatus.CHANGES_REQUESTED)
VOLUME_FIELD = PlannedVolume._meta.get_field("volume_m3")
MAX_VOLUME = Decimal(10) ** (VOLUME_FIELD.max_digits - VOLUME_FIELD.decimal_places)


class PlanError(DomainError):
    """A plan the rules refuse. `errors` lists every (field, message) when there are several
    (each unlicensed transporter or destination, named, with why)."""

    status = 400

    def __init__(self, message, code=None, field=None, status=None, errors=None):
        super().__init__(message, code, field, status)
        self.errors: list[tuple[str | None, str]] = errors or [(field, message)]

    def problem_errors(self) -> list[dict]:
        return [{"campo": name, "mensagem": text} for name, text in self.errors if name]


def _refused(errors: list[tuple[str, str]], code: str, status: int = 400) -> PlanError:
    return PlanError(
        " ".join(text for _, text in errors), code, errors[0][0], status, errors=errors
    )


# --- who --------------------------------------------------------------------------------------


# Only the Núcleo decides on the plans (art. 4 §2 V, art. 20); inspectors and the authority
# see them, as every municipal page.
is_nucleo = roles.is_nucleo
generator_of = roles.generator_of


def can_write(user, worksite: Worksite) -> bool:
    generator = generator_of(user)
    return generator is not None and generator.pk == worksite.generator_id


def can_read(user, worksite: Worksite) -> bool:
    """The worksite's generator, and the staff of its municipality."""
    return jurisdiction_of(user).reads(worksite.municipality_id) or can_write(user, worksite)


# --- licensed today (art. 9 p.ú. I: "única e exclusivamente entre os agentes licenciados") ---


def transporter_refusal(
    transporter: Transporter, day: datetime.date, municipality: Municipality | None
) -> str | None:
    """Why `transporter` cannot be named on `day` in a plan of a worksite in `municipality`:
    no licence there, or not valid (art. 13), or suspended or revoked there (art. 25 IV-V);
    or None. A generator carrying its own waste needs no licence (art. 12 §4)."""
    name = transporter.name
    if municipality is None:
        return f"O transportador “{name}” não pode ser conferido: a obra não tem município."
    place = f"{municipality.name}/{municipality.uf}"
    licence = transporter.licence_in(municipality.pk)
    if licence is None:
        if transporter.is_self_generator:
            return None
        return f"O transportador “{name}” não tem licença em {place}."
    if not licence.is_valid_on(day):
        if licence.valid_until and day > licence.valid_until:
            why = f"venceu em {br_date(licence.valid_until)}"
        else:
            why = f"vale a partir de {br_date(licence.valid_from)}"
        return f"O transportador “{name}” não tem licença válida hoje em {place} ({why})."
    status = licence.restricted_on(day)
    if status == LicenceStatus.SUSPENDED:
        until = licence.suspended_until
        end = f" até {br_date(until)}" if until else ""
        return (
            f"O transportador “{name}” está suspenso em {place} desde "
            f"{br_date(licence.status_since)}{end}."
        )
    if status == LicenceStatus.REVOKED:
        return (
            f"A licença do transportador “{name}” em {place} foi cassada em "
            f"{br_date(licence.status_since)}."
        )
    return None


def worksite_municipality(worksite: Worksite) -> Municipality | None:
    """The municipality whose licences a plan's transporters need: the worksite's (a
    registered worksite always has one; else where its point lies)."""
    if worksite.municipality_id is not None:
        return Municipality.objects.defer("boundary").get(pk=worksite.municipality_id)
    return municipality_at(worksite.location) if worksite.location else None


def facility_refusal(facility: ReceivingFacility, day: datetime.date) -> str | None:
    """Why `facility` cannot be named on `day` (no license in force, art. 14 §1), or None."""
    licenses = list(facility.licenses.all())
    if any(license.is_valid_on(day) for license in licenses):
        return None
    name = facility.name
    if not licenses:
        return f"A área “{name}” não tem licença cadastrada."
    latest = max(licenses, key=lambda license: license.valid_from)
    if latest.valid_from > day:
        why = f"a licença vale a partir de {br_date(latest.valid_from)}"
    elif latest.status == FacilityLicense.Status.SUSPENDED:
        why = f"licença suspensa desde {br_date(latest.status_since)}"
    elif latest.status == FacilityLicense.Status.REVOKED:
        why = f"licença cassada em {br_date(latest.status_since)}"
    else:
        why = f"venceu em {br_date(latest.valid_until)}"
    return f"A área “{name}” não tem licença válida hoje ({why})."


def licensed_transporters(
    day: datetime.date, municipality: Municipality | None
) -> list[Transporter]:
    """The transporters a plan of a worksite in `municipality` may name on `day`: those with
    a licence there, and the generators carrying their own waste (a few dozen per
    municipality: checked in memory, with the same methods the rules use)."""
    if municipality is None:
        return []
    candidates = (
        Transporter.objects.filter(
            Q(licences__municipality=municipality) | Q(is_self_generator=True)
        )
        .distinct()
        .prefetch_related(
            Prefetch("licences", TransporterLicence.objects.filter(municipality=municipality))
        )
        .order_by("name")
    )
    return [t for t in candidates if not transporter_refusal(t, day, municipality)]


def licensed_facilities(day: datetime.date):
    return ReceivingFacility.objects.licensed_on(day).order_by("kind", "name")


# --- the plan's data ------------------------------------------------------------------------


@dataclass
class PlanInput:
    """What the generator declares: m³ by class, and the ids of the transporters and of the
    destination facilities."""

    volumes: Mapping[str, Decimal | str] = field(default_factory=dict)
    transporter_ids: Iterable[int] = ()
    facility_ids: Iterable[int] = ()


def _volumes(volumes: Mapping[str, Decimal | str]) -> dict[str, Decimal]:
    clean, errors = {}, []
    for waste_class, value in volumes.items():
        where = f"volumes.{waste_class}"
        if waste_class not in WasteClass.values:
            errors.append((where, f"Classe de resíduo desconhecida: {waste_class}."))
            continue
        if value in (None, ""):
            continue
        try:
            volume = Decimal(str(value).replace(",", "."))
        except InvalidOperation:
            volume = Decimal("NaN")
        label = WasteClass(waste_class).label
        if not volume.is_finite() or volume < 0 or volume >= MAX_VOLUME:
            errors.append((where, f"Volume inválido para {label}: {value} (m³, zero ou mais)."))
        elif volume != volume.quantize(Decimal("0.01")):
            errors.append((where, f"Volume de {label} com mais de duas casas decimais: {value}."))
        else:
            clean[waste_class] = volume
    if errors:
        raise _refused(errors, "volume_invalid")
    return clean


def _agents(data: PlanInput, day: datetime.date, municipality: Municipality | None):
    """The transporters and facilities named, each licensed on `day` (the transporters in the
    worksite's `municipality`); otherwise every one refused with its name and why."""
    transporter_ids = sorted({int(pk) for pk in data.transporter_ids})
    facility_ids = sorted({int(pk) for pk in data.facility_ids})
    transporters = Transporter.objects.in_bulk(transporter_ids)
    facilities = ReceivingFacility.objects.prefetch_related("licenses").in_bulk(facility_ids)
    errors = []
    for pk in transporter_ids:
        found = transporters.get(pk)
        why = (
            transporter_refusal(found, day, municipality)
            if found
            else f"O transportador {pk} não existe."
        )
        if why:
            errors.append(("transporters", why))
    for pk in facility_ids:
        found = facilities.get(pk)
        why = facility_refusal(found, day) if found else f"A área de destino {pk} não existe."
        if why:
            errors.append(("facilities", why))
    if errors:
        raise _refused(errors, "not_licensed")
    return [transporters[pk] for pk in transporter_ids], [facilities[pk] for pk in facility_ids]


def snapshot(plan: WastePlan) -> dict:
    """The plan's data as it is now, for its history (names as they were that day)."""
    return {
        "version": plan.version,
        "status": plan.status,
        "volumes": {v.waste_class: str(v.volume_m3) for v in plan.volumes.all()},
        "transporters": [
            {"id": t.pk, "name": t.name, "licence": licence_number(t, plan.worksite)}
            for t in plan.transporters.order_by("name")
        ],
        "facilities": [
            {"id": f.pk, "name": f.name, "kind": f.kind} for f in plan.facilities.order_by("name")
        ],
    }


def licence_number(transporter: Transporter, worksite: Worksite) -> str:
    """The transporter's licence number in the worksite's municipality, "" without one."""
    licence = transporter.licence_in(worksite.municipality_id)
    return licence.number if licence else ""


def _event(plan: WastePlan, by, action: str, note: str = "") -> WastePlanEvent:
    return WastePlanEvent.objects.create(
        plan=plan, actor=by, action=action, note=note, data=snapshot(plan)
    )


def _write(plan: WastePlan, volumes: dict[str, Decimal], transporters, facilities) -> None:
    plan.volumes.all().delete()
    PlannedVolume.objects.bulk_create(
        PlannedVolume(plan=plan, waste_class=c, volume_m3=v) for c, v in volumes.items()
    )
    plan.transporters.set(transporters)
    plan.facilities.set(facilities)


# --- the generator's steps ------------------------------------------------------------------


def latest(worksite: Worksite) -> WastePlan | None:
    return worksite.plans.order_by("-version").first()


def in_force(worksite: Worksite) -> WastePlan | None:
    return worksite.plans.filter(status=PlanStatus.APPROVED).first()


def _lock_worksite(worksite: Worksite) -> Worksite:
    # Versions of one worksite are numbered, approved and superseded one at a time.
    return Worksite.objects.select_for_update().get(pk=worksite.pk)


def check_writer(by, worksite: Worksite) -> None:
    if not can_write(by, worksite):
        raise PlanError("Só o gerador da obra escreve o seu PGRCC.", "not_generator", status=403)


def save(worksite: Worksite, by, data: PlanInput, submit: bool = False) -> WastePlan:
    """Write the worksite's plan: its version still in the generator's hands (draft, or
    returned for changes), or a new version when there is none or the last was approved
    (a change to the plan in force). Refused while a version waits for the Núcleo. With
    `submit`, send it too (one transaction: a plan refused at submission is not saved)."""
    check_writer(by, worksite)
    day = timezone.localdate()
    volumes = _volumes(data.volumes)
    transporters, facilities = _agents(data, day, worksite_municipality(worksite))
    with transaction.atomic():
        worksite = _lock_worksite(worksite)
        plan = latest(worksite)
        if plan is not None and plan.status == PlanStatus.SUBMITTED:
            raise PlanError(
                f"O PGRCC v{plan.version} desta obra está com o Núcleo: aguarde a decisão "
                "para alterá-lo.",
                "plan_submitted",
                status=409,
            )
        if plan is None or plan.status not in EDITABLE:
            plan = WastePlan.objects.create(
                worksite=worksite,
                version=(plan.version + 1) if plan else 1,
                created_by=by,
            )
            action = PlanAction.CREATED
        else:
            action = PlanAction.EDITED
        _write(plan, volumes, transporters, facilities)
        _event(plan, by, action)
        if submit:
            _send(plan, by, day)
    return plan


def _editable(plan: WastePlan) -> WastePlan:
    locked = WastePlan.objects.select_for_update().select_related("worksite").get(pk=plan.pk)
    if locked.status not in EDITABLE:
        raise PlanError(
            f"O PGRCC v{locked.version} está {locked.get_status_display()}: não pode ser enviado.",
            "plan_not_editable",
            status=409,
        )
    return locked


def _complete(plan: WastePlan, day: datetime.date) -> None:
    """What a plan needs to go to the Núcleo (art. 9 p.ú. I: whom it announces for transport
    and destination, still licensed today) and a volume expected."""
    errors = []
    if not any(v.volume_m3 > 0 for v in plan.volumes.all()):
        errors.append(("volumes", "Informe o volume previsto de ao menos uma classe."))
    if not plan.transporters.exists():
        errors.append(("transporters", "Indique ao menos um transportador licenciado."))
    if not plan.facilities.exists():
        errors.append(("facilities", "Indique ao menos uma área de destino licenciada."))
    if errors:
        raise _refused(errors, "plan_incomplete")
    _agents(
        PlanInput(
            transporter_ids=plan.transporters.values_list("pk", flat=True),
            facility_ids=plan.facilities.values_list("pk", flat=True),
        ),
        day,
        worksite_municipality(plan.worksite),
    )


def _send(plan: WastePlan, by, day: datetime.date) -> None:
    _complete(plan, day)
    plan.status = PlanStatus.SUBMITTED
    plan.submitted_at = timezone.now()
    plan.save(update_fields=["status", "submitted_at"])
    _event(plan, by, PlanAction.SUBMITTED)
    _mail_nucleo(plan)


def submit(plan: WastePlan, by) -> WastePlan:
    """Send the plan to the Núcleo; the Núcleo's users are told by e-mail."""
    check_writer(by, plan.worksite)
    with transaction.atomic():
        _lock_worksite(plan.worksite)
        plan = _editable(plan)
        _send(plan, by, timezone.localdate())
    return plan


# --- the Núcleo's decision ------------------------------------------------------------------


def _decider(by, plan: WastePlan) -> None:
    """The Núcleo of the worksite's municipality: another municipality's staff do
    not even see the plan (404); its other staff and the auditor read it (403)."""
    j = jurisdiction_of(by)
    if j.is_staff and not j.reads(plan.worksite.municipality_id):
        raise OutsideJurisdiction()
    if not is_nucleo(by, plan.worksite.municipality_id):
        raise PlanError(
            "Só o Núcleo Permanente de Gestão decide sobre o PGRCC (Lei 3.978/2007 art. 20).",
            "not_nucleo",
            status=403,
        )


def _submitted(plan: WastePlan) -> WastePlan:
    """The plan, locked after its worksite (every decision on one worksite in one order),
    still waiting for a decision."""
    _lock_worksite(plan.worksite)
    locked = WastePlan.objects.select_for_update().select_related("worksite").get(pk=plan.pk)
    if locked.status != PlanStatus.SUBMITTED:
        raise PlanError(
            f"O PGRCC v{locked.version} não aguarda decisão: está {locked.get_status_display()}.",
            "plan_not_submitted",
            status=409,
        )
    return locked


def approve(plan: WastePlan, by, note: str = "") -> WastePlan:
    """Approve the plan: it becomes the PGRCC in force of its worksite (copied to
    Worksite.plan_*, the worksite a large generator's), the one it replaces SUPERSEDED. Its
    transporters and destinations must still be licensed today. Two approvals at once: one
    wins, the other finds the plan decided (and wasteplan_one_approved stands behind)."""
    _decider(by, plan)
    try:
        with transaction.atomic():
            plan = _submitted(plan)
            _complete(plan, timezone.localdate())
            now = timezone.now()
            worksite = plan.worksite
            for previous in worksite.plans.filter(status=PlanStatus.APPROVED):
                previous.status = PlanStatus.SUPERSEDED
                previous.save(update_fields=["status"])
                _event(previous, by, PlanAction.SUPERSEDED, f"Substituído pela v{plan.version}.")
            plan.status = PlanStatus.APPROVED
            plan.decided_at, plan.decided_by, plan.decision_note = now, by, note.strip()
            plan.save(update_fields=["status", "decided_at", "decided_by", "decision_note"])
            worksite.plan_transporters.set(plan.transporters.all())
            worksite.plan_facilities.set(plan.facilities.all())
            worksite.is_large_generator = True
            worksite.save(update_fields=["is_large_generator"])
            _event(plan, by, PlanAction.APPROVED, plan.decision_note)
            _mail_generator(plan, "aprovado", "generators/mail/plan_approved.txt")
    except IntegrityError as error:
        if "wasteplan_one_approved" not in str(error):
            raise
        raise PlanError(
            "Outro PGRCC desta obra acaba de ser aprovado.", "plan_conflict", status=409
        ) from None
    return plan


def request_changes(plan: WastePlan, by, note: str) -> WastePlan:
    """Return the plan to its generator with the Núcleo's note (required: it says what to
    change); the generator edits the same version and submits it again."""
    _decider(by, plan)
    note = (note or "").strip()
    if not note:
        raise PlanError("Escreva no parecer o que o gerador deve ajustar.", "note_required", "note")
    with transaction.atomic():
        plan = _submitted(plan)
        plan.status = PlanStatus.CHANGES_REQUESTED
        plan.decided_at, plan.decided_by, plan.decision_note = timezone.now(), by, note
        plan.save(update_fields=["status", "decided_at", "decided_by", "decision_note"])
        _event(plan, by, PlanAction.CHANGES_REQUESTED, note)
        _mail_generator(plan, "devolvido para ajustes", "generators/mail/plan_returned.txt")
    return plan


# --- e-mail (config.mail: after commit, no personal data in the subject) --------------------


def _mail_nucleo(plan: WastePlan) -> None:
    # The Núcleo of the worksite's municipality, who decides it.
    users = staff_of(plan.worksite.municipality_id, [roles.NUCLEO]).exclude(email="")
    mail.send(
        users.values_list("email", flat=True),
        f"PGRCC enviado para análise (obra nº {plan.worksite_id}, v{plan.version})",
        "generators/mail/plan_submitted.txt",
        {"plan": plan, "link": mail.absolute(reverse("generators:plan-review", args=[plan.pk]))},
        letterhead_of(certificates.worksite_municipality(plan.worksite)),
    )


def _mail_generator(plan: WastePlan, outcome: str, template: str) -> None:
    users = (
        get_user_model()
        .objects.filter(is_active=True, membership__generator_id=plan.worksite.generator_id)
        .exclude(email="")
    )
    link = reverse("generators:worksite-plan", args=[plan.worksite_id])
    mail.send(
        users.values_list("email", flat=True),
        f"PGRCC {outcome} (obra nº {plan.worksite_id}, v{plan.version})",
        template,
        {"plan": plan, "link": mail.absolute(link)},
        letterhead_of(certificates.worksite_municipality(plan.worksite)),
    )
