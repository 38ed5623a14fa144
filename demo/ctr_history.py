"""The CTR demo's last 90 days (demo/ctrs.py): CTRs drawn at random and the showcase's
scripted ones, run through the services with past moments, and the ATTs' weekly shipments of
what they sorted (art. 3 III)."""

from __future__ import annotations

import datetime
import random
from collections import Counter
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_DOWN, Decimal

from django.contrib.gis.geos import Point
from django.utils import timezone

from ctr import closing, rules, services
from ctr.custody import processing, stock
from ctr.errors import RuleViolation
from ctr.models import CTR, EquipmentKind, Generator, ProcessingKind, Transporter, Worksite
from ctr.rules import WasteLine
from pev_network import services as network
from pev_network.models import CatchmentBasin, FacilityLicense, Municipality, ReceivingFacility

from .cast import COMPANIES, PERSONS, TRANSPORTERS, cnpj

DAYS = 90
# Never offered as destinations: PEV-07's license expired, ATT-03's is suspended.
EXCLUDED_FACILITIES = {"PEV-07", "ATT-03"}
# Issued CTRs older than the alert threshold (OPEN_TOO_LONG) and other closing outcomes, drawn
# among the CTRs issued more than three days ago.
OVERDUE, REFUSED, CANCELLED = 6, 10, 12
MISMATCH_SHARE = 0.08
LANDFILL_SHARE = 0.08  # class A loads sent to the aterro although REC-01 is licensed
RECENT_HOURS = 36  # issued this recently, a CTR may still be on its way (below the alert)
# The ATTs' weekly shipments (art. 3 III): the last one SHIP_LAG days ago.
SHIP_EVERY, SHIP_LAG = 7, 5
SHIPPING = {  # ATT -> its operator company, the generator of its onward CTRs
    "ATT-01": ("Transbordo Exemplo Ltda. (fictícia)", "737373730001"),
    "ATT-02": ("Triagem Demonstração Ltda. (fictícia)", "848484840001"),
}
ONWARD_TO = "REC-01"
ONWARD_MAX_M3 = Decimal("9.5")  # per onward CTR: the tipper (BV-10) carries 10 m³
REUSED_CLASSES = ("B", "VOLUMOSO")  # wood, plaster, furniture: reused, not shipped


@dataclass(frozen=True)
class ShowcaseLoad:
    days_ago: int
    facility: str
    waste: tuple[tuple[str, str], ...]  # (class, m³)


# The two worksites of the README's certificates: (key, owner's document, address, loads). The
# first's loads at ATT-01 arrive on shipment days (every load of the day leaves that evening),
# and one goes straight to the recycling area: conclusive on any day the demo is loaded. The
# second's last load arrives after the last shipment: still in stock at ATT-02.
SHOWCASE = (
    (
        "conclusivo",
        COMPANIES[0][1],
        "Rua Fictícia do Certificado, 100",
        (
            ShowcaseLoad(SHIP_LAG + 4 * SHIP_EVERY, "ATT-01", (("A", "4.5"),)),
            ShowcaseLoad(SHIP_LAG + 3 * SHIP_EVERY, "ATT-01", (("A", "3"), ("B", "1.5"))),
            ShowcaseLoad(SHIP_LAG + 2 * SHIP_EVERY, "REC-01", (("A", "5"),)),
        ),
    ),
    (
        "não conclusivo",
        PERSONS[0][1],
        "Rua Fictícia do Certificado, 200",
        (
            ShowcaseLoad(SHIP_LAG + SHIP_EVERY + 4, "ATT-02", (("A", "4"),)),
            ShowcaseLoad(2, "ATT-02", (("A", "3.5"), ("VOLUMOSO", "1"))),
        ),
    ),
)

SMALL_LOADS = (  # (class, description) of a small load (≤ 1 m³) to the basin's PEV
    ("A", "entulho de pequena reforma (tijolo, argamassa)"),
    ("A", "restos de piso cerâmico e azulejo"),
    ("VOLUMOSO", "sofá e colchão velhos"),
    ("VOLUMOSO", "podas de árvore do quintal"),
    ("B", "madeira de forma e sobras de gesso"),
    ("B", "embalagens de papelão e plástico da obra"),
    ("C", "manta asfáltica usada"),
)
REFUSAL_REASONS = (
    "Carga com latas de tinta (classe D) misturadas ao entulho.",
    "Resíduo domiciliar misturado na caçamba.",
    "Telhas de fibrocimento com amianto: destino não licenciado para classe D.",
    "Caçamba com chapas laterais acima do nível original.",
)
CANCEL_REASONS = (
    "Cliente desistiu da remoção.",
    "Placa do veículo informada errada; CTR reemitido.",
    "Caçamba trocada antes da retirada.",
    "Transporte remarcado para outra data.",
)


def point_in(geometry, rng: random.Random) -> Point:
    """A random point strictly inside a (multi)polygon, rounded to 6 decimals (~0.1 m)."""
    xmin, ymin, xmax, ymax = geometry.extent
    for _ in range(10_000):
        candidate = Point(
            round(rng.uniform(xmin, xmax), 6), round(rng.uniform(ymin, ymax), 6), srid=4326
        )
        if geometry.contains(candidate):
            return candidate
    return geometry.point_on_surface


@dataclass
class Site:
    worksite: Worksite
    pev: ReceivingFacility | None  # the PEV of its bacia
    is_person: bool


# --- the CTRs ---------------------------------------------------------------------------------


@dataclass
class Planned:
    at: datetime.datetime
    transporter_key: str
    request: services.IssueRequest
    facility: ReceivingFacility
    receive_after: datetime.timedelta
    outcome: str = "receive"
    ctr: CTR | None = None
    received_m3: Decimal | None = None  # what the receiver counts, when not drawn at random


# A town's trip (ctr/plausibility.py reads it back): the road as the municipality's default
# detour over the straight line, at city speeds, plus the wait at the gate.
DEMO_DETOUR = 1.4
DEMO_SPEEDS_KMH = (15, 35)
DEMO_GATE_MINUTES = (5, 40)
# One load of the quarter takes this long from a worksite in town: the detour the Núcleo's
# map shows (TRAVEL_TOO_SLOW).
DEMO_DETOUR_HOURS = 6
# SIRGAS 2000 / UTM 23S (Guaratinguetá's zone): metres for the demo's distances.
METRIC_SRID = 31983


def trip(rng: random.Random, origin: Point, target: Point) -> datetime.timedelta:
    """From departure to reception: the road at a city speed and a wait at the gate, well
    inside the travel-time bounds of TRAVEL_TOO_FAST and TRAVEL_TOO_SLOW."""
    metres = origin.transform(METRIC_SRID, clone=True).distance(
        target.transform(METRIC_SRID, clone=True)
    )
    road_km = metres / 1000 * DEMO_DETOUR
    minutes = road_km / rng.uniform(*DEMO_SPEEDS_KMH) * 60 + rng.randint(*DEMO_GATE_MINUTES)
    return datetime.timedelta(minutes=round(minutes))


def _volume(value: float) -> Decimal:
    return Decimal(str(round(value, 1)))


class _Loads:
    """Draws one plausible load at a time: transporter, vehicle and equipment, worksite,
    waste and a licensed destination for the day."""

    def __init__(self, rng: random.Random, transporters: dict[str, Transporter], sites):
        self.rng = rng
        self.transporters = transporters
        # Each transporter's licence in the town, where every demo load leaves (art. 13).
        town = network.municipality_id_at(sites[0].worksite.location) if sites else None
        self.licences = {key: t.licence_in(town) for key, t in transporters.items()}
        self.specs = {spec.key: spec for spec in TRANSPORTERS}
        self.fleets = {
            key: (
                {use: plate for plate, _description, use in self.specs[key].vehicles},
                sorted(t.equipment.all(), key=lambda e: e.code),
            )
            for key, t in transporters.items()
        }
        self.sites = [s for s in sites if not s.worksite.is_large_generator]
        self.person_sites = [s for s in sites if s.is_person]
        self.large_sites = [s for s in sites if s.worksite.is_large_generator]
        self.facilities = list(
            ReceivingFacility.objects.filter(code__isnull=False).order_by("code")
        )
        self.licenses: dict[int, list[FacilityLicense]] = {}
        for lic in FacilityLicense.objects.filter(facility__in=self.facilities):
            self.licenses.setdefault(lic.facility_id, []).append(lic)

    def licensed(self, day: datetime.date) -> dict[str, ReceivingFacility]:
        return {
            f.code: f
            for f in self.facilities
            if f.code not in EXCLUDED_FACILITIES
            and any(lic.is_valid_on(day) for lic in self.licenses.get(f.pk, ()))
        }

    def draw(self, at: datetime.datetime) -> Planned | None:
        rng = self.rng
        day = timezone.localdate(at)
        active = [
            key
            for key, licence in self.licences.items()
            if licence is not None and licence.in_force_on(day)
        ]
        if not active:
            return None
        key = rng.choices(active, [self.specs[k].weight for k in active])[0]
        vehicles, equipment = self.fleets[key]
        kinds = [kind for kind in ("skip", "small", "tipper") if kind in vehicles]
        weights = {"skip": 0.55, "small": 0.3, "tipper": 0.15}
        kind = rng.choices(kinds, [weights[k] for k in kinds])[0]
        licensed = self.licensed(day)
        gear = None
        if kind == "small":
            site = rng.choice(self.person_sites if rng.random() < 0.7 else self.sites)
            waste_class, description = rng.choice(SMALL_LOADS)
            volume = _volume(rng.choice([0.3, 0.5, 0.6, 0.8, 1.0]))
            waste = [WasteLine(waste_class, volume, description)]
            pevs = [f for f in licensed.values() if f.kind == "PEV"]
            facility = site.pev if site.pev in pevs else rng.choice(pevs)
        else:
            # The PGRCC names transporter A: the others seldom serve a large generator (and
            # get the NOT_IN_GENERATOR_PLAN warning when they do).
            planned = rng.random() < (0.3 if key == "A" else 0.04)
            site = rng.choice(self.large_sites if planned else self.sites)
            if kind == "tipper":
                gear = rng.choice([e for e in equipment if e.kind == EquipmentKind.TIPPER])
                total = float(gear.nominal_capacity_m3) * rng.uniform(0.6, 1.0)
                mix = "A"
            else:
                gear = rng.choice([e for e in equipment if e.kind == EquipmentKind.STATIONARY_SKIP])
                total = float(gear.nominal_capacity_m3) * rng.choice([1, 1, 0.9, 0.8, 0.75])
                mix = rng.choices(["A", "AB", "VOLUMOSO"], [0.5, 0.35, 0.15])[0]
            total = min(_volume(total), gear.nominal_capacity_m3)
            in_plan = site.worksite.is_large_generator and key == "A"
            att = "ATT-01" if in_plan or rng.random() < 0.55 else "ATT-02"
            if mix == "A":
                waste = [WasteLine("A", total, "concreto, tijolo e argamassa")]
                if in_plan:
                    code = "REC-01"
                elif rng.random() < LANDFILL_SHARE:
                    code = "ATR-01"  # CLASS_A_TO_LANDFILL: REC-01 is licensed
                else:
                    code = rng.choices(["REC-01", att], [0.7, 0.3])[0]
            elif mix == "AB":
                part = _volume(float(total) * 0.3)
                waste = [
                    WasteLine("A", total - part, "entulho de alvenaria"),
                    WasteLine("B", part, "madeira, gesso e embalagens"),
                ]
                code = att
            else:
                waste = [WasteLine("VOLUMOSO", total, "móveis e podas")]
                code = att
            facility = licensed.get(code) or rng.choice(
                [f for f in licensed.values() if f.kind == "ATT"]
            )
        target = point_in(facility.area, rng)
        return Planned(
            at=at,
            transporter_key=key,
            facility=facility,
            receive_after=trip(rng, site.worksite.location, target),
            request=services.IssueRequest(
                transport_date=day,
                vehicle_plate=vehicles[kind],
                equipment_code=gear.code if gear else "",
                origin=site.worksite.location,
                destination=target,
                destination_facility_id=facility.pk,
                worksite_id=site.worksite.pk,
                waste=waste,
            ),
        )


def plan_ctrs(
    rng: random.Random,
    transporters: dict[str, Transporter],
    sites: list[Site],
    now: datetime.datetime,
) -> list[Planned]:
    """A plausible working quarter, in chronological order: more loads on weekdays, and a few
    still in transit now."""
    today = timezone.localdate(now)
    moments = []
    for offset in range(DAYS - 1, -1, -1):
        day = today - datetime.timedelta(days=offset)
        weekday = day.weekday()
        loads = rng.randint(3, 6) if weekday < 5 else rng.randint(1, 3) if weekday == 5 else 0
        for _ in range(loads):
            moment = datetime.time(rng.randint(7, 17), rng.randrange(60))
            at = timezone.make_aware(datetime.datetime.combine(day, moment))
            if at <= now - datetime.timedelta(minutes=15):
                moments.append(at)
    recent = now - datetime.timedelta(hours=RECENT_HOURS)
    in_transit = set()
    if sum(at > recent for at in moments) < 3:
        # A weekend or an early hour: a few loads issued in the last hours, still on the road.
        for _ in range(3):
            at = (now - datetime.timedelta(minutes=rng.randint(20, 240))).replace(microsecond=0)
            moments.append(at)
            in_transit.add(at)
    loads = _Loads(rng, transporters, sites)
    plan = [load for load in map(loads.draw, sorted(moments)) if load is not None]
    for load in plan:
        if load.at in in_transit:
            load.outcome = "open"
    _assign_outcomes(rng, plan, now)
    return plan


def _assign_outcomes(rng: random.Random, plan: list[Planned], now: datetime.datetime) -> None:
    """Most received; a few refused, cancelled or left open past the alert threshold (drawn
    among the CTRs older than three days); the latest ones often not yet received."""
    old = [p for p in plan if now - p.at > datetime.timedelta(days=3)]
    rng.shuffle(old)
    recent_old = [p for p in old if now - p.at < datetime.timedelta(days=20)]
    for p in recent_old[:OVERDUE]:
        p.outcome = "open"
    rest = [p for p in old if p.outcome != "open"]
    for p in rest[:REFUSED]:
        p.outcome = "refuse"
    for p in rest[REFUSED : REFUSED + CANCELLED]:
        p.outcome = "cancel"
    received = rest[REFUSED + CANCELLED :]
    morning = [p for p in received if timezone.localtime(p.at).hour < 11]
    if morning:
        morning[0].receive_after = datetime.timedelta(hours=DEMO_DETOUR_HOURS)
    for p in plan:
        if now - p.at < datetime.timedelta(hours=RECENT_HOURS) and (
            p.at + p.receive_after > now - datetime.timedelta(minutes=5) or rng.random() < 0.5
        ):
            p.outcome = "open"


def _received_volume(rng: random.Random, declared: Decimal) -> Decimal:
    draw = rng.random()
    if draw < MISMATCH_SHARE:  # beyond the 10% tolerance: RECEIVED_VOLUME_MISMATCH
        factor = rng.choice(["0.80", "0.85", "1.15", "1.25"])
    elif draw < MISMATCH_SHARE + 0.07:  # within tolerance
        factor = rng.choice(["0.95", "1.05"])
    else:
        factor = "1"
    return (declared * Decimal(factor)).quantize(Decimal("0.001"))


def run_plan(rng: random.Random, plan: list[Planned], transporters, users, shipments=()) -> Counter:
    """Issue and close the planned CTRs, and make the ATTs' shipments when their time comes;
    returns the rule codes of any refused draft."""
    skipped: Counter = Counter()
    pending = sorted(shipments, key=lambda shipment: shipment.at)
    for p in plan:
        while pending and pending[0].at < p.at:
            ship(pending.pop(0), transporters, users, rng)
        transporter = transporters[p.transporter_key]
        issuer = users["transporters"][p.transporter_key]
        try:
            ctr = services.issue(transporter, issuer, p.request, at=p.at)
        except RuleViolation as violation:
            skipped.update(f.code for f in violation.findings if f.severity == rules.Severity.ERROR)
            continue
        closed_at = p.at + p.receive_after
        operator = users["operators"][p.facility.pk]
        if p.outcome == "receive":
            closing.receive(
                ctr,
                operator,
                p.received_m3 or _received_volume(rng, ctr.total_volume_m3),
                location=p.request.destination,
                at=closed_at,
            )
        elif p.outcome == "refuse":
            closing.refuse(ctr, operator, rng.choice(REFUSAL_REASONS), at=closed_at)
        elif p.outcome == "cancel":
            cancelled_at = p.at + datetime.timedelta(minutes=rng.randint(5, 25))
            closing.cancel(ctr, issuer, rng.choice(CANCEL_REASONS), at=cancelled_at)
    for shipment in pending:
        ship(shipment, transporters, users, rng)
    return skipped


# --- the ATTs ship what they sorted ------------------------------------------------------------


@dataclass(frozen=True)
class Shipment:
    at: datetime.datetime
    facility: ReceivingFacility


def plan_shipments(now: datetime.datetime) -> list[Shipment]:
    """Every SHIP_EVERY days up to SHIP_LAG days ago, each ATT in the evening, after the day's
    loads."""
    today = timezone.localdate(now)
    facilities = ReceivingFacility.objects.filter(code__in=SHIPPING).order_by("code")
    return [
        Shipment(
            timezone.make_aware(
                datetime.datetime.combine(
                    today - datetime.timedelta(days=days_ago), datetime.time(19, 10 * index)
                )
            ),
            facility,
        )
        for days_ago in range(SHIP_LAG, DAYS, SHIP_EVERY)
        for index, facility in enumerate(facilities)
    ]


def _truckloads(volume: Decimal) -> list[Decimal]:
    """The volume in equal onward CTRs of at most ONWARD_MAX_M3 (the last one takes the
    rounding), so that nothing is left behind."""
    count = int((volume / ONWARD_MAX_M3).to_integral_value(rounding=ROUND_CEILING))
    share = (volume / count).quantize(Decimal("0.001"), rounding=ROUND_DOWN)
    return [share] * (count - 1) + [volume - share * (count - 1)]


def ship(shipment: Shipment, transporters, users, rng: random.Random) -> None:
    """The ATT's stock of the day, whole: class A to the recycling area in onward CTRs carried
    by the first transporter's tipper and received there; wood, plaster and furniture reused
    on site. Less than a cubic metre of class A waits for the next shipment."""
    facility, day = shipment.facility, timezone.localdate(shipment.at)
    operator = users["operators"][facility.pk]
    destination = ReceivingFacility.objects.get(code=ONWARD_TO)
    name, base = SHIPPING[facility.code]
    tipper = next(spec for spec in TRANSPORTERS if spec.key == "A")
    plate = next(plate for plate, _d, use in tipper.vehicles if use == "tipper")
    for waste_class, line in stock.stock_on(facility, day).items():
        if line.closing <= 0:
            continue
        if waste_class in REUSED_CLASSES:
            processing.record_processing(
                operator,
                facility,
                waste_class,
                line.closing,
                day,
                ProcessingKind.REUSED,
                note="Triado e encaminhado ao reaproveitamento (demonstração).",
            )
            continue
        if waste_class != "A" or line.closing <= 1:
            continue
        for number, volume in enumerate(_truckloads(line.closing)):
            at = shipment.at + datetime.timedelta(minutes=number * 3)
            ctr = services.issue_onward(
                operator,
                transporters["A"].pk,
                services.IssueRequest(
                    transport_date=day,
                    vehicle_plate=plate,
                    equipment_code="BV-10",
                    origin=None,
                    destination=point_in(destination.area, rng),
                    destination_facility_id=destination.pk,
                    waste=[WasteLine("A", volume, "agregado triado (concreto, tijolo, argamassa)")],
                    generator=services.GeneratorData(name, cnpj(base)),
                    origin_facility_id=facility.pk,
                ),
                at=at,
            )
            closing.receive(
                ctr,
                users["operators"][destination.pk],
                volume,
                location=ctr.destination,
                at=at + datetime.timedelta(minutes=50),
            )


def ensure_showcase(town: Municipality, rng: random.Random) -> dict[str, Worksite]:
    """The two worksites of the README's certificates (SHOWCASE), by key."""
    basin = CatchmentBasin.objects.filter(municipality=town).order_by("code").first()
    sites = {}
    for key, document, address, _loads in SHOWCASE:
        generator = Generator.objects.get(document=document)
        location = point_in(basin.area, rng)
        while network.municipality_id_at(location) != town.pk:
            location = point_in(basin.area, rng)
        sites[key], _ = Worksite.objects.get_or_create(
            generator=generator,
            address=address,
            defaults={
                "location": location,
                "municipality": town,
                "neighbourhood": basin.name.removeprefix("Bacia "),
                "permit_number": "ALV-DEMO-CDF1" if document == COMPANIES[0][1] else "",
            },
        )
    return sites


def showcase_plan(sites: dict[str, Worksite], now: datetime.datetime) -> list[Planned]:
    """The showcase worksites' loads: transporter A's 5 m³ caçamba, at nine, received in full
    an hour later."""
    facilities = {f.code: f for f in ReceivingFacility.objects.filter(code__isnull=False)}
    spec = next(spec for spec in TRANSPORTERS if spec.key == "A")
    plate = next(plate for plate, _d, use in spec.vehicles if use == "skip")
    today = timezone.localdate(now)
    plan = []
    for key, _document, _address, loads in SHOWCASE:
        for item in loads:
            day = today - datetime.timedelta(days=item.days_ago)
            facility = facilities[item.facility]
            waste = [WasteLine(c, Decimal(v), "entulho da obra") for c, v in item.waste]
            plan.append(
                Planned(
                    at=timezone.make_aware(datetime.datetime.combine(day, datetime.time(9))),
                    transporter_key="A",
                    request=services.IssueRequest(
                        transport_date=day,
                        vehicle_plate=plate,
                        equipment_code="CV-05",
                        origin=sites[key].location,
                        destination=facility.area.point_on_surface,
                        destination_facility_id=facility.pk,
                        worksite_id=sites[key].pk,
                        waste=waste,
                    ),
                    facility=facility,
                    receive_after=datetime.timedelta(hours=1),
                    received_m3=sum(line.volume_m3 for line in waste),
                )
            )
    return plan
