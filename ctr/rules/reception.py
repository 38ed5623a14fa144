"""The rules on a CTR's reception: those checked when the facility confirms it (the volume,
where and when it was confirmed) and the alert on a CTR whose reception does not come in time
(the monitoring stage)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from config.br import br_number

from .. import plausibility
from .catalogue import Message, Severity, Stage, breach, rule


@dataclass
class ReceptionFacts:
    declared_m3: Decimal
    received_m3: Decimal
    tolerance_pct: Decimal
    # ctr.plausibility: where the reception was confirmed (None: the
    # device sent no location) and the trip from departure to reception.
    place: plausibility.Place | None = None
    travel: plausibility.Travel | None = None


@rule(
    "RECEIVED_VOLUME_MISMATCH",
    Severity.WARNING,
    "Lei 3.978/2007 art. 13 p.ú.",
    "Volume recebido confere com o declarado (dentro da tolerância)",
    message=Message(
        "Recebido {received:decimal} m³, declarado {declared:decimal} m³: diferença acima de "
        "{tolerance:decimal}%."
    ),
    stage=Stage.RECEPTION,
)
def received_volume_mismatch(facts: ReceptionFacts):
    """O receptor confere o volume que chegou; uma diferença além da tolerância é registrada."""
    if facts.declared_m3 <= 0:
        return
    difference = abs(facts.received_m3 - facts.declared_m3)
    if difference * 100 > facts.tolerance_pct * facts.declared_m3:
        yield breach(
            "received_volume_m3",
            received=facts.received_m3,
            declared=facts.declared_m3,
            tolerance=facts.tolerance_pct,
        )


# --- where and when the reception was confirmed (ctr.plausibility) ----------------------------


@rule(
    "RECEPTION_AWAY_FROM_FACILITY",
    Severity.WARNING,
    "Lei 3.978/2007 art. 13 p.ú.",
    "Recebimento confirmado na área de destino (dentro da tolerância do GPS)",
    message=Message(
        "Recebimento confirmado a {distance} m da área “{facility}”, além da tolerância de "
        "{tolerance:decimal} m do GPS."
    ),
    stage=Stage.RECEPTION,
)
def reception_away_from_facility(facts: ReceptionFacts):
    """O recebimento comprova a destinação correta: confirmado longe da área, com o local do
    aparelho do receptor, é registrado para o Núcleo (não é recusado: o GPS de um celular erra
    sob um telhado; o Núcleo vê o padrão)."""
    place = facts.place
    if place is not None and place.away:
        yield breach(
            "location",
            distance=br_number(place.distance_m, 0),  # "2.062": a thousands dot, in metres
            facility=place.facility,
            tolerance=place.tolerance_m,
        )


@rule(
    "TRAVEL_TOO_FAST",
    Severity.ALERT,
    "Lei 3.978/2007 art. 3 VI, art. 13 p.ú.",
    "Tempo de viagem possível para a distância da origem ao destino",
    message=Message(
        "Recebido {elapsed} depois da partida: {distance:decimal} km de percurso estimado "
        "levam pelo menos {fastest} a {speed:decimal} km/h."
    ),
    stage=Stage.RECEPTION,
)
def travel_too_fast(facts: ReceptionFacts):
    """Uma carga que chega antes do que a distância permite não saiu de onde nem quando o
    CTR diz (o CTR informa a origem, art. 3 VI): um alerta para o acompanhamento."""
    trip = facts.travel
    if trip is not None and trip.too_fast:
        yield breach(
            None,
            elapsed=plausibility.duration_text(trip.elapsed_min),
            distance=Decimal(str(round(trip.road_km, 1))),
            fastest=plausibility.duration_text(trip.fastest_min),
            speed=trip.max_speed_kmh,
        )


@rule(
    "TRAVEL_TOO_SLOW",
    Severity.ALERT,
    "Lei 3.978/2007 art. 13 p.ú., art. 2 §1",
    "Tempo de viagem sem indício de desvio no caminho",
    message=Message(
        "Recebido {elapsed} depois da partida: {distance:decimal} km de percurso estimado "
        "levam no máximo {slowest} (a {speed:decimal} km/h, mais {slack} min de espera); "
        "possível desvio no caminho."
    ),
    stage=Stage.RECEPTION,
)
def travel_too_slow(facts: ReceptionFacts):
    """Uma carga que demora muito mais do que a distância pede pode ter passado por outro
    lugar antes (e ter sido aliviada num bota-fora, art. 2 §1): um alerta para o
    acompanhamento e um suspeito das denúncias de descarte perto da origem."""
    trip = facts.travel
    if trip is not None and trip.too_slow:
        yield breach(
            None,
            elapsed=plausibility.duration_text(trip.elapsed_min),
            distance=Decimal(str(round(trip.road_km, 1))),
            slowest=plausibility.duration_text(trip.slowest_min),
            speed=trip.min_speed_kmh,
            slack=trip.slack_min,
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
    message=Message("O {number} está aberto há {hours} h, além do prazo de {alert_hours} h."),
    stage=Stage.MONITORING,
)
def open_too_long(facts: OpenFacts):
    """Um CTR que não chega ao destino no prazo é sinal de descarte irregular."""
    if facts.hours_open > facts.alert_hours:
        yield breach(
            None, number=facts.number, hours=int(facts.hours_open), alert_hours=facts.alert_hours
        )
