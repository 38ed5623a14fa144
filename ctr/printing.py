"""PDFs: the printed CTR (Lei 3.978/2007 art. 3 VI, art. 13 p.ú.) with its verification QR
code, and the worksite destination report (art. 9 p.ú. II). Drawn with reportlab's standard
fonts (Helvetica covers Portuguese through WinAnsi) and segno's QR matrix; no system package.

Functions take domain objects and plain data and return the PDF bytes; they never see a request.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from xml.sax.saxutils import escape

import segno
from django.conf import settings
from django.utils import timezone
from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import (
    BaseDocTemplate,
    Frame,
    KeepTogether,
    NextPageTemplate,
    PageTemplate,
    Paragraph,
    Spacer,
    Table,
    TableStyle,
)

from config.br import br_date, br_datetime, br_money, br_number

from . import reports
from .documents import document_kind, format_document
from .models import CTR, CTRStatus
from .rules import REGISTRY, Severity

LEGAL_BASIS = (
    "Base legal: Lei Municipal nº 3.978/2007 de Guaratinguetá, art. 3 VI (o CTR acompanha cada "
    "carga) e art. 13 p.ú. (o transportador destina os resíduos única e exclusivamente às áreas "
    "licenciadas e comprova a destinação correta a quem o contratou)."
)
TITLE = "CTR — Controle de Transporte de Resíduos"

PAGE_W, PAGE_H = A4
MARGIN = 14 * mm
CONTENT_W = PAGE_W - 2 * MARGIN
QR_SIZE = 30 * mm
HEADER_H = 42 * mm  # the first page's header band, above the flowing content

INK = colors.HexColor("#1f2937")
SOFT = colors.HexColor("#4b5563")
LINE = colors.HexColor("#9ca3af")
BAND = colors.HexColor("#e5e7eb")
BRAND = colors.HexColor("#14532d")
FLAG_BG = colors.HexColor("#fef3c7")
ERROR = colors.HexColor("#b91c1c")


def platform_name() -> str:
    return getattr(settings, "CTR_PLATFORM_NAME", "Plataforma CTR")


# --- styles -----------------------------------------------------------------------------------


def _style(name: str, **kw) -> ParagraphStyle:
    base = {"fontName": "Helvetica", "fontSize": 8.5, "leading": 10.5, "textColor": INK}
    base.update(kw)
    return ParagraphStyle(name, **base)


BODY = _style("body")
SMALL = _style("small", fontSize=7.5, leading=9)
LABEL = _style("label", fontSize=7, leading=8.5, textColor=SOFT)
SECTION = _style("section", fontName="Helvetica-Bold", fontSize=9, leading=11, textColor=BRAND)
H1 = _style("h1", fontName="Helvetica-Bold", fontSize=14, leading=17)
STRONG = _style("strong", fontName="Helvetica-Bold")
CENTER = _style("center", alignment=TA_CENTER)


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


# --- building blocks --------------------------------------------------------------------------


def section(title: str) -> Table:
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
    """A ruled table; `numeric` columns right-aligned, `highlight` rows (0 = first data row)
    on a yellow background."""
    right_small = _style("right_small", fontSize=7.5, leading=9, alignment=2)
    head = [p(h, _style("th", fontName="Helvetica-Bold", fontSize=7.5, leading=9)) for h in header]
    body = [
        [
            cell if isinstance(cell, Paragraph) else p(cell, right_small if i in numeric else SMALL)
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


def _document(
    buffer: io.BytesIO,
    title: str,
    first_header: Callable[[Canvas], None],
    running_title: str,
    header_height: float,
    compress: bool,
) -> BaseDocTemplate:
    """A4 with a first-page header band (drawn by `first_header`) and a running footer."""
    generated = br_datetime(timezone.now())

    def footer(canvas: Canvas, doc) -> None:
        canvas.saveState()
        canvas.setFont("Helvetica", 7)
        canvas.setFillColor(SOFT)
        canvas.drawString(
            MARGIN, MARGIN / 2, f"{platform_name()} · gerado em {generated} · {running_title}"
        )
        canvas.drawRightString(PAGE_W - MARGIN, MARGIN / 2, f"página {doc.page}")
        canvas.restoreState()

    def on_first(canvas: Canvas, doc) -> None:
        first_header(canvas)
        footer(canvas, doc)

    def on_later(canvas: Canvas, doc) -> None:
        canvas.saveState()
        canvas.setFont("Helvetica-Bold", 9)
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


def _watermark(canvas: Canvas, text: str) -> None:
    canvas.saveState()
    canvas.setFont("Helvetica-Bold", 80)
    canvas.setFillColor(colors.Color(0.73, 0.11, 0.11, alpha=0.12))
    canvas.translate(PAGE_W / 2, PAGE_H / 2)
    canvas.rotate(35)
    canvas.drawCentredString(0, 0, text)
    canvas.restoreState()


# --- the CTR ----------------------------------------------------------------------------------


def _ctr_header(ctr: CTR, verify_url: str) -> Callable[[Canvas], None]:
    def draw(canvas: Canvas) -> None:
        top = PAGE_H - MARGIN
        canvas.saveState()
        canvas.setFillColor(SOFT)
        canvas.setFont("Helvetica", 8)
        canvas.drawString(
            MARGIN,
            top - 8,
            f"{platform_name()} · Município de {ctr.municipality.name}/{ctr.municipality.uf}",
        )
        canvas.setFillColor(BRAND)
        canvas.setFont("Helvetica-Bold", 15)
        canvas.drawString(MARGIN, top - 26, TITLE)
        canvas.setFillColor(INK)
        canvas.setFont("Helvetica", 8.5)
        canvas.drawString(
            MARGIN, top - 38, "Documento de transporte de resíduos da construção civil e volumosos"
        )
        canvas.setFont("Helvetica-Bold", 14)
        canvas.drawString(MARGIN, top - 60, f"Nº {ctr.number}")
        canvas.setFont("Helvetica", 9)
        canvas.drawString(
            MARGIN,
            top - 75,
            f"Situação: {ctr.get_status_display()}    "
            f"Emissão: {br_datetime(ctr.created_at)}    "
            f"Transporte: {br_date(ctr.transport_date)}",
        )
        if ctr.closed_at:
            canvas.drawString(
                MARGIN,
                top - 87,
                f"{ctr.get_status_display()} em {br_datetime(ctr.closed_at)}",
            )
        # The QR code and, under it, the address it holds: the paper can be checked by anyone.
        qr_x = PAGE_W - MARGIN - QR_SIZE
        draw_qr(canvas, verify_url, qr_x, top - QR_SIZE, QR_SIZE)
        size = _fit(verify_url, "Helvetica", 7, 85 * mm)
        canvas.setFont("Helvetica", size)
        canvas.drawRightString(PAGE_W - MARGIN, top - QR_SIZE - 8, verify_url)
        canvas.setFont("Helvetica", 6.5)
        canvas.setFillColor(SOFT)
        canvas.drawRightString(
            PAGE_W - MARGIN, top - QR_SIZE - 16, "Verifique a autenticidade neste endereço"
        )
        canvas.setStrokeColor(INK)
        canvas.setLineWidth(0.8)
        canvas.line(MARGIN, top - HEADER_H + 3 * mm, PAGE_W - MARGIN, top - HEADER_H + 3 * mm)
        canvas.restoreState()
        if ctr.status in (CTRStatus.CANCELLED, CTRStatus.REFUSED):
            _watermark(canvas, ctr.get_status_display().upper())

    return draw


def _finding_lines(findings: list[dict]) -> list[Paragraph]:
    if not findings:
        return [p("Nenhuma constatação na emissão nem no recebimento.", SMALL)]
    lines = []
    for item in findings:
        severity = Severity.LABELS.get(item.get("severity"), item.get("severity", ""))
        rule = REGISTRY.get(item.get("code", ""))
        title = f"<b>{escape(rule.title)}.</b> " if rule else ""
        text = (
            f"<b>{escape(severity.capitalize())}</b> — {title}{escape(item.get('message', ''))} "
            f"<font color='#4b5563'>({escape(item.get('article', ''))}; "
            f"{escape(item.get('code', ''))})</font>"
        )
        lines.append(Paragraph(text, SMALL))
    return lines


def ctr_pdf(ctr: CTR, verify_url: str, compress: bool = True) -> bytes:
    """The printed CTR: who, what, from where, to where, the fee, the findings, the legal
    basis, three signature boxes and the QR code of its public verification page.

    The generator's document is printed in full: only who may see the CTR gets this PDF."""
    buffer = io.BytesIO()
    doc = _document(
        buffer,
        ctr.number,
        _ctr_header(ctr, verify_url),
        f"Nº {ctr.number}",
        HEADER_H,
        compress,
    )
    transporter, facility, worksite = ctr.transporter, ctr.destination_facility, ctr.worksite
    equipment = (
        f"{ctr.equipment.code} — {ctr.equipment.get_kind_display()}, capacidade nominal "
        f"{reports.br_volume(ctr.equipment.nominal_capacity_m3)} m³"
        if ctr.equipment
        else "—"
    )
    license_ = reports.facility_license(ctr)
    license_text = "sem licença cadastrada"
    if license_:
        until = br_date(license_.valid_until) if license_.valid_until else "—"
        license_text = f"nº {license_.number} ({license_.issuer}), válida até {until}"
    story: list = [NextPageTemplate("later")]

    story += [
        section("Transportador"),
        fields(
            [
                ("Nome / razão social*", transporter.name),
                (document_kind(transporter.document), format_document(transporter.document)),
                ("Cadastro municipal nº", transporter.registration_number),
                ("Veículo (placa)", str(ctr.vehicle)),
                ("Equipamento", equipment),
            ]
        ),
        Spacer(0, 3 * mm),
        section("Gerador e origem"),
        fields(
            [
                ("Gerador*", ctr.declared_generator_name),
                (
                    document_kind(ctr.generator.document),
                    format_document(ctr.generator.document),
                ),
                ("Alvará", worksite.permit_number if worksite else ""),
                ("Endereço da obra*", worksite.address if worksite else "—"),
                ("Bairro", worksite.neighbourhood if worksite else ""),
                ("Município", f"{ctr.municipality.name}/{ctr.municipality.uf}"),
                ("Coordenadas da origem*", f"{reports.br_coordinates(ctr.origin)} (WGS 84)"),
            ]
        ),
        Spacer(0, 3 * mm),
        section("Destino"),
        fields(
            [
                ("Área de recebimento*", facility.name),
                ("Tipo", facility.get_kind_display()),
                ("Licença", license_text),
                ("Operador", facility.operator),
                ("Endereço", facility.address),
            ]
        ),
        Spacer(0, 3 * mm),
    ]

    waste = reports.waste_rows(ctr)
    waste_table = [[line.label, line.description or "—", line.volume] for line in waste]
    waste_table.append(
        [
            Paragraph("<b>Volume total</b>", SMALL),
            "",
            Paragraph(f"<b>{reports.br_volume(ctr.total_volume_m3)}</b>", _style("r", alignment=2)),
        ]
    )
    if ctr.received_volume_m3 is not None:
        waste_table.append(
            ["Volume conferido no recebimento", "", reports.br_volume(ctr.received_volume_m3)]
        )
    story += [
        section("Resíduos (CONAMA 307/348; art. 3 XV e XVII)"),
        Spacer(0, 1 * mm),
        grid(
            ["Classe", "Descrição", "Volume (m³)"],
            waste_table,
            [78 * mm, CONTENT_W - 78 * mm - 28 * mm, 28 * mm],
            numeric=(2,),
        ),
        Spacer(0, 3 * mm),
    ]

    limit = reports.br_volume(ctr.municipality.small_volume_limit_m3)
    if ctr.fee_ufesp > 0:
        value = br_money(ctr.fee_ufesp * ctr.municipality.ufesp_value)
        fee = (
            f"{br_number(ctr.fee_ufesp, 2)} UFESP por descarga acima de {limit} m³, a "
            f"recolher ao órgão gestor ({value} pela UFESP de {ctr.municipality.ufesp_year})."
        )
    else:
        fee = f"Isento: pequeno volume (até {limit} m³ por descarga)."
    story += [
        KeepTogether(
            [
                section("Taxa de descarga (art. 12 §3)"),
                fields([("Taxa*", fee)]),
                Spacer(0, 3 * mm),
            ]
        ),
        KeepTogether(
            [
                section("Constatações"),
                Spacer(0, 1 * mm),
                *_finding_lines(ctr.findings),
                Spacer(0, 3 * mm),
            ]
        ),
        p(LEGAL_BASIS, SMALL),
        Spacer(0, 4 * mm),
        KeepTogether(
            [
                section("Assinaturas"),
                Spacer(0, 1.5 * mm),
                signature_boxes(
                    [
                        ("Gerador", ctr.declared_generator_name),
                        ("Transportador", transporter.name),
                        ("Receptor", facility.name),
                    ]
                ),
            ]
        ),
    ]
    doc.build(story)
    return buffer.getvalue()


# --- worksite destination report --------------------------------------------------------------


def _report_header() -> Callable[[Canvas], None]:
    def draw(canvas: Canvas) -> None:
        top = PAGE_H - MARGIN
        canvas.saveState()
        canvas.setFillColor(SOFT)
        canvas.setFont("Helvetica", 8)
        canvas.drawString(MARGIN, top - 8, f"{platform_name()} · {TITLE}")
        canvas.setFillColor(BRAND)
        canvas.setFont("Helvetica-Bold", 15)
        canvas.drawString(MARGIN, top - 26, "Relatório de destinação de resíduos da obra")
        canvas.setFillColor(INK)
        canvas.setFont("Helvetica", 8.5)
        canvas.drawString(
            MARGIN,
            top - 38,
            "Documentação de controle para o Habite-se (Lei 3.978/2007 art. 9 p.ú. II)",
        )
        canvas.setStrokeColor(INK)
        canvas.setLineWidth(0.8)
        canvas.line(MARGIN, top - 46, PAGE_W - MARGIN, top - 46)
        canvas.restoreState()

    return draw


def worksite_report_pdf(report: reports.WorksiteReport, compress: bool = True) -> bytes:
    """The report of report.worksite as a PDF: the same content as the HTML page."""
    site = report.worksite
    buffer = io.BytesIO()
    doc = _document(
        buffer,
        f"Relatório de destinação — obra {site.pk}",
        _report_header(),
        f"Relatório de destinação — {site.address}",
        20 * mm,
        compress,
    )
    info = [
        ("Obra*", site.address),
        ("Bairro", site.neighbourhood),
        ("Alvará", site.permit_number),
        ("Gerador", site.generator.name),
        (document_kind(site.generator.document), report.generator_document),
        *(
            [("Nome declarado nos CTRs", "; ".join(report.declared_names))]
            if report.declared_names
            else []
        ),
        ("Grande gerador", "Sim (PGRCC)" if site.is_large_generator else "Não"),
        ("Emitido em", br_datetime(report.generated_at)),
    ]
    if report.transporter is not None:
        info.append(
            (
                "Abrangência*",
                f"Somente os CTRs do transportador {report.transporter.name} nesta obra.",
            )
        )
    conclusion_style = _style(
        "conclusion",
        fontName="Helvetica-Bold",
        fontSize=10,
        leading=13,
        textColor=BRAND if report.proven else ERROR,
    )
    story: list = [
        NextPageTemplate("later"),
        fields(info),
        Spacer(0, 3 * mm),
        p(report.conclusion, conclusion_style),
        Spacer(0, 3 * mm),
        section(f"CTRs da obra ({len(report.rows)})"),
        Spacer(0, 1 * mm),
    ]
    flagged = tuple(i for i, row in enumerate(report.rows) if row.flag)
    story.append(
        grid(
            ["Nº do CTR", "Data", "Transportador", "Destino", "Classes", "Volume (m³)", "Situação"],
            [
                [
                    row.number,
                    row.transport_date,
                    row.transporter,
                    row.facility,
                    row.classes,
                    row.volume,
                    Paragraph(
                        f"<b>{escape(row.flag)}</b>" if row.flag else escape(row.status_label),
                        SMALL,
                    ),
                ]
                for row in report.rows
            ]
            or [["Nenhum CTR.", "", "", "", "", "", ""]],
            [36 * mm, 16 * mm, 36 * mm, 36 * mm, 20 * mm, 17 * mm, 21 * mm],
            numeric=(5,),
            highlight=flagged,
        )
    )
    volume_head = ["Recebido (m³)", "Em aberto (m³)", "Recusado (m³)"]
    story += [
        Spacer(0, 4 * mm),
        KeepTogether(
            [
                section("Volume por classe de resíduo (declarado no CTR)"),
                Spacer(0, 1 * mm),
                grid(
                    ["Classe", "CTRs recebidos", *volume_head],
                    [
                        [t.label, str(t.received_count), t.received, t.open, t.refused]
                        for t in report.by_class
                    ]
                    or [["—", "0", "0", "0", "0"]],
                    [82 * mm, 22 * mm, 26 * mm, 26 * mm, CONTENT_W - 156 * mm],
                    numeric=(1, 2, 3, 4),
                ),
            ]
        ),
        Spacer(0, 4 * mm),
        KeepTogether(
            [
                section("Volume por área de destino"),
                Spacer(0, 1 * mm),
                grid(
                    ["Área de destino", "CTRs recebidos", "Recebido (m³)", "Conferido (m³)"]
                    + volume_head[1:],
                    [
                        [t.label, str(t.received_count), t.received, t.measured, t.open, t.refused]
                        for t in report.by_facility
                    ]
                    or [["—", "0", "0", "0", "0", "0"]],
                    [62 * mm, 20 * mm, 24 * mm, 24 * mm, 26 * mm, CONTENT_W - 156 * mm],
                    numeric=(1, 2, 3, 4, 5),
                ),
            ]
        ),
        Spacer(0, 3 * mm),
        p(
            "Só os CTRs recebidos comprovam a destinação (art. 13 p.ú.); os volumes em aberto e "
            "recusados aparecem à parte e os cancelados não entram nos totais. "
            f"Cancelados: {report.cancelled_count}.",
            SMALL,
        ),
    ]
    doc.build(story)
    return buffer.getvalue()
