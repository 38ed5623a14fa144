"""The CTR's business logic: issue, receive, refuse, cancel, alerts. Plain functions, one
transaction each, raising CTRError subclasses with Portuguese messages.

The issue path is here (the request, the draft the rules read, the issue and the onward
issue). Its other parts live in modules of their own: the end of a CTR's life and record_event
(ctr.closing), who may ship from a facility (ctr.onward), what may leave its stock
(ctr.custody.stock_limits), the operator's processing records (ctr.custody.processing) and
the alerts on open CTRs (ctr.alerts). Callers import each from its own module."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.gis.geos import Point
from django.db import IntegrityError, connection, transaction
from django.db.models import BooleanField, F, FloatField, Value
from django.db.models.expressions import RawSQL
from django.utils import timezone

from pev_network import services as network
from pev_network.models import (
    FacilityKind,
    Municipality,
    MunicipalParameters,
    ReceivingFacility,
    WasteClass,
    licensed_exists,
    parameters_sql,
)

from . import issue_reads, issue_writes, rules, signals
from .custody.stock_limits import lock_facility, origin_stock
from .errors import CTRError, RuleViolation
from .field import offline
from .models import (
    CTR,
    CTREvent,
    CTRWaste,
    FacilityOperator,
    Generator,
    Transporter,
    TransporterLicence,
    Worksite,
    address_key,
)
from .onward import default_onward_origin, onward_origin, unknown_origin
from .rules import CTRDraft, Finding, WasteLine


@dataclass
class GeneratorData:
    name: str
    document: str  # digits, validated by the caller


@dataclass
class WorksiteData:
    address: str
    location: Point
    neighbourhood: str = ""


@dataclass
class IssueRequest:
    """A CTR as the transporter declares it (API, web form and CSV import build this)."""

    transport_date: datetime.date
    vehicle_plate: str
    origin: Point
    destination: Point
    waste: list[WasteLine]
    generator: GeneratorData | None = None
    worksite: WorksiteData | None = None
    worksite_id: int | None = None
    equipment_code: str = ""
    destination_facility_id: int | None = None
    # An onward CTR (issue_onward): the facility the sorted waste leaves.
    origin_facility_id: int | None = None
    extra: dict = field(default_factory=dict)
    # The offline provisional CTR (ctr/field/offline.py): a CTR the driver's phone kept offline,
    # with the number it gave it and when the load left.
    provisional_number: str = ""
    provisional_departure_at: datetime.datetime | None = None


# --- generator and worksite ---------------------------------------------------------------


def same_name(a: str, b: str) -> bool:
    """Two spellings of one name: case and spacing aside."""
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def registered_generator_name(generator: GeneratorData | None) -> str | None:
    """The name the registry holds for the declared CPF/CNPJ when it is not the declared one
    (case and spacing aside); None when they agree or the document is new. The CTR records
    the declared name either way: the web form asks which one is meant, the API says so."""
    if generator is None:
        return None
    stored = (
        Generator.objects.filter(document=generator.document).values_list("name", flat=True).first()
    )
    if stored is None or same_name(stored, generator.name):
        return None
    return stored


def generator_for(data: GeneratorData) -> Generator:
    """The registered generator of the document, created with the declared name when new.
    Race-safe: the document is unique, and get_or_create retries the read after losing an
    insert (inside the caller's transaction, in a savepoint of its own)."""
    generator, _ = Generator.objects.get_or_create(
        document=data.document, defaults={"name": data.name}
    )
    return generator


def find_worksite(generator: Generator, address: str) -> Worksite | None:
    """The generator's worksite at the address, case and spacing aside (the unique index's
    expression: the lookup uses the index, and agrees with it)."""
    return (
        Worksite.objects.alias(key=address_key(F("address")))
        .filter(generator=generator, key=address_key(Value(address)))
        .order_by("pk")
        .first()
    )


def worksite_for(
    generator: Generator, data: WorksiteData, municipality: Municipality | None = None
) -> Worksite:
    """The generator's worksite at the address (case and spacing aside), created when new, in
    a municipality (a worksite is always some municipality's): the issuing CTR's,
    `municipality`, whose origin it is (as ctr/bulk/ sets it), else the one its location
    lies in.

    Race-safe inside the issuing transaction: two drivers at one site, or a client's retries,
    may insert the same new worksite at once. The unique index (worksite_generator_address_
    unique) makes the second insert wait for the first transaction and then fail; the
    savepoint keeps the transaction usable, and the read after it sees the committed row."""
    found = find_worksite(generator, data.address)
    if found is not None:
        return found
    municipality_id = municipality.pk if municipality else network.municipality_id_at(data.location)
    try:
        with transaction.atomic():  # a savepoint
            return Worksite.objects.create(
                generator=generator,
                address=data.address,
                location=data.location,
                neighbourhood=data.neighbourhood,
                municipality_id=municipality_id,
            )
    except IntegrityError:
        found = find_worksite(generator, data.address)
        if found is None:
            raise
        return found


# --- spatial resolution -----------------------------------------------------------------


def resolve_destination(
    destination: Point,
    tolerance_m: Decimal,
    day: datetime.date,
    requested_id: int | None = None,
) -> tuple[ReceivingFacility | None, bool]:
    """The facility whose area covers the discharge point within the GPS tolerance, and whether
    its license is valid on the day. Licensed facilities win over unlicensed ones, then the
    nearest. When the transporter named a facility, it must be one of those.

    ST_DWithin on geography: a tolerance in metres (degrees would vary with latitude); at 0
    it is covers, so a point on the fence counts. One query: it runs for every CTR issued.
    """
    table = ReceivingFacility._meta.db_table
    here = "ST_SetSRID(ST_MakePoint(%s, %s), 4326)::geography"
    candidates = (
        ReceivingFacility.objects.select_related("municipality")
        .defer("municipality__boundary")
        .annotate(
            is_licensed=licensed_exists(day),
            distance_m=RawSQL(
                f'ST_Distance("{table}"."area"::geography, {here})',
                [destination.x, destination.y],
                output_field=FloatField(),
            ),
        )
        .filter(
            RawSQL(
                f'ST_DWithin("{table}"."area"::geography, {here}, %s)',
                [destination.x, destination.y, float(tolerance_m)],
                output_field=BooleanField(),
            )
        )
        .order_by("-is_licensed", "distance_m", "pk")
    )
    if requested_id is not None:
        candidates = candidates.filter(pk=requested_id)
    facility = candidates.first()
    if facility is None:
        return None, False
    return facility, facility.is_licensed


def recycling_area_available(municipality: Municipality | None, day: datetime.date) -> bool:
    """A licensed recycling area taking class A in the municipality (art. 18 sole §)."""
    if municipality is None:
        return False
    return (
        ReceivingFacility.objects.licensed_on(day)
        .filter(
            kind=FacilityKind.RECYCLING,
            municipality=municipality,
            accepted_classes__contains=[WasteClass.A],
        )
        .exists()
    )


def licence_in(
    transporter: Transporter, municipality: Municipality | None
) -> TransporterLicence | None:
    """The transporter's licence in the CTR's municipality, any status (art. 13: each
    municipality licenses the transporters that work in it); None without a municipality."""
    if municipality is None:
        return None
    licence = transporter.licence_in(municipality.pk)
    if licence is not None:
        licence.municipality = municipality  # the messages name it: no second query
    return licence


def fetched_licence(
    transporter: Transporter,
    municipality: Municipality | None,
    fetched: TransporterLicence | None,
) -> TransporterLicence | None:
    """licence_in, with the row issue_reads.fetch read: the prefetched licences when the
    caller loaded them (they are what licence_in reads), else the fetched one."""
    if municipality is None:
        return None
    if "licences" in getattr(transporter, "_prefetched_objects_cache", {}):
        return licence_in(transporter, municipality)
    if fetched is not None:
        fetched.municipality = municipality  # the messages name it: no second query
    return fetched


def destination_agreed(
    municipality: Municipality | None, facility: ReceivingFacility | None
) -> bool:
    """Whether the CTR's municipality may send its waste to the facility (art. 2 caput, art. 4
    §2 II): the facility lies in it, or in a municipality it lists in accepted_destinations
    (a consortium's shared landfill or ATT). Without either municipality there is nothing to
    compare (ORIGIN_OUTSIDE_MUNICIPALITY, or a facility the network placed nowhere)."""
    if municipality is None or facility is None or facility.municipality_id is None:
        return True
    if facility.municipality_id == municipality.pk:
        return True
    return municipality.accepted_destinations.filter(pk=facility.municipality_id).exists()


def default_tolerance_m() -> Decimal:
    return MunicipalParameters._meta.get_field("gps_tolerance_m").default


def build_draft(transporter: Transporter, request: IssueRequest) -> CTRDraft:
    """Resolve every reference of the request and the spatial facts the rules read."""
    # The vehicle, the equipment, the declared generator, the municipality under the origin,
    # the facility under the discharge point and the licence there: one round trip.
    found = issue_reads.fetch(
        transporter.pk,
        request.vehicle_plate,
        request.equipment_code,
        request.generator.document if request.generator is not None else None,
        request.origin,
        request.destination,
        request.transport_date,
        default_tolerance_m(),
        request.destination_facility_id,
    )
    vehicle, equipment = found.vehicle, found.equipment
    worksite = None
    generator = None
    if request.worksite_id is not None:
        worksite = (
            Worksite.objects.select_related("generator")
            .prefetch_related("plan_transporters", "plan_facilities")
            .filter(pk=request.worksite_id)
            .first()
        )
        if worksite is None:
            raise CTRError(
                f"A obra {request.worksite_id} não existe.", "worksite_unknown", "worksite_id"
            )
        generator = worksite.generator
    if request.generator is not None:
        generator = found.generator or (
            Generator(name=request.generator.name, document=request.generator.document)
        )
    origin_facility = None
    if request.origin_facility_id is not None:
        origin_facility = ReceivingFacility.objects.filter(pk=request.origin_facility_id).first()
        if origin_facility is None:
            raise unknown_origin(request.origin_facility_id)
        generator = onward_generator(origin_facility, request.generator, generator)
    elif worksite is None and request.worksite is not None and generator and generator.pk:
        # A CSV row, a form or an API call that names the worksite by its generator and
        # address: the registered worksite there (the one issue() files the CTR under), with
        # the PGRCC in force that NOT_IN_GENERATOR_PLAN reads (ctr.bulk resolves it alike).
        worksite = find_worksite(generator, request.worksite.address)
    large = bool(worksite and worksite.is_large_generator)
    municipality, parameters = found.municipality, found.parameters
    # The GPS tolerance of the transport date's set (Lei 3.978/2007 art. 13 p.ú.).
    tolerance = parameters.gps_tolerance_m if parameters else default_tolerance_m()
    requested_id = request.destination_facility_id
    facility, licensed = found.facility, found.facility_licensed
    requested = None
    if requested_id is not None:
        # Found under the discharge point, it exists; otherwise, is it only elsewhere?
        requested = facility or ReceivingFacility.objects.filter(pk=requested_id).first()
        if requested is None:
            raise CTRError(
                f"A área de destino {requested_id} não existe.",
                "facility_unknown",
                "destination_facility",
            )
    return CTRDraft(
        transport_date=request.transport_date,
        transporter=transporter,
        origin=request.origin,
        destination=request.destination,
        waste=request.waste,
        generator=generator,
        vehicle=vehicle,
        vehicle_plate=request.vehicle_plate,
        equipment=equipment,
        equipment_code=request.equipment_code,
        worksite_is_large_generator=large,
        plan_transporter_ids={t.pk for t in worksite.plan_transporters.all()} if large else set(),
        plan_facility_ids={f.pk for f in worksite.plan_facilities.all()} if large else set(),
        municipality=municipality,
        parameters=parameters,
        facility_parameters=found.facility_parameters,
        licence=fetched_licence(transporter, municipality, found.licence),
        requested_facility=requested,
        facility=facility,
        facility_licensed=licensed,
        destination_agreed=destination_agreed(municipality, facility),
        # Read by one rule only (class A to a landfill, art. 18 sole §): asked only then.
        recycling_area_available=bool(
            facility is not None
            and facility.kind == FacilityKind.LANDFILL
            and any(line.waste_class == WasteClass.A for line in request.waste)
            and recycling_area_available(municipality, request.transport_date)
        ),
        **(onward_facts(origin_facility, request, tolerance) if origin_facility else {}),
        **worksite_facts(
            registered_worksite(request, worksite, generator),
            request.origin,
            request.transport_date,
        ),
        # How late a provisional CTR arrives (PROVISIONAL_SYNC_LATE).
        **offline.sync_facts(
            request.provisional_number, request.provisional_departure_at, parameters
        ),
    )


# Whether a point lies within a worksite: its polygon, or its point when it has none, plus
# the GPS tolerance in metres (geography: degrees would vary with latitude; at 0 it is covers,
# so the fence counts). One text for one CTR (worksite_facts) and for a CSV file
# (bulk.RESOLVE_SQL): {w} an alias of ctr_worksite, {point} and {tolerance} SQL expressions.
WITHIN_WORKSITE_SQL = (
    "ST_DWithin(coalesce({w}.area, {w}.location)::geography, {point}::geography, {tolerance})"
)


def registered_worksite(
    request: IssueRequest, by_id: Worksite | None, generator: Generator | None
) -> Worksite | None:
    """The registered worksite a CTR leaves from (ORIGIN_OUTSIDE_WORKSITE): the one named by
    id, or the generator's at the declared address. A worksite created by a CTR, without a
    registration, has no location of its own to hold the origin to: None."""
    site = by_id
    if site is None and request.worksite is not None and generator is not None and generator.pk:
        site = find_worksite(generator, request.worksite.address)
    return site if site is not None and site.registered_at is not None else None


def worksite_facts(site: Worksite | None, origin: Point | None, day: datetime.date) -> dict:
    """What ORIGIN_OUTSIDE_WORKSITE reads: whether the origin lies within the registered
    worksite, with the GPS tolerance of its municipality's set in force on the transport date
    `day`. One query."""
    if site is None or origin is None:
        return {}
    table = Worksite._meta.db_table
    within = WITHIN_WORKSITE_SQL.format(
        w="w",
        point="ST_SetSRID(ST_MakePoint(%(x)s, %(y)s), 4326)",
        tolerance="coalesce(mp.gps_tolerance_m, %(default)s)::float8",
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {within}, coalesce(mp.gps_tolerance_m, %(default)s) FROM {table} w "
            f"LEFT JOIN LATERAL {parameters_sql('w.municipality_id', '%(day)s::date')} mp "
            "ON true WHERE w.id = %(site)s",
            {
                "x": origin.x,
                "y": origin.y,
                "default": default_tolerance_m(),
                "day": day,
                "site": site.pk,
            },
        )
        inside, tolerance = cursor.fetchone()
    return {
        "registered_worksite": site,
        "origin_in_worksite": inside,
        "worksite_tolerance_m": tolerance,
    }


def onward_generator(
    facility: ReceivingFacility, declared: GeneratorData | None, found: Generator | None
) -> Generator:
    """The generator of an onward CTR: the facility's operator (FacilityOperator). The first
    onward CTR of a facility declares it (name and CPF/CNPJ); later ones may omit it, and may
    not name another."""
    operator = (
        FacilityOperator.objects.select_related("generator").filter(facility=facility).first()
    )
    if operator is None:
        if found is None:
            raise generator_required(facility.name)
        return found
    if declared is not None and declared.document != operator.generator.document:
        raise generator_not_operator(facility.name, operator.generator.name)
    return operator.generator


def generator_required(facility_name: str) -> CTRError:
    return CTRError(
        f"Informe o operador da área “{facility_name}” (nome e CPF/CNPJ) como gerador: "
        "é o primeiro CTR de saída desta área.",
        "generator_required",
        "generator",
    )


def generator_not_operator(facility_name: str, operator_name: str) -> CTRError:
    return CTRError(
        f"O gerador de um CTR de saída é o operador da área “{facility_name}”: {operator_name}.",
        "generator_not_operator",
        "generator",
    )


def onward_facts(facility: ReceivingFacility, request: IssueRequest, tolerance_m) -> dict:
    """What the onward rules read: the origin facility's license, whether the origin point is
    inside it, and its stock per class at the end of the transport day (ctr.custody.stock)."""
    day = request.transport_date
    return {
        "origin_facility": facility,
        "origin_facility_licensed": facility.license_on(day) is not None,
        "origin_in_facility": network.point_within_facility(request.origin, facility, tolerance_m),
        "origin_stock": origin_stock(facility, day),
    }


def check(transporter: Transporter, request: IssueRequest) -> tuple[CTRDraft, list[Finding]]:
    """Every finding for the request, without storing anything."""
    draft = build_draft(transporter, request)
    return draft, rules.evaluate(draft)


def next_number(municipality: Municipality, year: int) -> tuple[int, str]:
    """The next sequence of the municipality and year, inside the caller's transaction.

    The upsert takes a row lock that the concurrent issuers queue on until commit; a rollback
    returns the number. So numbers are unique and without gaps.
    """
    with connection.cursor() as cursor:
        cursor.execute(issue_writes.NEXT_NUMBER_SQL, [municipality.pk, year])
        sequence = cursor.fetchone()[0]
    return sequence, f"CTR-{municipality.ibge_code}-{year}-{sequence:06d}"


def fee_ufesp(draft: CTRDraft) -> Decimal:
    """One UFESP per large-volume discharge (Lei 3.978/2007 art. 12 §3)."""
    return Decimal("1") if draft.total_volume > draft.small_volume_limit else Decimal("0")


def issue(
    transporter: Transporter,
    user,
    request: IssueRequest,
    at: datetime.datetime | None = None,
    savepoint: bool = True,
) -> CTR:
    """Issue a CTR (art. 3 VI, art. 13): every rule checked, all findings reported at once;
    stored with its number only when no rule of severity error is broken. `at` records a
    past issue time (historical imports, the demo); it defaults to now.

    `savepoint=False`: inside a caller's transaction, no savepoint of its own; for a caller
    that lets any error leave that transaction (the API: a refusal rolls back to the
    idempotency key's savepoint, or there is no outer transaction). A caller that catches a
    CTRError and goes on in the same transaction (the CSV import's dry run) keeps the
    savepoint, or its transaction would be left unusable."""
    at = at or timezone.now()
    offline.refuse_synced_twice(transporter, request.provisional_number)  # offline CTR
    draft, findings = check(transporter, request)
    if rules.has_errors(findings):
        raise RuleViolation(findings)
    with transaction.atomic(savepoint=savepoint):
        generator = draft.generator
        if generator.pk is None:
            generator = generator_for(request.generator)
        if draft.origin_facility is not None:
            FacilityOperator.objects.get_or_create(
                facility=draft.origin_facility, defaults={"generator": generator}
            )
        # What was declared, not what the registry holds for the document (an API client, a
        # CSV row or a form the user confirmed): the CTR records the declaration.
        generator_name = request.generator.name if request.generator else generator.name
        worksite = None
        if request.worksite_id is not None:
            worksite = Worksite.objects.get(pk=request.worksite_id)
        elif request.worksite is not None:
            worksite = worksite_for(generator, request.worksite, draft.municipality)
        year = draft.transport_date.year
        ctr = CTR(
            municipality=draft.municipality,
            year=year,
            transporter=transporter,
            vehicle=draft.vehicle,
            equipment=draft.equipment,
            generator=generator,
            generator_name=generator_name,
            worksite=worksite,
            origin=draft.origin,
            destination=draft.destination,
            origin_facility=draft.origin_facility,
            destination_facility=draft.facility,
            transport_date=draft.transport_date,
            total_volume_m3=draft.total_volume,
            findings=[f.as_dict() for f in findings],
            fee_ufesp=fee_ufesp(draft),
            created_by=user,
            created_at=at,
            # The phone's number and departure of an offline CTR.
            provisional_number=request.provisional_number,
            provisional_departure_at=request.provisional_departure_at,
        )
        ctr.set_crossing_into()
        lines = [
            CTRWaste(
                ctr=ctr,
                waste_class=line.waste_class,
                volume_m3=line.volume_m3,
                description=line.description,
            )
            for line in draft.waste
        ]
        event = CTREvent(
            ctr=ctr,
            actor=user,
            action="issue",
            from_status="",
            to_status=ctr.status,
            data={"findings": [f.code for f in findings]},
            at=at,
        )
        # The number, the CTR, its lines, its event and the rows the apps above write with
        # it (the webhooks' outbox): one statement (issue_writes).
        alongside = [
            rows
            for _, rows in signals.issue_writing.send(
                sender=CTREvent, event=event, ctr_id=issue_writes.CTR_ID_SQL
            )
            if rows
        ]
        with offline.provisional_sent_once(transporter, request.provisional_number):
            issue_writes.insert_issued(ctr, draft.municipality.ibge_code, lines, event, alongside)
        signals.event_recorded.send(sender=CTREvent, event=event)
    _remember_waste(ctr, lines)
    return ctr


def issue_onward(
    user, transporter_id: int | None, request: IssueRequest, at: datetime.datetime | None = None
) -> CTR:
    """Issue an onward CTR: sorted waste leaving an ATT or a PEV for a licensed destination
    (art. 3 III), carried by a registered transporter. The whole catalogue applies, plus the
    onward rules (origin facility licensed, classes received there, volume within its stock).
    The origin point defaults to a point inside the facility."""
    facility = onward_origin(user, request.origin_facility_id)
    transporter = Transporter.objects.filter(pk=transporter_id).first() if transporter_id else None
    if transporter is None:
        raise CTRError(
            "Informe o transportador cadastrado que leva a carga.",
            "transporter_unknown",
            "transporter",
        )
    if request.origin is None:
        request.origin = default_onward_origin(facility)
    with transaction.atomic():
        # Two onward CTRs from one facility at once would each see the whole stock: they
        # queue on the facility's row, and the second checks the stock the first left.
        lock_facility(facility)
        return issue(transporter, user, request, at)


def _remember_waste(ctr: CTR, lines: list[CTRWaste]) -> None:
    """`ctr.waste.all()` answers from the lines just stored, as after prefetch_related: the
    API shows the CTR it issued without reading it back (docs/performance.md, P2)."""
    cached = CTRWaste.objects.filter(ctr=ctr)
    cached._result_cache = lines
    cached._prefetch_done = True
    ctr._prefetched_objects_cache = {"waste": cached}
