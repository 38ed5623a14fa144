"""The fiscalization demo: about 60 dumping reports in Guaratinguetá and a few enforcement cases,
on top of the network and the CTR demo (all fictitious, fixtures/README.md).

Everything goes through the services (fiscalization.intake, fiscalization.enforcement), in
chronological order, so that every rule is checked and every event, number and deadline is
real. Each service is told the planned past moment (the intake's `at=`, the enforcement's
`opened_at=`, `issued_at=`...): no row is rewritten after the fact. No photos: the demo writes
no media files.

The reports: three dense spots that come out as hotspots at the default DBSCAN settings (100 m,
3 reports) — a vacant lot that was cleaned and is being reported again, a stream bank and a
slope used as bota-fora — two duplicates merged into their originals, and scattered reports
at least 300 m apart (never a hotspot), in every category and status, by citizens (with and
without contact) and by the inspector `fiscal`.

The cases: a notice delivered by hand and repaired in time; a notice expired unrepaired and a
signed record of two table entries (cumulative); a recidivist (an earlier record of the same
person, paid) whose record is doubled; a record under appeal; a notice still running; and the
suspension that explains why the CTR demo's third transporter is suspended.

Deterministic for a given day (fixed seed) and idempotent: once the demo's cases exist, a new
load only prints the summary.
"""

from __future__ import annotations

import datetime
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.gis.geos import Point
from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from ctr.models import Generator, LicenceStatus, TransporterLicence
from fiscalization import deadlines, enforcement, hotspots, intake, penalty_table
from fiscalization.enforcement import OffenderData
from fiscalization.models import (
    DeliveryMethod,
    DumpingCategory,
    DumpingReport,
    EnforcementCase,
    InfractionRecord,
    OffenderRole,
    PenaltyKind,
    PenaltyTableEntry,
    ReportStatus,
)
from fiscalization.models.enforcement import CaseStatus
from pev_network import services as network
from pev_network.models import CatchmentBasin, Municipality, ReceivingFacility

from . import penalty_lines
from .ctrs import IBGE_CODE, STREETS, TRANSPORTERS, cnpj, cpf
from .network import ensure_ufesp

SEED = 3518404 + 4
INSPECTOR = "fiscal"
# Who applies the penalties (art. 35): the demo account of the Autoridade group.
AUTHORITY = "autoridade"
SUSPENDED_TRANSPORTER = next(s for s in TRANSPORTERS if s.key == "C")
MIN_SPACING_M = 300  # between scattered reports and from the hotspots' centres
# The demo's table of art. 23 (penalty_lines: fictitious amounts), confirmed citing the law that
# gives the real table (penalty_table: only a law confirms).
DEMO_ACT = "Lei nº 4.699/2017 — valores fictícios da demonstração (a lei publicada não os traz)"
DEMO_NOTE = (
    "Valores fictícios da demonstração: a tabela do art. 23 da Lei 3.978/2007 não consta do "
    "texto publicado; nenhuma norma municipal fixou estes valores."
)
OLD_CASE_DAYS = 200  # the recidivist's first record was paid about this long ago

S = ReportStatus
C = DumpingCategory
ONE_DAY = datetime.timedelta(days=1)

# --- people (fictitious documents, check digits computed) -------------------------------------

# A carroceiro without registration, caught dumping: only this demo uses his CPF, so his case
# tells whether the demo is loaded.
CLANDESTINE = ("Sebastião Carroceiro Fictício (fictício)", cpf("901902903"))
RECIDIVIST = ("Rafael Hipotético Nunes (fictício)", cpf("800900100"))  # a CTR demo generator
APPELLANT = ("Construtora Horizonte Exemplo Ltda. (fictícia)", cnpj("717171710001"))
REPAIRER = ("Mercado Bom Preço Exemplo Ltda. (fictícia)", cnpj("252525250001"))
NOTIFIED = ("Reformas Exemplo & Cia. ME (fictícia)", cnpj("939393930001"))

CITIZENS = (  # name, e-mail: citizens who left a contact
    ("Cláudia Exemplo Rocha (fictícia)", "claudia.exemplo@demo.invalid"),
    ("Marcos Fictício Teixeira (fictício)", "marcos.ficticio@demo.invalid"),
    ("Helena Modelo Barros (fictícia)", "helena.modelo@demo.invalid"),
    ("Jorge Ilustrativo Dias (fictício)", "jorge.ilustrativo@demo.invalid"),
    ("Sônia Amostra Campos (fictícia)", "sonia.amostra@demo.invalid"),
    ("Associação de Moradores Exemplo (fictícia)", "amoradores.exemplo@demo.invalid"),
)

# --- what the reports say -----------------------------------------------------------------------

DESCRIPTIONS = {
    C.VACANT_LOT: (
        "Entulho de reforma e restos de azulejo jogados no lote vago da {street}.",
        "Caçambada de entulho despejada à noite no terreno baldio da {street}.",
        "Sofá, colchão e sacos de argamassa no lote vago ao lado do nº {number} da {street}.",
    ),
    C.PUBLIC_AREA: (
        "Monte de entulho ocupando a calçada da {street}, pedestres andam pela rua.",
        "Restos de demolição na esquina da {street} com a praça.",
        "Móveis velhos e madeira de forma largados no passeio da {street}, nº {number}.",
        "Entulho na sarjeta da {street} entupindo a boca de lobo.",
    ),
    C.BOTA_FORA: (
        "Área usada como bota-fora: vários montes de terra e entulho ao fim da {street}.",
        "Caminhões descarregando entulho no fundo do vale perto da {street}.",
    ),
    C.SLOPE: (
        "Entulho lançado barranco abaixo na encosta atrás da {street}.",
        "Descarte de telhas e tijolos na encosta da {street}, risco de deslizamento.",
    ),
    C.WATER_BODY: (
        "Entulho e galhos jogados na margem do córrego, perto da {street}.",
        "Restos de obra dentro do córrego que passa pela {street}.",
    ),
    C.PROTECTED_AREA: (
        "Descarte de entulho na mata ciliar protegida ao lado da {street}.",
        "Restos de construção na área verde protegida do loteamento da {street}.",
    ),
    C.UNLICENSED_AREA: (
        "Terreno na {street} recebendo caçambas sem nenhuma placa de licença.",
        "Área particular da {street} funcionando como depósito de entulho sem licença.",
    ),
}
NOTES = {
    S.CONFIRMED: (
        "Vistoria no local confirmou o descarte.",
        "Confirmado na ronda da fiscalização.",
        "Vistoria: material de construção civil, volume compatível com o informado.",
    ),
    S.CLEANUP_SCHEDULED: (
        "Limpeza agendada com a equipe de zeladoria.",
        "Remoção programada para a próxima rota da retroescavadeira.",
    ),
    S.CLEANED: (
        "Local limpo pela zeladoria; material levado ao aterro de RCC.",
        "Limpeza concluída e conferida pela fiscalização.",
    ),
    S.UNFOUNDED: (
        "No local há material de obra dentro do próprio lote, com alvará: não é descarte.",
        "Endereço vistoriado duas vezes, nada encontrado.",
        "Caçamba estacionada com CTR válido, aguardando retirada: não é descarte irregular.",
    ),
}
REOPEN_NOTE = "Nova vistoria encontrou entulho no local: a denúncia procede."


MERGE_NOTE = "Mesmo monte de entulho, fotografado de outro ângulo."


# --- geometry --------------------------------------------------------------------------------


def _offset(lon: float, lat: float, east_m: float, north_m: float) -> Point:
    """A point some metres east/north of (lon, lat): a flat approximation, right to the
    decimetre over 100 m."""
    dlat = north_m / 110_574
    dlon = east_m / (111_320 * math.cos(math.radians(lat)))
    return Point(round(lon + dlon, 6), round(lat + dlat, 6), srid=4326)


def _metres(a: Point, b: Point) -> float:
    dx = (a.x - b.x) * 111_320 * math.cos(math.radians((a.y + b.y) / 2))
    return math.hypot(dx, (a.y - b.y) * 110_574)


# Three dense spots, each a hotspot at the default DBSCAN settings (100 m, 3 reports).
HOTSPOT_CENTRES = {
    "lot": (-45.1762, -22.8290),  # a vacant lot in Jardim do Vale, ~450 m from PEV-05
    "stream": (-45.1580, -22.8380),  # a stream bank in Beira Rio
    "slope": (-45.1990, -22.7930),  # a slope used as bota-fora in Pedregulho
}

# --- scattered reports ------------------------------------------------------------------------

# How far a scattered report got, in days after it was received.
CLEANED_PATH = ((1, S.CONFIRMED), (3, S.CLEANUP_SCHEDULED), (7.2, S.CLEANED))
PATHS = {
    "new": (),
    "confirmed": ((1.1, S.CONFIRMED),),
    "scheduled": ((1, S.CONFIRMED), (3.1, S.CLEANUP_SCHEDULED)),
    "cleaned": CLEANED_PATH,
    "cleaned_direct": ((1.9, S.CLEANED),),
    "unfounded": ((2.1, S.UNFOUNDED),),
    "reopened": ((2, S.UNFOUNDED), (6.1, S.CONFIRMED)),
}
# (path, how many, received between these many days ago)
SCATTERED_MIX = (
    ("new", 9, (1, 25)),
    ("confirmed", 9, (3, 70)),
    ("scheduled", 5, (6, 45)),
    ("cleaned", 9, (12, 160)),
    ("cleaned_direct", 2, (5, 90)),
    ("unfounded", 4, (4, 120)),
    ("reopened", 1, (10, 60)),
)
# The first UNLICENSED_AREA report lies inside PEV-07, whose license expired.
SCATTERED_CATEGORIES = (
    [C.UNLICENSED_AREA] * 3
    + [C.PUBLIC_AREA] * 11
    + [C.VACANT_LOT] * 9
    + [C.BOTA_FORA] * 4
    + [C.SLOPE] * 4
    + [C.WATER_BODY] * 4
    + [C.PROTECTED_AREA] * 4
)
assert len(SCATTERED_CATEGORIES) == sum(n for _path, n, _days in SCATTERED_MIX)
REPORTERS = ("fiscal", "contact", "anonymous")
REPORTER_WEIGHTS = (0.3, 0.35, 0.35)


# --- the loader -------------------------------------------------------------------------------


@dataclass
class ReportPlan:
    key: str
    at: datetime.datetime
    location: Point
    category: str
    reporter: str  # "fiscal", "contact" (a citizen who left a contact) or "anonymous"
    description: str
    volume: Decimal | None
    moves: list[tuple[datetime.datetime, str, str]]  # (moment, status, note)
    confirm_new: bool  # near an open report: the reporter said it is another dumping
    duplicate_of: str | None = None
    merged_at: datetime.datetime | None = None


@dataclass(order=True)
class Step:
    at: datetime.datetime
    order: int
    run: Callable[[], None] = field(compare=False)


@dataclass
class DemoResult:
    created: bool
    report_counts: dict[str, int]
    hotspots: list[hotspots.Hotspot]
    case_counts: dict[str, int]
    record_counts: dict[str, int]
    suspension: str

    def summary(self) -> str:
        labels = dict(ReportStatus.choices)
        reports = ", ".join(
            f"{labels[s].lower()} {self.report_counts.get(s, 0)}" for s in ReportStatus.values
        )
        recurring = sum(1 for h in self.hotspots if h.recurrence_after_cleaning)
        case_labels = {
            CaseStatus.OPEN: "aberto",
            CaseStatus.NOTIFIED: "notificado",
            CaseStatus.REPAIRED: "reparado no prazo",
            CaseStatus.RECORDED: "autuado",
            CaseStatus.CLOSED: "encerrado",
        }
        cases = ", ".join(
            f"{case_labels[s]} {n}" for s in CaseStatus.values if (n := self.case_counts.get(s))
        )
        record_labels = dict(InfractionRecord._meta.get_field("status").choices)
        records = ", ".join(
            f"{record_labels[s].lower()} {n}"
            for s in record_labels
            if (n := self.record_counts.get(s))
        )
        head = (
            "Fiscalização de demonstração criada"
            if self.created
            else "Fiscalização de demonstração já existia (nada duplicado)"
        )
        return "\n".join(
            [
                f"{head}: {sum(self.report_counts.values())} denúncias em Guaratinguetá "
                f"({reports}).",
                f"Pontos críticos (DBSCAN {hotspots.DEFAULT_EPS_M:g} m, "
                f"{hotspots.DEFAULT_MIN_POINTS} denúncias, {hotspots.DEFAULT_DAYS} dias): "
                f"{len(self.hotspots)}, {recurring} com reincidência depois da limpeza.",
                f"Processos: {sum(self.case_counts.values())} ({cases}); autos de infração: "
                f"{sum(self.record_counts.values())} ({records}).",
                self.suspension,
            ]
        )


class _Loader:
    """Plans the reports and cases as steps in time, then runs the steps in order."""

    def __init__(self, now: datetime.datetime, town: Municipality, inspector, authority):
        self.now = now
        self.today = timezone.localdate(now)
        self.town = town
        self.inspector = inspector
        self.authority = authority
        self.rng = random.Random(SEED)
        self.plans: dict[str, ReportPlan] = {}
        self.reports: dict[str, DumpingReport] = {}
        self.cases: dict[str, EnforcementCase] = {}
        self.notices: dict = {}
        self.records: dict[str, InfractionRecord] = {}
        self.steps: list[Step] = []
        self.citizen = 0
        self.taken = [Point(*c, srid=4326) for c in HOTSPOT_CENTRES.values()]
        self.basins = list(CatchmentBasin.objects.filter(municipality=town).order_by("code"))
        self.facilities = list(ReceivingFacility.objects.only("code", "area").order_by("pk"))
        self.entries = {
            e.code: e
            for e in PenaltyTableEntry.objects.filter(municipality=town, confirming_act=DEMO_ACT)
        }

    # --- time ---

    def day(self, days_ago: float, hour: int, minute: int = 0) -> datetime.datetime:
        day = self.today - datetime.timedelta(days=days_ago)
        return self.on(day, hour, minute)

    @staticmethod
    def on(day: datetime.date, hour: int, minute: int = 0) -> datetime.datetime:
        return timezone.make_aware(datetime.datetime.combine(day, datetime.time(hour, minute)))

    def add(self, at: datetime.datetime, run: Callable[[], object]) -> None:
        if at > self.now:
            raise ValueError(f"Passo da demonstração no futuro: {at:%d/%m/%Y %H:%M}.")
        self.steps.append(Step(at, len(self.steps), run))

    def run(self) -> None:
        for step in sorted(self.steps):
            step.run()

    # --- places ---

    def free_point(self) -> Point:
        """A point in a bacia of the town, outside every facility, at least MIN_SPACING_M from
        every report planned so far except the hotspots' own."""
        for _ in range(10_000):
            basin = self.rng.choice(self.basins)
            xmin, ymin, xmax, ymax = basin.area.extent
            point = Point(
                round(self.rng.uniform(xmin, xmax), 6),
                round(self.rng.uniform(ymin, ymax), 6),
                srid=4326,
            )
            if (
                basin.area.contains(point)
                and all(_metres(point, p) >= MIN_SPACING_M for p in self.taken)
                and all(f.area.distance(point) > 0.0005 for f in self.facilities)
                and network.municipality_id_at(point) == self.town.pk
            ):
                self.taken.append(point)
                return point
        raise ValueError("Não há mais lugar para denúncias espaçadas nas bacias.")

    def unlicensed_point(self) -> Point:
        """Inside PEV-07 (license expired): the map suggests “Área não licenciada” there."""
        pev = next((f for f in self.facilities if f.code == "PEV-07"), None)
        if pev is None or network.municipality_id_at(pev.area.point_on_surface) != self.town.pk:
            return self.free_point()
        point = Point(round(pev.area.centroid.x, 6), round(pev.area.centroid.y, 6), srid=4326)
        if not pev.area.contains(point):
            point = pev.area.point_on_surface
        self.taken.append(point)
        return point

    # --- reports ---

    def text(self, category: str) -> str:
        return self.rng.choice(DESCRIPTIONS[category]).format(
            street=self.rng.choice(STREETS), number=self.rng.randrange(10, 1500)
        )

    def volume(self, category: str) -> Decimal | None:
        if self.rng.random() < 0.2:
            return None  # not everybody guesses a volume
        high = 15 if category in (C.BOTA_FORA, C.UNLICENSED_AREA) else 6
        return Decimal(str(round(self.rng.uniform(0.5, high), 1)))

    def report(
        self,
        key: str,
        at: datetime.datetime,
        location: Point,
        category: str,
        reporter: str,
        moves: list[tuple] = (),
        description: str = "",
        confirm_new: bool = False,
    ) -> ReportPlan:
        """Plan a report; `moves` are (moment, status) or (moment, status, note)."""
        steps = []
        for move in moves:
            when, status = move[:2]
            if len(move) > 2:
                note = move[2]
            elif status == S.CONFIRMED and steps and steps[-1][1] == S.UNFOUNDED:
                note = REOPEN_NOTE
            else:
                note = self.rng.choice(NOTES[status])
            steps.append((when, status, note))
        plan = ReportPlan(
            key,
            at,
            location,
            category,
            reporter,
            description or self.text(category),
            self.volume(category),
            steps,
            confirm_new,
        )
        self.plans[key] = plan
        return plan

    def duplicate(self, key: str, of: str, at: datetime.datetime, merged_at: datetime.datetime):
        """A citizen reports again a dumping already reported (saying it is another one); the
        inspector merges it into the original."""
        original = self.plans[of]
        location = _offset(original.location.x, original.location.y, 6, -4)
        plan = self.report(key, at, location, original.category, "contact", confirm_new=True)
        plan.duplicate_of, plan.merged_at = of, merged_at

    def schedule_reports(self) -> None:
        for plan in self.plans.values():
            self.add(plan.at, lambda p=plan: self._create(p))
            for when, status, note in plan.moves:
                self.add(when, lambda p=plan, w=when, s=status, n=note: self._change(p, w, s, n))
            if plan.duplicate_of:
                self.add(plan.merged_at, lambda p=plan: self._merge(p))

    def _create(self, plan: ReportPlan) -> None:
        contact_name = contact = ""
        if plan.reporter == "contact":
            contact_name, contact = CITIZENS[self.citizen % len(CITIZENS)]
            self.citizen += 1
        report = intake.create_report(
            intake.NewReport(
                location=plan.location,
                category=plan.category,
                description=plan.description,
                estimated_volume_m3=plan.volume,
                contact_name=contact_name,
                contact=contact,
            ),
            by=self.inspector if plan.reporter == "fiscal" else None,
            confirm_new=plan.confirm_new,
            at=plan.at,
        )
        self.reports[plan.key] = report

    def _change(self, plan: ReportPlan, at: datetime.datetime, status: str, note: str) -> None:
        self.reports[plan.key] = intake.change_status(
            self.reports[plan.key], status, self.inspector, note, at=at
        )

    def _merge(self, plan: ReportPlan) -> None:
        self.reports[plan.key] = intake.merge_duplicate(
            self.reports[plan.key],
            self.reports[plan.duplicate_of],
            self.inspector,
            MERGE_NOTE,
            at=plan.merged_at,
        )

    # --- cases ---

    def entry_list(self, *codes: str) -> list[PenaltyTableEntry]:
        return [self.entries[code] for code in codes]

    def open_case(
        self,
        key: str,
        at: datetime.datetime,
        offender: OffenderData,
        text: str,
        report: str | None = None,
        location: Point | None = None,
    ) -> None:
        def run():
            dumping = self.reports.get(report) if report else None
            self.cases[key] = enforcement.open_case(
                municipality=self.town,
                inspector=self.inspector,
                offender=offender,
                description=text,
                location=dumping.location if dumping else location,
                dumping_report=dumping,
                opened_at=at,
            )

        self.add(at, run)

    def notice(
        self,
        key: str,
        at: datetime.datetime,
        method: str,
        action: str,
        delivered: datetime.datetime,
    ) -> None:
        def issue():
            self.notices[key] = enforcement.issue_notice(
                self.cases[key], action, method, at, by=self.inspector
            )

        self.add(at, issue)
        self.add(
            delivered,
            lambda: self.notices.__setitem__(
                key,
                enforcement.register_notice_delivery(
                    self.notices[key], delivered, by=self.inspector
                ),
            ),
        )

    def record(
        self,
        key: str,
        at: datetime.datetime,
        codes: tuple[str, ...],
        method: str,
        no_signature_reason: str = "",
        applied_after: datetime.timedelta | None = datetime.timedelta(hours=20),
    ) -> None:
        """The inspector's record, and the authority's application of its fine
        `applied_after` it (Lei 3.978/2007 art. 35); None: it still awaits the authority."""

        def run():
            self.records[key] = enforcement.draw_up_record(
                self.cases[key],
                self.entry_list(*codes),
                delivery_method=method,
                signed_by_offender=not no_signature_reason,
                no_signature_reason=no_signature_reason,
                drawn_up_at=at,
                by=self.inspector,
            )

        self.add(at, run)
        if applied_after is not None and at + applied_after <= self.now:
            applied = at + applied_after
            self.add(
                applied,
                lambda: enforcement.apply_fine(self.records[key], applied, by=self.authority),
            )


def _generator(name_document: tuple[str, str], role: str, address: str) -> OffenderData:
    name, document = name_document
    return OffenderData(
        name=name,
        document=document,
        role=role,
        address=address,
        generator=Generator.objects.filter(document=document).first(),
    )


# --- the plan: reports ------------------------------------------------------------------------


def _after(start: datetime.datetime, *moves: tuple) -> list[tuple]:
    """Moves at `days` (fractions allowed) after `start`: (days, status[, note])."""
    return [(start + datetime.timedelta(days=m[0]), *m[1:]) for m in moves]


def plan_hotspot_reports(ld: _Loader, caught_at: datetime.datetime | None) -> None:
    def spot(name: str, east: float, north: float) -> Point:
        return _offset(*HOTSPOT_CENTRES[name], east, north)

    def lot(east: float, north: float) -> Point:
        return spot("lot", east, north)

    def stream(east: float, north: float) -> Point:
        return spot("stream", east, north)

    def slope(east: float, north: float) -> Point:
        return spot("slope", east, north)

    # Reported twice, cleaned in one operation; then reported again and again.
    first, second = ld.day(118, 8, 40), ld.day(113, 19, 5)
    cleaned = first + datetime.timedelta(days=7.2)
    ld.report("lot-1", first, lot(0, 0), C.VACANT_LOT, "contact", _after(first, *CLEANED_PATH))
    ld.report(
        "lot-2",
        second,
        lot(28, 15),
        C.VACANT_LOT,
        "anonymous",
        [(second + ONE_DAY, S.CONFIRMED), (cleaned + datetime.timedelta(minutes=5), S.CLEANED)],
        confirm_new=True,
    )
    at = ld.day(71, 7, 55)
    moves = _after(at, (2, S.CONFIRMED), (9, S.CLEANUP_SCHEDULED))
    ld.report("lot-3", at, lot(-20, 25), C.VACANT_LOT, "contact", moves)
    # The inspector catches a carroceiro unloading there: the clandestine transporter's case.
    at = ld.day(24, 15, 0)
    ld.report(
        "lot-flagrant",
        at,
        lot(10, -22),
        C.VACANT_LOT,
        "fiscal",
        _after(at, (0.01, S.CONFIRMED, "Flagrante da fiscalização.")),
        description="Flagrante: carroça descarregando entulho de reforma no lote vago; "
        "condutor identificado, sem cadastro de transportador.",
        confirm_new=True,
    )
    ld.duplicate("lot-dup", "lot-flagrant", ld.day(23, 11, 20), ld.day(22, 9, 30))
    ld.report(
        "lot-5", ld.day(9, 18, 30), lot(-30, -10), C.VACANT_LOT, "anonymous", confirm_new=True
    )
    ld.report("lot-6", ld.day(2, 7, 10), lot(35, -5), C.VACANT_LOT, "contact", confirm_new=True)

    at = ld.day(61, 10, 15)
    moves = _after(
        at, (0.01, S.CONFIRMED, "Registrada e confirmada na ronda."), (6, S.CLEANUP_SCHEDULED)
    )
    ld.report("stream-1", at, stream(0, 0), C.WATER_BODY, "fiscal", moves)
    at = ld.day(50, 16, 45)
    ld.report(
        "stream-2",
        at,
        stream(40, 12),
        C.WATER_BODY,
        "contact",
        _after(at, (1, S.CONFIRMED)),
        confirm_new=True,
    )
    at = ld.day(41, 6, 50)
    ld.report(
        "stream-3",
        at,
        stream(-25, 30),
        C.WATER_BODY,
        "anonymous",
        _after(at, (2, S.CONFIRMED)),
        confirm_new=True,
    )
    ld.duplicate("stream-dup", "stream-3", ld.day(33, 12, 0), ld.day(32, 14, 10))
    ld.report(
        "stream-4", ld.day(18, 9, 5), stream(15, -35), C.WATER_BODY, "anonymous", confirm_new=True
    )
    ld.report(
        "stream-5", ld.day(5, 17, 40), stream(-40, -15), C.WATER_BODY, "contact", confirm_new=True
    )

    at = ld.day(45, 14, 20)
    ld.report("slope-1", at, slope(0, 0), C.SLOPE, "contact", _after(at, (1, S.CONFIRMED)))
    at = ld.day(30, 10, 0)
    ld.report(
        "slope-2",
        at,
        slope(30, 20),
        C.BOTA_FORA,
        "fiscal",
        _after(at, (0.01, S.CONFIRMED, "Vistoria de rotina.")),
        confirm_new=True,
    )
    # The dumping behind the third transporter's suspension.
    at = caught_at or ld.day(18, 8, 0)
    ld.report(
        "slope-caught",
        at,
        slope(-25, 15),
        C.SLOPE,
        "contact",
        _after(at, (1.05, S.CONFIRMED), (5, S.CLEANUP_SCHEDULED), (10, S.CLEANED)),
        description="Caminhão poliguindaste despejou uma caçamba de entulho encosta abaixo; "
        "anotei a placa.",
        confirm_new=True,
    )
    ld.report(
        "slope-4", ld.day(4, 13, 30), slope(10, -30), C.BOTA_FORA, "anonymous", confirm_new=True
    )


def plan_scattered_reports(ld: _Loader) -> None:
    paths = [(name, days) for name, n, days in SCATTERED_MIX for _ in range(n)]
    ld.rng.shuffle(paths)
    for index, (category, (name, (low, high))) in enumerate(
        zip(SCATTERED_CATEGORIES, paths, strict=True)
    ):
        at = ld.day(ld.rng.randint(low, high), ld.rng.randint(6, 21), ld.rng.randrange(60))
        reporter = ld.rng.choices(REPORTERS, REPORTER_WEIGHTS)[0]
        location = ld.unlicensed_point() if index == 0 else ld.free_point()
        ld.report(
            f"scattered-{index + 1:02d}", at, location, category, reporter, _after(at, *PATHS[name])
        )


# --- the plan: cases --------------------------------------------------------------------------


def _payment_day(today: datetime.date) -> datetime.date:
    """About OLD_CASE_DAYS ago: the demo carries that year's UFESP (demo.network.
    ensure_ufesp), in which the payment is made (art. 36)."""
    return today - datetime.timedelta(days=OLD_CASE_DAYS)


def plan_repaired(ld: _Loader) -> None:
    """Notice by hand, damage repaired in time: the case ends without penalty (art. 27)."""
    at = ld.day(17, 8, 20)
    ld.report(
        "market",
        at,
        ld.free_point(),
        C.PUBLIC_AREA,
        "contact",
        [(ld.day(16, 9, 50), S.CONFIRMED, "Vistoria: caixas e móveis do mercado.")],
        description="Caixas, prateleiras velhas e restos de reforma do mercado "
        "deixados na calçada da Rua Amostra do Rosário.",
    )
    offender = _generator(REPAIRER, OffenderRole.PROPERTY, "Rua Amostra do Rosário, 480")
    ld.open_case(
        "repaired",
        ld.day(16, 10, 0),
        offender,
        "Restos de reforma (prateleiras, madeira e caixas, cerca de 2 m³) deixados no "
        "passeio público em frente ao estabelecimento (art. 2º, § 1º).",
        report="market",
    )
    issued = ld.day(16, 10, 20)
    ld.notice(
        "repaired",
        issued,
        DeliveryMethod.HAND,
        "Remover o material do passeio e destiná-lo a área licenciada, com CTR.",
        issued,
    )
    repaired = ld.day(15, 16, 30)
    ld.add(
        repaired,
        lambda: enforcement.mark_repaired(ld.notices["repaired"], repaired, by=ld.inspector),
    )
    ld.plans["market"].moves.append(
        (
            repaired + datetime.timedelta(minutes=40),
            S.CLEANED,
            "Removido pelo responsável no prazo da notificação.",
        )
    )


def plan_clandestine(ld: _Loader) -> None:
    """Notice expired unrepaired, then a signed record of two entries (art. 30 §3)."""
    offender = OffenderData(
        name=CLANDESTINE[0],
        document=CLANDESTINE[1],
        role=OffenderRole.DRIVER,
        address="Travessa Ilustrativa das Flores, 77",
    )
    opened = ld.day(24, 15, 20)
    ld.open_case(
        "clandestine",
        opened,
        offender,
        "Flagrante de descarga de entulho de reforma em lote vago, transportado em "
        "carroça por condutor sem cadastro de transportador (art. 13).",
        report="lot-flagrant",
    )
    issued = opened + datetime.timedelta(minutes=10)
    ld.notice(
        "clandestine",
        issued,
        DeliveryMethod.HAND,
        "Recolher o entulho descarregado no lote e levá-lo a um PEV ou ATT licenciado.",
        issued,
    )
    ld.record("clandestine", ld.day(20, 9, 0), ("INF-01", "INF-02"), DeliveryMethod.HAND)


def plan_recidivist(ld: _Loader, paid_on: datetime.date) -> None:
    """A first record, the damage repaired and the fine paid; a new infraction later: no
    notice, the fine doubled (art. 30)."""
    offender = _generator(RECIDIVIST, OffenderRole.PROPERTY, "Rua Hipotética da Estação, 310")
    at = ld.day(7, 18, 0)
    location = ld.free_point()
    ld.report(
        "recidivist",
        at,
        location,
        C.PUBLIC_AREA,
        "anonymous",
        [(ld.day(6, 9, 35), S.CONFIRMED, "Mesmo imóvel do auto pago no ano passado.")],
        description="De novo entulho de reforma na calçada da Rua Hipotética da "
        "Estação, em frente ao nº 310.",
    )
    opened = ld.on(paid_on - datetime.timedelta(days=20), 9, 10)
    ld.open_case(
        "first",
        opened,
        offender,
        "Entulho de reforma (cerca de 3 m³) lançado no passeio público em frente ao "
        "imóvel (art. 2º, § 1º).",
        location=_offset(location.x, location.y, 8, 5),
    )
    issued = opened + datetime.timedelta(minutes=20)
    ld.notice(
        "first", issued, DeliveryMethod.HAND, "Remover o entulho do passeio em 72 horas.", issued
    )
    ld.record(
        "first", issued + datetime.timedelta(days=3, hours=2), ("INF-01",), DeliveryMethod.HAND
    )
    # The damage repaired after the record: paying alone would not close the case (art. 30 §2).
    repaired = ld.on(paid_on - datetime.timedelta(days=2), 15)
    ld.add(
        repaired,
        lambda: enforcement.register_repair(ld.records["first"], repaired, by=ld.inspector),
    )
    ld.add(
        ld.on(paid_on, 11),
        # Paid exactly what was due, under the treasury's guia (art. 36: "guia própria").
        lambda: enforcement.register_payment(
            ld.records["first"], paid_on, guide=f"DAM {paid_on.year}/000184", by=ld.inspector
        ),
    )
    ld.open_case(
        "recidivist",
        ld.day(6, 9, 40),
        offender,
        "Nova disposição de entulho no passeio em frente ao mesmo imóvel.",
        report="recidivist",
    )
    ld.record(
        "recidivist",
        ld.day(6, 10, 30),
        ("INF-01",),
        DeliveryMethod.HAND,
        "O infrator recusou-se a assinar; cópia entregue em mãos na presença de testemunha.",
        applied_after=None,  # in the authority's queue
    )


def plan_appeal(ld: _Loader) -> None:
    """Notice and record by mail (AR), an appeal filed in time and not yet decided."""
    at = ld.day(40, 11, 0)
    ld.report(
        "appeal",
        at,
        ld.free_point(),
        C.PROTECTED_AREA,
        "contact",
        [(ld.day(38, 9, 50), S.CONFIRMED, "Terra e entulho da obra vizinha.")],
        description="Terra e entulho de obra lançados na área verde protegida do "
        "loteamento, ao lado da obra da construtora.",
    )
    offender = _generator(APPELLANT, OffenderRole.PROPERTY, "Avenida Exemplo do Vale, 1200")
    ld.open_case(
        "appeal",
        ld.day(38, 10, 0),
        offender,
        "Terra e entulho da obra lançados em área verde protegida (art. 2º, § 1º, VII).",
        report="appeal",
    )
    ld.notice(
        "appeal",
        ld.day(38, 11, 0),
        DeliveryMethod.MAIL,
        "Retirar o material da área verde e recompor o terreno.",
        ld.day(35, 12, 0),
    )
    ld.record(
        "appeal",
        ld.day(30, 10, 0),
        ("INF-01",),
        DeliveryMethod.MAIL,
        "Responsável pela obra ausente no local; auto enviado por carta com aviso de recebimento.",
    )
    delivered = ld.day(27, 12, 0)
    ld.add(
        delivered,
        lambda: enforcement.register_record_delivery(
            ld.records["appeal"], delivered, by=ld.inspector
        ),
    )
    filed = ld.today - datetime.timedelta(days=14)
    ld.add(
        ld.on(filed, 15),
        lambda: enforcement.file_appeal(
            ld.records["appeal"],
            filed,
            "A construtora alega que o material foi deixado por terceiros e junta os CTRs "
            "de todas as cargas da obra no período.",
            by=ld.inspector,
        ),
    )


def plan_running_notice(ld: _Loader) -> None:
    """A notice delivered yesterday: the 72 hours are still running."""
    ld.report(
        "running",
        ld.day(3, 7, 30),
        ld.free_point(),
        C.VACANT_LOT,
        "anonymous",
        [(ld.day(1, 9, 45), S.CONFIRMED, "Sacos de entulho de uma reforma ao lado.")],
    )
    offender = _generator(NOTIFIED, OffenderRole.PROPERTY, "Rua Fictícia dos Ipês, 95")
    ld.open_case(
        "running",
        ld.day(1, 10, 0),
        offender,
        "Sacos de entulho da reforma em andamento deixados no lote vago vizinho.",
        report="running",
    )
    issued = ld.day(1, 10, 20)
    ld.notice(
        "running",
        issued,
        DeliveryMethod.HAND,
        "Recolher os sacos de entulho e contratar caçamba ou levá-los ao PEV.",
        issued,
    )


def suspended_transporter(town: Municipality) -> tuple[TransporterLicence, int] | None:
    """The CTR demo's suspended transporter's licence in the town and the days of its
    suspension, when it is suspended for at most the town's framework's days (15) as the CTR
    demo leaves it."""
    licence = (
        TransporterLicence.objects.select_related("transporter", "municipality")
        .filter(transporter__document=SUSPENDED_TRANSPORTER.document, municipality=town)
        .first()
    )
    if (
        licence is None
        or licence.status != LicenceStatus.SUSPENDED
        or licence.status_since is None
        or licence.suspended_until is None
    ):
        return None
    days = deadlines.suspension_days(licence.status_since, licence.suspended_until)
    longest = enforcement.framework_in_force(town, licence.status_since).suspension_max_days
    if not 1 <= days <= longest:
        return None
    return licence, days


def _suspend(record: InfractionRecord, licence: TransporterLicence, days: int, by) -> None:
    """apply_suspension, for a transporter the CTR demo already left suspended in the town.

    The service refuses to suspend a licence already suspended that day, and the CTR demo
    sets the status itself. So the status is set back to ACTIVE and the service suspends it
    again, in this transaction: it writes the same status, start and end, checked below."""
    kept = (licence.status, licence.status_since, licence.suspended_until)
    TransporterLicence.objects.filter(pk=licence.pk).update(
        status=LicenceStatus.ACTIVE, status_since=None, suspended_until=None
    )
    enforcement.apply_suspension(
        record,
        licence.status_since,
        days,
        "Suspensão das atividades de transporte de RCC (art. 25, IV).",
        by=by,
    )
    licence.refresh_from_db()
    if (licence.status, licence.status_since, licence.suspended_until) != kept:
        raise ValueError("A suspensão não coincide com a do transportador da demonstração.")


def plan_suspension(ld: _Loader, found: tuple[TransporterLicence, int]) -> None:
    """Why the CTR demo's third transporter is suspended: a caçamba unloaded on a slope,
    notice expired, record, and the suspension from the day the CTR demo says."""
    licence, days = found
    transporter = licence.transporter
    start = licence.status_since
    offender = OffenderData(
        name=transporter.name,
        document=transporter.document,
        role=OffenderRole.TRANSPORT_DIRECTOR,
        address="Avenida Fictícia Paraíba, 2000",
        transporter=transporter,
    )
    opened = ld.on(start - datetime.timedelta(days=12), 9, 30)
    ld.open_case(
        "suspension",
        opened,
        offender,
        "Caçamba CF-04, no veículo FIC5D67, descarregada na encosta sem CTR e fora de "
        "área licenciada (art. 2º, § 1º, II; art. 13).",
        report="slope-caught",
    )
    issued = opened + datetime.timedelta(minutes=30)
    ld.notice(
        "suspension",
        issued,
        DeliveryMethod.HAND,
        "Remover o entulho da encosta e destiná-lo a área licenciada.",
        issued,
    )
    drawn = ld.on(start - datetime.timedelta(days=8), 10)
    ld.record("suspension", drawn, ("INF-01", "INF-04"), DeliveryMethod.HAND)
    ld.add(
        drawn + datetime.timedelta(minutes=30),
        lambda: _suspend(ld.records["suspension"], licence, days, ld.authority),
    )


# --- loading ----------------------------------------------------------------------------------


def demo_cases():
    documents = [
        CLANDESTINE[1],
        RECIDIVIST[1],
        APPELLANT[1],
        REPAIRER[1],
        NOTIFIED[1],
        SUSPENDED_TRANSPORTER.document,
    ]
    return EnforcementCase.objects.filter(offender__document__in=documents)


def is_loaded() -> bool:
    return EnforcementCase.objects.filter(offender__document=CLANDESTINE[1]).exists()


def confirm_demo_table(town: Municipality, at: datetime.datetime) -> None:
    """The demo's art. 23 table: the model lines of Lei 3.978/2007 confirmed for the demo town
    with fictitious amounts, said so in the act and the note. The lines seeded by migration
    stay provisional: a demo never confirms them."""
    data = penalty_lines.table_csv()
    seeded = PenaltyTableEntry.objects.filter(municipality=town).exclude(confirming_act=DEMO_ACT)
    if seeded.exists():
        raise ValueError(
            f"A tabela de infrações de {town.name} já tem linhas que não são da demonstração: "
            "a demonstração não as confirma nem as altera."
        )
    penalty_table.import_table(data, town, confirm=True, act=DEMO_ACT, at=at)
    PenaltyTableEntry.objects.filter(municipality=town, confirming_act=DEMO_ACT).update(
        note=DEMO_NOTE
    )


def _create(now: datetime.datetime, town: Municipality, inspector, authority) -> None:
    confirm_demo_table(town, now)
    ensure_ufesp(timezone.localdate(now))
    ld = _Loader(now, town, inspector, authority)
    found = suspended_transporter(town)
    caught = ld.on(found[0].status_since - datetime.timedelta(days=13), 8) if found else None
    plan_hotspot_reports(ld, caught)
    plan_scattered_reports(ld)
    plan_repaired(ld)
    plan_clandestine(ld)
    plan_recidivist(ld, _payment_day(ld.today))
    plan_appeal(ld)
    plan_running_notice(ld)
    if found:
        plan_suspension(ld, found)
    ld.schedule_reports()
    ld.run()


def _suspension_text() -> str:
    penalty = (
        InfractionRecord.objects.filter(
            case__in=demo_cases(), penalties__kind=PenaltyKind.SUSPENSION
        )
        .values_list("number", "penalties__starts_on", "penalties__ends_on", "case__offender__name")
        .first()
    )
    if penalty is None:
        return "Transportador suspenso da demonstração de CTR não encontrado: sem suspensão."
    number, starts, ends, name = penalty
    return f"Suspensão de {name}: {starts:%d/%m/%Y} a {ends:%d/%m/%Y} (auto {number})."


def load(now: datetime.datetime | None = None) -> DemoResult:
    """Load the fiscalization demo (after the network and the CTR demo); once loaded, a new
    call only reports what is there."""
    now = now or timezone.now()
    town = Municipality.objects.defer("boundary").filter(ibge_code=IBGE_CODE).first()
    if town is None or not CatchmentBasin.objects.filter(municipality=town).exists():
        raise ValueError("Rede de demonstração não carregada: rode manage.py load_demo antes.")
    users = get_user_model().objects
    inspector = users.filter(username=INSPECTOR).first()
    authority = users.filter(username=AUTHORITY).first()
    if inspector is None or authority is None:
        raise ValueError(
            "Contas da fiscalização e da autoridade não encontradas: rode manage.py load_demo."
        )
    created = False
    with transaction.atomic():
        # Two loads at once: the second waits, then finds the demo loaded.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [SEED])
        if not is_loaded():
            created = True
            _create(now, town, inspector, authority)
    reports = DumpingReport.objects.filter(municipality=town)
    cases = demo_cases()
    return DemoResult(
        created=created,
        report_counts=dict(reports.values_list("status").annotate(n=Count("pk")).order_by()),
        hotspots=hotspots.find_hotspots(hotspots.HotspotQuery(municipality_id=town.pk)),
        case_counts=dict(cases.values_list("status").annotate(n=Count("pk")).order_by()),
        record_counts=dict(
            InfractionRecord.objects.filter(case__in=cases)
            .values_list("status")
            .annotate(n=Count("pk"))
            .order_by()
        ),
        suspension=_suspension_text(),
    )
