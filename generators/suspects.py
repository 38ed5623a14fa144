"""Suspect worksites and the large generators without CTRs: the
alerts the Núcleo and the fiscalização see, with the figures that raised them.

A worksite is measured on `today` (from the caller, never the database's clock), against its
municipality's parameters in force on `today` (pev_network.MunicipalParameters: an alert has no
CTR whose day would choose them; the model's defaults for a worksite without a municipality).
Three reasons, each an alert of its own:

- OVERDUE: no end declared (`ended_on` empty) and `today` more than `worksite_overdue_days`
  days after `expected_end`. The PGRCC (Lei 3.978/2007 art. 9) describes a work that should
  have ended: it goes on unplanned, or it ended and its last loads were never declared.
- LOW_VOLUME: an approved PGRCC expects E m³ (all classes; generators.comparison), the work
  runs from `start_date` to `expected_end` (D days) and `elapsed` is the fraction of D gone by
  on `today` (0 before the start, 1 on and after the expected end or once the end is
  declared). Once `elapsed` ≥ `worksite_low_volume_min_elapsed_pct` %, the worksite is suspect
  when transported < `worksite_low_volume_pct` % × E × elapsed. Transported is the
  comparison's: the volume declared on the worksite's own CTRs not cancelled. A worksite
  whose waste leaves it without CTR transports less than its size predicts: the best early
  sign that it is being dumped (art. 2 §1).
- IDLE: a large generator's worksite (`is_large_generator`) that is active (started on or
  before `today`, no end declared) and has had no CTR for more than `large_generator_idle_days`
  days, counted from its last load's transport date, or from its start without any.

Set-based: one query over every worksite with dates (the CTRs of all of them aggregated in one
scan, comparison.transported_by_worksite_sql), so that a municipality's thousands of worksites
cost one round trip."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.gis.geos import GEOSGeometry
from django.db.models import OuterRef, Subquery, TextChoices, Value
from django.db.models.functions import Coalesce

from config.br import br_date, br_number
from config.replica import read_connection
from ctr.models import Worksite
from pev_network.models import MunicipalParameters, parameters_sql

from . import comparison
from .models import PlanStatus, WastePlan

HUNDRED = Decimal(100)


class Reason(TextChoices):
    OVERDUE = "overdue", "término previsto vencido"
    LOW_VOLUME = "low_volume", "volume transportado muito abaixo do previsto"
    IDLE = "idle", "grande gerador sem CTR"


REASON_ORDER = tuple(Reason.values)  # (Reason.values builds the list anew on every call)
# The reasons that make a worksite "suspect"; IDLE is listed beside them as the large
# generators without CTRs, and is a reason of the same kind in every list and filter.
SUSPECT = (Reason.OVERDUE, Reason.LOW_VOLUME)
SHORT = {
    Reason.OVERDUE: "Atrasada",
    Reason.LOW_VOLUME: "Volume baixo",
    Reason.IDLE: "Sem CTR",
}


def _default(name: str):
    return MunicipalParameters._meta.get_field(name).default


@dataclass(frozen=True)
class Thresholds:
    """A municipality's parameters for the three reasons."""

    overdue_days: int
    low_volume_pct: Decimal
    min_elapsed_pct: Decimal
    idle_days: int


DEFAULT_THRESHOLDS = Thresholds(
    _default("worksite_overdue_days"),
    _default("worksite_low_volume_pct"),
    _default("worksite_low_volume_min_elapsed_pct"),
    _default("large_generator_idle_days"),
)


@dataclass(frozen=True)
class Explained:
    """One reason of a worksite, in words with its figures (pt-BR)."""

    code: str
    label: str
    short: str
    text: str


@dataclass(frozen=True)
class WorksiteFigures:
    """What the three reasons read of one worksite on `today`, and the reasons that hold."""

    worksite_id: int
    today: datetime.date
    start_date: datetime.date | None
    expected_end: datetime.date | None
    ended_on: datetime.date | None
    is_large_generator: bool
    thresholds: Thresholds
    expected_m3: Decimal | None  # the approved PGRCC's, all classes; None without one
    transported_m3: Decimal
    last_load: datetime.date | None
    elapsed: Decimal | None  # fraction of the planned duration, 0 to 1; None without dates
    idle_days: int | None  # active large generators only
    reasons: tuple[str, ...]

    @property
    def planned_days(self) -> int | None:
        if self.start_date is None or self.expected_end is None:
            return None
        return (self.expected_end - self.start_date).days

    @property
    def elapsed_days(self) -> int | None:
        if self.start_date is None:
            return None
        return max((min(self.today, self.ended_on or self.today) - self.start_date).days, 0)

    @property
    def days_past_end(self) -> int | None:
        """Days since the expected end, when the end is not declared and has passed."""
        if self.expected_end is None or self.ended_on is not None:
            return None
        return max((self.today - self.expected_end).days, 0)

    @property
    def elapsed_pct(self) -> Decimal | None:
        return None if self.elapsed is None else self.elapsed * HUNDRED

    @property
    def expected_to_date_m3(self) -> Decimal | None:
        """The plan's volume prorated by the elapsed fraction of the work."""
        if self.expected_m3 is None or self.elapsed is None:
            return None
        return self.expected_m3 * self.elapsed

    @property
    def transported_pct(self) -> Decimal | None:
        """Transported as a percentage of the expected volume to date."""
        expected = self.expected_to_date_m3
        if not expected:
            return None
        return self.transported_m3 * HUNDRED / expected

    @property
    def is_suspect(self) -> bool:
        return any(reason in SUSPECT for reason in self.reasons)

    def explained(self) -> list[Explained]:
        return [
            Explained(code, Reason(code).label, SHORT[code], self._text(code))
            for code in self.reasons
        ]

    def _text(self, code: str) -> str:
        t = self.thresholds
        if code == Reason.OVERDUE:
            return (
                f"Término previsto em {br_date(self.expected_end)}, há {self.days_past_end} "
                f"dias, sem término declarado (alerta depois de {t.overdue_days} dias)."
            )
        if code == Reason.LOW_VOLUME:
            return (
                f"Transportados {br_number(self.transported_m3, 2)} m³ de "
                f"{br_number(self.expected_to_date_m3, 2)} m³ esperados até "
                f"{'o término' if self.ended_on else 'hoje'} "
                f"({br_number(self.elapsed_pct, 0)}% do prazo de {self.planned_days} dias "
                f"decorrido, do total de {br_number(self.expected_m3, 2)} m³ do PGRCC): "
                f"{br_number(self.transported_pct, 2)}% do esperado, abaixo de "
                f"{br_number(t.low_volume_pct)}%."
            )
        last = (
            f"último CTR em {br_date(self.last_load)}"
            if self.last_load and self.start_date and self.last_load >= self.start_date
            else f"nenhum CTR desde o início, em {br_date(self.start_date)}"
        )
        return (
            f"Grande gerador com obra ativa sem CTR há {self.idle_days} dias ({last}; alerta "
            f"depois de {t.idle_days} dias)."
        )

    def as_dict(self) -> dict:
        def decimal(value: Decimal | None, places: str = "0.01") -> str | None:
            return None if value is None else str(value.quantize(Decimal(places)))

        return {
            "reasons": [
                {"code": e.code, "label": e.label, "text": e.text} for e in self.explained()
            ],
            "start_date": self.start_date and self.start_date.isoformat(),
            "expected_end": self.expected_end and self.expected_end.isoformat(),
            "ended_on": self.ended_on and self.ended_on.isoformat(),
            "is_large_generator": self.is_large_generator,
            "expected_m3": decimal(self.expected_m3),
            "expected_to_date_m3": decimal(self.expected_to_date_m3),
            "transported_m3": decimal(self.transported_m3),
            "transported_pct": decimal(self.transported_pct, "0.1"),
            "planned_days": self.planned_days,
            "elapsed_days": self.elapsed_days,
            "elapsed_pct": decimal(self.elapsed_pct, "0.1"),
            "days_past_end": self.days_past_end,
            "last_load": self.last_load and self.last_load.isoformat(),
            "idle_days": self.idle_days,
            "thresholds": {
                "overdue_days": self.thresholds.overdue_days,
                "low_volume_pct": str(self.thresholds.low_volume_pct),
                "low_volume_min_elapsed_pct": str(self.thresholds.min_elapsed_pct),
                "idle_days": self.thresholds.idle_days,
            },
        }


@dataclass(frozen=True)
class Scope:
    """Which worksites to measure (all with dates when empty)."""

    municipality_id: int | None = None
    # Several municipalities (a user's: jurisdiction.scope.Jurisdiction.readable_ids).
    municipality_ids: frozenset[int] | tuple[int, ...] | None = None
    worksite_ids: tuple[int, ...] | None = None
    # Within `radius_m` metres of this geometry (EPSG:4326): a dumping report's spot.
    near: GEOSGeometry | None = None
    radius_m: float = 0.0
    active_only: bool = False  # started on or before today, no end declared

    def where(self) -> tuple[str, list]:
        parts, params = [], []
        if self.municipality_id is not None:
            parts.append("w.municipality_id = %s")
            params.append(self.municipality_id)
        if self.municipality_ids is not None:
            parts.append("w.municipality_id = ANY(%s)")
            params.append(sorted(self.municipality_ids))
        if self.worksite_ids is not None:
            parts.append("w.id = ANY(%s)")
            params.append(list(self.worksite_ids))
        if self.near is not None:
            # Geography: the radius is metres on the spheroid.
            parts.append("ST_DWithin(w.location::geography, ST_GeomFromEWKB(%s)::geography, %s)")
            params += [bytes(self.near.ewkb), self.radius_m]
        if self.active_only:
            parts.append("w.start_date <= t.today AND w.ended_on IS NULL")
        return "".join(f" AND {p}" for p in parts), params


MEASURED = (
    "id, start_date, expected_end, ended_on, is_large_generator, overdue_after, low_pct, "
    "min_elapsed_pct, idle_after, expected_m3, transported_m3, last_load, elapsed, idle_days"
)
COLUMNS = f"{MEASURED}, reasons"


def _sql(today: datetime.date, scope: Scope) -> tuple[str, list]:
    """Every worksite of `scope` with dates, its figures and its reasons (COLUMNS)."""
    where, where_params = scope.where()
    expected_sql, expected_params = comparison.expected_by_worksite_sql("site")
    moved_sql, moved_params = comparison.transported_by_worksite_sql("site")
    defaults = DEFAULT_THRESHOLDS
    sql = f"""
    WITH t AS (SELECT %s::date AS today),
    -- Inlined where it is read (three times): a materialized CTE has no statistics, and the
    -- planner, guessing a million rows, spent seconds compiling the query (JIT) at 5,000.
    site AS NOT MATERIALIZED (
        SELECT w.id, w.start_date, w.expected_end, w.ended_on, w.is_large_generator, t.today,
               COALESCE(mp.worksite_overdue_days, %s) AS overdue_after,
               COALESCE(mp.worksite_low_volume_pct, %s) AS low_pct,
               COALESCE(mp.worksite_low_volume_min_elapsed_pct, %s) AS min_elapsed_pct,
               COALESCE(mp.large_generator_idle_days, %s) AS idle_after
        FROM {Worksite._meta.db_table} w
        CROSS JOIN t
        LEFT JOIN LATERAL {parameters_sql("w.municipality_id", "t.today")} AS mp ON true
        WHERE (w.start_date IS NOT NULL OR w.expected_end IS NOT NULL){where}
    ),
    expected AS ({expected_sql}),
    moved AS ({moved_sql}),
    measured AS (
        SELECT s.*, e.expected_m3, COALESCE(v.transported_m3, 0) AS transported_m3,
               v.last_load,
               CASE WHEN s.start_date IS NULL OR s.expected_end IS NULL THEN NULL
                    WHEN s.ended_on IS NOT NULL OR s.today >= s.expected_end THEN 1::numeric
                    WHEN s.today <= s.start_date THEN 0::numeric
                    -- start < today < expected end: the planned duration is not zero
                    ELSE (s.today - s.start_date)::numeric / (s.expected_end - s.start_date)
               END AS elapsed,
               -- GREATEST skips a NULL: without any load the count starts at the start
               CASE WHEN s.is_large_generator AND s.ended_on IS NULL AND s.start_date <= s.today
                    THEN s.today - GREATEST(s.start_date, v.last_load) END AS idle_days
        FROM site s
        LEFT JOIN expected e ON e.worksite_id = s.id
        LEFT JOIN moved v ON v.worksite_id = s.id
    )
    SELECT {MEASURED},
           array_remove(ARRAY[
               CASE WHEN ended_on IS NULL AND today - expected_end > overdue_after
                    THEN '{Reason.OVERDUE.value}' END,
               CASE WHEN expected_m3 > 0 AND elapsed * 100 >= min_elapsed_pct
                         AND transported_m3 * 100 < low_pct * expected_m3 * elapsed
                    THEN '{Reason.LOW_VOLUME.value}' END,
               CASE WHEN idle_days > idle_after THEN '{Reason.IDLE.value}' END
           ], NULL) AS reasons
    FROM measured
    """
    params = [
        today,
        defaults.overdue_days,
        defaults.low_volume_pct,
        defaults.min_elapsed_pct,
        defaults.idle_days,
        *where_params,
        *expected_params,
        *moved_params,
    ]
    return sql, params


def _reasons_filter(reasons) -> tuple[str, list]:
    """A WHERE over COLUMNS: any of `reasons`, or any reason at all when None."""
    if reasons is None:
        return "cardinality(reasons) > 0", []
    return "reasons && %s::text[]", [[str(r) for r in reasons]]


def suspect_ids_sql(today: datetime.date, reasons=None, scope: Scope = Scope()) -> tuple[str, list]:
    """`SELECT id` of the worksites with any of `reasons` (any reason when None): a subquery
    for a queryset (`pk__in=RawSQL(...)`), so that a list filters and pages in the database."""
    sql, params = _sql(today, scope)
    condition, condition_params = _reasons_filter(reasons)
    return f"SELECT id FROM ({sql}) AS measured WHERE {condition}", params + condition_params


def measure(
    today: datetime.date, scope: Scope = Scope(), reasons=None, only_flagged: bool = False
) -> list[WorksiteFigures]:
    """The figures of the worksites of `scope`; only those with a reason (any of `reasons`)
    when `only_flagged` or `reasons` is given. Most reasons first, then the longest overdue,
    then by id."""
    sql, params = _sql(today, scope)
    if only_flagged or reasons is not None:
        condition, condition_params = _reasons_filter(reasons)
        sql, params = (
            f"SELECT * FROM ({sql}) AS measured WHERE {condition}",
            params + condition_params,
        )
    sql = (
        f"SELECT {COLUMNS} FROM ({sql}) AS flagged "
        f"ORDER BY cardinality(reasons) DESC, expected_end NULLS LAST, id"
    )
    with read_connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [_figures(today, row) for row in rows]


def _figures(today: datetime.date, row) -> WorksiteFigures:
    (pk, start, end, ended, large, overdue_after, low_pct, min_elapsed, idle_after,
     expected, transported, last_load, elapsed, idle_days, reasons) = row  # fmt: skip
    return WorksiteFigures(
        worksite_id=pk,
        today=today,
        start_date=start,
        expected_end=end,
        ended_on=ended,
        is_large_generator=large,
        thresholds=Thresholds(overdue_after, low_pct, min_elapsed, idle_after),
        expected_m3=expected,
        transported_m3=transported,
        last_load=last_load,
        elapsed=elapsed,
        idle_days=idle_days,
        reasons=tuple(r for r in REASON_ORDER if r in reasons),
    )


def of_worksite(worksite: Worksite, today: datetime.date) -> WorksiteFigures | None:
    """One worksite's figures (None when it has no dates: nothing to measure)."""
    found = measure(today, Scope(worksite_ids=(worksite.pk,)))
    return found[0] if found else None


def counts(today: datetime.date, scope: Scope = Scope()) -> dict[str, int]:
    """How many worksites of `scope` have each reason, and `suspect`: how many have OVERDUE or
    LOW_VOLUME (a worksite with both counts once)."""
    sql, params = _sql(today, scope)
    suspect = [str(r) for r in SUSPECT]
    select = ", ".join(f"count(*) FILTER (WHERE '{r}' = ANY(reasons))" for r in Reason.values)
    with read_connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {select}, count(*) FILTER (WHERE reasons && %s::text[]) FROM ({sql}) AS m",
            [suspect, *params],
        )
        row = cursor.fetchone()
    return {**dict(zip(Reason.values, row, strict=False)), "suspect": row[-1]}


# --- the plan's state, as the Núcleo's lists and map show it -----------------------------------

NO_PLAN = "none"
PLAN_STATES = {
    NO_PLAN: "sem PGRCC",
    PlanStatus.DRAFT: "em elaboração",
    PlanStatus.SUBMITTED: "enviado ao Núcleo",
    PlanStatus.CHANGES_REQUESTED: "devolvido para ajustes",
    PlanStatus.APPROVED: "aprovado",
}


def latest_plan_status():
    """A worksite's plan state: the status of its latest version, or NO_PLAN without any. A
    newer version in review shows as such even while an older one is in force: it is what
    waits for the Núcleo."""
    latest = WastePlan.objects.filter(worksite=OuterRef("pk")).order_by("-version")
    return Coalesce(Subquery(latest.values("status")[:1]), Value(NO_PLAN))
