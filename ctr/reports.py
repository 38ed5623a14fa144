"""Queries behind the printed CTR, its public verification, the worksite destination report
(Lei 3.978/2007 art. 9 p.ú. II; its final destinations come from the chain of custody, as the
certificate's, ctr/custody/certificates.py) and the monthly fee statement (art. 12 §3).

Plain functions taking domain objects and returning plain data; the aggregations run in
PostgreSQL (values/annotate), never as Python loops over a site's or a month's CTRs.
Numbers are formatted here, with config.br, as a Brazilian reader writes them (R$ 1.234,56;
1,5 m³), so that the HTML pages, the PDFs and the CSV files say the same thing.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import Count, DecimalField, F, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import ExtractYear, Round
from django.utils import timezone

from config.br import br_date, br_datetime, br_money, br_number
from pev_network.models import FacilityKind, FacilityLicense, Municipality, UfespRate

from . import lifecycle, rules
from .custody import certificates
from .documents import PLATE_RE, format_document, mask_document, public_person_name
from .field import corrections
from .models import (
    CTR,
    CTRStatus,
    CTRWaste,
    CTRWasteClass,
    Transporter,
    TransporterLicence,
    Worksite,
)
from .services import same_name

ZERO = Decimal("0")

# --- Brazilian formatting ---------------------------------------------------------------------


def br_volume(value) -> str:
    """Cubic metres with as many decimals as needed (the CTR keeps three): 3, 0,5, 1.250,25."""
    return br_number(value)


def br_coordinates(point) -> str:
    """Latitude and longitude (WGS 84) with decimal comma; never on a public page."""
    return f"lat. {br_number(round(point.y, 6), 6)}°; long. {br_number(round(point.x, 6), 6)}°"


SHORT_CLASS_LABELS = {
    CTRWasteClass.A: "A",
    CTRWasteClass.B: "B",
    CTRWasteClass.C: "C",
    CTRWasteClass.D: "D",
    CTRWasteClass.VOLUMOSO: "Volumosos",
}


def class_label(code: str) -> str:
    try:
        return CTRWasteClass(code).label
    except ValueError:
        return code


def kind_label(code: str) -> str:
    try:
        return FacilityKind(code).label
    except ValueError:
        return code


def status_label(code: str) -> str:
    return CTRStatus(code).label


# --- the CTR's page: its findings and its history ---------------------------------------------
# Every page of one CTR shows them alike (the transporter's, the operator's, the generator's).

STATUS_LABELS = dict(CTRStatus.choices)


def rule_title(code: str) -> str:
    rule = rules.REGISTRY.get(code)
    return rule.title if rule else code


def finding_rows(findings: list[dict]) -> list[dict]:
    """The CTR's stored findings with their severity in words and their rule's title."""
    return [
        {
            **f,
            "severity_label": rules.Severity.LABELS.get(f.get("severity"), f.get("severity")),
            "title": rule_title(f.get("code", "")),
        }
        for f in findings
    ]


def event_rows(ctr: CTR) -> list[dict]:
    """The CTR's history (CTREvent), each event with what it recorded, in words."""
    rows = []
    for event in ctr.events.select_related("actor").all():
        data = event.data or {}
        details = []
        if data.get("reason"):
            details.append(f"Motivo: {data['reason']}")
        if data.get("received_volume_m3"):
            details.append(
                f"Volume recebido: {br_number(data['received_volume_m3'], grouping=False)} m³"
            )
        if data.get("note"):
            details.append(f"Observação: {data['note']}")
        # Corrections after reception: what changed, in words.
        details.extend(corrections.event_details(data))
        if data.get("findings"):
            # The rules' titles: a code is a reference, not something to read.
            titles = [rule_title(code) for code in data["findings"]]
            details.append("Constatações: " + "; ".join(titles))
        rows.append(
            {
                "at": event.at,
                "actor": event.actor.get_username(),
                "action": lifecycle.history_label(event.action),
                "from": STATUS_LABELS.get(event.from_status, event.from_status or "—"),
                "to": STATUS_LABELS.get(event.to_status, event.to_status),
                "details": details,
            }
        )
    return rows


# --- the CTR, for printing and for public verification ----------------------------------------

# CTR-<IBGE code>-<year>-<sequence>, as services.next_number writes it.
NUMBER_RE = re.compile(r"^CTR-\d{7}-\d{4}-\d{6,}$")


def normalize_number(text: str) -> str | None:
    """The CTR number as typed or scanned (any case, spaces), or None when it cannot be one."""
    number = re.sub(r"\s", "", text or "").upper()
    return number if NUMBER_RE.match(number) else None


def lookup_q(text: str) -> Q | None:
    """What an operator types (or the QR scan fills in) to find a load: a CTR number with or
    without the "CTR" prefix and the dashes, in any case, or only its last digits (the
    sequence); or a plate, old (ABC-1234) or Mercosul (ABC1D23), with or without the dash, or
    a part of it. None for an empty search; a Q that matches nothing for one that can be
    neither."""
    compact = re.sub(r"[^0-9A-Za-z]", "", text or "").upper()
    if not compact:
        return None
    match = Q(pk__in=[])
    if PLATE_RE.match(compact):
        match |= Q(vehicle__plate=compact)
    elif not compact.isdigit() and not compact.startswith("CTR"):
        match |= Q(vehicle__plate__contains=compact)
    digits = compact.removeprefix("CTR")
    if digits.isdigit():
        if len(digits) <= 6:
            match |= Q(sequence=int(digits))
        elif len(digits) >= 17:
            match |= Q(number=f"CTR-{digits[:7]}-{digits[7:11]}-{digits[11:]}")
        else:
            # The tail, cut from the right as next_number writes it: sequence (6), year (4).
            sequence, year, ibge = digits[-6:], digits[-10:-6], digits[:-10]
            match |= Q(number__endswith="-".join(p for p in (ibge, year, sequence) if p))
    return match


def number_digits(text: str) -> str | None:
    """The digits of a CTR number as lookup_q reads it (with or without "CTR" and the
    dashes), or None when the text is no number (a plate, a code)."""
    digits = re.sub(r"[^0-9A-Za-z]", "", text or "").upper().removeprefix("CTR")
    return digits if digits.isdigit() else None


def numbers_typed(queryset: QuerySet, text: str, municipality=None) -> list[str]:
    """The numbers of the CTRs of `queryset` the text names, as the gate search (lookup_q)
    reads a number, never a plate: the whole number names one CTR; its last digits, a
    CTR of `municipality` (none without one). The latest first, at most two (more than one:
    the text is ambiguous)."""
    digits = number_digits(text)
    if digits is None:
        return []
    if len(digits) < 17:
        if municipality is None:
            return []
        queryset = queryset.filter(municipality=municipality)
    return list(
        queryset.filter(lookup_q(digits))
        .order_by("-year", "-sequence")
        .values_list("number", flat=True)[:2]
    )


def _document_queryset(queryset: QuerySet) -> QuerySet:
    # The municipality's boundary is a large, TOASTed multipolygon: never needed here.
    return (
        queryset.select_related(
            "municipality",
            "transporter",
            "vehicle",
            "equipment",
            "generator",
            "worksite",
            "destination_facility",
        )
        .defer("municipality__boundary", "destination_facility__area", "worksite__location")
        .prefetch_related("waste")
    )


def find_ctr(queryset: QuerySet, number: str) -> CTR | None:
    """The CTR of that number within `queryset` (already scoped to who asks), or None."""
    number = normalize_number(number)
    if number is None:
        return None
    return _document_queryset(queryset).filter(number=number).first()


def facility_license(ctr: CTR) -> FacilityLicense | None:
    """The destination's license in force on the transport date, else its latest one."""
    licenses = FacilityLicense.objects.filter(facility_id=ctr.destination_facility_id)
    return licenses.valid_on(ctr.transport_date).first() or licenses.first()


def public_origin(ctr: CTR) -> str:
    """Only the neighbourhood and the municipality: never the address nor the coordinates."""
    place = f"{ctr.municipality.name}/{ctr.municipality.uf}"
    neighbourhood = ctr.worksite.neighbourhood.strip() if ctr.worksite else ""
    return f"{neighbourhood} — {place}" if neighbourhood else place


@dataclass(frozen=True)
class WasteRow:
    label: str
    short_label: str
    description: str
    volume: str


def waste_rows(ctr: CTR) -> list[WasteRow]:
    return [
        WasteRow(
            label=class_label(line.waste_class),
            short_label=SHORT_CLASS_LABELS.get(line.waste_class, line.waste_class),
            description=line.description,
            volume=br_volume(line.volume_m3),
        )
        for line in ctr.waste.all()
    ]


@dataclass(frozen=True)
class PublicCTR:
    """What anyone holding the paper may check (art. 13 p.ú.: the proof of destination),
    without personal data beyond what identifies the load (LGPD)."""

    number: str
    status: str
    status_label: str
    transport_date: str
    issued_at: str
    closed_at: str
    transporter: str
    facility: str
    facility_kind: str
    generator: str
    generator_document: str
    origin: str
    waste: list[WasteRow]
    total_volume: str
    received_volume: str | None


def public_view(ctr: CTR) -> PublicCTR:
    return PublicCTR(
        number=ctr.number,
        status=ctr.status,
        status_label=ctr.get_status_display(),
        transport_date=br_date(ctr.transport_date),
        issued_at=br_datetime(ctr.created_at),
        closed_at=br_datetime(ctr.closed_at),
        transporter=ctr.transporter.name,
        facility=ctr.destination_facility.name,
        facility_kind=ctr.destination_facility.get_kind_display(),
        generator=public_person_name(ctr.declared_generator_name, ctr.generator.document),
        generator_document=mask_document(ctr.generator.document),
        origin=public_origin(ctr),
        waste=waste_rows(ctr),
        total_volume=br_volume(ctr.total_volume_m3),
        received_volume=(
            br_volume(ctr.received_volume_m3) if ctr.received_volume_m3 is not None else None
        ),
    )


# --- worksite destination report (art. 9 p.ú. II, for the Habite-se) --------------------------

FLAGS = {
    CTRStatus.ISSUED: "Em aberto",
    CTRStatus.REFUSED: "Recusado",
    CTRStatus.CANCELLED: "Cancelado",
}
# Statuses of loads that left the site: every one of them needs a proven destination.
LOAD_STATUSES = (CTRStatus.ISSUED, CTRStatus.RECEIVED, CTRStatus.REFUSED)


@dataclass(frozen=True)
class SiteCTRRow:
    number: str
    transport_date: str
    transporter: str
    facility: str
    facility_kind: str
    classes: str
    volume: str
    received_volume: str
    status: str
    status_label: str
    flag: str  # "" for a received load
    # Where its waste is now, followed through the ATTs and PEVs it passed (ctr/custody/chain.py).
    shares: tuple[certificates.Share, ...] = ()


@dataclass(frozen=True)
class VolumeTotal:
    """Volumes of one waste class or one destination: only received loads prove a destination
    (art. 13 p.ú.); open and refused ones are shown apart."""

    label: str
    received_count: int
    received: str
    measured: str  # as the receiver measured it (destinations only)
    open: str
    refused: str


@dataclass
class WorksiteReport:
    worksite: Worksite
    transporter: Transporter | None  # the report is limited to this transporter's CTRs
    rows: list[SiteCTRRow]
    by_class: list[VolumeTotal]
    by_facility: list[VolumeTotal]
    received_count: int
    open_count: int
    refused_count: int
    cancelled_count: int
    received_volume: str
    open_volume: str
    refused_volume: str
    conclusion: str
    # The same loads followed to their final destinations: the certificate's content.
    destinations: certificates.Certificate
    generated_at: datetime.datetime = field(default_factory=timezone.now)
    # The generator's names as the CTRs declare them, when not the registry's (case and
    # spacing aside): the report shows what was declared.
    declared_names: list[str] = field(default_factory=list)

    @property
    def proven(self) -> bool:
        """Every load received (art. 13 p.ú.) and followed to a final destination or processed
        (art. 9 p.ú. II: "transporte, triagem e destinação")."""
        return (
            self.received_count > 0
            and self.open_count + self.refused_count == 0
            and self.destinations.conclusive
        )

    @property
    def generator_document(self) -> str:
        return format_document(self.worksite.generator.document)


def _sum(expression, status: str | tuple, **extra) -> Sum:
    statuses = (status,) if isinstance(status, str) else status
    return Sum(expression, filter=Q(status__in=statuses), default=ZERO, **extra)


def worksite_report(worksite: Worksite, transporter: Transporter | None = None) -> WorksiteReport:
    """Every CTR of the site with its flags and where its waste is now, the volumes per class
    and per first destination, and the conclusion for the Habite-se: proven only when every
    load was received and reached a final destination."""
    scope = certificates.Scope.of_worksite(worksite, transporter)
    ctrs = scope.ctrs()
    destinations = certificates.build(scope)
    shares = {load.number: load.shares for load in destinations.loads}
    received, issued, refused = CTRStatus.RECEIVED, CTRStatus.ISSUED, CTRStatus.REFUSED

    # One row per CTR: its classes aggregated from the waste lines in the same query.
    rows = [
        SiteCTRRow(
            number=row["number"],
            transport_date=br_date(row["transport_date"]),
            transporter=row["transporter__name"],
            facility=row["destination_facility__name"],
            facility_kind=kind_label(row["destination_facility__kind"]),
            classes=", ".join(SHORT_CLASS_LABELS.get(c, c) for c in row["classes"] if c),
            volume=br_volume(row["total_volume_m3"]),
            received_volume=(
                br_volume(row["received_volume_m3"])
                if row["received_volume_m3"] is not None
                else "—"
            ),
            status=row["status"],
            status_label=status_label(row["status"]),
            flag=FLAGS.get(row["status"], ""),
            shares=shares.get(row["number"], ()),
        )
        for row in ctrs.values(
            "pk",
            "number",
            "transport_date",
            "transporter__name",
            "destination_facility__name",
            "destination_facility__kind",
            "total_volume_m3",
            "received_volume_m3",
            "status",
        )
        .annotate(
            classes=ArrayAgg("waste__waste_class", distinct=True, order_by="waste__waste_class")
        )
        .order_by("transport_date", "number")
    ]

    by_class = [
        VolumeTotal(
            label=class_label(row["waste_class"]),
            received_count=row["received_count"],
            received=br_volume(row["received"]),
            measured="",
            open=br_volume(row["open"]),
            refused=br_volume(row["refused"]),
        )
        for row in CTRWaste.objects.filter(ctr__in=ctrs, ctr__status__in=LOAD_STATUSES)
        .values("waste_class")
        .annotate(
            received_count=Count("ctr", filter=Q(ctr__status=received), distinct=True),
            received=Sum("volume_m3", filter=Q(ctr__status=received), default=ZERO),
            open=Sum("volume_m3", filter=Q(ctr__status=issued), default=ZERO),
            refused=Sum("volume_m3", filter=Q(ctr__status=refused), default=ZERO),
        )
        .order_by("waste_class")
    ]

    by_facility = [
        VolumeTotal(
            label=f"{row['destination_facility__name']} "
            f"({kind_label(row['destination_facility__kind'])})",
            received_count=row["received_count"],
            received=br_volume(row["received"]),
            measured=br_volume(row["measured"]),
            open=br_volume(row["open"]),
            refused=br_volume(row["refused"]),
        )
        for row in ctrs.filter(status__in=LOAD_STATUSES)
        .values(
            "destination_facility_id", "destination_facility__name", "destination_facility__kind"
        )
        .annotate(
            received_count=Count("pk", filter=Q(status=received)),
            received=_sum("total_volume_m3", received),
            measured=_sum("received_volume_m3", received),
            open=_sum("total_volume_m3", issued),
            refused=_sum("total_volume_m3", refused),
        )
        .order_by("destination_facility__name")
    ]

    totals = ctrs.aggregate(
        received_count=Count("pk", filter=Q(status=received)),
        open_count=Count("pk", filter=Q(status=issued)),
        refused_count=Count("pk", filter=Q(status=refused)),
        cancelled_count=Count("pk", filter=Q(status=CTRStatus.CANCELLED)),
        received_volume=_sum("total_volume_m3", received),
        open_volume=_sum("total_volume_m3", issued),
        refused_volume=_sum("total_volume_m3", refused),
    )
    pending = totals["open_count"] + totals["refused_count"]
    if pending:
        conclusion = (
            f"Há {pending} CTR(s) em aberto ou recusados: a destinação não está integralmente "
            "comprovada."
        )
    elif totals["received_count"]:
        conclusion = (
            f"Todos os {totals['received_count']} CTR(s) da obra foram recebidos em áreas "
            f"licenciadas ({br_volume(totals['received_volume'])} m³)"
        )
        conclusion += (
            ": destinação comprovada."
            if destinations.conclusive
            else ", mas a destinação final ainda não está comprovada."
        )
    else:
        conclusion = "Nenhuma carga registrada para esta obra: não há destinação a comprovar."
    return WorksiteReport(
        worksite=worksite,
        transporter=transporter,
        rows=rows,
        by_class=by_class,
        by_facility=by_facility,
        received_count=totals["received_count"],
        open_count=totals["open_count"],
        refused_count=totals["refused_count"],
        cancelled_count=totals["cancelled_count"],
        received_volume=br_volume(totals["received_volume"]),
        open_volume=br_volume(totals["open_volume"]),
        refused_volume=br_volume(totals["refused_volume"]),
        conclusion=conclusion,
        destinations=destinations,
        declared_names=_other_declared_names(ctrs, worksite.generator.name),
    )


def _other_declared_names(ctrs: QuerySet, registered: str) -> list[str]:
    names: list[str] = []
    for name in (
        ctrs.exclude(generator_name="")
        .values_list("generator_name", flat=True)
        .distinct()
        .order_by("generator_name")
    ):
        if not same_name(name, registered) and not any(same_name(name, n) for n in names):
            names.append(name)
    return names


# --- monthly fee statement (art. 12 §3) -------------------------------------------------------

MONTH_RE = re.compile(r"^(\d{4})-(\d{2})$")
MONTH_NAMES = (
    *("janeiro", "fevereiro", "março", "abril", "maio", "junho"),
    *("julho", "agosto", "setembro", "outubro", "novembro", "dezembro"),
)


def parse_month(text: str) -> tuple[int, int] | None:
    """ "2026-11" -> (2026, 11); anything else (2026-13, garbage) -> None."""
    match = MONTH_RE.match(text or "")
    if not match:
        return None
    year, month = int(match[1]), int(match[2])
    if not (1 <= month <= 12 and 2000 <= year <= 2999):
        return None
    return year, month


def month_label(year: int, month: int) -> str:
    return f"{MONTH_NAMES[month - 1]} de {year}"


def month_range(year: int, month: int) -> tuple[datetime.date, datetime.date]:
    """First day of the month and first day of the next one."""
    start = datetime.date(year, month, 1)
    end = datetime.date(year + month // 12, month % 12 + 1, 1)
    return start, end


# The UFESP of the discharge's year (Lei 3.978/2007 art. 12 §3: "uma UFESP por descarga"): a
# discharge of 2026 is worth 2026's UFESP whenever the statement is read; NULL when that year's
# value is not registered.
YEAR_UFESP = Subquery(
    UfespRate.objects.filter(unit="UFESP", year=ExtractYear(OuterRef("transport_date"))).values(
        "value_brl"
    )[:1]
)
# Money per line, rounded to cents in SQL so that the totals are the sum of the lines.
LINE_VALUE = Round(
    F("fee_ufesp") * YEAR_UFESP,
    2,
    output_field=DecimalField(max_digits=14, decimal_places=2),
)


def fee_ctrs(year: int, month: int, municipality_id: int | None = None) -> QuerySet:
    """CTRs of the month that owe the fee: a large-volume discharge (fee_ufesp > 0, set at
    issue) that happened or is under way. Cancelled and refused loads were not discharged.
    With `municipality_id`, the CTRs of that municipality only: each collects its own fees
    (Lei 3.978/2007 art. 12 §3)."""
    start, end = month_range(year, month)
    ctrs = (
        CTR.objects.all()
        if municipality_id is None
        else CTR.objects.filter(municipality_id=municipality_id)
    )
    return ctrs.filter(
        fee_ufesp__gt=0,
        transport_date__gte=start,
        transport_date__lt=end,
        status__in=(CTRStatus.RECEIVED, CTRStatus.ISSUED),
    )


@dataclass(frozen=True)
class FeeLine:
    number: str
    transport_date: str
    status: str
    status_label: str
    due: bool  # received: due; issued: pending until received
    facility: str
    municipality: str
    volume: str
    fee_ufesp: str
    value: str
    # Raw figures, for the CSV.
    volume_m3: Decimal
    fee: Decimal
    value_brl: Decimal

    @property
    def charge_label(self) -> str:
        return "Devida" if self.due else "Pendente (aguardando recebimento)"


@dataclass(frozen=True)
class Licence:
    municipality: str
    # The transporter's licence in that municipality (art. 13), "" without one.
    number: str = ""
    # Who collects the fee there (art. 12 §3: "ao órgão gestor - CODESG"), "" if not told.
    collector: str = ""


@dataclass(frozen=True)
class YearRate:
    """The UFESP of the year a month's discharges fall in; value "" when not registered (the
    lines then have no value in reais)."""

    year: int
    value: str


def year_rate(year: int) -> YearRate:
    value = UfespRate.objects.value_of(year)
    return YearRate(year, br_money(value) if value is not None else "")


def fee_text(ctr: CTR, limit: str) -> str:
    """The fee as the CTR prints it: UFESP per large discharge, to whom, and its value in
    reais at the UFESP of the transport's year (art. 12 §3), never today's."""
    year = ctr.transport_date.year
    value = UfespRate.objects.value_of(year)
    worth = (
        f"{br_money(ctr.fee_ufesp * value)} pela UFESP de {year}"
        if value is not None
        else f"valor em reais quando a UFESP de {year} for cadastrada"
    )
    collector = ctr.municipality.fee_collector or "órgão ainda não informado pelo município"
    return (
        f"{br_number(ctr.fee_ufesp, 2)} UFESP por descarga acima de {limit} m³, a recolher ao "
        f"órgão gestor, {collector} ({worth})."
    )


@dataclass
class FeeStatement:
    transporter: Transporter
    year: int
    month: int
    lines: list[FeeLine]
    licences: list[Licence]
    ufesp: YearRate
    due_count: int
    due_ufesp: Decimal
    due_brl: Decimal
    pending_count: int
    pending_ufesp: Decimal
    pending_brl: Decimal

    @property
    def period(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def month_label(self) -> str:
        return month_label(self.year, self.month)

    @property
    def transporter_document(self) -> str:
        return format_document(self.transporter.document)

    def fmt(self) -> dict[str, str]:
        return {
            "due_ufesp": br_number(self.due_ufesp, 2),
            "due_brl": br_money(self.due_brl),
            "pending_ufesp": br_number(self.pending_ufesp, 2),
            "pending_brl": br_money(self.pending_brl),
        }


def _fee_totals() -> dict:
    received, issued = CTRStatus.RECEIVED, CTRStatus.ISSUED
    return {
        "due_count": Count("pk", filter=Q(status=received)),
        "due_ufesp": _sum("fee_ufesp", received),
        "due_brl": _sum(LINE_VALUE, received),
        "pending_count": Count("pk", filter=Q(status=issued)),
        "pending_ufesp": _sum("fee_ufesp", issued),
        "pending_brl": _sum(LINE_VALUE, issued),
    }


def fee_statement(
    transporter: Transporter, year: int, month: int, municipality_id: int | None = None
) -> FeeStatement:
    """The transporter's fee lines of the month (of one municipality, for its staff) and their
    totals in UFESP and in reais, each discharge at the UFESP of its year (art. 12 §3)."""
    ctrs = fee_ctrs(year, month, municipality_id).filter(transporter=transporter)
    lines = [
        FeeLine(
            number=row["number"],
            transport_date=br_date(row["transport_date"]),
            status=row["status"],
            status_label=status_label(row["status"]),
            due=row["status"] == CTRStatus.RECEIVED,
            facility=row["destination_facility__name"],
            municipality=f"{row['municipality__name']}/{row['municipality__uf']}",
            volume=br_volume(row["total_volume_m3"]),
            fee_ufesp=br_number(row["fee_ufesp"], 2),
            value=br_money(row["value_brl"]) if row["value_brl"] is not None else "—",
            volume_m3=row["total_volume_m3"],
            fee=row["fee_ufesp"],
            value_brl=row["value_brl"],
        )
        for row in ctrs.annotate(value_brl=LINE_VALUE)
        .values(
            "number",
            "transport_date",
            "status",
            "destination_facility__name",
            "municipality__name",
            "municipality__uf",
            "total_volume_m3",
            "fee_ufesp",
            "value_brl",
        )
        .order_by("transport_date", "number")
    ]
    # Its licences in the lines' municipalities; with no line, the ones it holds, in the
    # staff's municipality only: a licence elsewhere is that municipality's record.
    held = transporter.licences.all()
    if municipality_id is not None:
        held = held.filter(municipality_id=municipality_id)
    municipality_ids = (
        ctrs.values("municipality_id").distinct() if lines else held.values("municipality_id")
    )
    numbers = dict(held.values_list("municipality_id", "number"))
    licences = [
        Licence(f"{m['name']}/{m['uf']}", numbers.get(m["pk"], ""), m["fee_collector"])
        for m in Municipality.objects.filter(pk__in=municipality_ids)
        .values("pk", "name", "uf", "fee_collector")
        .order_by("name")
    ]
    totals = ctrs.aggregate(**_fee_totals())
    return FeeStatement(
        transporter=transporter,
        year=year,
        month=month,
        lines=lines,
        licences=licences,
        ufesp=year_rate(year),
        **totals,
    )


@dataclass(frozen=True)
class FeeSummaryRow:
    transporter_id: int
    name: str
    document: str
    # Its licence in the CTRs' municipality (art. 13), "" without one (a self-generator).
    licence_number: str
    municipality: str
    due_count: int
    due_ufesp: Decimal
    due_brl: Decimal
    pending_count: int
    pending_ufesp: Decimal
    pending_brl: Decimal

    def fmt(self) -> dict[str, str]:
        return {
            "due_ufesp": br_number(self.due_ufesp, 2),
            "due_brl": br_money(self.due_brl),
            "pending_ufesp": br_number(self.pending_ufesp, 2),
            "pending_brl": br_money(self.pending_brl),
        }


def fee_summary(year: int, month: int, municipality_id: int | None) -> list[FeeSummaryRow]:
    """Every transporter's fee totals of the month in the municipality (each collects its own,
    art. 12 §3), with its licence there, for its Núcleo (one GROUP BY); without a
    municipality, per municipality."""
    ctrs = fee_ctrs(year, month, municipality_id)
    licence = TransporterLicence.objects.filter(
        transporter_id=OuterRef("transporter_id"), municipality_id=OuterRef("municipality_id")
    ).values("number")[:1]
    return [
        FeeSummaryRow(
            transporter_id=row["transporter_id"],
            name=row["transporter__name"],
            document=format_document(row["transporter__document"]),
            licence_number=row["licence_number"] or "",
            municipality=f"{row['municipality__name']}/{row['municipality__uf']}",
            **{key: row[key] for key in _fee_totals()},
        )
        for row in ctrs.values(
            "transporter_id",
            "transporter__name",
            "transporter__document",
            "municipality_id",
            "municipality__name",
            "municipality__uf",
        )
        .annotate(licence_number=Subquery(licence), **_fee_totals())
        .order_by("transporter__name", "transporter_id", "municipality__name")
    ]


def fee_summary_totals(year: int, month: int, municipality_id: int | None) -> FeeSummaryRow:
    """The month's totals over every transporter, in the municipality."""
    totals = fee_ctrs(year, month, municipality_id).aggregate(**_fee_totals())
    return FeeSummaryRow(
        transporter_id=0, name="Total", document="", licence_number="", municipality="", **totals
    )
