"""The PDF kit every printed document of the platform is drawn with (the CTR and the worksite
report in ctr.printing, the notice and the infraction record in fiscalization.enforcement_pdf,
the Habite-se declaration in generators.declaration_pdf): one A4 page geometry, palette, fonts
and paragraph styles; the letterhead band (and the numbered band of a document anyone may
verify), the verification QR code and the watermark drawn on the first page; the running header
and the footer with the page number; section bars, label/value fields, ruled tables and
signature boxes. Whose document it is, the letterhead's first line says (`issued_by`, from a
config.letterhead.Letterhead: the municipality's city hall, or the platform).

Fonts: reportlab's standard Helvetica, whose WinAnsi encoding covers Portuguese, so nothing is
registered and no system font package is needed; a TrueType face would be registered here
(pdfmetrics.registerFont) and named in FONT and FONT_BOLD. The QR matrix comes from segno.

A document module builds its story from these pieces and calls document(); it never draws its
own header band, footer or tables."""

from __future__ import annotations

import io
from collections.abc import Callable
from xml.sax.saxutils import escape

import segno
from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import BaseDocTemplate, Frame, PageTemplate, Paragraph, Table, TableStyle

from .letterhead import Letterhead, platform_name

PAGE_W, PAGE_H = A4
MARGIN = 14 * mm
CONTENT_W = PAGE_W - 2 * MARGIN
TOP = PAGE_H - MARGIN  # the baseline the letterhead's offsets count down from
QR_SIZE = 30 * mm

FONT = "Helvetica"
FONT_BOLD = "Helvetica-Bold"

INK = colors.HexColor("#1f2937")
SOFT = colors.HexColor("#4b5563")
LINE = colors.HexColor("#9ca3af")
BAND = colors.HexColor("#e5e7eb")
BRAND = colors.HexColor("#14532d")
FLAG_BG = colors.HexColor("#fef3c7")
ERROR = colors.HexColor("#b91c1c")


def issued_by(head: Letterhead, *parts: str) -> str:
    """The small grey line a letterhead opens with: the city hall the document belongs to,
    then `parts` (the office, the document's kind), then the platform ("Prefeitura Municipal
    de Guaratinguetá/SP · Fiscalização · Plataforma CTR"); the platform alone opens a document
    of no one municipality."""
    names = [head.issuer, *parts]
    if head.municipality:
        names.append(platform_name())
    return " · ".join(name for name in names if name)


# --- styles -----------------------------------------------------------------------------------


def make_style(name: str, **kw) -> ParagraphStyle:
    """A paragraph style: the body text (FONT, 8.5 pt, INK) with `kw` changed."""
    base = {"fontName": FONT, "fontSize": 8.5, "leading": 10.5, "textColor": INK}
    base.update(kw)
    return ParagraphStyle(name, **base)


BODY = make_style("body")
SMALL = make_style("small", fontSize=7.5, leading=9)
LABEL = make_style("label", fontSize=7, leading=8.5, textColor=SOFT)
SECTION = make_style("section", fontName=FONT_BOLD, fontSize=9, leading=11, textColor=BRAND)
STRONG = make_style("strong", fontName=FONT_BOLD)
RIGHT = make_style("right", alignment=TA_RIGHT)
RIGHT_BOLD = make_style("right_bold", fontName=FONT_BOLD, alignment=TA_RIGHT)
SMALL_RIGHT = make_style("small_right", fontSize=7.5, leading=9, alignment=TA_RIGHT)
TABLE_HEAD = make_style("table_head", fontName=FONT_BOLD, fontSize=7.5, leading=9)


def p(text: str, style: ParagraphStyle = BODY) -> Paragraph:
    """A paragraph of plain text (escaped: names may hold '&' or '<')."""
    return Paragraph(escape(str(text)), style)


# --- QR code ----------------------------------------------------------------------------------

QUIET_ZONE = 4  # modules of white border the QR standard asks for


def qr_matrix(url: str) -> tuple[tuple[bool, ...], ...]:
    """The QR modules for `url` (row 0 at the top, True = dark), level M: it survives a
    crease or a coffee stain on the printed paper."""
    qr = segno.make(url, error="m", micro=False, boost_error=False)
    return tuple(tuple(bool(cell) for cell in row) for row in qr.matrix)


def draw_qr(canvas: Canvas, url: str, x: float, y: float, size: float) -> None:
    """Draw the QR of `url` in the square of side `size` whose lower-left corner is (x, y),
    quiet zone included: vector rectangles, one per horizontal run of dark modules."""
    matrix = qr_matrix(url)
    modules = len(matrix) + 2 * QUIET_ZONE
    unit = size / modules
    canvas.saveState()
    canvas.setFillColor(colors.white)
    canvas.rect(x, y, size, size, stroke=0, fill=1)
    canvas.setFillColor(colors.black)
    top = y + size - QUIET_ZONE * unit
    for r, row in enumerate(matrix):
        c = 0
        while c < len(row):
            if not row[c]:
                c += 1
                continue
            start = c
            while c < len(row) and row[c]:
                c += 1
            # PDF's y grows upwards: row r sits r+1 units below the top of the symbol.
            canvas.rect(
                x + (QUIET_ZONE + start) * unit,
                top - (r + 1) * unit,
                (c - start) * unit,
                unit,
                stroke=0,
                fill=1,
            )
    canvas.restoreState()


def _fit(text: str, font: str, size: float, width: float, minimum: float = 5) -> float:
    """The largest font size up to `size` at which `text` fits in `width`."""
    while size > minimum and stringWidth(text, font, size) > width:
        size -= 0.25
    return size


def verification_qr(canvas: Canvas, url: str) -> None:
    """The QR code of the document's public verification page in the letterhead's top right
    corner and, under it, the address it holds: the paper can be checked by anyone."""
    right = PAGE_W - MARGIN
    canvas.saveState()
    draw_qr(canvas, url, right - QR_SIZE, TOP - QR_SIZE, QR_SIZE)
    canvas.setFillColor(INK)
    canvas.setFont(FONT, _fit(url, FONT, 7, 85 * mm))
    canvas.drawRightString(right, TOP - QR_SIZE - 8, url)
    canvas.setFont(FONT, 6.5)
    canvas.setFillColor(SOFT)
    canvas.drawRightString(right, TOP - QR_SIZE - 16, "Verifique a autenticidade neste endereço")
    canvas.restoreState()


# --- the first page ---------------------------------------------------------------------------


def letterhead(canvas: Canvas, kicker: str, title: str, subtitle: str, rule_below: float) -> None:
    """The band a document opens with: who issues it (small, grey), its title, what it is, and
    a rule `rule_below` points under the top margin. The document draws its number, dates and
    QR code around it."""
    canvas.saveState()
    canvas.setFillColor(SOFT)
    canvas.setFont(FONT, 8)
    canvas.drawString(MARGIN, TOP - 8, kicker)
    canvas.setFillColor(BRAND)
    canvas.setFont(FONT_BOLD, 15)
    canvas.drawString(MARGIN, TOP - 26, title)
    canvas.setFillColor(INK)
    canvas.setFont(FONT, 8.5)
    canvas.drawString(MARGIN, TOP - 38, subtitle)
    canvas.setStrokeColor(INK)
    canvas.setLineWidth(0.8)
    canvas.line(MARGIN, TOP - rule_below, PAGE_W - MARGIN, TOP - rule_below)
    canvas.restoreState()


# The band of a document anyone may verify (numbered_header), above the flowing content.
NUMBERED_HEADER_H = 42 * mm


def numbered_header(
    kicker: str, title: str, subtitle: str, number: str, lines: list[str], verify_url: str
) -> Callable[[Canvas], None]:
    """The first page's band of a document anyone may verify (the CTR, the certificate, the
    Habite-se declaration), NUMBERED_HEADER_H tall: the letterhead, the document's number, a
    few lines of dates and status, and the QR code of its public page."""

    def draw(canvas: Canvas) -> None:
        letterhead(canvas, kicker, title, subtitle, NUMBERED_HEADER_H - 3 * mm)
        canvas.saveState()
        canvas.setFillColor(INK)
        canvas.setFont(FONT_BOLD, 14)
        canvas.drawString(MARGIN, TOP - 60, number)
        canvas.setFont(FONT, 9)
        for index, line in enumerate(lines):
            canvas.drawString(MARGIN, TOP - 75 - 12 * index, line)
        canvas.restoreState()
        verification_qr(canvas, verify_url)

    return draw


def watermark(canvas: Canvas, text: str) -> None:
    """A large pale red word across the page: the paper of a cancelled or annulled document
    can never pass for a valid one."""
    canvas.saveState()
    canvas.setFont(FONT_BOLD, 80)
    canvas.setFillColor(colors.Color(0.73, 0.11, 0.11, alpha=0.12))
    canvas.translate(PAGE_W / 2, PAGE_H / 2)
    canvas.rotate(35)
    canvas.drawCentredString(0, 0, text)
    canvas.restoreState()


# --- building blocks --------------------------------------------------------------------------


def section(title: str) -> Table:
    """A section's title on a grey bar across the page."""
    table = Table([[p(title, SECTION)]], colWidths=[CONTENT_W])
    table.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (-1, -1), BAND),
                ("TOPPADDING", (0, 0), (-1, -1), 2),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
            ]
        )
    )
    return table


def fields(pairs: list[tuple[str, str]], columns: int = 2) -> Table:
    """Label/value pairs laid out in `columns` pairs per row; a pair whose label ends in '*'
    spans the whole row."""
    rows, spans, current = [], [], []
    for label, value in pairs:
        if label.endswith("*"):
            if current:
                rows.append(current + [""] * (2 * columns - len(current)))
                current = []
            rows.append([p(label[:-1], LABEL), p(value or "—")] + [""] * (2 * columns - 2))
            spans.append(("SPAN", (1, len(rows) - 1), (-1, len(rows) - 1)))
            continue
        current += [p(label, LABEL), p(value or "—")]
        if len(current) == 2 * columns:
            rows.append(current)
            current = []
    if current:
        rows.append(current + [""] * (2 * columns - len(current)))
    label_w = 30 * mm
    value_w = CONTENT_W / columns - label_w
    table = Table(rows, colWidths=[label_w, value_w] * columns)
    table.setStyle(
        TableStyle(
            [
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LINEBELOW", (0, 0), (-1, -1), 0.3, LINE),
                ("TOPPADDING", (0, 0), (-1, -1), 2),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
                *spans,
            ]
        )
    )
    return table


def grid(
    header: list[str],
    rows: list[list],
    widths: list[float],
    numeric: tuple[int, ...] = (),
    highlight: tuple[int, ...] = (),
    bold_last: bool = False,
) -> Table:
    """A ruled table whose header repeats on every page; `numeric` columns right-aligned,
    `highlight` rows (0 = first data row) on a yellow background, `bold_last` rules off the
    last row as a total. A cell may be a Paragraph of its own."""
    head = [p(h, TABLE_HEAD) for h in header]
    body = [
        [
            cell if isinstance(cell, Paragraph) else p(cell, SMALL_RIGHT if i in numeric else SMALL)
            for i, cell in enumerate(row)
        ]
        for row in rows
    ]
    commands = [
        ("GRID", (0, 0), (-1, -1), 0.3, LINE),
        ("BACKGROUND", (0, 0), (-1, 0), BAND),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("TOPPADDING", (0, 0), (-1, -1), 2),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
        ("LEFTPADDING", (0, 0), (-1, -1), 3),
        ("RIGHTPADDING", (0, 0), (-1, -1), 3),
    ]
    commands += [("BACKGROUND", (0, i + 1), (-1, i + 1), FLAG_BG) for i in highlight]
    if bold_last and rows:
        commands.append(("LINEABOVE", (0, -1), (-1, -1), 1, INK))
    table = Table([head, *body], colWidths=widths, repeatRows=1)
    table.setStyle(TableStyle(commands))
    return table


def signature_boxes(parties: list[tuple[str, str]]) -> Table:
    """One box per party (role, who): lines for the signer's name, the date and the signature."""
    width = CONTENT_W / len(parties)
    boxes = []
    for role, who in parties:
        inner = Table(
            [
                [p(role, STRONG)],
                [p(who, SMALL)],
                [p("Nome:", LABEL)],
                [Paragraph("Data:" + "&nbsp;" * 14 + "/" + "&nbsp;" * 10 + "/", LABEL)],
                [p("Assinatura:", LABEL)],
            ],
            colWidths=[width - 6 * mm],
            rowHeights=[None, None, 9 * mm, 9 * mm, 13 * mm],
        )
        inner.setStyle(
            TableStyle(
                [
                    ("VALIGN", (0, 2), (-1, -1), "BOTTOM"),
                    ("LINEBELOW", (0, 2), (-1, -1), 0.5, INK),
                    ("LEFTPADDING", (0, 0), (-1, -1), 0),
                    ("RIGHTPADDING", (0, 0), (-1, -1), 0),
                ]
            )
        )
        boxes.append(inner)
    table = Table([boxes], colWidths=[width] * len(parties))
    table.setStyle(
        TableStyle(
            [
                ("BOX", (0, 0), (-1, -1), 0.6, INK),
                ("INNERGRID", (0, 0), (-1, -1), 0.6, INK),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LEFTPADDING", (0, 0), (-1, -1), 3 * mm),
                ("RIGHTPADDING", (0, 0), (-1, -1), 3 * mm),
                ("TOPPADDING", (0, 0), (-1, -1), 2 * mm),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 3 * mm),
            ]
        )
    )
    return table


# --- the document -----------------------------------------------------------------------------


def document(
    buffer: io.BytesIO,
    *,
    title: str,
    first_page: Callable[[Canvas], None],
    header_height: float,
    running_title: str,
    generated: str,
    compress: bool = True,
    watermark_text: str = "",
) -> BaseDocTemplate:
    """An A4 document: the first page opens with the band `first_page` draws, `header_height`
    tall (and `watermark_text` across it, if any); the later pages carry `running_title` at
    the top; every page's footer says the platform, when it was `generated` (already
    formatted), the running title and the page number. The story starts with
    NextPageTemplate("later")."""

    def footer(canvas: Canvas, doc) -> None:
        canvas.saveState()
        canvas.setFont(FONT, 7)
        canvas.setFillColor(SOFT)
        canvas.drawString(
            MARGIN, MARGIN / 2, f"{platform_name()} · gerado em {generated} · {running_title}"
        )
        canvas.drawRightString(PAGE_W - MARGIN, MARGIN / 2, f"página {doc.page}")
        canvas.restoreState()

    def on_first(canvas: Canvas, doc) -> None:
        first_page(canvas)
        if watermark_text:
            watermark(canvas, watermark_text)
        footer(canvas, doc)

    def on_later(canvas: Canvas, doc) -> None:
        canvas.saveState()
        canvas.setFont(FONT_BOLD, 9)
        canvas.setFillColor(INK)
        canvas.drawString(MARGIN, PAGE_H - MARGIN + 2, running_title)
        canvas.restoreState()
        footer(canvas, doc)

    doc = BaseDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN,
        bottomMargin=MARGIN,
        title=title,
        author=platform_name(),
        creator=platform_name(),
        lang="pt-BR",
        pageCompression=1 if compress else 0,
    )
    body_h = PAGE_H - 2 * MARGIN
    doc.addPageTemplates(
        [
            PageTemplate(
                "first",
                [Frame(MARGIN, MARGIN, CONTENT_W, body_h - header_height, id="first")],
                onPage=on_first,
            ),
            PageTemplate(
                "later",
                [Frame(MARGIN, MARGIN, CONTENT_W, body_h - 4 * mm, id="later")],
                onPage=on_later,
            ),
        ]
    )
    return doc
