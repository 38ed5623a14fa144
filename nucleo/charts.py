"""Charts rendered on the server as SVG with matplotlib: no chart JavaScript, no CDN, and a
figure that prints and archives like the page around it."""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from matplotlib.dates import DateFormatter
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, MaxNLocator

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
    colours: Sequence[str] = PALETTE,
    size: tuple[float, float] = (8, 3.6),
) -> SafeString:
    """Vertical bars per category (e.g. month), one stacked segment per series (e.g. class)."""
    figure = Figure(figsize=size, dpi=96)
    axes = figure.subplots()
    bottoms = [0.0] * len(categories)
    for index, (name, values) in enumerate(series.items()):
        axes.bar(categories, values, bottom=bottoms, label=name,
                 color=colours[index % len(colours)])  # fmt: skip
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


def lines_by_panel(
    days: Sequence,
    panels: dict[str, dict[str, Sequence[float]]],
    title: str,
    unit: str,
    colours: dict[str, str] | None = None,
) -> SafeString:
    """One small chart per panel (e.g. facility), stacked, sharing the time axis; one line per
    series (e.g. class), with the series' colour the same in every panel."""
    names = sorted({name for series in panels.values() for name in series})
    colour = colours or {name: PALETTE[i % 8] for i, name in enumerate(names)}
    # Narrow enough to be drawn near its true size on a phone.
    figure = Figure(figsize=(4.8, 0.6 + 1.5 * len(panels)), dpi=96, layout="constrained")
    axes_list = figure.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for axes, (panel, series) in zip(axes_list, panels.items(), strict=True):
        for name, values in series.items():
            axes.plot(days, values, label=name, color=colour[name], linewidth=1.6,
                      drawstyle="steps-post")  # fmt: skip
        axes.set_title(panel, loc="left", fontsize=10)
        axes.set_ylim(bottom=0)
        axes.set_ylabel(unit)
        axes.yaxis.set_major_formatter(FuncFormatter(_br_number))
        axes.spines[["top", "right"]].set_visible(False)
    axes_list[-1].xaxis.set_major_formatter(DateFormatter("%d/%m"))
    axes_list[-1].xaxis.set_major_locator(MaxNLocator(6))
    handles = [Line2D([], [], color=colour[n], linewidth=2, label=n) for n in names]
    figure.legend(handles=handles, loc="outside upper left", ncols=min(len(names), 3),
                  frameon=False)  # fmt: skip
    return _svg(figure, title)


# --- the flow diagram (hand-drawn SVG: matplotlib has no layered flow) -----------------------


@dataclass(frozen=True)
class _Node:
    column: int
    name: str
    value: float
    top: float = 0.0
    height: float = 0.0


def _wrap(text: str, chars: int, lines: int = 2) -> list[str]:
    wrapped = textwrap.wrap(text, max(chars, 4)) or [""]
    if len(wrapped) > lines:
        last = " ".join(wrapped[lines - 1 :])
        wrapped = wrapped[: lines - 1] + [last[: max(chars - 1, 3)].rstrip() + "…"]
    return wrapped


def flow_diagram(
    headings: Sequence[str],
    columns: Sequence[Sequence[str]],
    links: Sequence[tuple[int, str, str, str, float]],
    colours: dict[str, str],
    link_labels: dict[str, str],
    title: str,
    width: int = 960,
    unit: str = "m³",
) -> SafeString:
    """A layered flow diagram (Sankey-like): columns of nodes, left to right, their height by
    volume, and ribbons between neighbouring columns, one per (source, target, kind), coloured
    by kind. `links` are (column of the source, source, target, kind, value). Drawn at
    `width` user units with its labels to the right of each column's bars; the page shows a
    narrow drawing on a phone and a wide one on a desktop, each with text at its true size."""
    font, bar, gap = 12.0, 10.0, 10.0
    line = font * 1.25
    step = width / len(columns)
    chars = int((step - bar - 10) / (font * 0.56))
    value_in: dict[tuple[int, str], float] = {}
    value_out: dict[tuple[int, str], float] = {}
    for column, source, target, _kind, value in links:
        value_out[column, source] = value_out.get((column, source), 0) + value
        value_in[column + 1, target] = value_in.get((column + 1, target), 0) + value
    nodes = {
        (c, name): _Node(c, name, max(value_in.get((c, name), 0), value_out.get((c, name), 0)))
        for c, names in enumerate(columns)
        for name in names
    }
    labels = {key: _wrap(node.name, chars) for key, node in nodes.items()}
    largest = max(
        (sum(n.value for n in nodes.values() if n.column == c) for c in range(len(columns))),
        default=0,
    )
    scale = 320 / largest if largest else 0  # px per unit for the fullest column
    # Each node takes the height of its volume, or of its label if taller, plus a gap.
    placed: dict[tuple[int, str], _Node] = {}
    column_heights = []
    for c, names in enumerate(columns):
        y = 0.0
        for name in names:
            node = nodes[c, name]
            height = max(node.value * scale, 1.5)
            slot = max(height, line * (len(labels[c, name]) + 1))
            placed[c, name] = _Node(c, name, node.value, y + (slot - height) / 2, height)
            y += slot + gap
        column_heights.append(y - gap)
    plot = max(column_heights, default=0)
    top = 28.0
    for c, height in enumerate(column_heights):  # each column centred on the tallest
        for name in columns[c]:
            node = placed[c, name]
            placed[c, name] = _Node(c, name, node.value, node.top + top + (plot - height) / 2,
                                    node.height)  # fmt: skip
    parts = []
    # Ribbons, stacked in each node in the order of the nodes at their other end.
    order = {key: i for i, key in enumerate(placed)}
    out_offset = dict.fromkeys(placed, 0.0)
    in_offset = dict.fromkeys(placed, 0.0)
    # Within a pair of nodes, the kinds in the order the last column shows them, so that the
    # ribbons of a kind run on at the height they came in.
    last = len(columns) - 1
    rank = {}
    for column, _source, target, kind, _value in links:
        if column == last - 1:
            rank[kind] = min(rank.get(kind, len(order)), order[last, target])
    ranked = sorted(
        links,
        key=lambda k: (k[0], order[k[0], k[1]], order[k[0] + 1, k[2]], rank.get(k[3], 0), k[3]),
    )
    for column, source, target, kind, value in ranked:
        start, end = placed[column, source], placed[column + 1, target]
        thickness = value * scale
        x0, x1 = column * step + bar, (column + 1) * step
        y0 = start.top + out_offset[column, source]
        y1 = end.top + in_offset[column + 1, target]
        out_offset[column, source] += thickness
        in_offset[column + 1, target] += thickness
        mid = (x0 + x1) / 2
        path = (
            f"M{x0:.1f},{y0:.1f} C{mid:.1f},{y0:.1f} {mid:.1f},{y1:.1f} {x1:.1f},{y1:.1f} "
            f"L{x1:.1f},{y1 + thickness:.1f} C{mid:.1f},{y1 + thickness:.1f} "
            f"{mid:.1f},{y0 + thickness:.1f} {x0:.1f},{y0 + thickness:.1f} Z"
        )
        tip = f"{source} → {target}: {br_number(value, 1)} {unit} ({link_labels[kind]})"
        parts.append(
            f'<path d="{path}" fill="{colours[kind]}" fill-opacity="0.55">'
            f"<title>{escape(tip)}</title></path>"
        )
    for c, heading in enumerate(headings):
        x = c * step
        parts.append(
            f'<text x="{x:.1f}" y="{font + 2:.1f}" font-weight="700">{escape(heading)}</text>'
        )
    for key, node in placed.items():
        x = node.column * step
        tip = f"{node.name}: {br_number(node.value, 1)} {unit}"  # the whole name, if cut
        parts.append(
            f'<rect x="{x:.1f}" y="{node.top:.1f}" width="{bar:.0f}" height="{node.height:.1f}" '
            f'fill="#344054"><title>{escape(tip)}</title></rect>'
        )
        text = labels[key] + [f"{br_number(node.value, 1)} {unit}"]
        first = node.top + node.height / 2 - line * (len(text) - 1) / 2 + font * 0.35
        # The name in bold, the volume below it in plain text.
        weights = [' font-weight="600"'] * (len(text) - 1) + [""]
        spans = "".join(
            f'<tspan x="{x + bar + 5:.1f}" y="{first + i * line:.1f}"{weight}>{escape(t)}</tspan>'
            for i, (t, weight) in enumerate(zip(text, weights, strict=True))
        )
        # A white halo keeps a label readable over the ribbons under it.
        parts.append(
            f'<text paint-order="stroke" stroke="#fff" stroke-width="3" '
            f'stroke-linejoin="round"><title>{escape(tip)}</title>{spans}</text>'
        )
    height = top + plot + 8
    return mark_safe(
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}" '
        f'class="flow-diagram" viewBox="0 0 {width} {height:.0f}" width="{width}" '
        f'height="{height:.0f}" font-family="system-ui, sans-serif" font-size="{font:.0f}" '
        f'fill="#101828">{"".join(parts)}</svg>'
    )


def lines_over_time(lines: Sequence, title: str, unit: str, today=None) -> SafeString:
    """Lines over dates, each with its `label`, `days`, `values`, `colour` and `style` (a
    matplotlib line style: "-", "--", ":"), and a vertical mark on `today`. Narrow enough to
    be drawn near its true size on a phone."""
    figure = Figure(figsize=(4.8, 3.2), dpi=96, layout="constrained")
    axes = figure.subplots()
    for line in lines:
        axes.plot(line.days, line.values, label=line.label, color=line.colour,
                  linestyle=line.style, linewidth=1.8, marker="o" if line.style == "-" else None,
                  markersize=3)  # fmt: skip
    if today is not None:
        axes.axvline(today, color="#667085", linewidth=1)
        axes.annotate("hoje", (today, 1), xycoords=("data", "axes fraction"), fontsize=8,
                      color="#667085", ha="right", va="top", rotation=90)  # fmt: skip
    axes.set_ylim(bottom=0)
    axes.set_ylabel(unit)
    axes.yaxis.set_major_formatter(FuncFormatter(_br_number))
    axes.xaxis.set_major_formatter(DateFormatter("%m/%Y"))
    axes.xaxis.set_major_locator(MaxNLocator(5))
    axes.spines[["top", "right"]].set_visible(False)
    figure.legend(loc="outside upper left", ncols=2, frameon=False, fontsize=8)
    return _svg(figure, title)
