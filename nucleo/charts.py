"""Charts rendered on the server as SVG: no chart JavaScript, no CDN, and a figure that prints
and archives like the page around it. The dashboard's bars, stock lines and flow diagram are
written directly (below: matplotlib cost about a second of its request); the worksite's lines
over time still go through matplotlib."""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from matplotlib.dates import DateFormatter
from matplotlib.figure import Figure
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


# --- bars and lines drawn as SVG by hand ------------------------------------------------------
# matplotlib laid out and drew each of the dashboard's charts twice (once to measure the tight
# box, once to write it) and wrote every glyph as a path: about a second of the dashboard's
# request. These three are simple enough to write directly: a few milliseconds each, and the
# text stays text (selectable, and read by a screen reader with the rest of the page).

FONT = 13.0  # px, as the page's small text
TEXT = "#101828"
MUTED = "#475467"
AXIS = "#667085"
GRID = "#EAECF0"


def _nice_ticks(top: float, count: int = 5) -> list[float]:
    """0 and round steps (1, 2, 2.5 or 5 × 10ⁿ) up to at least `top`, about `count` of them."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    ticks = [0.0]
    while ticks[-1] < top - 1e-9 * step:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def _tick_label(tick: float, ticks: list[float]) -> str:
    """A tick's label: whole numbers when every tick is whole (0, 100, 200), else one decimal
    (0,0 2,5 5,0)."""
    return br_number(tick, 0 if all(t == int(t) for t in ticks) else 1)


def _text_width(text: str, size: float = FONT) -> float:
    """An estimate of a sans-serif text's width: enough to lay the margins out."""
    return len(text) * size * 0.52


def _fit(text: str, width: float, size: float = FONT) -> str:
    chars = max(int(width / (size * 0.52) + 0.5), 4)
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def _document(title: str, width: float, height: float, parts: list[str]) -> SafeString:
    return mark_safe(
        f'<svg role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" '
        f'class="chart-svg" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
        f'height="{height:.0f}" font-family="system-ui, sans-serif" font-size="{FONT:.0f}" '
        f'fill="{TEXT}">{"".join(parts)}</svg>'
    )


def _legend(names: Sequence[str], colours: Sequence[str], x: float, y: float, width: float):
    """Swatches and names in rows from (x, y); returns the parts and the height taken."""
    parts, column, row = [], x, 0
    for name, colour in zip(names, colours, strict=True):
        item = 16 + _text_width(name) + 14
        if column > x and column + item > x + width:
            column, row = x, row + 1
        top = y + row * (FONT + 6)
        parts.append(
            f'<rect x="{column:.1f}" y="{top + 2:.1f}" width="11" height="11" fill="{colour}"/>'
            f'<text x="{column + 16:.1f}" y="{top + FONT - 1:.1f}">{escape(name)}</text>'
        )
        column += item
    return parts, (row + 1) * (FONT + 6) if names else 0


def _value_axis(ticks: list[float], left: float, right: float, y_of, unit: str) -> list[str]:
    """Horizontal grid lines and their labels, on a vertical value axis."""
    parts = []
    for tick in ticks:
        y = y_of(tick)
        parts.append(
            f'<line x1="{left:.1f}" x2="{right:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{GRID if tick else AXIS}"/>'
            f'<text x="{left - 5:.1f}" y="{y + FONT * 0.35:.1f}" text-anchor="end" '
            f'fill="{MUTED}">{_tick_label(tick, ticks)}</text>'
        )
    return parts


def stacked_bars(
    categories: Sequence[str],
    series: dict[str, Sequence[float]],
    title: str,
    unit: str,
    colours: Sequence[str] = PALETTE,
    size: tuple[float, float] = (8, 3.6),
) -> SafeString:
    """Vertical bars per category (e.g. month), one stacked segment per series (e.g. class)."""
    width, height = size[0] * 96, size[1] * 96
    names = list(series)
    colour = [colours[i % len(colours)] for i in range(len(names))]
    totals = [sum(float(values[i]) for values in series.values()) for i in range(len(categories))]
    ticks = _nice_ticks(max(totals, default=0))
    left = 22 + max(_text_width(_tick_label(t, ticks)) for t in ticks) + 6
    legend, legend_height = _legend(names, colour, left, 2, width - left)
    slanted = len(categories) > 8
    longest = max((_text_width(c) for c in categories), default=0)
    bottom = height - (longest * 0.72 + 14 if slanted else FONT + 10)
    top = legend_height + 10
    band = (width - left - 4) / max(len(categories), 1)

    def y_of(value: float) -> float:
        return bottom - (bottom - top) * value / ticks[-1]

    parts = [*legend, *_value_axis(ticks, left, width - 4, y_of, unit)]
    parts.append(
        f'<text transform="translate(12 {(top + bottom) / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" fill="{MUTED}">{escape(unit)}</text>'
    )
    for i, category in enumerate(categories):
        x = left + band * i + band * 0.1
        base = 0.0
        for name, values, fill in zip(names, series.values(), colour, strict=True):
            value = float(values[i])
            if value > 0:
                tip = f"{category} — {name}: {br_number(value, 1)} {unit}"
                parts.append(
                    f'<rect x="{x:.1f}" y="{y_of(base + value):.1f}" width="{band * 0.8:.1f}" '
                    f'height="{y_of(base) - y_of(base + value):.1f}" fill="{fill}">'
                    f"<title>{escape(tip)}</title></rect>"
                )
            base += value
        centre = x + band * 0.4
        anchor = (
            f'text-anchor="end" transform="rotate(-45 {centre:.1f} {bottom + 12:.1f})"'
            if slanted
            else 'text-anchor="middle"'
        )
        parts.append(
            f'<text x="{centre:.1f}" y="{bottom + 12 + (0 if slanted else 4):.1f}" {anchor} '
            f'fill="{MUTED}">{escape(category)}</text>'
        )
    return _document(title, width, height, parts)


def horizontal_bars(
    labels: Sequence[str],
    values: Sequence[float],
    title: str,
    unit: str,
    reference: float | None = None,
    colours: Sequence[str] | None = None,
) -> SafeString:
    """One bar per label, largest at the top; an optional reference line (e.g. 100 %)."""
    width = 8 * 96
    row = 0.34 * 96
    height = max(1.6 * 96, row * len(labels) + 0.8 * 96)
    left = min(max((_text_width(label) for label in labels), default=0) + 12, width * 0.45)
    top, bottom = 6.0, height - 2 * FONT - 14
    ticks = _nice_ticks(max([float(v) for v in values] + [reference or 0]))
    right = width - 20  # room for the last tick's label

    def x_of(value: float) -> float:
        return left + (right - left) * value / ticks[-1]

    parts = []
    for tick in ticks:
        x = x_of(tick)
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top:.1f}" y2="{bottom:.1f}" '
            f'stroke="{GRID if tick else AXIS}"/>'
            f'<text x="{x:.1f}" y="{bottom + FONT + 4:.1f}" text-anchor="middle" '
            f'fill="{MUTED}">{_tick_label(tick, ticks)}</text>'
        )
    parts.append(
        f'<text x="{(left + right) / 2:.1f}" y="{height - 4:.1f}" text-anchor="middle" '
        f'fill="{MUTED}">{escape(unit)}</text>'
    )
    band = (bottom - top) / max(len(labels), 1)
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = top + band * i
        fill = colours[i % len(colours)] if colours else PALETTE[0]
        tip = f"{label}: {br_number(float(value), 1)}"
        parts.append(
            f'<rect x="{left:.1f}" y="{y + band * 0.1:.1f}" '
            f'width="{max(x_of(float(value)) - left, 0):.1f}" height="{band * 0.8:.1f}" '
            f'fill="{fill}"><title>{escape(tip)}</title></rect>'
            f'<text x="{left - 6:.1f}" y="{y + band / 2 + FONT * 0.35:.1f}" text-anchor="end">'
            f"<title>{escape(label)}</title>{escape(_fit(label, left - 12))}</text>"
        )
    if reference is not None:
        x = x_of(reference)
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top:.1f}" y2="{bottom:.1f}" '
            f'stroke="#B42318" stroke-dasharray="5 3"/>'
        )
    return _document(title, width, height, parts)


def _date_ticks(count: int, most: int = 6) -> list[int]:
    """Indexes of about `most` evenly spaced days, the first and the last among them."""
    if count <= most:
        return list(range(count))
    step = math.ceil((count - 1) / (most - 1))
    return list(range(0, count, step))


def lines_by_panel(
    days: Sequence,
    panels: dict[str, dict[str, Sequence[float]]],
    title: str,
    unit: str,
    colours: dict[str, str] | None = None,
) -> SafeString:
    """One small chart per panel (e.g. facility), stacked, sharing the time axis; one line per
    series (e.g. class), with the series' colour the same in every panel, drawn as steps (the
    value holds until the next day). Narrow enough to be drawn near its true size on a phone."""
    names = sorted({name for series in panels.values() for name in series})
    colour = colours or {name: PALETTE[i % 8] for i, name in enumerate(names)}
    width = 4.8 * 96
    legend, legend_height = _legend(names, [colour[n] for n in names], 4, 4, width - 8)
    panel_height, gap = 1.5 * 96 - 8, 8
    y = legend_height + 8
    height = y + len(panels) * (panel_height + gap) + FONT + 8
    parts = list(legend)
    count = len(days)
    scales = {
        panel: _nice_ticks(max((max(v, default=0) for v in series.values()), default=0), 3)
        for panel, series in panels.items()
    }
    # One time axis for every panel: the widest tick labels set where the days begin.
    left = 22 + max(_text_width(_tick_label(t, ts)) for ts in scales.values() for t in ts) + 6
    span = (width - 8 - left) / max(count, 1)  # each day's step, the last one included
    for panel, series in panels.items():
        ticks = scales[panel]
        top, bottom = y + FONT + 8, y + panel_height

        def y_of(value: float, top=top, bottom=bottom, ticks=ticks) -> float:
            return bottom - (bottom - top) * value / ticks[-1]

        parts.append(f'<text x="{left:.1f}" y="{y + FONT:.1f}" font-weight="600">'
                     f"{escape(panel)}</text>")  # fmt: skip
        parts += _value_axis(ticks, left, width - 8, y_of, unit)
        parts.append(
            f'<text transform="translate(12 {(top + bottom) / 2:.1f}) rotate(-90)" '
            f'text-anchor="middle" fill="{MUTED}" font-size="{FONT - 2:.0f}">{escape(unit)}'
            "</text>"
        )
        for name, values in series.items():
            steps = [f"M{left:.1f},{y_of(float(values[0])):.1f}"] if count else []
            for i in range(1, count):
                if values[i] != values[i - 1]:  # a level held over days is one segment
                    steps.append(f"H{left + span * i:.1f}V{y_of(float(values[i])):.1f}")
            steps.append(f"H{left + span * count:.1f}")
            parts.append(
                f'<path d="{"".join(steps)}" fill="none" stroke="{colour[name]}" '
                f'stroke-width="1.6"><title>{escape(panel)} — {escape(name)}</title></path>'
            )
        y += panel_height + gap
    for i in _date_ticks(count):
        x = left + span * i
        anchor = "end" if x > width - 30 else "middle"  # the last one inside the drawing
        parts.append(
            f'<text x="{x:.1f}" y="{y + FONT - 2:.1f}" text-anchor="{anchor}" '
            f'fill="{MUTED}">{days[i]:%d/%m}</text>'
        )
    return _document(title, width, height, parts)


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
