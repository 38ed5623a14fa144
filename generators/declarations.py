"""The Habite-se destination declaration (Lei 3.978/2007 art. 9 p.ú. II: the Habite-se asks
for the documentation of the "correto transporte, triagem e destinação" of the work's waste).

When the work ends its generator asks for the declaration (`request`, with the end date, which
becomes `Worksite.ended_on`); the Núcleo reviews the worksite (`review`: the comparison of
planned, transported and destined volumes, generators.comparison, and the Certificado de
Destinação Final as the chain of custody stands, ctr.custody.certificates) and issues it
(`issue`) or refuses it with its reasons (`refuse`).

**When it can be issued.** Every load of the worksite was received (none still issued, on its
way to its first facility) and, where it went through an ATT or a PEV, followed by the chain of
custody to a final destination or processed there (art. 3 III: an ATT sorts "para posterior
remoção"; waste still in its stock has not reached its destination). A load its first
facility refused has no proven destination: the Núcleo issues only if it explains what became
of it (`refused_note`, printed on the declaration). Otherwise `issue` refuses, saying which
load or facility and how much, and writes nothing.

**Identity.** An issued declaration stores its facts (`Facts`) with their SHA-256 and its own
code (HAB-…), and the CDF issued at the same moment, whose own code and public page show the
chain behind it: the declaration's public page says whether that chain changed since.

Services: one transaction each, no request objects; e-mails through config.mail, sent after
commit, with no personal data in the subject.
"""

from __future__ import annotations

import dataclasses
import datetime
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone

from config import mail
from config.br import br_date, br_number
from config.errors import DomainError
from ctr import roles
from ctr.custody import certificates
from ctr.models import (
    DECLARATION_CODE_PREFIX,
    CTRStatus,
    WorkKind,
    Worksite,
    new_verification_code,
)
from jurisdiction.scope import OutsideJurisdiction, jurisdiction_of, staff_of
from pev_network.letterhead import letterhead_of

from .comparison import ClassFigures, Comparison, Totals, worksite_comparison
from .models import DeclarationStatus, HabiteSeDeclaration

NOTE_MAX = 2000  # characters of a note or of the reasons: a paragraph, not a file


class DeclarationError(DomainError):
    code = "declaration_invalid"


class NotAllowed(DeclarationError):
    status = 403
    code = "forbidden"


def _conflict(message: str, code: str) -> DeclarationError:
    return DeclarationError(message, code, status=409)


class Blocked(DeclarationError):
    """A request the Núcleo could not grant: the worksite's destination has open blockers (the
    generator's page lists them and offers no form; the API answers 409 with each in `errors`)."""

    status = 409
    code = "not_destined"

    def __init__(self, reasons: list[str]):
        count = len(reasons)
        super().__init__(
            f"O pedido não foi enviado: ainda há {count} pendência{'s' if count > 1 else ''} na "
            "destinação dos resíduos da obra: " + "; ".join(reasons) + "."
        )
        self.reasons = reasons

    def problem_errors(self) -> list[dict]:
        return [{"campo": None, "mensagem": reason} for reason in self.reasons]


def normalize_code(text: str) -> str | None:
    """A declaration's code as typed (any case, dashes or spaces)."""
    return certificates.normalize_code(text, DECLARATION_CODE_PREFIX)


# --- the review -------------------------------------------------------------------------------


@dataclass
class Review:
    """What the Núcleo decides on: the worksite's figures and its loads as the chain stands
    now, and what keeps the declaration from being issued."""

    worksite: Worksite
    comparison: Comparison
    certificate: certificates.Certificate

    @cached_property
    def not_received(self) -> list[certificates.Load]:
        return [load for load in self.certificate.loads if load.status == CTRStatus.ISSUED]

    @cached_property
    def refused(self) -> list[certificates.Load]:
        return [load for load in self.certificate.loads if load.status == CTRStatus.REFUSED]

    @cached_property
    def open_reasons(self) -> list[str]:
        """Why it cannot be issued whatever the Núcleo writes: no load at all, a load not yet
        received by its first facility, waste of a received load still in stock at an ATT or
        PEV, on its way onward, or lost track of (the certificate's own reasons)."""
        if not self.certificate.loads:
            return ["nenhuma carga registrada para a obra: não há destinação a declarar"]
        reasons = [
            f"o {load.number} ({br_number(load.declared_m3)} m³) ainda não foi recebido "
            f"pela área “{load.first_place.name}”"
            for load in self.not_received
        ]
        received = tuple(
            load for load in self.certificate.loads if load.status == CTRStatus.RECEIVED
        )
        if received:
            reasons += dataclasses.replace(self.certificate, loads=received).reasons
        return reasons

    @property
    def refused_reasons(self) -> list[str]:
        """The loads refused at their first facility: explained by the Núcleo, or open."""
        return [load.refused_reason for load in self.refused]

    def blockers(self, refused_note: str = "") -> list[str]:
        if refused_note.strip():
            return self.open_reasons
        return self.open_reasons + self.refused_reasons

    @property
    def can_issue(self) -> bool:
        """Issuable now, given an explanation of the refused loads if there are any."""
        return not self.open_reasons


def review(worksite: Worksite) -> Review:
    """The worksite as the Núcleo reviews it: the comparison and the certificate."""
    return Review(
        worksite=worksite,
        comparison=worksite_comparison(worksite),
        certificate=certificates.build(certificates.Scope.of_worksite(worksite)),
    )


# --- the facts, stored as issued --------------------------------------------------------------


@dataclass(frozen=True)
class Facts(Totals):
    """What the declaration states, as it was on issue: the worksite, its generator, the
    figures by class (generators.comparison, as generators/_comparison.html shows them) and the
    certificate behind it."""

    number: int
    worksite_id: int
    address: str
    neighbourhood: str
    municipality: str
    permit_number: str
    built_area_m2: Decimal | None
    work_kind: str  # the label: "obra nova", "reforma", "demolição" or ""
    start_date: datetime.date | None
    ended_on: datetime.date
    generator_name: str
    generator_document: str
    plan_version: int | None  # the approved PGRCC's, when there is one
    classes: tuple[ClassFigures, ...]
    ctr_count: int  # the loads received by their first facility
    refused_numbers: tuple[str, ...]
    refused_note: str
    certificate_code: str
    certificate_digest: str
    certificate_conclusive: bool

    @property
    def plan(self) -> int | None:
        return self.plan_version

    @property
    def months(self) -> tuple:
        return ()  # the declaration keeps the totals by class, not the months

    @property
    def statement(self) -> str:
        """The declaration in one sentence."""
        text = (
            f"Declara-se que os {br_number(self.destined_m3)} m³ de resíduos da construção civil "
            f"transportados em {self.ctr_count} CTR(s) da obra e recebidos por áreas licenciadas "
            "chegaram à destinação final ou foram beneficiados, conforme o Certificado de "
            # The law is cited around the sentence, the worksite's municipality's (the PDF's
            # "Base legal", the pages' letterhead), never Lei 3.978/2007
            # whatever the municipality.
            f"Destinação Final {self.certificate_code}."
        )
        if self.refused_numbers:
            text += (
                f" Carga(s) recusada(s) na primeira área ({', '.join(self.refused_numbers)}): "
                f"{self.refused_note}"
            )
        return text


def _m3(value: Decimal | None) -> Decimal | None:
    return None if value is None else Decimal(value).quantize(certificates.M3)


def facts_of(
    declaration: HabiteSeDeclaration,
    current: Review,
    issued: certificates.DestinationCertificate,
    refused_note: str,
) -> Facts:
    site, cdf = current.worksite, current.certificate
    plan = current.comparison.plan
    return Facts(
        number=declaration.pk,
        worksite_id=site.pk,
        address=site.address,
        neighbourhood=site.neighbourhood,
        municipality=(
            f"{site.municipality.name}/{site.municipality.uf}"
            if site.municipality
            else cdf.subject.municipality
        ),
        permit_number=site.permit_number,
        built_area_m2=site.built_area_m2,
        work_kind=WorkKind(site.work_kind).label if site.work_kind else "",
        start_date=site.start_date,
        ended_on=declaration.ended_on,
        generator_name=site.generator.name,
        generator_document=site.generator.document,
        plan_version=plan.version if plan else None,
        classes=tuple(
            ClassFigures(
                c.waste_class,
                _m3(c.expected_m3),
                _m3(c.transported_m3),
                _m3(c.received_m3),
                _m3(c.destined_m3),
            )
            for c in current.comparison.classes
        ),
        ctr_count=sum(1 for load in cdf.loads if load.status == CTRStatus.RECEIVED),
        refused_numbers=tuple(load.number for load in current.refused),
        refused_note=refused_note if current.refused else "",
        certificate_code=issued.code,
        certificate_digest=issued.digest,
        certificate_conclusive=issued.conclusive,
    )


def facts(declaration: HabiteSeDeclaration) -> Facts:
    """The facts of an issued declaration, as stored."""
    return certificates.decode(Facts, declaration.content)


# --- who -------------------------------------------------------------------------------------


def is_generator_of(user, worksite: Worksite) -> bool:
    generator = roles.generator_of(user)
    return generator is not None and generator.pk == worksite.generator_id


def can_see(user, declaration: HabiteSeDeclaration) -> bool:
    """The staff of the worksite's municipality and the worksite's generator."""
    return jurisdiction_of(user).reads(declaration.worksite.municipality_id) or is_generator_of(
        user, declaration.worksite
    )


def require_generator(user, worksite: Worksite) -> None:
    if not is_generator_of(user, worksite):
        raise NotAllowed("Só o gerador da obra pede a declaração de destinação para o Habite-se.")


def require_nucleo(user, act: str, worksite: Worksite) -> None:
    """The Núcleo of the worksite's municipality decides (no other's). Another
    municipality's staff do not even see the request (404); its other staff and the auditor
    read it (403)."""
    j = jurisdiction_of(user)
    if j.is_staff and not j.reads(worksite.municipality_id):
        raise OutsideJurisdiction()
    if not roles.is_nucleo(user, worksite.municipality_id):
        raise NotAllowed(
            f"Só o Núcleo Permanente de Gestão {act} a declaração de destinação para o Habite-se."
        )


def queue(user, status: str | None = DeclarationStatus.REQUESTED, current: bool = True) -> QuerySet:
    """The Núcleo's list: the requests waiting (oldest first), or every declaration of one
    status (None: all), newest first; of the municipality `user` works in now (`current`),
    else of all of its municipalities."""
    declarations = HabiteSeDeclaration.objects.visible_to(user, current=current).select_related(
        "worksite", "worksite__generator", "requested_by"
    )
    if status == DeclarationStatus.REQUESTED:
        return declarations.filter(status=status).order_by("requested_at", "pk")
    if status:
        declarations = declarations.filter(status=status)
    return declarations.order_by("-requested_at", "-pk")


# --- the operations ---------------------------------------------------------------------------


def _text(value: str, what: str, field: str) -> str:
    value = (value or "").strip()
    if len(value) > NOTE_MAX:
        raise DeclarationError(
            f"{what} tem {len(value)} caracteres: o máximo é {NOTE_MAX}.", "too_long", field
        )
    return value


def request(worksite: Worksite, by, ended_on: datetime.date, note: str = "") -> HabiteSeDeclaration:
    """The generator asks for the declaration: the work ended on `ended_on` (not in the future,
    not before it started). One open request at a time; none once it was issued; none while
    the review lists what keeps the declaration from being issued (`Blocked`: a load not yet
    received, waste still in an ATT's stock or on its way; a load refused by its facility does
    not block, the Núcleo explains it on issue). The Núcleo's `issue` checks again: a load may
    leave the worksite after the request."""
    require_generator(by, worksite)
    today = timezone.localdate()
    if ended_on > today:
        raise DeclarationError(
            f"O término da obra ({br_date(ended_on)}) é depois de hoje ({br_date(today)}): "
            "peça a declaração quando a obra tiver terminado.",
            "ended_in_future",
            "ended_on",
        )
    if worksite.start_date and ended_on < worksite.start_date:
        raise DeclarationError(
            f"O término da obra ({br_date(ended_on)}) é antes do seu início "
            f"({br_date(worksite.start_date)}).",
            "ended_before_start",
            "ended_on",
        )
    note = _text(note, "A observação", "note")
    with transaction.atomic():
        # The worksite's row orders two requests of it: the second finds the first's.
        site = Worksite.objects.select_for_update().get(pk=worksite.pk)
        existing = site.declarations.exclude(status=DeclarationStatus.REFUSED).first()
        if existing is not None and existing.status == DeclarationStatus.ISSUED:
            raise _conflict(
                f"A declaração de destinação desta obra já foi emitida em "
                f"{br_date(timezone.localdate(existing.decided_at))} (código {existing.code}).",
                "already_issued",
            )
        if existing is not None:
            raise _conflict(
                f"Já há um pedido de declaração desta obra em análise pelo Núcleo (nº "
                f"{existing.pk}, de {br_date(timezone.localdate(existing.requested_at))}).",
                "already_requested",
            )
        current = review(site)
        if not current.can_issue:
            raise Blocked(current.open_reasons)
        site.ended_on = ended_on
        site.save(update_fields=["ended_on"])
        declaration = HabiteSeDeclaration.objects.create(
            worksite=site, ended_on=ended_on, note=note, requested_by=by
        )
        _mail_requested(declaration)
    return declaration


def _lock(declaration: HabiteSeDeclaration) -> HabiteSeDeclaration:
    """The declaration's row, locked; refused unless it is still waiting for the Núcleo. Two
    Núcleo users deciding at once: the second waits here, then finds the first's decision."""
    locked = (
        HabiteSeDeclaration.objects.select_for_update(of=("self",))
        .select_related("worksite", "worksite__generator", "worksite__municipality")
        .get(pk=declaration.pk)
    )
    if locked.status == DeclarationStatus.ISSUED:
        raise _conflict(
            f"A declaração nº {locked.pk} já foi emitida (código {locked.code}).", "decided"
        )
    if locked.status == DeclarationStatus.REFUSED:
        raise _conflict(f"O pedido nº {locked.pk} já foi recusado.", "decided")
    return locked


def issue(declaration: HabiteSeDeclaration, by, refused_note: str = "") -> HabiteSeDeclaration:
    """The Núcleo issues the declaration, with the worksite's CDF issued at the same moment;
    refused, saying why, unless every load was received and destined (`refused_note`
    explains the loads a facility refused)."""
    require_nucleo(by, "emite", declaration.worksite)
    refused_note = _text(refused_note, "A explicação das cargas recusadas", "refused_note")
    with transaction.atomic():
        locked = _lock(declaration)
        current = review(locked.worksite)
        blockers = current.blockers(refused_note)
        if blockers:
            raise _conflict(
                "A declaração não pode ser emitida: " + "; ".join(blockers) + ".", "not_destined"
            )
        issued, _ = certificates.issue(
            certificates.Scope.of_worksite(locked.worksite), by, built=current.certificate
        )
        content = certificates.encode(facts_of(locked, current, issued, refused_note))
        locked.status = DeclarationStatus.ISSUED
        locked.decided_by, locked.decided_at = by, timezone.now()
        locked.certificate = issued
        locked.content = content
        locked.digest = certificates.digest(content)
        locked.code = new_verification_code(DECLARATION_CODE_PREFIX)
        locked.save()
        _mail_decided(locked, "generators/declarations/email_issued.txt")
    return locked


def refuse(declaration: HabiteSeDeclaration, by, reasons: str) -> HabiteSeDeclaration:
    """The Núcleo refuses the request, with its reasons (sent to the generator)."""
    require_nucleo(by, "recusa", declaration.worksite)
    reasons = _text(reasons, "O texto dos motivos", "reasons")
    if not reasons:
        raise DeclarationError(
            "Informe os motivos da recusa: o gerador os recebe por e-mail.",
            "reasons_required",
            "reasons",
        )
    with transaction.atomic():
        locked = _lock(declaration)
        locked.status = DeclarationStatus.REFUSED
        locked.decided_by, locked.decided_at = by, timezone.now()
        locked.reasons = reasons
        locked.save(update_fields=["status", "decided_by", "decided_at", "reasons"])
        _mail_decided(locked, "generators/declarations/email_refused.txt")
    return locked


# --- verification -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Verification:
    """An issued declaration as it was, and its certificate's chain as it stands now."""

    declaration: HabiteSeDeclaration
    facts: Facts
    certificate: certificates.Verification

    @property
    def changed(self) -> bool:
        return self.certificate.changed

    @property
    def subject(self) -> certificates.PublicSubject:
        """Whom it concerns, masked as on the certificate's public page (LGPD)."""
        return certificates.public_subject(self.certificate.certificate.subject)


def verify(code: str) -> Verification | None:
    code = normalize_code(code)
    if code is None:
        return None
    declaration = (
        HabiteSeDeclaration.objects.select_related("certificate", "worksite")
        .filter(code=code, status=DeclarationStatus.ISSUED)
        .first()
    )
    if declaration is None:
        return None
    return Verification(
        declaration, facts(declaration), certificates.verify(declaration.certificate.code)
    )


# --- e-mails ---------------------------------------------------------------------------------


def _letterhead(declaration: HabiteSeDeclaration):
    """The e-mails of a declaration carry its worksite's municipality's letterhead."""
    return letterhead_of(certificates.worksite_municipality(declaration.worksite))


def _mail_requested(declaration: HabiteSeDeclaration) -> None:
    # The Núcleo of the worksite's municipality, who decides it.
    nucleo = staff_of(declaration.worksite.municipality_id, [roles.NUCLEO]).values_list(
        "email", flat=True
    )
    mail.send(
        nucleo,
        f"Habite-se: novo pedido de declaração de destinação (nº {declaration.pk})",
        "generators/declarations/email_requested.txt",
        {
            "declaration": declaration,
            "link": mail.absolute(reverse("generators:declaration-review", args=[declaration.pk])),
        },
        _letterhead(declaration),
    )


def _mail_decided(declaration: HabiteSeDeclaration, template: str) -> None:
    members = (
        get_user_model()
        .objects.filter(membership__generator_id=declaration.worksite.generator_id, is_active=True)
        .values_list("email", flat=True)
    )
    issued = declaration.status == DeclarationStatus.ISSUED
    subject = (
        f"Habite-se: declaração de destinação emitida ({declaration.code})"
        if issued
        else f"Habite-se: pedido de declaração recusado (nº {declaration.pk})"
    )
    page = reverse("generators:declaration-request", args=[declaration.worksite_id])
    context = {"declaration": declaration, "page": mail.absolute(page)}
    if issued:
        context["verify"] = mail.absolute(
            reverse("generators:declaration-verify", args=[declaration.code])
        )
        context["pdf"] = mail.absolute(reverse("generators:declaration-pdf", args=[declaration.pk]))
    mail.send(members, subject, template, context, _letterhead(declaration))
