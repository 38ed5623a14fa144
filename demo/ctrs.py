"""The CTR demo: fictitious transporters, generators, worksites and a few hundred CTRs over
the last 90 days, on the fictitious network of Guaratinguetá (fixtures/README.md).

Every CTR goes through `services.issue` (so every rule of the catalogue is checked) with a
past `at`, then is received, refused, cancelled or left open, always at a time after its issue
and never in the future. Deterministic for a given day (random.Random with a fixed seed) and
idempotent: once the demo transporters have CTRs, a new load only restores the accounts.

The ATTs ship what they sorted once a week (art. 3 III): class A in onward CTRs to
the recycling area, received there; the other classes recorded as reused on site. The last
shipment is SHIP_LAG days ago, so what arrived since is still in stock. Two worksites with a
scripted history show the certificate of final destination (ctr/certificates.py): every load of
the first reached the recycling area, the last load of the second is still at ATT-02.
"""

from __future__ import annotations

import datetime
import random
from collections import Counter
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_DOWN, Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password, make_password
from django.contrib.auth.models import Permission
from django.contrib.gis.geos import Point
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from ctr import roles, rules, services, stock
from ctr.errors import RuleViolation
from ctr.models import (
    CTR,
    CTRStatus,
    Equipment,
    EquipmentKind,
    Generator,
    LicenceStatus,
    Membership,
    ProcessingKind,
    Transporter,
    TransporterLicence,
    Vehicle,
    Worksite,
)
from ctr.rules import WasteLine
from jurisdiction.models import StaffRole
from pev_network import services as network
from pev_network.models import CatchmentBasin, FacilityLicense, Municipality, ReceivingFacility

from .network import DEMO_ADMIN

# The single password of every listed demo account (README, "Contas de demonstração").
DEMO_PASSWORD = DEMO_ADMIN[1]
IBGE_CODE = "3518404"  # Guaratinguetá
# Its neighbour, whose CTRs may use Guaratinguetá's facilities (the shared
# landfill), with a Núcleo of its own and transporter A licensed there too.
NEIGHBOUR_IBGE = "3502507"  # Aparecida
NEIGHBOUR_SEED = 3502507
SHARED_LANDFILL = "ATR-01"
NEIGHBOUR_LOADS = 12
NEIGHBOUR_GENERATORS = (
    ("José Exemplo de Aparecida (fictício)", "710820930"),
    ("Reformas Basílica Exemplo Ltda. (fictícia)", "777888999"),
)
SEED = 3518404
DAYS = 90
# Never offered as destinations: PEV-07's license expired, ATT-03's is suspended.
EXCLUDED_FACILITIES = {"PEV-07", "ATT-03"}
PLAN_FACILITIES = ("ATT-01", "REC-01")
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


# --- valid, fictitious documents ------------------------------------------------------------


def _check_digit(digits: str, weights: list[int]) -> str:
    remainder = sum(int(d) * w for d, w in zip(digits, weights, strict=True)) % 11
    return "0" if remainder < 2 else str(11 - remainder)


def cpf(base: str) -> str:
    """The 11-digit CPF of a 9-digit base, check digits computed."""
    first = _check_digit(base, list(range(10, 1, -1)))
    return base + first + _check_digit(base + first, list(range(11, 1, -1)))


def cnpj(base: str) -> str:
    """The 14-digit CNPJ of a 12-digit base (root + branch), check digits computed."""
    weights = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    first = _check_digit(base, weights)
    return base + first + _check_digit(base + first, [6, *weights])


# --- the cast -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TransporterSpec:
    key: str
    username: str
    name: str
    document: str
    registration: str
    vehicles: tuple[tuple[str, str, str], ...]  # plate, description, use (skip/tipper/small)
    equipment: tuple[tuple[str, str, str], ...]  # code, kind, capacity m³
    weight: float  # share of the loads


TRANSPORTERS = (
    TransporterSpec(
        "A",
        "transportador",
        "Caçambas Vale Exemplo Ltda. (fictícia)",
        cnpj("424242420001"),
        "DEMO-TR-0001",
        (
            ("DEM1A23", "Caminhão poliguindaste (fictício)", "skip"),
            ("DEM4567", "Caminhão basculante (fictício)", "tipper"),
            ("DEM2B34", "Caminhonete com carroceria (fictícia)", "small"),
        ),
        (
            ("CV-03", EquipmentKind.STATIONARY_SKIP, "3"),
            ("CV-04", EquipmentKind.STATIONARY_SKIP, "4"),
            ("CV-05", EquipmentKind.STATIONARY_SKIP, "5"),
            ("BV-10", EquipmentKind.TIPPER, "10"),
        ),
        0.55,
    ),
    TransporterSpec(
        "B",
        "transportador2",
        "Entulho Rápido Modelo ME (fictícia)",
        cnpj("515151510001"),
        "DEMO-TR-0002",
        (
            ("EXE3C45", "Caminhão poliguindaste (fictício)", "skip"),
            ("EXE8901", "Caminhonete com carroceria (fictícia)", "small"),
        ),
        (
            ("CE-04", EquipmentKind.STATIONARY_SKIP, "4"),
            ("CE-05", EquipmentKind.STATIONARY_SKIP, "5"),
        ),
        0.30,
    ),
    # Suspended five days ago for 15 days (art. 25 IV): its CTRs stop the day before.
    TransporterSpec(
        "C",
        "transportador3",
        "Remoções Paraíba Ilustrativa Ltda. (fictícia, suspensa)",
        cnpj("606060600001"),
        "DEMO-TR-0003",
        (("FIC5D67", "Caminhão poliguindaste (fictício)", "skip"),),
        (("CF-04", EquipmentKind.STATIONARY_SKIP, "4"),),
        0.15,
    ),
)

PERSONS = (
    ("Maria Exemplo da Silva (fictícia)", cpf("100200300")),
    ("João Fictício Pereira (fictício)", cpf("200300400")),
    ("Ana Demonstração Souza (fictícia)", cpf("300400500")),
    ("Carlos Exemplo Ramos (fictício)", cpf("400500600")),
    ("Luíza Modelo Andrade (fictícia)", cpf("500600700")),
    ("Pedro Ilustrativo Costa (fictício)", cpf("600700800")),
    ("Beatriz Amostra Lima (fictícia)", cpf("700800900")),
    ("Rafael Hipotético Nunes (fictício)", cpf("800900100")),
)
# name, CNPJ, number of worksites, index of the worksite that is a large generator (or None)
COMPANIES = (
    ("Construtora Horizonte Exemplo Ltda. (fictícia)", cnpj("717171710001"), 2, 0),
    ("Incorporadora Vale Modelo S.A. (fictícia)", cnpj("828282820001"), 1, 0),
    ("Reformas Exemplo & Cia. ME (fictícia)", cnpj("939393930001"), 4, None),
    ("Condomínio Edifício Fictício", cnpj("313131310001"), 1, None),
    ("Mercado Bom Preço Exemplo Ltda. (fictícia)", cnpj("252525250001"), 1, None),
)
STREETS = (
    "Rua Imaginária das Acácias",
    "Rua Fictícia dos Ipês",
    "Avenida Exemplo do Vale",
    "Rua Modelo São Benedito",
    "Travessa Ilustrativa das Flores",
    "Rua Hipotética da Estação",
    "Avenida Fictícia Paraíba",
    "Rua Exemplo dos Romeiros",
    "Rua Amostra do Rosário",
    "Alameda Fictícia das Palmeiras",
)


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


@dataclass
class DemoResult:
    created: bool
    status_counts: dict[str, int]
    overdue: int
    accounts: list[str]
    skipped: Counter = field(default_factory=Counter)  # rule code -> drafts refused
    onward: int = 0  # onward CTRs from the ATTs
    showcase: dict[str, int] = field(default_factory=dict)  # "conclusivo" -> worksite id

    def summary(self) -> str:
        labels = dict(CTRStatus.choices)
        total = sum(self.status_counts.values())
        parts = ", ".join(
            f"{labels[status].lower()}s {self.status_counts.get(status, 0)}"
            for status in CTRStatus.values
        )
        head = (
            "CTRs de demonstração criados"
            if self.created
            else "CTRs de demonstração já existiam (nada duplicado)"
        )
        lines = [
            f"{head}: {total} ({parts}; {self.overdue} emitidos em atraso; {self.onward} "
            "CTRs de saída das ATTs).",
            f"Contas de demonstração (senha {DEMO_PASSWORD}): {', '.join(self.accounts)}.",
        ]
        if self.showcase:
            lines.append(
                "Certificados de destinação final (contas nucleo ou transportador): "
                + "; ".join(f"{key} em /obras/{pk}/cdf/" for key, pk in self.showcase.items())
                + "."
            )
        if self.skipped:
            lines.append(
                "Rascunhos recusados pelas regras (não deveria haver): "
                + ", ".join(f"{code} {n}" for code, n in sorted(self.skipped.items()))
            )
        return "\n".join(lines)


# --- accounts ---------------------------------------------------------------------------------


def _restore_passwords(users) -> None:
    """Give every listed account the demo password, hashing once: the accounts share one hash,
    so a second load checks a single hash instead of one per account."""
    verified: dict[str, bool] = {}
    encoded = None
    for user in users:
        if user.password not in verified:
            verified[user.password] = check_password(DEMO_PASSWORD, user.password)
        if not verified[user.password]:
            encoded = encoded or make_password(DEMO_PASSWORD)
            user.password = encoded
            verified[encoded] = True
            user.save(update_fields=["password"])


def _user(username: str, **fields):
    """A demo user, created without a usable password; `fields` are kept as given."""
    model = get_user_model()
    user = model.objects.filter(username=username).first()
    if user is None:
        user = model(username=username, email=f"{username}@demo.invalid", **fields)
        user.set_unusable_password()
        user.save()
        return user
    changed = [name for name, value in fields.items() if getattr(user, name) != value]
    if changed:
        for name in changed:
            setattr(user, name, fields[name])
        user.save(update_fields=changed)
    return user


def _member(user, transporter=None, facility=None) -> None:
    Membership.objects.update_or_create(
        user=user, defaults={"transporter": transporter, "facility": facility}
    )


def ensure_accounts(
    town: Municipality, transporters: dict[str, Transporter]
) -> tuple[list[str], dict]:
    """The listed accounts (password DEMO_PASSWORD) and, unlisted and without a usable password,
    the members that issue or receive the other demo CTRs. Returns the listed usernames and the
    acting users: transporter key -> user, facility id -> operator."""
    facilities = {f.code: f for f in ReceivingFacility.objects.filter(code__isnull=False)}
    listed = []
    transporter_users = {}
    for spec in TRANSPORTERS:
        user = _user(spec.username)
        _member(user, transporter=transporters[spec.key])
        transporter_users[spec.key] = user
        if spec.key != "C":
            listed.append(user)
    operator = _user("operador")
    _member(operator, facility=facilities["ATT-01"])
    listed.append(operator)
    operators = {facilities["ATT-01"].pk: operator}
    for code, facility in sorted(facilities.items()):
        if code in EXCLUDED_FACILITIES or facility.pk in operators:
            continue
        user = _user(f"operador-{code.lower()}")
        _member(user, facility=facility)
        operators[facility.pk] = user
    view = Permission.objects.filter(
        content_type__app_label__in=["pev_network", "ctr"], codename__startswith="view_"
    )
    municipal = (
        ("nucleo", roles.NUCLEO),
        ("fiscal", roles.FISCAL),
        ("autoridade", roles.AUTORIDADE),
    )
    for username, role in municipal:
        user = _user(username, is_staff=True)
        # The town's staff: their roles are the town's, and stop at it.
        StaffRole.objects.get_or_create(user=user, municipality=town, role=role)
        user.user_permissions.add(*view)
        listed.append(user)
    _restore_passwords(listed)
    names = [DEMO_ADMIN[0], "nucleo", "fiscal", "autoridade"]
    names += ["transportador", "transportador2", "operador"]
    return names, {"transporters": transporter_users, "operators": operators}


# --- actors -----------------------------------------------------------------------------------


def ensure_transporters(town: Municipality, today: datetime.date) -> dict[str, Transporter]:
    """The demo transporters with their fleet and their licence in the town (art. 13). The
    licence's dates are set on the first load."""
    validity = {
        "A": {
            "valid_from": datetime.date(today.year - 1, 1, 1),
            "valid_until": datetime.date(today.year + 1, 12, 31),
        },
        # Registered 60 days ago: its CTRs start then.
        "B": {"valid_from": today - datetime.timedelta(days=60), "valid_until": None},
        "C": {
            "valid_from": datetime.date(today.year - 1, 1, 1),
            "valid_until": None,
            "status": LicenceStatus.SUSPENDED,
            "status_since": today - datetime.timedelta(days=5),
            "suspended_until": today + datetime.timedelta(days=9),
        },
    }
    result = {}
    for spec in TRANSPORTERS:
        transporter, _ = Transporter.objects.get_or_create(
            document=spec.document, defaults={"name": spec.name}
        )
        TransporterLicence.objects.get_or_create(
            transporter=transporter,
            municipality=town,
            defaults={"number": spec.registration, **validity[spec.key]},
        )
        for plate, description, _use in spec.vehicles:
            Vehicle.objects.get_or_create(
                plate=plate, defaults={"transporter": transporter, "description": description}
            )
        for code, kind, capacity in spec.equipment:
            Equipment.objects.get_or_create(
                transporter=transporter,
                code=code,
                defaults={"kind": kind, "nominal_capacity_m3": Decimal(capacity)},
            )
        result[spec.key] = transporter
    return result


def _point_in(geometry, rng: random.Random) -> Point:
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


def ensure_worksites(town: Municipality, planner: Transporter, rng: random.Random) -> list[Site]:
    """Generators and their worksites, at random points of the bacias inside the municipality."""
    basins = list(CatchmentBasin.objects.filter(municipality=town).select_related("served_by"))
    if not basins:
        raise ValueError("Bacias de captação não carregadas: rode manage.py load_demo antes.")
    basins.sort(key=lambda b: b.code)
    plan_facilities = list(ReceivingFacility.objects.filter(code__in=PLAN_FACILITIES))
    owners = [(name, doc, 1, None, True) for name, doc in PERSONS] + [
        (name, doc, n, large, False) for name, doc, n, large in COMPANIES
    ]
    sites = []
    for owner_index, (name, document, count, large_index, is_person) in enumerate(owners):
        generator, _ = Generator.objects.get_or_create(document=document, defaults={"name": name})
        for index in range(count):
            basin = basins[len(sites) % len(basins)]
            location = _point_in(basin.area, rng)
            while network.municipality_id_at(location) != town.pk:
                location = _point_in(basin.area, rng)
            street = STREETS[(owner_index * 3 + index) % len(STREETS)]
            large = index == large_index
            worksite, created = Worksite.objects.get_or_create(
                generator=generator,
                address=f"{street}, {rng.randrange(10, 1500)}",
                defaults={
                    "location": location,
                    "municipality": town,
                    "neighbourhood": basin.name.removeprefix("Bacia "),
                    "is_large_generator": large,
                    "permit_number": f"ALV-DEMO-{owner_index + 1:02d}{index + 1:02d}"
                    if not is_person
                    else "",
                },
            )
            if created and large:
                worksite.plan_transporters.set([planner])
                worksite.plan_facilities.set(plan_facilities)
            sites.append(Site(worksite, basin.served_by, is_person))
    return sites


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


def _trip(rng: random.Random, origin: Point, target: Point) -> datetime.timedelta:
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
        target = _point_in(facility.area, rng)
        return Planned(
            at=at,
            transporter_key=key,
            facility=facility,
            receive_after=_trip(rng, site.worksite.location, target),
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
            services.receive(
                ctr,
                operator,
                p.received_m3 or _received_volume(rng, ctr.total_volume_m3),
                location=p.request.destination,
                at=closed_at,
            )
        elif p.outcome == "refuse":
            services.refuse(ctr, operator, rng.choice(REFUSAL_REASONS), at=closed_at)
        elif p.outcome == "cancel":
            cancelled_at = p.at + datetime.timedelta(minutes=rng.randint(5, 25))
            services.cancel(ctr, issuer, rng.choice(CANCEL_REASONS), at=cancelled_at)
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
            services.record_processing(
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
                    destination=_point_in(destination.area, rng),
                    destination_facility_id=destination.pk,
                    waste=[WasteLine("A", volume, "agregado triado (concreto, tijolo, argamassa)")],
                    generator=services.GeneratorData(name, cnpj(base)),
                    origin_facility_id=facility.pk,
                ),
                at=at,
            )
            services.receive(
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
        location = _point_in(basin.area, rng)
        while network.municipality_id_at(location) != town.pk:
            location = _point_in(basin.area, rng)
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


# --- the neighbour -----------------------------------------------------------------------------


def ensure_neighbour(
    town: Municipality, transporters: dict[str, Transporter], users: dict, now: datetime.datetime
) -> list[str]:
    """Aparecida beside the town, when its boundary is loaded (demo.loading): transporter A
    licensed there too (one CNPJ, one fleet, a licence per municipality), its own Núcleo and
    a consortium auditor reading both, and a few of its loads taken to the town's landfill,
    which Aparecida accepts as a destination (demo.network.ensure_consortium). Returns the
    listed accounts."""
    neighbour = Municipality.objects.defer("boundary").filter(ibge_code=NEIGHBOUR_IBGE).first()
    landfill = ReceivingFacility.objects.filter(code=SHARED_LANDFILL).first()
    if neighbour is None or landfill is None:
        return []
    carrier = transporters["A"]
    home = carrier.licence_in(town.pk)
    TransporterLicence.objects.get_or_create(
        transporter=carrier,
        municipality=neighbour,
        defaults={
            "number": "APA-DEMO-0001",
            "valid_from": home.valid_from,
            "valid_until": home.valid_until,
        },
    )
    view = Permission.objects.filter(
        content_type__app_label__in=["pev_network", "ctr"], codename__startswith="view_"
    )
    nucleo = _user("nucleo_aparecida", is_staff=True)
    StaffRole.objects.get_or_create(user=nucleo, municipality=neighbour, role=roles.NUCLEO)
    nucleo.user_permissions.add(*view)
    # The consortium's audit: reads both municipalities, acts on neither.
    auditor = _user("auditoria")
    for place in (town, neighbour):
        StaffRole.objects.get_or_create(user=auditor, municipality=place, role=roles.AUDITOR)
    _restore_passwords([nucleo, auditor])
    if not CTR.objects.filter(municipality=neighbour).exists():
        _neighbour_loads(neighbour, landfill, carrier, users, now)
    return ["nucleo_aparecida", "auditoria"]


def _neighbour_loads(neighbour, landfill, carrier, users, now) -> None:
    """Class A loads of the last month from Aparecida's worksites to the shared landfill, all
    received: what the landfill's Núcleo sees arrive and Aparecida's sees leave."""
    rng = random.Random(NEIGHBOUR_SEED)
    boundary = Municipality.objects.get(pk=neighbour.pk).boundary
    sites = []
    for index, (name, base) in enumerate(NEIGHBOUR_GENERATORS):
        document = cpf(base) if index == 0 else cnpj(base + "001")
        generator, _ = Generator.objects.get_or_create(document=document, defaults={"name": name})
        location = _point_in(boundary, rng)
        while network.municipality_id_at(location) != neighbour.pk:
            location = _point_in(boundary, rng)
        worksite, _ = Worksite.objects.get_or_create(
            generator=generator,
            address=f"{STREETS[index]}, {rng.randrange(10, 900)}",
            defaults={"location": location, "municipality": neighbour},
        )
        sites.append(worksite)
    spec = next(spec for spec in TRANSPORTERS if spec.key == "A")
    plate = next(plate for plate, _d, use in spec.vehicles if use == "skip")
    skips = sorted(
        carrier.equipment.filter(kind=EquipmentKind.STATIONARY_SKIP), key=lambda e: e.code
    )
    issuer = users["transporters"]["A"]
    operator = users["operators"][landfill.pk]
    for index in range(NEIGHBOUR_LOADS):
        day = timezone.localdate(now) - datetime.timedelta(days=2 + index * 2)
        at = timezone.make_aware(
            datetime.datetime.combine(day, datetime.time(rng.randint(7, 15), rng.randrange(60)))
        )
        worksite, gear = sites[index % len(sites)], skips[index % len(skips)]
        target = _point_in(landfill.area, rng)
        volume = gear.nominal_capacity_m3
        ctr = services.issue(
            carrier,
            issuer,
            services.IssueRequest(
                transport_date=day,
                vehicle_plate=plate,
                equipment_code=gear.code,
                origin=worksite.location,
                destination=target,
                destination_facility_id=landfill.pk,
                worksite_id=worksite.pk,
                waste=[WasteLine("A", volume, "concreto, tijolo e terra de escavação")],
            ),
            at=at,
        )
        services.receive(
            ctr,
            operator,
            volume,
            location=target,
            at=at + _trip(rng, worksite.location, target),
        )


def demo_ctrs():
    return CTR.objects.filter(transporter__document__in=[s.document for s in TRANSPORTERS])


def load(now: datetime.datetime | None = None) -> DemoResult:
    """Load the CTR demo (after the network); a second call only restores the accounts."""
    now = now or timezone.now()
    today = timezone.localdate(now)
    town = Municipality.objects.defer("boundary").filter(ibge_code=IBGE_CODE).first()
    if town is None or not ReceivingFacility.objects.filter(code="ATT-01").exists():
        raise ValueError("Rede de demonstração não carregada: rode manage.py load_demo antes.")
    created = False
    skipped: Counter = Counter()
    with transaction.atomic():
        transporters = ensure_transporters(town, today)
        accounts, users = ensure_accounts(town, transporters)
        if not demo_ctrs().exists():
            created = True
            sites = ensure_worksites(town, transporters["A"], random.Random(SEED))
            showcase = ensure_showcase(town, random.Random(SEED + 2))
            rng = random.Random(SEED + 1)
            plan = plan_ctrs(rng, transporters, sites, now)
            plan = sorted(plan + showcase_plan(showcase, now), key=lambda p: p.at)
            skipped = run_plan(rng, plan, transporters, users, plan_shipments(now))
        accounts += ensure_neighbour(town, transporters, users, now)
    counts = dict(demo_ctrs().values_list("status").annotate(n=Count("pk")).order_by())
    showcase_ids = dict(
        Worksite.objects.filter(address__in=[address for _k, _d, address, _l in SHOWCASE])
        .order_by("address")
        .values_list("address", "pk")
    )
    return DemoResult(
        created=created,
        status_counts=counts,
        overdue=services.overdue(demo_ctrs(), now).count(),
        accounts=accounts,
        skipped=skipped,
        onward=demo_ctrs().filter(origin_facility__isnull=False).count(),
        showcase={
            key: showcase_ids[address]
            for key, _document, address, _loads in SHOWCASE
            if address in showcase_ids
        },
    )
