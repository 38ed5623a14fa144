"""The rule catalogue of the CTR (docs: shared/domain.md), one small unit per rule.

Each rule names its stable code, its severity, the article it comes from and a Portuguese
message. `evaluate` runs every rule of a stage and returns every finding at once: a CTR is
never refused one rule at a time (the principle of art. 132 of the Rio law in legal/).
The catalogue page `/regras/`, the API `/api/v1/rules/` and the tests all read REGISTRY.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.gis.geos import Point

from config.br import br_date, br_number
from config.br_forms import format_point
from pev_network.models import FacilityKind, Municipality, ReceivingFacility, WasteClass

from .models import PROHIBITED_CLASSES, CTRWasteClass, Equipment, Generator, Transporter, Vehicle


class Severity:
    ERROR = "error"
    WARNING = "warning"
    ALERT = "alert"
    LABELS = {ERROR: "erro", WARNING: "aviso", ALERT: "alerta"}


class Stage:
    ISSUE = "issue"
    RECEPTION = "reception"
    MONITORING = "monitoring"
    LABELS = {ISSUE: "na emissão", RECEPTION: "no recebimento", MONITORING: "no acompanhamento"}


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    message: str
    article: str
    field: str | None = None

    def as_dict(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "article": self.article,
            "field": self.field,
        }


@dataclass(frozen=True)
class Rule:
    code: str
    severity: str
    article: str
    title: str
    stage: str
    check: Callable[..., Iterable[tuple[str | None, str]]]

    @property
    def description(self) -> str:
        return (self.check.__doc__ or "").strip()


REGISTRY: dict[str, Rule] = {}


def rule(code: str, severity: str, article: str, title: str, stage: str = Stage.ISSUE):
    """Register a check. The check yields (field, message) pairs, one per breach."""

    def register(check):
        if code in REGISTRY:
            raise ValueError(f"duplicate rule {code}")
        REGISTRY[code] = Rule(code, severity, article, title, stage, check)
        return check

    return register


@dataclass
class WasteLine:
    waste_class: str
    volume_m3: Decimal
    description: str = ""


@dataclass
class CTRDraft:
    """Everything the rules read about a CTR, resolved beforehand (spatial facts in PostGIS)."""

    transport_date: datetime.date
    transporter: Transporter
    origin: Point
    destination: Point
    waste: list[WasteLine]
    generator: Generator | None = None
    vehicle: Vehicle | None = None
    vehicle_plate: str = ""
    equipment: Equipment | None = None
    equipment_code: str = ""
    worksite_is_large_generator: bool = False
    plan_transporter_ids: set[int] = field(default_factory=set)
    plan_facility_ids: set[int] = field(default_factory=set)
    municipality: Municipality | None = None
    requested_facility: ReceivingFacility | None = None
    facility: ReceivingFacility | None = None
    facility_licensed: bool = False
    recycling_area_available: bool = False

    @property
    def total_volume(self) -> Decimal:
        return sum((line.volume_m3 for line in self.waste), Decimal("0"))

    @property
    def small_volume_limit(self) -> Decimal:
        # A PEV is the municipality's own public equipment: its municipality's limit applies.
        for place in (self.facility and self.facility.municipality, self.municipality):
            if place is not None:
                return place.small_volume_limit_m3
        return Municipality._meta.get_field("small_volume_limit_m3").default


def fmt(value: Decimal) -> str:
    """Brazilian decimal comma, no trailing zeros, no thousands dot: 1,5 m³ (bulk.py's SQL
    prints the same)."""
    return br_number(value, grouping=False)


# --- the catalogue -----------------------------------------------------------------------


@rule(
    "TRANSPORTER_NOT_LICENSED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 13",
    "Transportador cadastrado e com cadastro válido na data do transporte",
)
def transporter_not_licensed(ctr: CTRDraft):
    """O transportador deve estar cadastrado no município, com cadastro válido na data do
    transporte. O gerador que transporta os próprios resíduos dispensa o licenciamento
    (art. 12 §4), mas só pode levar resíduos seus."""
    transporter = ctr.transporter
    if transporter.is_self_generator:
        if ctr.generator is not None and ctr.generator.document != transporter.document:
            yield (
                "generator",
                "Gerador que transporta os próprios resíduos só pode emitir CTR dos seus "
                "resíduos (art. 12 §4): o gerador informado é outro.",
            )
        return
    if not transporter.registered_on(ctr.transport_date):
        yield (
            "transport_date",
            f"O cadastro do transportador {transporter.registration_number} não é válido em "
            f"{br_date(ctr.transport_date)} (válido de {br_date(transporter.valid_from)} a "
            f"{br_date(transporter.valid_until)}).",
        )


@rule(
    "TRANSPORTER_SUSPENDED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 25 IV-V, art. 34",
    "Transportador não suspenso nem cassado na data do transporte",
)
def transporter_suspended(ctr: CTRDraft):
    """Um transportador suspenso ou cassado não pode transportar."""
    status = ctr.transporter.restricted_on(ctr.transport_date)
    if status == "SUSPENDED":
        yield (
            None,
            f"O transportador está suspenso desde {br_date(ctr.transporter.status_since)}"
            + (
                f" até {br_date(ctr.transporter.suspended_until)}."
                if ctr.transporter.suspended_until
                else "."
            ),
        )
    elif status == "REVOKED":
        yield (
            None,
            f"O cadastro do transportador foi cassado em {br_date(ctr.transporter.status_since)}.",
        )


@rule(
    "ORIGIN_OUTSIDE_MUNICIPALITY",
    Severity.ERROR,
    "Lei 3.978/2007 art. 2",
    "Origem dentro do limite de um município atendido",
)
def origin_outside_municipality(ctr: CTRDraft):
    """A origem (a obra ou imóvel) deve estar dentro do limite do município; é ele que define o
    município do CTR."""
    if ctr.municipality is None:
        yield (
            "origin",
            f"A origem {format_point(ctr.origin.x, ctr.origin.y)} não está dentro de nenhum "
            "município atendido pela plataforma.",
        )


@rule(
    "DESTINATION_OUTSIDE_FACILITY",
    Severity.ERROR,
    "Lei 3.978/2007 art. 13 p.ú., art. 2 §1 VI",
    "Ponto de descarga dentro do polígono da área de destino (com a tolerância do GPS)",
)
def destination_outside_facility(ctr: CTRDraft):
    """O resíduo só pode ser descarregado dentro de uma área da rede; o ponto de descarga deve
    estar dentro do polígono da área, admitida a tolerância de GPS do município."""
    if ctr.facility is not None:
        return
    where = format_point(ctr.destination.x, ctr.destination.y)
    if ctr.requested_facility is not None:
        yield (
            "destination",
            f"O ponto de descarga {where} não está dentro da área "
            f"“{ctr.requested_facility.name}” informada como destino.",
        )
    else:
        yield (
            "destination",
            f"O ponto de descarga {where} não está dentro de nenhuma área de recebimento da rede.",
        )


@rule(
    "FACILITY_NOT_LICENSED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 14 §1",
    "Área de destino com licença válida na data do transporte",
)
def facility_not_licensed(ctr: CTRDraft):
    """Os receptores devem ser licenciados: a licença da área de destino deve valer na data do
    transporte."""
    if ctr.facility is not None and not ctr.facility_licensed:
        yield (
            "destination_facility",
            f"A área “{ctr.facility.name}” não tem licença válida em "
            f"{br_date(ctr.transport_date)}.",
        )


@rule(
    "CLASS_NOT_ACCEPTED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 3 II-IV, art. 18",
    "Toda classe de resíduo do CTR é aceita pela área de destino",
)
def class_not_accepted(ctr: CTRDraft):
    """Cada área recebe só as classes para que foi licenciada: aterro de RCC e área de
    reciclagem, só classe A."""
    if ctr.facility is None:
        return
    accepted = set(ctr.facility.accepted_classes)
    for index, line in enumerate(ctr.waste):
        if line.waste_class in PROHIBITED_CLASSES:
            continue
        if line.waste_class not in accepted:
            label = CTRWasteClass(line.waste_class).label
            accepted_labels = ", ".join(sorted(accepted)) or "nenhuma"
            yield (
                f"waste[{index}].class",
                f"A área “{ctr.facility.name}” ({ctr.facility.get_kind_display()}) não recebe "
                f"{label}; aceita: {accepted_labels}.",
            )


@rule(
    "PROHIBITED_WASTE",
    Severity.ERROR,
    "Lei 3.978/2007 art. 7, art. 14 §6",
    "Sem resíduo domiciliar, industrial ou de serviço de saúde",
)
def prohibited_waste(ctr: CTRDraft):
    """A rede não recebe resíduos domiciliares não inertes, industriais nem de serviços de saúde."""
    for index, line in enumerate(ctr.waste):
        if line.waste_class in PROHIBITED_CLASSES:
            yield (
                f"waste[{index}].class",
                f"{CTRWasteClass(line.waste_class).label.replace(' (proibido)', '')} não pode "
                "ser levado à rede de recebimento de RCC e volumosos.",
            )


@rule(
    "LARGE_VOLUME_AT_PEV",
    Severity.ERROR,
    "Lei 3.978/2007 art. 12 §1-2",
    "PEV recebe no máximo o limite de pequeno volume (1 m³) por descarga",
)
def large_volume_at_pev(ctr: CTRDraft):
    """Um PEV recebe só pequenos volumes: até o limite do município (1 m³) por descarga;
    grandes volumes vão para a rede de ATT, reciclagem e aterro."""
    facility = ctr.facility
    if facility is not None and facility.kind == FacilityKind.PEV:
        limit = ctr.small_volume_limit
        if ctr.total_volume > limit:
            yield (
                "waste",
                f"O PEV “{facility.name}” recebe até {fmt(limit)} m³ por descarga; o CTR declara "
                f"{fmt(ctr.total_volume)} m³. Grandes volumes vão para ATT, área de reciclagem ou "
                "aterro de RCC.",
            )


@rule(
    "OVER_EQUIPMENT_CAPACITY",
    Severity.ERROR,
    "Lei 3.978/2007 art. 12 §4 II",
    "Volume declarado não excede a capacidade nominal do equipamento",
)
def over_equipment_capacity(ctr: CTRDraft):
    """A caçamba só pode ser usada até o seu nível original: sem chapas que aumentem a
    capacidade."""
    if ctr.equipment is not None and ctr.total_volume > ctr.equipment.nominal_capacity_m3:
        yield (
            "waste",
            f"O volume declarado ({fmt(ctr.total_volume)} m³) excede a capacidade nominal do "
            f"equipamento {ctr.equipment.code} ({fmt(ctr.equipment.nominal_capacity_m3)} m³).",
        )


@rule(
    "EQUIPMENT_NOT_REGISTERED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 13, art. 22 II",
    "Veículo e equipamento cadastrados pelo transportador",
)
def equipment_not_registered(ctr: CTRDraft):
    """O veículo e o equipamento usados devem estar no cadastro do transportador."""
    if ctr.vehicle is None:
        yield (
            "vehicle_plate",
            f"O veículo de placa {ctr.vehicle_plate or '(vazia)'} não está no cadastro deste "
            "transportador.",
        )
    if ctr.equipment is None and ctr.equipment_code:
        yield (
            "equipment_code",
            f"O equipamento {ctr.equipment_code} não está no cadastro deste transportador.",
        )


@rule(
    "NOT_IN_GENERATOR_PLAN",
    Severity.WARNING,
    "Lei 3.978/2007 art. 9 p.ú. I",
    "O PGRCC do grande gerador indica este transportador e este destino",
)
def not_in_generator_plan(ctr: CTRDraft):
    """O grande gerador anuncia no seu Projeto de Gerenciamento os transportadores e destinos
    que usará."""
    if not ctr.worksite_is_large_generator:
        return
    if ctr.transporter.pk not in ctr.plan_transporter_ids:
        yield ("transporter", "O PGRCC da obra não indica este transportador.")
    if ctr.facility is not None and ctr.facility.pk not in ctr.plan_facility_ids:
        yield (
            "destination_facility",
            f"O PGRCC da obra não indica “{ctr.facility.name}” como destino.",
        )


@rule(
    "CLASS_A_TO_LANDFILL",
    Severity.WARNING,
    "Lei 3.978/2007 art. 18 p.ú.",
    "Classe A a aterro havendo área de reciclagem licenciada",
)
def class_a_to_landfill(ctr: CTRDraft):
    """O resíduo classe A deve ser prioritariamente reciclado; o aterro é para quando a
    reciclagem for inviável."""
    if (
        ctr.facility is not None
        and ctr.facility.kind == FacilityKind.LANDFILL
        and ctr.recycling_area_available
        and any(line.waste_class == WasteClass.A for line in ctr.waste)
    ):
        yield (
            "destination_facility",
            "Há área de reciclagem licenciada no município: o resíduo classe A deve ser "
            "prioritariamente reciclado.",
        )


@dataclass
class ReceptionFacts:
    declared_m3: Decimal
    received_m3: Decimal
    tolerance_pct: Decimal


@rule(
    "RECEIVED_VOLUME_MISMATCH",
    Severity.WARNING,
    "Lei 3.978/2007 art. 13 p.ú.",
    "Volume recebido confere com o declarado (dentro da tolerância)",
    stage=Stage.RECEPTION,
)
def received_volume_mismatch(facts: ReceptionFacts):
    """O receptor confere o volume que chegou; uma diferença além da tolerância é registrada."""
    if facts.declared_m3 <= 0:
        return
    difference = abs(facts.received_m3 - facts.declared_m3)
    if difference * 100 > facts.tolerance_pct * facts.declared_m3:
        yield (
            "received_volume_m3",
            f"Recebido {fmt(facts.received_m3)} m³, declarado {fmt(facts.declared_m3)} m³: "
            f"diferença acima de {fmt(facts.tolerance_pct)}%.",
        )


@dataclass
class OpenFacts:
    number: str
    hours_open: float
    alert_hours: int


@rule(
    "OPEN_TOO_LONG",
    Severity.ALERT,
    "Lei 3.978/2007 art. 2 §1",
    "CTR recebido dentro do prazo de alerta do município",
    stage=Stage.MONITORING,
)
def open_too_long(facts: OpenFacts):
    """Um CTR que não chega ao destino no prazo é sinal de descarte irregular."""
    if facts.hours_open > facts.alert_hours:
        yield (
            None,
            f"O {facts.number} está aberto há {int(facts.hours_open)} h, além do prazo de "
            f"{facts.alert_hours} h.",
        )


def evaluate(subject, stage: str = Stage.ISSUE) -> list[Finding]:
    """Every finding of every rule of the stage, errors first, in catalogue order."""
    findings = []
    for item in REGISTRY.values():
        if item.stage != stage:
            continue
        for field_name, message in item.check(subject):
            findings.append(Finding(item.code, item.severity, message, item.article, field_name))
    order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.ALERT: 2}
    return sorted(findings, key=lambda f: order[f.severity])


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity == Severity.ERROR for f in findings)
