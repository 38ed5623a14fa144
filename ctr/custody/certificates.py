"""The Certificado de Destinação Final (CDF): where a worksite's waste, or a generator's over a
period, ended up (Lei 3.978/2007 art. 9 p.ú. II: the Habite-se asks for the proof of "correto
transporte, triagem e destinação"; art. 13 p.ú.: the transporter proves the destination to
whoever hired it; art. 3 III: an ATT sorts for later removal, so a load received there has not
reached its destination yet).

Each CTR that left the worksite is followed through the chain of custody (ctr/custody/chain.py:
the FIFO allocation at every ATT and PEV it passed) to where its waste is now: a recycling
area or a landfill (final destination), processed at a facility, still in stock, in transit,
or refused. The certificate is conclusive when every cubic metre reached a final destination
or was processed; otherwise it says why, in words.

**Identity.** A certificate is issued (`issue`) when someone allowed to see it opens its page
or PDF; its facts (the subject, each CTR with its lines and where each share of it is) are
stored as issued, with their SHA-256. Issuing again while nothing changed gives back the same
certificate, with its code and first issue date: the code names one content, never a moving
target. When the chain changes (stock shipped on, a reception corrected) the next issue is a
new certificate with a new code; the public page of the old one (`verify`) still shows what it
said, and says that the chain has changed since and what it says now. What a court or the
Prefeitura gets from the code: that the platform issued this text on that day, and whether it
still holds.

Services: no request objects; the access rule (`for_user`) follows the worksite report's.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import re
import types
import typing
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property

from django.db.models import QuerySet

from config.br import br_date, br_number
from config.letterhead import Letterhead
from jurisdiction.scope import jurisdiction_of
from pev_network import services as network
from pev_network.letterhead import letterhead_of
from pev_network.models import Municipality, ReceivingFacility, waste_class_short

from .. import roles
from ..documents import mask_document, public_person_name
from ..models import (
    CTR,
    CTRStatus,
    CTRWaste,
    DestinationCertificate,
    Generator,
    Transporter,
    Worksite,
    new_certificate_code,
)
from . import chain as custody
from .chain import Outcome

M3 = Decimal("0.001")  # the CTR's precision: every volume of a certificate is rounded to it
# The order a reader expects: where the waste is settled first, then what keeps it open.
OUTCOME_ORDER = (
    Outcome.DESTINED,
    Outcome.PROCESSED,
    Outcome.STOCK,
    Outcome.TRANSIT,
    Outcome.REFUSED,
    Outcome.UNMATCHED,
)
CODE_PREFIX = "CDF"


def normalize_code(text: str, prefix: str = CODE_PREFIX) -> str | None:
    """A verification code as typed (any case, with or without dashes or spaces), of the
    document whose codes start with `prefix` (models.new_verification_code)."""
    compact = re.sub(r"[^0-9A-Za-z]", "", text or "").upper()
    match = re.fullmatch(f"{prefix}([0-9A-Z]{{4}})([0-9A-Z]{{4}})([0-9A-Z]{{4}})", compact)
    return f"{prefix}-" + "-".join(match.groups()) if match else None


# --- whose loads -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scope:
    """Whose loads a certificate covers: a worksite's, or a generator's transported in a period
    (open ends: since always, up to today); only one transporter's when `transporter` is set."""

    generator: Generator
    worksite: Worksite | None = None
    date_from: datetime.date | None = None
    date_to: datetime.date | None = None
    transporter: Transporter | None = None

    @classmethod
    def of_worksite(cls, worksite: Worksite, transporter: Transporter | None = None) -> Scope:
        return cls(worksite.generator, worksite, transporter=transporter)

    def ctrs(self) -> QuerySet:
        """The loads that left the worksite or the generator's worksites. An onward CTR names
        a facility's operator as its generator, but it carries other people's waste."""
        queryset = CTR.objects.filter(origin_facility__isnull=True)
        if self.worksite is not None:
            queryset = queryset.filter(worksite=self.worksite)
        else:
            queryset = queryset.filter(generator=self.generator)
            if self.date_from is not None:
                queryset = queryset.filter(transport_date__gte=self.date_from)
            if self.date_to is not None:
                queryset = queryset.filter(transport_date__lte=self.date_to)
        if self.transporter is not None:
            queryset = queryset.filter(transporter=self.transporter)
        return queryset

    def pieces(self) -> list[custody.Piece]:
        if self.worksite is not None:
            pieces = custody.worksite_pieces(self.worksite.pk)
        else:
            pieces = custody.generator_pieces(self.generator.pk, self.date_from, self.date_to)
        if self.transporter is None:
            return pieces
        own = set(self.ctrs().values_list("pk", flat=True))
        return [piece for piece in pieces if piece.ctr_id in own]


def for_user(user, scope: Scope) -> Scope | None:
    """What of `scope` the user may see, as the worksite report decides: all of it for the Núcleo
    and the inspectors, and for the generator whose worksite or loads they are (art. 9 p.ú. II:
    it proves their destination for the Habite-se); for a transporter only the loads it
    carried (art. 13 p.ú.: it proves their destination to whoever hired it), and nothing when
    it carried none; nothing for anyone else.

    The municipal staff see a worksite's of their municipalities only, and a generator's
    whose every load in the scope left from them: a certificate that would tell them where
    another municipality's waste went does not exist for them."""
    if roles.is_municipal(user):
        j = jurisdiction_of(user)
        if scope.worksite is not None:
            return scope if j.reads(scope.worksite.municipality_id) else None
        readable = j.readable_ids
        if readable is None:
            return scope
        if not scope.ctrs().exists():
            visible = Generator.objects.visible_to(user).filter(pk=scope.generator.pk)
            return scope if visible.exists() else None
        outside = scope.ctrs().exclude(municipality_id__in=readable).exists()
        return None if outside else scope
    generator = roles.generator_of(user)
    if generator is not None:
        return scope if generator.pk == scope.generator.pk else None
    transporter = roles.transporter_of(user)
    if transporter is None:
        return None
    own = dataclasses.replace(scope, transporter=transporter)
    return own if own.ctrs().exists() else None


# --- the certificate's facts -------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    id: int
    name: str
    kind: str  # FacilityKind


@dataclass(frozen=True)
class Share:
    """m³ of one class, ending at `place` in the state `outcome` (custody.Outcome)."""

    outcome: str
    place: Place
    waste_class: str
    volume_m3: Decimal

    @property
    def outcome_label(self) -> str:
        return Outcome.LABELS[self.outcome]

    @property
    def settled(self) -> bool:
        """At a final destination or processed: nothing left to prove for this share."""
        return self.outcome in Outcome.CONCLUSIVE


@dataclass(frozen=True)
class Line:
    """One class of a CTR: what was declared and, once received, what the receiver counted
    (the received volume shared over the lines in proportion to what they declared)."""

    waste_class: str
    declared_m3: Decimal
    received_m3: Decimal | None


@dataclass(frozen=True)
class Load:
    """One CTR that left the worksite, and where its waste is now."""

    number: str
    transport_date: datetime.date
    status: str
    transporter: str
    first_place: Place
    lines: tuple[Line, ...]
    shares: tuple[Share, ...]

    @property
    def status_label(self) -> str:
        return CTRStatus(self.status).label

    @property
    def conclusive(self) -> bool:
        return bool(self.shares) and all(share.settled for share in self.shares)

    @property
    def declared_m3(self) -> Decimal:
        return sum((line.declared_m3 for line in self.lines), Decimal(0))

    @property
    def refused_reason(self) -> str:
        """Why a load its first facility refused leaves the certificate open."""
        return (
            f"o {self.number} foi recusado pela área “{self.first_place.name}” "
            f"({_volume(self.declared_m3)}): o destino dessa carga não está comprovado"
        )


@dataclass(frozen=True)
class Subject:
    """Whom the certificate is about, as the registry held it on issue."""

    generator_id: int
    generator_name: str
    generator_document: str
    municipality: str  # of the loads: "Guaratinguetá/SP"
    worksite_id: int | None = None
    address: str = ""
    neighbourhood: str = ""
    permit_number: str = ""
    is_large_generator: bool = False
    date_from: datetime.date | None = None
    date_to: datetime.date | None = None
    transporter_id: int | None = None
    transporter_name: str = ""

    @property
    def period_label(self) -> str:
        return period_label(self.date_from, self.date_to)


@dataclass(frozen=True)
class ClassTotal:
    """One class over every load: declared, received, and where it is now."""

    waste_class: str
    declared_m3: Decimal
    received_m3: Decimal
    destined_m3: Decimal
    processed_m3: Decimal
    stock_m3: Decimal
    transit_m3: Decimal
    refused_m3: Decimal
    unmatched_m3: Decimal


def period_label(date_from: datetime.date | None, date_to: datetime.date | None) -> str:
    if date_from and date_to:
        return f"de {br_date(date_from)} a {br_date(date_to)}"
    if date_from:
        return f"desde {br_date(date_from)}"
    if date_to:
        return f"até {br_date(date_to)}"
    return "todo o período registrado"


def _m3(value) -> Decimal:
    return Decimal(value).quantize(M3)


def _volume(value: Decimal) -> str:
    return f"{br_number(value)} m³"


def _of_class(code: str) -> str:
    """ "de classe A", "de volumosos": a class as a sentence names it."""
    label = waste_class_short(code)
    return f"de {label[0].lower()}{label[1:]}"


@dataclass(frozen=True)
class Certificate:
    """The facts (stored as issued) and what they mean (computed from them, so that rewording a
    reason never makes an issued certificate look changed)."""

    subject: Subject
    loads: tuple[Load, ...]
    cancelled_count: int

    @cached_property
    def destinations(self) -> list[Share]:
        """Every load's shares summed per outcome, place and class."""
        totals: dict[tuple, Decimal] = {}
        for load in self.loads:
            for share in load.shares:
                key = (share.outcome, share.place, share.waste_class)
                totals[key] = totals.get(key, Decimal(0)) + share.volume_m3
        shares = [Share(o, place, c, volume) for (o, place, c), volume in totals.items()]
        return sorted(
            shares, key=lambda s: (OUTCOME_ORDER.index(s.outcome), s.place.name, s.waste_class)
        )

    @cached_property
    def by_class(self) -> list[ClassTotal]:
        declared: dict[str, Decimal] = {}
        received: dict[str, Decimal] = {}
        for load in self.loads:
            for line in load.lines:
                declared[line.waste_class] = declared.get(line.waste_class, 0) + line.declared_m3
                received[line.waste_class] = received.get(line.waste_class, 0) + (
                    line.received_m3 or 0
                )
        outcomes: dict[str, dict[str, Decimal]] = {}
        for share in self.destinations:
            per_class = outcomes.setdefault(share.waste_class, {})
            per_class[share.outcome] = per_class.get(share.outcome, 0) + share.volume_m3
        return [
            ClassTotal(
                c,
                declared[c],
                received[c],
                *(outcomes.get(c, {}).get(outcome, Decimal(0)) for outcome in OUTCOME_ORDER),
            )
            for c in sorted(declared)
        ]

    @property
    def volume_m3(self) -> Decimal:
        return sum((s.volume_m3 for s in self.destinations), Decimal(0))

    @property
    def conclusive(self) -> bool:
        """Every cubic metre reached a final destination or was processed at a facility."""
        return bool(self.loads) and all(load.conclusive for load in self.loads)

    @cached_property
    def reasons(self) -> list[str]:
        """Why the certificate is not conclusive, one sentence per place and class (per CTR
        for a refused load)."""
        if not self.loads:
            return ["nenhuma carga registrada"]
        reasons = []
        for share in self.destinations:
            place, volume = share.place.name, _volume(share.volume_m3)
            of_class = _of_class(share.waste_class)
            if share.outcome == Outcome.STOCK:
                reasons.append(f"{volume} {of_class} ainda em estoque na área “{place}”")
            elif share.outcome == Outcome.TRANSIT:
                reasons.append(f"{volume} {of_class} em trânsito para a área “{place}”")
            elif share.outcome == Outcome.UNMATCHED:
                reasons.append(
                    f"{volume} {of_class} seguiram da área “{place}” por mais de "
                    f"{custody.MAX_HOPS} áreas e não foram rastreados até o fim"
                )
        reasons += [load.refused_reason for load in self.loads if load.status == CTRStatus.REFUSED]
        return reasons

    @property
    def headline(self) -> str:
        """The conclusion in one sentence, without the reasons (pages and PDFs list them)."""
        if not self.loads:
            return "Nenhuma carga registrada: não há destinação a certificar."
        if self.conclusive:
            return (
                f"Destinação final comprovada: os {_volume(self.volume_m3)} dos "
                f"{len(self.loads)} CTR(s) chegaram a áreas de reciclagem ou aterros licenciados "
                "ou foram beneficiados na área que os recebeu."
            )
        open_m3 = sum((s.volume_m3 for s in self.destinations if not s.settled), Decimal(0))
        return (
            f"Não conclusivo: a destinação final de {_volume(open_m3)} dos "
            f"{_volume(self.volume_m3)} ainda não está comprovada."
        )

    @property
    def statement(self) -> str:
        """The conclusion in one plain sentence, with the reasons when it is not conclusive."""
        if not self.loads or self.conclusive:
            return self.headline
        return "Não conclusivo: " + "; ".join(self.reasons) + "."


def build(scope: Scope) -> Certificate:
    """The certificate of the scope's loads as the chain of custody stands now: three queries
    (the CTRs, their lines, the facilities named) plus the custody walk."""
    ctrs = scope.ctrs()
    loads = list(
        ctrs.exclude(status=CTRStatus.CANCELLED)
        .values(
            "pk",
            "number",
            "transport_date",
            "status",
            "transporter__name",
            "destination_facility_id",
            "total_volume_m3",
            "received_volume_m3",
            "municipality__name",
            "municipality__uf",
        )
        .order_by("transport_date", "number")
    )
    lines: dict[int, dict[str, list[Decimal]]] = {}
    for row in (
        CTRWaste.objects.filter(ctr_id__in=[load["pk"] for load in loads])
        .values_list("ctr_id", "waste_class", "volume_m3")
        .order_by("ctr_id", "pk")
    ):
        ctr_id, waste_class, volume = row
        lines.setdefault(ctr_id, {}).setdefault(waste_class, []).append(volume)
    pieces: dict[int, dict[tuple, Decimal]] = {}
    for piece in scope.pieces():
        key = (piece.outcome, piece.facility_id, piece.waste_class)
        per_ctr = pieces.setdefault(piece.ctr_id, {})
        per_ctr[key] = per_ctr.get(key, Decimal(0)) + piece.volume_m3
    named = {load["destination_facility_id"] for load in loads} | {
        facility for per_ctr in pieces.values() for _, facility, _ in per_ctr
    }
    places = {
        f.pk: Place(f.pk, f.name, f.kind)
        for f in ReceivingFacility.objects.filter(pk__in=named).only("pk", "name", "kind")
    }

    def load_of(row: dict) -> Load:
        received_share = (
            row["received_volume_m3"] / row["total_volume_m3"]
            if row["status"] == CTRStatus.RECEIVED and row["received_volume_m3"] is not None
            else None
        )
        if row["status"] == CTRStatus.RECEIVED and received_share is None:
            received_share = Decimal(1)
        own_lines = tuple(
            Line(
                waste_class,
                _m3(sum(volumes)),
                _m3(sum(volumes) * received_share) if received_share is not None else None,
            )
            for waste_class, volumes in sorted(lines.get(row["pk"], {}).items())
        )
        shares = sorted(
            (
                Share(outcome, places[facility], waste_class, _m3(volume))
                for (outcome, facility, waste_class), volume in pieces.get(row["pk"], {}).items()
            ),
            key=lambda s: (OUTCOME_ORDER.index(s.outcome), s.place.name, s.waste_class),
        )
        return Load(
            number=row["number"],
            transport_date=row["transport_date"],
            status=row["status"],
            transporter=row["transporter__name"],
            first_place=places[row["destination_facility_id"]],
            lines=own_lines,
            shares=tuple(s for s in shares if s.volume_m3 > 0),
        )

    worksite, generator, transporter = scope.worksite, scope.generator, scope.transporter
    subject = Subject(
        generator_id=generator.pk,
        generator_name=generator.name,
        generator_document=generator.document,
        municipality=", ".join(
            dict.fromkeys(f"{row['municipality__name']}/{row['municipality__uf']}" for row in loads)
        ),
        worksite_id=worksite.pk if worksite else None,
        address=worksite.address if worksite else "",
        neighbourhood=worksite.neighbourhood if worksite else "",
        permit_number=worksite.permit_number if worksite else "",
        is_large_generator=worksite.is_large_generator if worksite else False,
        date_from=scope.date_from,
        date_to=scope.date_to,
        transporter_id=transporter.pk if transporter else None,
        transporter_name=transporter.name if transporter else "",
    )
    return Certificate(
        subject=subject,
        loads=tuple(load_of(row) for row in loads),
        cancelled_count=ctrs.filter(status=CTRStatus.CANCELLED).count(),
    )


# --- stored as issued ----------------------------------------------------------------------------


def encode(value):
    """Facts as JSON values: dataclasses as objects, Decimals and dates as text. What a
    document stores as issued (the certificate here, the Habite-se declaration in generators)."""
    if dataclasses.is_dataclass(value):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [encode(item) for item in value]
    if isinstance(value, Decimal | datetime.date):
        return str(value)
    return value


def decode(kind, value):
    """`encode` backwards, led by the dataclasses' annotations."""
    if value is None:
        return None
    origin = typing.get_origin(kind)
    if origin is tuple:
        item = typing.get_args(kind)[0]
        return tuple(decode(item, v) for v in value)
    if origin in (typing.Union, types.UnionType):
        (kind,) = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        return decode(kind, value)
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        return kind(
            **{f.name: decode(hints[f.name], value[f.name]) for f in dataclasses.fields(kind)}
        )
    if kind is Decimal:
        return Decimal(value)
    if kind is datetime.date:
        return datetime.date.fromisoformat(value)
    return value


def digest(content: dict) -> str:
    """The SHA-256 of stored facts in a canonical JSON (keys sorted, no spaces)."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def content_of(certificate: Certificate) -> dict:
    return encode(certificate)


def from_content(content: dict) -> Certificate:
    return decode(Certificate, content)


def digest_of(certificate: Certificate) -> str:
    return digest(content_of(certificate))


def issue(
    scope: Scope, by, built: Certificate | None = None
) -> tuple[DestinationCertificate, Certificate]:
    """The certificate of the scope as the chain stands now (`built`, when the caller has just
    built it in the same transaction): the one already issued with these very facts (same
    code, first issue date and issuer), or a new one. Safe to repeat and under races: the
    digest is unique, and get_or_create reads the winner's row."""
    certificate = built if built is not None else build(scope)
    issued, _ = DestinationCertificate.objects.get_or_create(
        digest=digest_of(certificate),
        defaults={
            "code": new_certificate_code(),
            "worksite": scope.worksite,
            "generator": scope.generator,
            "date_from": scope.date_from,
            "date_to": scope.date_to,
            "transporter": scope.transporter,
            "content": content_of(certificate),
            "conclusive": certificate.conclusive,
            "issued_by": by,
        },
    )
    return issued, certificate


def worksite_municipality(worksite: Worksite) -> Municipality | None:
    """The municipality a worksite's papers belong to: the one that issued
    its permit, else the one where it lies (a worksite first named on a CTR has no permit)."""
    if worksite.municipality_id is not None:
        return worksite.municipality
    return network.municipality_at(worksite.location)


def municipality_of(issued: DestinationCertificate, certificate: Certificate):
    """Whose paper the certificate is: its worksite's municipality; for a
    generator's loads, the municipality of their CTRs; None when they are of several (the
    platform's paper)."""
    if issued.worksite_id is not None:
        return worksite_municipality(issued.worksite)
    numbers = [load.number for load in certificate.loads]
    ids = set(CTR.objects.filter(number__in=numbers).values_list("municipality_id", flat=True))
    if len(ids) != 1:
        return None
    return Municipality.objects.defer("boundary").filter(pk__in=ids).first()


def letterhead(issued: DestinationCertificate, certificate: Certificate) -> Letterhead:
    """The letterhead of the certificate's municipality (municipality_of), else the
    platform's."""
    return letterhead_of(municipality_of(issued, certificate))


def scope_of(issued: DestinationCertificate) -> Scope:
    return Scope(
        issued.generator, issued.worksite, issued.date_from, issued.date_to, issued.transporter
    )


@dataclass(frozen=True)
class Verification:
    """An issued certificate as it was, and the chain as it stands now."""

    issued: DestinationCertificate
    certificate: Certificate
    current: Certificate

    @property
    def changed(self) -> bool:
        return digest_of(self.current) != self.issued.digest


def verify(code: str) -> Verification | None:
    """The certificate of that code, or None."""
    code = normalize_code(code)
    if code is None:
        return None
    issued = (
        DestinationCertificate.objects.select_related("generator", "worksite", "transporter")
        .filter(code=code)
        .first()
    )
    if issued is None:
        return None
    return Verification(issued, from_content(issued.content), build(scope_of(issued)))


# --- the public page -----------------------------------------------------------------------------


@dataclass(frozen=True)
class PublicSubject:
    """The subject as anyone holding the paper may see it (LGPD), as the public CTR page shows
    a CTR: a person by first name and initials, a CPF masked, the worksite only by its
    neighbourhood and municipality; a company and its CNPJ in full (public registry)."""

    generator: str
    generator_document: str
    origin: str
    date_from: datetime.date | None
    date_to: datetime.date | None
    transporter: str
    is_worksite: bool

    @property
    def period_label(self) -> str:
        return period_label(self.date_from, self.date_to)


def public_subject(subject: Subject) -> PublicSubject:
    place = subject.municipality
    if subject.neighbourhood.strip():
        place = f"{subject.neighbourhood.strip()} — {place}" if place else subject.neighbourhood
    return PublicSubject(
        generator=public_person_name(subject.generator_name, subject.generator_document),
        generator_document=mask_document(subject.generator_document),
        origin=place or "—",
        date_from=subject.date_from,
        date_to=subject.date_to,
        transporter=subject.transporter_name,
        is_worksite=subject.worksite_id is not None,
    )
