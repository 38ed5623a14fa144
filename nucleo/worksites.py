"""The Núcleo's worksites: the list with its filters, one worksite's
cumulative volumes over time, and the active worksites of the map. The alerts themselves are
generators.suspects; the figures by class, generators.comparison.

The list is the worksites of the municipality the user works in now
(Worksite.objects.visible_to(user, current=True)); another is chosen at /municipio/."""

from __future__ import annotations

import calendar
import datetime
from dataclasses import dataclass
from decimal import Decimal

from django import forms
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL
from django.urls import reverse
from django.utils.html import format_html

from config.br import br_number
from ctr.models import WorkKind, Worksite
from generators import suspects
from generators.comparison import Comparison
from generators.suspects import PLAN_STATES, Reason, WorksiteFigures
from jurisdiction.scope import jurisdiction_of

# The reason filter: one reason, or the two that make a worksite suspect.
SUSPECT_ANY = "suspect"
REASON_CHOICES = [
    ("", "Todas"),
    (SUSPECT_ANY, "Suspeitas (atrasadas ou com volume baixo)"),
    *[(r.value, r.label[:1].upper() + r.label[1:]) for r in Reason],
]
ACTIVE, ENDED = "active", "ended"


class WorksiteFilterForm(forms.Form):
    """The list's filters, within the municipality the user works in now (`user`)."""

    plan = forms.ChoiceField(
        label="PGRCC", required=False, choices=[("", "Todos"), *PLAN_STATES.items()]
    )
    reason = forms.ChoiceField(label="Alerta", required=False, choices=REASON_CHOICES)
    kind = forms.ChoiceField(
        label="Tipo de obra", required=False, choices=[("", "Todos"), *WorkKind.choices]
    )
    state = forms.ChoiceField(
        label="Situação",
        required=False,
        choices=[("", "Todas"), (ACTIVE, "Em andamento"), (ENDED, "Encerradas")],
    )
    q = forms.CharField(
        label="Busca",
        required=False,
        max_length=100,
        help_text="Endereço, alvará, nome ou CPF/CNPJ do gerador.",
    )

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user

    def scope(self) -> suspects.Scope:
        """The alerts' scope: the municipality the user works in now (none: nothing)."""
        return current_scope(self.user)

    def filtered(self, today: datetime.date) -> QuerySet:
        """The worksites that match, annotated with `plan_status`; every filter in the
        database (the alerts through generators.suspects' subquery)."""
        data = self.cleaned_data if self.is_bound and self.is_valid() else {}
        queryset = (
            Worksite.objects.visible_to(self.user, current=True)
            .select_related("generator", "municipality")
            .defer("area", "municipality__boundary")
            .annotate(plan_status=suspects.latest_plan_status())
            .order_by("address", "pk")
        )
        if data.get("plan"):
            queryset = queryset.filter(plan_status=data["plan"])
        if data.get("kind"):
            queryset = queryset.filter(work_kind=data["kind"])
        if data.get("state") == ACTIVE:
            queryset = queryset.filter(start_date__lte=today, ended_on__isnull=True)
        elif data.get("state") == ENDED:
            queryset = queryset.filter(ended_on__isnull=False)
        if data.get("reason"):
            wanted = suspects.SUSPECT if data["reason"] == SUSPECT_ANY else [data["reason"]]
            queryset = queryset.filter(pk__in=RawSQL(*suspects.suspect_ids_sql(today, wanted)))
        if data.get("q"):
            queryset = queryset.filter(_search(data["q"]))
        return queryset


def current_scope(user, active_only: bool = False) -> suspects.Scope:
    """The worksites of the municipality `user` works in now, as generators.suspects measures
    them; none when it has none (a Scope without a municipality would be every one)."""
    current = jurisdiction_of(user).current_id
    if current is None:
        return suspects.Scope(worksite_ids=(), active_only=active_only)
    return suspects.Scope(municipality_id=current, active_only=active_only)


def _search(text: str) -> Q:
    query = (
        Q(address__icontains=text)
        | Q(permit_number__icontains=text)
        | Q(generator__name__icontains=text)
    )
    digits = "".join(ch for ch in text if ch.isdigit())
    # A CPF or CNPJ typed with its dots and dashes: the registry keeps the digits only.
    if len(digits) >= 5 and len(digits) >= len(text.strip()) // 2:
        query |= Q(generator__document__contains=digits)
    return query


@dataclass
class Row:
    """A worksite of the list with its plan state and its alerts (None: no dates)."""

    worksite: Worksite
    figures: WorksiteFigures | None

    @property
    def plan_label(self) -> str:
        return PLAN_STATES.get(self.worksite.plan_status, self.worksite.plan_status)

    @property
    def reasons(self) -> list[suspects.Explained]:
        return self.figures.explained() if self.figures else []


def rows(worksites, today: datetime.date) -> list[Row]:
    """The list's rows, with the figures of these worksites measured in one query."""
    worksites = list(worksites)
    measured = {
        f.worksite_id: f
        for f in suspects.measure(today, suspects.Scope(worksite_ids=[w.pk for w in worksites]))
    }
    return [Row(w, measured.get(w.pk)) for w in worksites]


CSV_HEADER = [
    "id", "endereço", "bairro", "município", "alvará", "gerador", "CPF/CNPJ", "tipo de obra",
    "área construída (m²)", "início", "término previsto", "término", "grande gerador",
    "PGRCC", "previsto (m³)", "previsto até a data (m³)", "transportado (m³)",
    "transportado / previsto até a data (%)", "alertas",
]  # fmt: skip


def _day(value: datetime.date | None) -> str:
    return value.strftime("%d/%m/%Y") if value else ""


def _num(value: Decimal | None, places: int = 2) -> str:
    return "" if value is None else br_number(value, places, grouping=False)


def csv_rows(rows_: list[Row]) -> list[list]:
    out = []
    for row in rows_:
        w, f = row.worksite, row.figures
        out.append([
            w.pk, w.address, w.neighbourhood,
            str(w.municipality) if w.municipality else "", w.permit_number, w.generator.name,
            w.generator.document, w.get_work_kind_display(), _num(w.built_area_m2),
            _day(w.start_date), _day(w.expected_end), _day(w.ended_on),
            "sim" if w.is_large_generator else "não", row.plan_label,
            _num(f.expected_m3 if f else None), _num(f.expected_to_date_m3 if f else None),
            _num(f.transported_m3 if f else None), _num(f.transported_pct if f else None, 1),
            " | ".join(e.text for e in row.reasons),
        ])  # fmt: skip
    return out


# --- one worksite's volumes over time ---------------------------------------------------------


@dataclass(frozen=True)
class Line:
    label: str
    days: list[datetime.date]
    values: list[float]
    colour: str
    style: str = "-"


def _month_end(month: datetime.date) -> datetime.date:
    return month.replace(day=calendar.monthrange(month.year, month.month)[1])


def cumulative_lines(
    comparison: Comparison, figures: WorksiteFigures | None, today: datetime.date
) -> list[Line]:
    """Expected (the approved plan spread evenly from the start to the expected end, as the
    LOW_VOLUME alert prorates it), the alert's line (its share of that, from the elapsed part
    where it starts), and what was transported and destined by the end of each month of
    transport (the comparison's months; the current month up to today)."""
    lines = []
    worksite = comparison.worksite
    start, end = worksite.start_date, worksite.expected_end
    if comparison.expected_m3 and start and end:
        total = float(comparison.expected_m3)
        lines.append(Line("Previsto (PGRCC)", [start, end], [0.0, total], "#0072B2", "--"))
        if figures is not None:
            share = float(figures.thresholds.low_volume_pct) / 100
            begins = float(figures.thresholds.min_elapsed_pct) / 100
            from_day = start + datetime.timedelta(days=round((end - start).days * begins))
            lines.append(
                Line(
                    f"Alerta ({br_number(figures.thresholds.low_volume_pct)}% do previsto)",
                    [from_day, end],
                    [total * share * begins, total * share],
                    "#B42318",
                    ":",
                )
            )
    first = start or (comparison.months[0].month if comparison.months else None)
    for label, attribute, colour in (
        ("Transportado (CTRs)", "transported_m3", "#E69F00"),
        ("Destinado", "destined_m3", "#009E73"),
    ):
        if not comparison.months:
            break
        days = [min(first, comparison.months[0].month)]
        values, running = [0.0], 0.0
        for month in comparison.months:
            running += float(getattr(month, attribute))
            days.append(min(_month_end(month.month), max(today, month.month)))
            values.append(running)
        lines.append(Line(label, days, values, colour))
    return lines


# --- the map's active worksites ---------------------------------------------------------------


@dataclass(frozen=True)
class MapWorksite:
    lon: float
    lat: float
    plan_status: str
    reasons: tuple[str, ...]
    popup_html: str


def map_worksites(municipality_id: int | None, today: datetime.date) -> list[MapWorksite]:
    """The active worksites (started, no end declared) of the municipality, with their plan
    state and alerts, in two queries whatever their number."""
    active = (
        Worksite.objects.filter(start_date__lte=today, ended_on__isnull=True)
        .select_related("generator")
        .only("pk", "address", "location", "generator__name", "permit_number")
        .annotate(plan_status=suspects.latest_plan_status())
    )
    scope = suspects.Scope(active_only=True)
    if municipality_id is not None:
        active = active.filter(municipality_id=municipality_id)
        scope = suspects.Scope(municipality_id=municipality_id, active_only=True)
    flagged = {f.worksite_id: f for f in suspects.measure(today, scope, only_flagged=True)}
    out = []
    for w in active:
        figures = flagged.get(w.pk)
        reasons = figures.reasons if figures else ()
        out.append(
            MapWorksite(w.location.x, w.location.y, w.plan_status, reasons,
                        _popup(w, figures))
        )  # fmt: skip
    return out


def _popup(worksite: Worksite, figures: WorksiteFigures | None) -> str:
    alerts = format_html(
        "<dt>Alertas</dt><dd>{}</dd>",
        "; ".join(e.text for e in figures.explained()),
    ) if figures else ""  # fmt: skip
    return str(
        format_html(
            '<div class="ctr-popup"><p class="ctr-popup-title">{}</p><dl>'
            "<dt>Gerador</dt><dd>{}</dd><dt>Alvará</dt><dd>{}</dd><dt>PGRCC</dt><dd>{}</dd>{}"
            '</dl><p><a href="{}">Abrir a obra</a></p></div>',
            worksite.address,
            worksite.generator.name,
            worksite.permit_number or "—",
            PLAN_STATES.get(worksite.plan_status, worksite.plan_status),
            alerts,
            reverse("nucleo:obra", args=[worksite.pk]),
        )
    )
