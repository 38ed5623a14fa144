"""PDFs: the printed CTR (Lei 3.978/2007 art. 3 VI, art. 13 p.ú.) with its verification QR
code, the worksite destination report (art. 9 p.ú. II) and the Certificado de Destinação Final
with its own QR code (ctr/custody/certificates.py), drawn with the platform's PDF kit (config.pdf).

Functions take domain objects and plain data and return the PDF bytes; they never see a request.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from xml.sax.saxutils import escape

from django.utils import timezone
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import KeepTogether, NextPageTemplate, Paragraph, Spacer, Table

from config.br import br_date, br_datetime
from config.pdf import (
    BODY,
    BRAND,
    CONTENT_W,
    ERROR,
    FONT_BOLD,
    NUMBERED_HEADER_H,
    RIGHT,
    SMALL,
    SMALL_RIGHT,
    SOFT,
    document,
    fields,
    grid,
    issued_by,
    letterhead,
    make_style,
    numbered_header,
    p,
    section,
    signature_boxes,
)
from pev_network.letterhead import letterhead_of
from pev_network.models import facility_kind_short, waste_class_short

from . import reports
from .custody import certificates
from .documents import document_kind, format_document
from .field import corrections, offline
from .models import CTR, CTRStatus
from .rules import REGISTRY, Severity

# What the printed CTR rests on, as (article of Lei 3.978/2007, what it says): beside another
# municipality's law only what it says is printed (config.letterhead).
LEGAL_BASIS = (
    ("art. 3 VI", "o CTR acompanha cada carga"),
    (
        "art. 13 p.ú.",
        "o transportador destina os resíduos única e exclusivamente às áreas licenciadas e "
        "comprova a destinação correta a quem o contratou",
    ),
)
TITLE = "CTR — Controle de Transporte de Resíduos"


# --- the CTR ----------------------------------------------------------------------------------


def _ctr_header(ctr: CTR, verify_url: str) -> Callable[[Canvas], None]:
    lines = [
        f"Situação: {ctr.get_status_display()}    "
        f"Emissão: {br_datetime(ctr.created_at)}    "
        f"Transporte: {br_date(ctr.transport_date)}"
    ]
    if ctr.closed_at:
        lines.append(f"{ctr.get_status_display()} em {br_datetime(ctr.closed_at)}")
    return numbered_header(
        issued_by(letterhead_of(ctr.municipality)),
        TITLE,
        "Documento de transporte de resíduos da construção civil e volumosos",
        f"Nº {ctr.number}",
        lines,
        verify_url,
    )


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
    void = ctr.status in (CTRStatus.CANCELLED, CTRStatus.REFUSED)
    doc = document(
        buffer,
        title=ctr.number,
        first_page=_ctr_header(ctr, verify_url),
        header_height=NUMBERED_HEADER_H,
        running_title=f"Nº {ctr.number}",
        generated=br_datetime(timezone.now()),
        compress=compress,
        watermark_text=ctr.get_status_display().upper() if void else "",
    )
    transporter, facility, worksite = ctr.transporter, ctr.destination_facility, ctr.worksite
    equipment = (
        f"{ctr.equipment.code} — {ctr.equipment.get_kind_display()}, capacidade nominal "
        f"{reports.br_volume(ctr.equipment.nominal_capacity_m3)} m³"
        if ctr.equipment
        else "—"
    )
    # The transporter's licence in the CTR's municipality (art. 13); none for a generator
    # carrying its own waste (art. 12 §4).
    licence = transporter.licence_in(ctr.municipality_id)
    if licence is not None:
        licence_text = licence.number
    elif transporter.is_self_generator:
        licence_text = "dispensada: gerador que transporta os próprios resíduos (art. 12 §4)"
    else:
        licence_text = "nenhuma"
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
                (f"Licença em {ctr.municipality.name}/{ctr.municipality.uf}", licence_text),
                ("Veículo (placa)", str(ctr.vehicle)),
                ("Equipamento", equipment),
            ]
            + offline.print_fields(ctr)  # the phone's provisional number
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
            Paragraph(f"<b>{reports.br_volume(ctr.total_volume_m3)}</b>", RIGHT),
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

    # Corrections after reception: the values printed are the corrected ones.
    if notes := corrections.applied_notes(ctr):
        story += [section("Correções após o recebimento"), *(p(n, SMALL) for n in notes)]
        story.append(Spacer(0, 3 * mm))

    # The limit of the set in force on the transport date, the one the fee was charged by.
    limit = reports.br_volume(ctr.parameters().small_volume_limit_m3)
    if ctr.fee_ufesp > 0:
        fee = reports.fee_text(ctr, limit)
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
        p(letterhead_of(ctr.municipality).legal_basis(LEGAL_BASIS), SMALL),
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


def _report_header(site) -> Callable[[Canvas], None]:
    head = letterhead_of(certificates.worksite_municipality(site))

    def draw(canvas: Canvas) -> None:
        letterhead(
            canvas,
            issued_by(head, TITLE),
            "Relatório de destinação de resíduos da obra",
            f"Documentação de controle para o Habite-se ({head.cite('art. 9 p.ú. II')})",
            46,
        )

    return draw


def worksite_report_pdf(report: reports.WorksiteReport, compress: bool = True) -> bytes:
    """The report of report.worksite as a PDF: the same content as the HTML page."""
    site = report.worksite
    buffer = io.BytesIO()
    doc = document(
        buffer,
        title=f"Relatório de destinação — obra {site.pk}",
        first_page=_report_header(site),
        header_height=20 * mm,
        running_title=f"Relatório de destinação — {site.address}",
        generated=br_datetime(timezone.now()),
        compress=compress,
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
    story: list = [
        NextPageTemplate("later"),
        fields(info),
        Spacer(0, 3 * mm),
        p(report.conclusion, _conclusion_style(report.proven)),
        Spacer(0, 1.5 * mm),
        *_conclusion(report.destinations),
        section(f"CTRs da obra ({len(report.rows)})"),
        Spacer(0, 1 * mm),
    ]
    flagged = tuple(i for i, row in enumerate(report.rows) if row.flag)
    story.append(
        grid(
            [
                "Nº do CTR",
                "Data",
                "Transportador",
                "Destino (e onde está agora)",
                "Classes",
                "Volume (m³)",
                "Situação",
            ],
            [
                [
                    row.number,
                    row.transport_date,
                    row.transporter,
                    Paragraph(
                        "<br/>".join(
                            [escape(row.facility), _shares_text(row.shares, SOFT_HEX, True)]
                            if row.shares
                            else [escape(row.facility)]
                        ),
                        SMALL,
                    ),
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
            [36 * mm, 16 * mm, 30 * mm, 44 * mm, 18 * mm, 17 * mm, 21 * mm],
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
        Spacer(0, 4 * mm),
        *_destination_sections(report.destinations),
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


# --- where the loads are now (the certificate, and the worksite report) -------------------------

SOFT_HEX = SOFT.hexval().replace("0x", "#")


def _conclusion_style(conclusive: bool):
    return make_style(
        "conclusion",
        fontName=FONT_BOLD,
        fontSize=10,
        leading=13,
        textColor=BRAND if conclusive else ERROR,
    )


def _conclusion(cdf: certificates.Certificate) -> list:
    """The certificate's conclusion and, one bullet each, why it is not conclusive."""
    flowables = [p(cdf.headline, _conclusion_style(cdf.conclusive)), Spacer(0, 1 * mm)]
    if cdf.loads and not cdf.conclusive:
        flowables += [
            Paragraph(f"• {escape(reason[0].upper() + reason[1:])}.", BODY)
            for reason in cdf.reasons
        ]
    return [*flowables, Spacer(0, 3 * mm)]


def _shares_text(shares, color: str = "", with_class: bool = False) -> str:
    """Where a load is now, one line per share, as Paragraph markup."""
    lines = []
    for share in shares:
        text = (
            f"{share.outcome_label.capitalize()}: {share.place.name} — "
            f"{reports.br_volume(share.volume_m3)} m³"
        )
        if with_class:
            text += f" ({waste_class_short(share.waste_class)})"
        text = escape(text)
        lines.append(text if share.settled else f"<b>{text}</b>")
    markup = "<br/>".join(lines)
    return f"<font color='{color}'>{markup}</font>" if color else markup


def _destination_sections(cdf: certificates.Certificate) -> list:
    """The certificate's two tables: each class's volumes by outcome, and where they are."""
    outcome_head = [
        "Destinação final",
        "Beneficiado na área",
        "Em estoque",
        "Em trânsito",
        "Recusado",
    ]
    class_w = 36 * mm
    by_class = grid(
        ["Classe", "Declarado", "Recebido", *outcome_head],
        [
            [
                waste_class_short(t.waste_class),
                *(
                    reports.br_volume(v)
                    for v in (
                        t.declared_m3,
                        t.received_m3,
                        t.destined_m3,
                        t.processed_m3,
                        t.stock_m3,
                        t.transit_m3,
                        t.refused_m3,
                    )
                ),
            ]
            for t in cdf.by_class
        ]
        or [["Nenhuma carga.", *[""] * 7]],
        [class_w] + [(CONTENT_W - class_w) / 7] * 7,
        numeric=tuple(range(1, 8)),
    )
    unsettled = tuple(i for i, share in enumerate(cdf.destinations) if not share.settled)
    where = grid(
        ["Situação", "Área", "Tipo", "Classe", "Volume (m³)"],
        [
            [
                share.outcome_label.capitalize(),
                share.place.name,
                facility_kind_short(share.place.kind),
                waste_class_short(share.waste_class),
                reports.br_volume(share.volume_m3),
            ]
            for share in cdf.destinations
        ]
        or [["—", "", "", "", ""]],
        [32 * mm, 70 * mm, 32 * mm, 26 * mm, CONTENT_W - 160 * mm],
        numeric=(4,),
        highlight=unsettled,
    )
    return [
        KeepTogether(
            [section("Destinação por classe de resíduo (m³)"), Spacer(0, 1 * mm), by_class]
        ),
        Spacer(0, 4 * mm),
        KeepTogether([section("Onde estão os resíduos"), Spacer(0, 1 * mm), where]),
    ]


def _loads_table(cdf: certificates.Certificate) -> Table:
    def cell(values) -> Paragraph:
        return Paragraph("<br/>".join(escape(v) for v in values), SMALL)

    def numbers(values) -> Paragraph:
        return Paragraph("<br/>".join(values), SMALL_RIGHT)

    rows = [
        [
            Paragraph(
                escape(load.number)
                + ("" if load.status == "received" else f"<br/><b>{escape(load.status_label)}</b>"),
                SMALL,
            ),
            br_date(load.transport_date),
            load.transporter,
            f"{load.first_place.name} ({facility_kind_short(load.first_place.kind)})",
            cell(waste_class_short(line.waste_class) for line in load.lines),
            numbers(reports.br_volume(line.declared_m3) for line in load.lines),
            numbers(
                reports.br_volume(line.received_m3) if line.received_m3 is not None else "—"
                for line in load.lines
            ),
            Paragraph(_shares_text(load.shares, with_class=True) or "—", SMALL),
        ]
        for load in cdf.loads
    ]
    return grid(
        [
            "Nº do CTR",
            "Data",
            "Transportador",
            "Primeira área",
            "Classe",
            "Declarado (m³)",
            "Recebido (m³)",
            "Onde está agora",
        ],
        rows or [["Nenhum CTR.", *[""] * 7]],
        [37 * mm, 17 * mm, 22 * mm, 20 * mm, 17 * mm, 16 * mm, 16 * mm, CONTENT_W - 145 * mm],
        numeric=(5, 6),
        highlight=tuple(i for i, load in enumerate(cdf.loads) if not load.conclusive),
    )


CDF_TITLE = "Certificado de Destinação Final (CDF)"
CDF_METHOD = (
    "Cada carga é seguida pela cadeia de custódia: em cada ATT ou PEV por onde passou, o volume "
    "recebido de cada classe sai na ordem em que chegou (primeiro a entrar, primeiro a sair) nos "
    "CTRs de saída e no beneficiamento registrado na área. Só a destinação final (área de "
    "reciclagem ou aterro licenciado) e o beneficiamento na área concluem a destinação."
)
CDF_LEGAL_BASIS = (
    ("art. 3 III", "a ATT faz a triagem para posterior remoção e destinação adequada"),
    (
        "art. 9 p.ú. II",
        "o Habite-se pede a documentação do correto transporte, triagem e destinação",
    ),
    ("art. 13 p.ú.", "o transportador comprova a destinação a quem o contratou"),
)


def cdf_pdf(
    issued,
    cdf: certificates.Certificate,
    verify_url: str,
    compress: bool = True,
) -> bytes:
    """The certificate `issued` (a DestinationCertificate) with its content `cdf`: the subject,
    the conclusion in words, the volumes by class and place, every CTR and where it is now,
    and the QR code of its public verification page.

    The generator's document is printed in full: only who may see the certificate gets it."""
    subject = cdf.subject
    head = certificates.letterhead(issued, cdf)
    buffer = io.BytesIO()
    status = "Conclusivo" if cdf.conclusive else "Não conclusivo"
    doc = document(
        buffer,
        title=f"{CDF_TITLE} {issued.code}",
        first_page=numbered_header(
            issued_by(head),
            CDF_TITLE,
            "Resíduos da construção civil e volumosos, seguidos até a destinação final",
            f"Nº {issued.code}",
            [
                f"Emissão: {br_datetime(issued.issued_at)}    Situação: {status}",
                f"CTRs: {len(cdf.loads)}    Volume: {reports.br_volume(cdf.volume_m3)} m³",
            ],
            verify_url,
        ),
        header_height=NUMBERED_HEADER_H,
        running_title=f"CDF {issued.code}",
        generated=br_datetime(timezone.now()),
        compress=compress,
    )
    document_label = document_kind(subject.generator_document)
    if subject.worksite_id is not None:
        info = [
            ("Obra*", subject.address),
            ("Bairro", subject.neighbourhood),
            ("Alvará", subject.permit_number),
        ]
    else:
        info = [("Período*", subject.period_label)]
    info += [
        ("Gerador", subject.generator_name),
        (document_label, format_document(subject.generator_document)),
        ("Município", subject.municipality),
    ]
    if subject.transporter_name:
        info.append(
            ("Abrangência*", f"Somente os CTRs do transportador {subject.transporter_name}.")
        )
    info.append(("Resumo SHA-256*", issued.digest))
    story: list = [
        NextPageTemplate("later"),
        fields(info),
        Spacer(0, 3 * mm),
        *_conclusion(cdf),
        Spacer(0, 1 * mm),
        *_destination_sections(cdf),
        Spacer(0, 4 * mm),
        section(f"CTRs ({len(cdf.loads)})"),
        Spacer(0, 1 * mm),
        _loads_table(cdf),
        Spacer(0, 3 * mm),
    ]
    if cdf.cancelled_count:
        story.append(
            p(
                f"CTRs cancelados (não transportaram resíduos, fora do certificado): "
                f"{cdf.cancelled_count}.",
                SMALL,
            )
        )
    story += [
        p(CDF_METHOD, SMALL),
        Spacer(0, 2 * mm),
        p(head.legal_basis(CDF_LEGAL_BASIS), SMALL),
        Spacer(0, 2 * mm),
        p(
            f"Este certificado retrata a cadeia de custódia em {br_datetime(issued.issued_at)}. "
            f"A página {verify_url} mostra o que ele diz e avisa se a cadeia mudou desde então.",
            SMALL,
        ),
    ]
    doc.build(story)
    return buffer.getvalue()
