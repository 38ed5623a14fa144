"""PDFs of the notice to repair (Lei 3.978/2007 art. 28) and of the infraction record (art. 22
III, art. 36), drawn with the platform's PDF kit (config.pdf) like the printed CTR.

Every deadline, amount and rule printed comes from the case's penalty framework (the one in
force when the case opened) with the article that gives it: the framework's legal text, then a
table of the figures this document uses, each with its source.

Functions take domain objects and return the PDF bytes; they never see a request."""

from __future__ import annotations

import io
from collections.abc import Callable
from xml.sax.saxutils import escape

from django.utils import timezone
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import KeepTogether, NextPageTemplate, Paragraph, Spacer, Table, TableStyle

from config.br import br_date, br_datetime, br_money, br_number
from config.pdf import (
    BODY,
    CONTENT_W,
    ERROR,
    FLAG_BG,
    FONT,
    FONT_BOLD,
    INK,
    LABEL,
    MARGIN,
    PAGE_W,
    RIGHT,
    RIGHT_BOLD,
    SMALL,
    STRONG,
    TOP,
    document,
    fields,
    grid,
    issued_by,
    letterhead,
    make_style,
    p,
    section,
    signature_boxes,
)
from ctr.documents import document_kind, format_document
from pev_network.letterhead import letterhead_of

from . import deadlines, enforcement
from .enforcement.authorship import Authors
from .enforcement.terms import terms_of
from .models.enforcement import (
    DeliveryMethod,
    EnforcementCase,
    InfractionRecord,
    Notice,
    Offender,
    RecordStatus,
    UfespRate,
)
from .models.frameworks import PenaltyFramework

HEADER_H = 27 * mm
CERTIFICATE = make_style("certificate", fontSize=8.5, leading=11)

# How a delivery by hand or by mail is presumed received (Lei 3.190/2013 art. 12 I-II).
INDIVIDUAL_RULES = {
    DeliveryMethod.HAND: "Entrega pessoal: recebido na data e hora do recibo",
    DeliveryMethod.MAIL: "Carta registrada com AR: recebido na data e hora da entrega escritas no "
    "aviso de recebimento",
}


def _delivery_rule(document: Notice | InfractionRecord, framework: PenaltyFramework) -> str:
    method = document.delivery_method
    if method == DeliveryMethod.PUBLIC_NOTICE:
        rule = terms_of(framework)["edital"]
        return (
            "Edital na imprensa oficial (a entrega individual foi negativa ou impraticável): "
            f"{rule} ({framework.cite('edital_receipt')})."
        )
    if isinstance(document, Notice):
        return (
            f"{INDIVIDUAL_RULES[method]}; as {document.repair_hours or framework.repair_hours} "
            "horas contam de minuto a minuto."
        )
    return f"{INDIVIDUAL_RULES[method]}; o prazo de recurso começa no dia seguinte."


# What each figure is called on a document, and its key in terms.terms_of.
FIGURE_LABELS = {
    "hours": "Prazo para reparar o dano",
    "edital": "Edital",
    "appeal": "Recurso",
    "payment": "Pagamento",
    "post_appeal": "Pagamento após recurso mantido",
    "discount": "Desconto",
    "recidivism": "Reincidência",
    "obstruction": "Embaraço à fiscalização",
    "daily_fine": "Multa diária do embargo descumprido",
    "suspension": "Suspensão da atividade",
    "revocation": "Nova infração após suspensão",
    "money": "Unidade das multas",
    "authority": "Autoridade que aplica as penalidades",
}


def _figures(framework: PenaltyFramework, keys: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """The framework's figures this document uses: (what, value, source)."""
    words = terms_of(framework)
    return [(FIGURE_LABELS[k], words[k], words[f"{k}_cite"]) for k in keys]


NOTICE_FIGURES = ("hours", "edital", "recidivism", "money")
RECORD_FIGURES = (
    "appeal",
    "payment",
    "post_appeal",
    "discount",
    "recidivism",
    "obstruction",
    "daily_fine",
    "suspension",
    "revocation",
    "edital",
    "money",
    "authority",
)


def _header(
    case: EnforcementCase, title: str, subtitle: str, number: str, lines: list[str]
) -> Callable[[Canvas], None]:
    def draw(canvas: Canvas) -> None:
        letterhead(
            canvas,
            issued_by(letterhead_of(case.municipality), "Fiscalização"),
            title,
            subtitle,
            HEADER_H - 3 * mm,
        )
        canvas.saveState()
        canvas.setFillColor(INK)
        canvas.setFont(FONT_BOLD, 13)
        canvas.drawRightString(PAGE_W - MARGIN, TOP - 26, f"Nº {number}")
        canvas.setFont(FONT, 8.5)
        for i, line in enumerate(lines):
            canvas.drawRightString(PAGE_W - MARGIN, TOP - 40 - 11 * i, line)
        canvas.restoreState()

    return draw


def _offender_block(offender: Offender, title: str, municipality_id: int) -> list:
    pairs = [
        ("Nome / razão social*", offender.name),
        (document_kind(offender.document), format_document(offender.document)),
        ("Papel (art. 24)", offender.get_role_display()),
        ("Endereço*", offender.address or "—"),
    ]
    if offender.transporter_id:
        t = offender.transporter
        # Its licence in the case's municipality (art. 13), where the facts happened.
        licence = t.licence_in(municipality_id)
        held = f"licença nº {licence.number}" if licence else "sem licença no município"
        pairs.append(("Transportador*", f"{t.name} — {held}"))
    if offender.facility_id:
        pairs.append(("Área de recepção*", offender.facility.name))
    if offender.generator_id:
        pairs.append(("Gerador*", offender.generator.name))
    return [section(title), fields(pairs), Spacer(0, 3 * mm)]


def _facts_block(case: EnforcementCase) -> list:
    pairs = [
        ("Constatada em", br_datetime(case.opened_at)),
        ("Processo", case.number),
        ("Irregularidade*", case.description),
    ]
    if case.location:
        pairs.append(
            (
                "Local*",
                f"lat. {br_number(case.location.y, 6)}; long. {br_number(case.location.x, 6)}"
                " (WGS 84)",
            )
        )
    if case.dumping_report_id:
        pairs.append(("Denúncia", case.dumping_report.protocol))
    if case.obstructed_inspection:
        pairs.append(("Agravante*", "O infrator impediu ou dificultou a fiscalização (art. 26 I)."))
    return [section("Irregularidade constatada (art. 22)"), fields(pairs), Spacer(0, 3 * mm)]


def _delivery_block(document: Notice | InfractionRecord, extra: list[tuple[str, str]]) -> list:
    receipt = enforcement.receipt_of(document)
    if receipt is None:
        delivered = "a registrar"
    elif document.delivery_method == DeliveryMethod.HAND:
        delivered = br_datetime(document.delivered_on)
    elif document.delivery_method == DeliveryMethod.PUBLIC_NOTICE:
        delivered = (
            f"publicado em {br_date(receipt.receipt_day)}; prazos desde "
            f"{br_date(receipt.first_day)}"
        )
    else:
        delivered = f"AR de {br_datetime(document.delivered_on)}"
    # The failed attempts the edital supplies (art. 28 §2): the reason it was used.
    failed = [
        (
            "Entrega frustrada",
            f"{a.get_outcome_display()} em {br_datetime(a.attempted_at)}: {a.reason}",
        )
        for a in document.failed_deliveries.all()
    ]
    pairs = [
        *failed,
        ("Forma", document.get_delivery_method_display()),
        ("Recebimento", delivered),
        ("Regra*", _delivery_rule(document, document.case.framework)),
        *extra,
    ]
    return [section("Entrega e prazos"), fields(pairs), Spacer(0, 3 * mm)]


def _appeal_outcome(appeal, unit: str) -> str:
    """The decision as the record's document prints it; partly upheld, the new fine."""
    if appeal.reduced_from_ufesp is not None:
        return (
            f"provimento parcial — multa reduzida de {br_number(appeal.reduced_from_ufesp, 2)} "
            f"para {br_number(appeal.record.total_ufesp, 2)} {unit}, o valor cobrado."
        )
    return "auto mantido." if appeal.upheld else "auto anulado."


def _author(document: Notice | InfractionRecord, act: str, case: EnforcementCase):
    """(name, capacity) of who did `act` on `document` (art. 35), as recorded then; the case's
    inspector for documents made before authors were kept."""
    user = getattr(document, f"{act}_by") or case.inspector
    capacity = getattr(document, f"{act}_as") or "Fiscal"
    return user.get_full_name() or user.get_username(), capacity


def _certificate_box(text: str, signer: str) -> Table:
    """The inspector's certificate of why the offender did not sign, with its own signature."""
    rows = [
        [Paragraph(text, CERTIFICATE)],
        [Paragraph(f"Assinatura do servidor ({escape(signer)}):", LABEL)],
    ]
    table = Table(rows, colWidths=[CONTENT_W], rowHeights=[None, 12 * mm])
    table.setStyle(
        TableStyle(
            [
                ("BOX", (0, 0), (-1, -1), 0.6, INK),
                ("BACKGROUND", (0, 0), (-1, -1), FLAG_BG),
                ("VALIGN", (0, 1), (-1, 1), "BOTTOM"),
                ("LEFTPADDING", (0, 0), (-1, -1), 3 * mm),
                ("RIGHTPADDING", (0, 0), (-1, -1), 3 * mm),
                ("TOPPADDING", (0, 0), (-1, -1), 2 * mm),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 2 * mm),
            ]
        )
    )
    return table


def _legal_block(framework: PenaltyFramework, text: str, keys: tuple[str, ...]) -> list:
    """The framework's legal text, then each figure of the document with its source."""
    rows = [
        [
            Paragraph(escape(what), SMALL),
            Paragraph(escape(value), SMALL),
            Paragraph(escape(src), SMALL),
        ]
        for what, value, src in _figures(framework, keys)
    ]
    return [
        section(f"Fundamentação legal ({framework.law})"),
        Spacer(0, 1 * mm),
        p(text, SMALL),
        Spacer(0, 1.5 * mm),
        grid(
            ["Prazo ou valor", "Neste processo", "Fundamento"],
            rows,
            [42 * mm, 62 * mm, CONTENT_W - 104 * mm],
        ),
    ]


# --- the notice -------------------------------------------------------------------------------


def notice_pdf(notice: Notice, compress: bool = True) -> bytes:
    """The notice to repair the damage within the framework's hours (Lei 3.978/2007 art. 28:
    72)."""
    case = notice.case
    framework = case.framework
    hours = f"{notice.repair_hours or framework.repair_hours} horas"
    buffer = io.BytesIO()
    doc = document(
        buffer,
        title=f"Notificação {notice.number}",
        first_page=_header(
            case,
            "Notificação para reparação do dano",
            f"{framework.law} — prazo de {hours}",
            notice.number,
            [f"Emitida em {br_datetime(notice.issued_at)}", f"Processo {case.number}"],
        ),
        header_height=HEADER_H,
        running_title=f"Notificação nº {notice.number}",
        generated=br_datetime(timezone.now()),
        compress=compress,
    )
    due = enforcement.notice_due(notice)
    deadline = (
        f"até {deadlines.br_deadline(due)}"
        if due
        else f"{hours} contadas do recebimento (regra abaixo)"
    )
    repair_style = make_style("repair", fontName=FONT_BOLD, fontSize=10, leading=13)
    story: list = [NextPageTemplate("later")]
    story += _offender_block(case.offender, "Notificado", case.municipality_id)
    story += _facts_block(case)
    story += [
        section(f"Exigência: reparar o dano em {hours} ({framework.cite('repair_hours')})"),
        Spacer(0, 1 * mm),
        p(notice.required_action, BODY),
        Spacer(0, 2 * mm),
        p(f"Prazo: {deadline}.", repair_style),
        Spacer(0, 3 * mm),
    ]
    story += _delivery_block(notice, [])
    story += _legal_block(framework, framework.notice_text, NOTICE_FIGURES)
    author, capacity = _author(notice, "issued", case)
    story += [
        Spacer(0, 4 * mm),
        KeepTogether(
            [
                section("Recibo e assinaturas"),
                Spacer(0, 1.5 * mm),
                signature_boxes(
                    [
                        (capacity, author),
                        ("Notificado (recibo: data e hora)", case.offender.name),
                    ]
                ),
            ]
        ),
    ]
    doc.build(story)
    return buffer.getvalue()


# --- the infraction record --------------------------------------------------------------------


def _reference_value(total, framework: PenaltyFramework) -> str:
    """The fine in reais at the latest value of its unit on file, for reference only: the
    amount due is the unit's value on the payment date (art. 36)."""
    if framework.money_unit == "BRL":
        return f"em reais ({framework.money_index})"
    unit = enforcement.unit_label(framework)
    rate = UfespRate.objects.filter(unit=framework.money_unit).order_by("-year").first()
    if rate is None:
        return f"valor em reais calculado pela {unit} da data do pagamento"
    value = br_money(total * rate.value_brl)
    return (
        f"referência: {value} pela {unit} de {rate.year} (R$ {br_number(rate.value_brl, 2)}); "
        f"o valor devido é o da {unit} na data do pagamento"
    )


def record_pdf(record: InfractionRecord, compress: bool = True) -> bytes:
    """The auto de infração: the offender, the facts, each infraction with its legal reference
    and fine, the totals in UFESP with the recidivism and aggravation lines, the deadlines, the
    delivery, the signature or the inspector's certificate, and art. 24-36."""
    case = record.case
    framework = case.framework
    unit = enforcement.unit_label(framework)
    buffer = io.BytesIO()
    doc = document(
        buffer,
        title=f"Auto de infração {record.number}",
        first_page=_header(
            case,
            "Auto de infração",
            framework.law,
            record.number,
            [
                f"Lavrado em {br_datetime(record.drawn_up_at)}",
                f"Processo {case.number} · {record.get_status_display()}",
            ],
        ),
        header_height=HEADER_H,
        running_title=f"Auto de infração nº {record.number}",
        generated=br_datetime(timezone.now()),
        compress=compress,
        watermark_text="ANULADO" if record.status == RecordStatus.ANNULLED else "",
    )
    fine = enforcement.record_fine(record)
    story: list = [NextPageTemplate("later")]
    story += _offender_block(case.offender, "Autuado", case.municipality_id)
    story += _facts_block(case)
    notice = case.notices.order_by("-issued_at").first()
    if notice is not None:
        due = enforcement.notice_due(notice)
        repaired = (
            f"reparado em {br_datetime(notice.repaired_at)}, fora do prazo"
            if notice.repaired_at
            else "não reparado"
        )
        story += [
            p(
                f"Notificação prévia nº {notice.number}: prazo de "
                f"{notice.repair_hours or framework.repair_hours} horas até "
                f"{deadlines.br_deadline(due) if due else '—'}, {repaired} "
                f"({framework.cite('notice_first')}).",
                SMALL,
            ),
            Spacer(0, 3 * mm),
        ]
    elif record.recidivist:
        story += [
            p(
                f"Sem notificação prévia: infrator reincidente ({framework.cite('notice_first')}).",
                SMALL,
            ),
            Spacer(0, 3 * mm),
        ]

    # Only the framework whose law makes simultaneous fines cumulative cites it (Lei 3.978/2007
    # art. 30 §3): no record cites another municipality's law.
    cited = framework.cite("cumulative_fines")
    cumulative = f" (multas cumulativas, {cited})" if cited else ""
    rows = [
        # The line as frozen when the record was drawn up, never the table as it reads now.
        [item.code, item.description, item.legal_reference, br_number(item.fine_ufesp, 2)]
        for item in record.items.order_by("code")
    ]
    rows.append(
        [
            Paragraph(f"<b>Soma das infrações</b>{cumulative}", SMALL),
            "",
            "",
            Paragraph(br_number(fine.base_ufesp, 2), RIGHT),
        ]
    )
    highlight = []
    if record.recidivist:
        earlier = ", ".join(r.number for r in enforcement.earlier_final_records(case)) or "—"
        if fine.persistent_of is not None:
            how = (
                f"reincidência persistente: {br_number(framework.persistent_factor)} × a última "
                f"multa ({br_number(fine.persistent_of, 2)} {unit})"
            )
            factor = f"= {br_number(record.total_ufesp, 2)}"
        else:
            how = f"multa × {br_number(fine.recidivism_factor)}"
            factor = f"× {br_number(fine.recidivism_factor)}"
        rows.append(
            [
                Paragraph(
                    f"<b>Reincidência</b>: {escape(how)} "
                    f"({escape(framework.cite('recidivism_escalation'))}; art. 26 II). Autos "
                    f"definitivos anteriores: {escape(earlier)}",
                    SMALL,
                ),
                "",
                "",
                Paragraph(factor, RIGHT),
            ]
        )
        highlight.append(len(rows) - 1)
    if record.obstruction_multiplier > 1:
        rows.append(
            [
                Paragraph(
                    "<b>Agravante</b>: impedir ou dificultar a fiscalização (art. 26 I)", SMALL
                ),
                "",
                "",
                Paragraph(f"× {br_number(record.obstruction_multiplier)}", RIGHT),
            ]
        )
        highlight.append(len(rows) - 1)
    elif case.obstructed_inspection:
        rows.append(
            [
                Paragraph(
                    "<b>Agravante registrado</b>: impedir ou dificultar a fiscalização (art. 26 "
                    f"I), sem fator: {escape(framework.cite('obstruction_factor'))}",
                    SMALL,
                ),
                "",
                "",
                Paragraph("× 1", RIGHT),
            ]
        )
        highlight.append(len(rows) - 1)
    rows.append(
        [
            Paragraph(f"<b>Multa total ({unit})</b>", SMALL),
            "",
            "",
            Paragraph(br_number(record.total_ufesp, 2), RIGHT_BOLD),
        ]
    )
    table = grid(
        ["Código", "Infração (tabela do art. 23)", "Fundamento legal", f"Multa ({unit})"],
        rows,
        [16 * mm, CONTENT_W - 16 * mm - 38 * mm - 24 * mm, 38 * mm, 24 * mm],
        numeric=(3,),
        highlight=tuple(highlight),
        bold_last=True,
    )
    # Summary lines span the description columns.
    first_summary = len(rows) - 1 - len(highlight) - 1
    table.setStyle(
        TableStyle([("SPAN", (0, r + 1), (2, r + 1)) for r in range(first_summary, len(rows))])
    )
    story += [
        section("Infrações e multa"),
        Spacer(0, 1 * mm),
        table,
        Spacer(0, 1.5 * mm),
        p(
            f"Multa total: {br_number(record.total_ufesp, 2)} {unit} — "
            f"{_reference_value(record.total_ufesp, framework)} "
            f"({framework.cite('money_unit')}).",
            SMALL,
        ),
    ]
    if record.index_update:
        # Lei 3.190/2013 art. 9 §6: the yearly update applied, and any year not entered.
        story += [Spacer(0, 1 * mm), p(escape(record.index_update), SMALL)]
    # Who imposes the fine (Lei 3.978/2007 art. 35; the framework's applied_by): proposed by
    # the inspector's record and applied by the authority, or imposed by the record itself.
    if framework.applier("FINE") == "AUTHORITY":
        applied = (
            f"Multa aplicada em {br_datetime(record.fine_applied_at)} por "
            f"{escape(Authors().text(record, 'fine_applied') or framework.authority)}"
            if record.fine_applied_at
            else "Multa proposta pelo agente; aguarda a aplicação pela autoridade — "
            f"{escape(framework.authority)}"
        )
        story += [
            Spacer(0, 1 * mm),
            p(f"{applied} ({escape(framework.cite('applied_by'))}).", SMALL),
        ]
    if record.proposes_revocation:
        suspension = enforcement.earlier_suspension(case)
        since = f" (suspensão de {br_date(suspension.starts_on)})" if suspension else ""
        reason = (
            "Reincidência persistente: proposta a cassação "
            f"({framework.cite('persistent_factor')})."
            if fine.persistent_of is not None
            else f"Nova infração após a penalidade de suspensão{since}: proposta a cassação do "
            "alvará (art. 34; art. 25 V)."
        )
        story += [
            Spacer(0, 1.5 * mm),
            p(reason, make_style("revoke", fontName=FONT_BOLD, textColor=ERROR)),
        ]
    penalties = list(record.penalties.order_by("starts_on"))
    authors = Authors()
    if penalties:
        story += [
            Spacer(0, 3 * mm),
            section("Penalidades aplicadas (art. 25)"),
            Spacer(0, 1 * mm),
            grid(
                ["Penalidade", "Início", "Fim / levantamento", "Aplicada por", "Detalhes"],
                [
                    [
                        pen.get_kind_display(),
                        br_date(pen.starts_on),
                        br_date(pen.lifted_on or pen.ends_on)
                        if (pen.lifted_on or pen.ends_on)
                        else "—",
                        authors.text(pen, "applied") or "—",
                        pen.details or "—",
                    ]
                    for pen in penalties
                ],
                [34 * mm, 20 * mm, 26 * mm, 50 * mm, CONTENT_W - 130 * mm],
            ),
        ]
    charges = [c for pen in penalties for c in pen.charges.prefetch_related("breaches")]
    if charges:
        story += [
            Spacer(0, 2 * mm),
            p(
                "Multa diária por descumprimento do embargo: "
                f"{terms_of(framework)['daily_fine']} "
                f"({framework.cite('embargo_daily_fine')}).",
                STRONG,
            ),
            Spacer(0, 1 * mm),
            grid(
                ["Lançada em", "Dias", unit, "Pagar até", "Situação"],
                [
                    [
                        br_date(c.assessed_on),
                        str(len(c.breaches.all())),
                        br_number(c.amount_ufesp, 2),
                        br_date(enforcement.charge_last_day(c)),
                        c.get_status_display() + (f" — {c.payment_text}" if c.paid_on else ""),
                    ]
                    for c in charges
                ],
                [26 * mm, 14 * mm, 20 * mm, 32 * mm, CONTENT_W - 92 * mm],
            ),
        ]
    story.append(Spacer(0, 3 * mm))

    appeal_last = enforcement.appeal_last_day(record)
    payment_last = enforcement.payment_last_day(record)
    discount_last = enforcement.discount_last_day(record)
    words = terms_of(framework)
    story += _delivery_block(
        record,
        [
            (
                "Recurso*",
                (f"até {br_date(appeal_last)}: " if appeal_last else "")
                + f"{words['appeal']} ({words['appeal_cite']}).",
            ),
            (
                "Pagamento*",
                _payment_terms(framework, words, payment_last, discount_last),
            ),
        ],
    )
    if enforcement.has_appeal(record) and record.appeal.decided_on:
        appeal = record.appeal
        by = authors.text(appeal, "decided")
        story += [
            p(
                f"Recurso apresentado em {br_date(appeal.filed_on)}, decidido em "
                f"{br_date(appeal.decided_on)}{f' por {by}' if by else ''}: "
                + _appeal_outcome(appeal, enforcement.unit_label(framework)),
                STRONG,
            ),
            Spacer(0, 3 * mm),
        ]
    if record.paid_on:
        late = " (fora do prazo)" if enforcement.paid_late(record) else ""
        story += [
            p(f"{record.payment_text}{late}", STRONG),
            Spacer(0, 3 * mm),
        ]

    inspector, capacity = _author(record, "drawn_up", case)
    signature: list = [section("Assinaturas (art. 36 p.ú.)"), Spacer(0, 1.5 * mm)]
    offender_box = "Autuado" if record.signed_by_offender else "Autuado (não assinou: certidão)"
    signature.append(signature_boxes([(offender_box, case.offender.name), (capacity, inspector)]))
    if not record.signed_by_offender:
        signature += [
            Spacer(0, 2 * mm),
            _certificate_box(
                "<b>Certidão do servidor (art. 36 p.ú.)</b>: certifico que o autuado não assinou "
                f"este auto, pelo seguinte motivo: {escape(record.no_signature_reason)}",
                inspector,
            ),
        ]
    story += [KeepTogether(signature), Spacer(0, 4 * mm)]
    story += _legal_block(framework, framework.record_text, RECORD_FIGURES)
    # The appeal's municipal norm, or the notice that it has none yet.
    appeal = framework.appeal_notice() or f"{framework.appeal_source}."
    story += [Spacer(0, 1.5 * mm), Paragraph(f"<b>Recurso</b>: {escape(appeal)}", SMALL)]
    story += [
        Spacer(0, 2 * mm),
        p(
            "O pagamento da multa não exime o infrator de reparar o dano nem de cumprir as demais "
            "obrigações legais (art. 30 §2). Documento emitido em "
            f"{br_datetime(timezone.now())}.",
            SMALL,
        ),
    ]
    doc.build(story)
    return buffer.getvalue()


def _payment_terms(framework, words, payment_last, discount_last) -> str:
    """The record's payment line: its deadline and Dívida Ativa where the law sets one; where it
    sets none (Rio de Janeiro), the statement that it does not."""
    discount = (
        f"desconto de {framework.discount_percent}% se pago até {br_date(discount_last)} "
        f"({framework.cite('discount_percent')})"
        if discount_last
        else "sem desconto por pagamento antecipado"
    )
    how = "em guia própria, em reais pelo valor da data do pagamento"
    if no_deadline := framework.payment_deadline_notice():
        return f"{no_deadline} Pagamento {how}; {discount}."
    return (
        (f"até {br_date(payment_last)}, " if payment_last else "")
        + f"{words['payment']} ({words['payment_cite']}), {how}; {discount}. Não pago no "
        "prazo, o débito é inscrito em Dívida Ativa (art. 22 IV)."
    )
