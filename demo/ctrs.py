"""The CTR demo: fictitious transporters, generators, worksites and a few hundred CTRs over
the last 90 days, on the fictitious network of Guaratinguetá (fixtures/README.md).

Every CTR goes through `services.issue` (so every rule of the catalogue is checked) with a
past `at`, then is received, refused, cancelled or left open, always at a time after its issue
and never in the future. Deterministic for a given day (random.Random with a fixed seed) and
idempotent: once the demo transporters have CTRs, a new load only restores the accounts.

The ATTs ship what they sorted once a week (art. 3 III): class A in onward CTRs to
the recycling area, received there; the other classes recorded as reused on site. The last
shipment is SHIP_LAG days ago, so what arrived since is still in stock. Two worksites with a
scripted history show the certificate of final destination (ctr/custody/certificates.py):
every load of the first reached the recycling area, the last load of the second is still at ATT-02.
"""

from __future__ import annotations

import datetime
import random
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password, make_password
from django.contrib.auth.models import Permission
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from ctr import alerts, closing, roles, services
from ctr.models import (
    CTR,
    CTRStatus,
    Equipment,
    EquipmentKind,
    Generator,
    LicenceStatus,
    Membership,
    Transporter,
    TransporterLicence,
    Vehicle,
    Worksite,
)
from ctr.rules import WasteLine
from jurisdiction.models import StaffRole
from pev_network import services as network
from pev_network.models import CatchmentBasin, Municipality, ReceivingFacility

from .cast import COMPANIES, PERSONS, STREETS, TRANSPORTERS, cnpj, cpf
from .ctr_history import (
    EXCLUDED_FACILITIES,
    SHOWCASE,
    Site,
    ensure_showcase,
    plan_ctrs,
    plan_shipments,
    point_in,
    run_plan,
    showcase_plan,
    trip,
)
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
PLAN_FACILITIES = ("ATT-01", "REC-01")


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
            location = point_in(basin.area, rng)
            while network.municipality_id_at(location) != town.pk:
                location = point_in(basin.area, rng)
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
        location = point_in(boundary, rng)
        while network.municipality_id_at(location) != neighbour.pk:
            location = point_in(boundary, rng)
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
        target = point_in(landfill.area, rng)
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
        closing.receive(
            ctr,
            operator,
            volume,
            location=target,
            at=at + trip(rng, worksite.location, target),
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
        overdue=alerts.overdue(demo_ctrs(), now).count(),
        accounts=accounts,
        skipped=skipped,
        onward=demo_ctrs().filter(origin_facility__isnull=False).count(),
        showcase={
            key: showcase_ids[address]
            for key, _document, address, _loads in SHOWCASE
            if address in showcase_ids
        },
    )
