"""What the colours of the maps mean: the styles of the network's layers, and the colour
samples that make a layer control double as a legend. maps/static/maps/ctr.css mirrors the
kind colours."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.html import format_html

from pev_network.models import FacilityKind


@dataclass(frozen=True)
class KindStyle:
    colour: str
    layer_name: str  # pt-BR, shown in the layer control and the legend


# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
KIND_STYLES: dict[str, KindStyle] = {
    FacilityKind.PEV: KindStyle("#009E73", "Pontos de Entrega Voluntária (PEV)"),
    FacilityKind.ATT: KindStyle("#D55E00", "Áreas de Transbordo e Triagem (ATT)"),
    FacilityKind.RECYCLING: KindStyle("#0072B2", "Áreas de reciclagem"),
    FacilityKind.LANDFILL: KindStyle("#CC79A7", "Aterros de RCC"),
}
BASIN_STYLE = KindStyle("#6B7280", "Bacias de captação")


def swatch_label(colour: str, text: str, style: str = "solid") -> str:
    """A layer-control label with a colour sample (style: solid, dashed or ring), so the
    control doubles as a legend."""
    return format_html(
        '<span class="ctr-swatch ctr-swatch-{}" style="--swatch: {}" aria-hidden="true"></span>{}',
        style,
        colour,
        text,
    )


def kind_legend() -> list[dict]:
    """The legend of the facility kinds, for a page that shows it beside the map."""
    return [
        {"colour": style.colour, "label": style.layer_name, "kind": kind}
        for kind, style in KIND_STYLES.items()
    ]
