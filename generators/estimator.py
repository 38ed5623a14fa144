"""The PGRCC estimator (Lei 3.978/2007 art. 9): the volume a work is
expected to generate of each waste class, from its built area and its kind of work, at its
municipality's rates in force today (pev_network.MunicipalParameters.waste_generation_rates,
m³ per m²: an estimate is made now, for no CTR's day; the defaults and their published sources
are in pev_network.models and docs/legal.md).

The plan's form starts from these figures (the generator may change them), the Núcleo's
review shows them beside the declared ones."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.utils import timezone

from config.errors import DomainError
from ctr.models import WorkKind, Worksite
from pev_network.models import Municipality, WasteClass, default_generation_rates
from pev_network.services import municipality_at

CENT = Decimal("0.01")  # PlannedVolume keeps m³ to the hundredth


class EstimateError(DomainError):
    """An area or a kind of work the estimator cannot use."""

    status = 400


@dataclass(frozen=True)
class ClassEstimate:
    waste_class: str
    rate_m3_per_m2: Decimal
    volume_m3: Decimal

    @property
    def label(self) -> str:
        return WasteClass(self.waste_class).label


@dataclass(frozen=True)
class Estimate:
    built_area_m2: Decimal
    work_kind: str
    municipality: Municipality | None  # None: the defaults
    classes: list[ClassEstimate]

    @property
    def total_m3(self) -> Decimal:
        return sum((c.volume_m3 for c in self.classes), Decimal(0))

    def of_class(self, waste_class: str) -> Decimal:
        for item in self.classes:
            if item.waste_class == waste_class:
                return item.volume_m3
        return Decimal(0)

    @property
    def work_kind_label(self) -> str:
        return WorkKind(self.work_kind).label


def estimate(
    built_area_m2: Decimal, work_kind: str, municipality: Municipality | None = None
) -> Estimate:
    """Area × rate for every class, rounded to the hundredth of m³ (half up, as a person
    rounds). Refused: an area not above zero, an unknown kind of work."""
    try:
        area = Decimal(str(built_area_m2))
    except ArithmeticError:
        area = Decimal("NaN")
    if not area.is_finite() or area <= 0:
        raise EstimateError(
            f"Área construída inválida: {built_area_m2}. Informe a área em m², maior que zero.",
            "area_invalid",
            "built_area_m2",
        )
    if work_kind not in WorkKind.values:
        kinds = ", ".join(f"{k.value} ({k.label})" for k in WorkKind)
        raise EstimateError(
            f"Tipo de obra desconhecido: “{work_kind}”. Use {kinds}.", "kind_invalid", "work_kind"
        )
    defaults = default_generation_rates()[work_kind]
    parameters = (
        municipality.parameters_on(timezone.localdate()) if municipality is not None else None
    )
    classes = []
    for waste_class in WasteClass.values:
        rate = (
            parameters.generation_rate(work_kind, waste_class)
            if parameters is not None
            else Decimal(defaults[waste_class])
        )
        volume = (area * rate).quantize(CENT, rounding=ROUND_HALF_UP)
        classes.append(ClassEstimate(waste_class, rate, volume))
    return Estimate(area, work_kind, municipality, classes)


def worksite_municipality(worksite: Worksite) -> Municipality | None:
    """The municipality whose rates apply: the permit's, else the one the worksite lies in."""
    if worksite.municipality_id:
        return worksite.municipality
    return municipality_at(worksite.location) if worksite.location else None


def for_worksite(worksite: Worksite) -> Estimate | None:
    """The estimate of a registered worksite; None while its area or kind is missing."""
    if not worksite.built_area_m2 or not worksite.work_kind:
        return None
    return estimate(worksite.built_area_m2, worksite.work_kind, worksite_municipality(worksite))
