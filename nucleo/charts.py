"""Charts rendered on the server as SVG with matplotlib: no chart JavaScript, no CDN, and a
figure that prints and archives like the page around it."""

from __future__ import annotations

import io
from collections.abc import Sequence

from django.utils.safestring import SafeString, mark_safe
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from config.br import br_number

# Okabe-Ito, as on the maps: safe for the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#000000"]


def _br_number(value: float, _pos=None) -> str:
    return br_number(value, 0 if abs(value) >= 10 else 1)


def _svg(figure: Figure, title: str) -> SafeString:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]  # drop the XML prolog and doctype: inline in HTML
    # An accessible name for the figure; the tables below it carry the same numbers.
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{title}" ', 1)
    return mark_safe(svg)


def stacked_bars(
    categories: Sequence[str],
    series: dict[str, Sequence[float]],
    title: str,
    unit: str,
) -> SafeString:
    """Vertical bars per category (e.g. month), one stacked segment per series (e.g. class)."""
    figure = Figure(figsize=(8, 3.6), dpi=96)
    axes = figure.subplots()
    bottoms = [0.0] * len(categories)
    for index, (name, values) in enumerate(series.items()):
        axes.bar(categories, values, bottom=bottoms, label=name, color=PALETTE[index % 8])
        bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
    axes.set_ylabel(unit)
    axes.yaxis.set_major_formatter(FuncFormatter(_br_number))
    axes.spines[["top", "right"]].set_visible(False)
    if series:
        axes.legend(frameon=False, ncols=min(len(series), 5), loc="upper left",
                    bbox_to_anchor=(0, 1.18))  # fmt: skip
    axes.tick_params(axis="x", labelrotation=45 if len(categories) > 8 else 0)
    return _svg(figure, title)


def horizontal_bars(
    labels: Sequence[str],
    values: Sequence[float],
    title: str,
    unit: str,
    reference: float | None = None,
    colours: Sequence[str] | None = None,
) -> SafeString:
    """One bar per label, largest at the top; an optional reference line (e.g. 100 %)."""
    height = max(1.6, 0.34 * len(labels) + 0.8)
    figure = Figure(figsize=(8, height), dpi=96)
    axes = figure.subplots()
    positions = list(range(len(labels)))[::-1]
    axes.barh(positions, values, color=list(colours) if colours else PALETTE[0])
    axes.set_yticks(positions, labels)
    axes.set_xlabel(unit)
    axes.xaxis.set_major_formatter(FuncFormatter(_br_number))
    if reference is not None:
        axes.axvline(reference, color="#B42318", linestyle="--", linewidth=1)
    axes.spines[["top", "right"]].set_visible(False)
    return _svg(figure, title)
