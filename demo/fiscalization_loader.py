"""The fiscalization demo's loader (demo/fiscalization.py): it plans the reports and cases as
steps in time and runs them in order through the services; with it, what the reports say and
where they lie."""

from __future__ import annotations

import datetime
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.gis.geos import Point
from django.utils import timezone

from fiscalization import enforcement, intake
from fiscalization.enforcement import OffenderData
from fiscalization.models import (
    DumpingCategory,
    DumpingReport,
    EnforcementCase,
    InfractionRecord,
    PenaltyTableEntry,
    ReportStatus,
)
from pev_network import services as network
from pev_network.models import CatchmentBasin, Municipality, ReceivingFacility

from .cast import STREETS

SEED = 3518404 + 4
MIN_SPACING_M = 300  # between scattered reports and from the hotspots' centres
# The demo's table of art. 23 (penalty_lines: fictitious amounts), confirmed citing the law that
# gives the real table (penalty_table: only a law confirms).
DEMO_ACT = "Lei nº 4.699/2017 — valores fictícios da demonstração (a lei publicada não os traz)"

S = ReportStatus
C = DumpingCategory

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


def offset(lon: float, lat: float, east_m: float, north_m: float) -> Point:
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


class Loader:
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
        location = offset(original.location.x, original.location.y, 6, -4)
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
