"""The Habite-se destination declaration in PDF (Lei 3.978/2007 art. 9 p.ú. II), drawn with the
platform's PDF kit (config.pdf) from the facts stored on issue (generators.declarations): the
worksite and its generator, the declaration in one sentence, the figures by class, the
Certificado de Destinação Final behind it, and the QR code of its public verification page.

Takes domain objects and returns the bytes; never sees a request."""

from __future__ import annotations

import io

from django.utils import timezone
from reportlab.lib.units import mm
from reportlab.platypus import KeepTogether, NextPageTemplate, Spacer

from config.br import br_date, br_datetime, br_number
from config.pdf import (
    BRAND,
    CONTENT_W,
    FONT_BOLD,
    NUMBERED_HEADER_H,
    SMALL,
    document,
    fields,
    grid,
    issued_by,
    make_style,
    numbered_header,
    p,
    section,
    signature_boxes,
)
from ctr.custody import certificates
from ctr.documents import document_kind, format_document
from pev_network.letterhead import letterhead_of
from pev_network.models import waste_class_short

from . import declarations
from .models import HabiteSeDeclaration

TITLE = "Declaração de Destinação — Habite-se"
STATEMENT = make_style("statement", fontName=FONT_BOLD, fontSize=10, leading=13, textColor=BRAND)
# As (article of Lei 3.978/2007, what it says): beside another municipality's law only what
# it says is printed (config.letterhead).
LEGAL_BASIS = (
    (
        "art. 9 p.ú. II",
        "o Habite-se pede a documentação do correto transporte, triagem e destinação dos "
        "resíduos da obra",
    ),
    ("art. 3 III", "a ATT faz a triagem para posterior remoção e destinação adequada"),
    ("art. 13 p.ú.", "o transportador destina às áreas licenciadas e comprova a destinação"),
)
METHOD = (
    "A declaração é emitida só quando todas as cargas da obra foram recebidas por áreas "
    "licenciadas e, as que passaram por uma ATT ou PEV, seguiram pela cadeia de custódia (o que "
    "entrou primeiro sai primeiro, por classe) até uma área de reciclagem ou aterro licenciado, "
    "ou foram beneficiadas na área. O certificado de destinação final indicado lista cada CTR e "
    "onde está o seu resíduo."
)


def _m3(value) -> str:
    return "—" if value is None else br_number(value)


def declaration_pdf(
    declaration: HabiteSeDeclaration, verify_url: str, certificate_url: str, compress: bool = True
) -> bytes:
    """The issued `declaration`, with the QR code of `verify_url` (its public page) and the
    address of its certificate's public page, `certificate_url`.

    The generator's document is printed in full: only who may see the declaration gets it."""
    facts = declarations.facts(declaration)
    head = letterhead_of(certificates.worksite_municipality(declaration.worksite))
    buffer = io.BytesIO()
    doc = document(
        buffer,
        title=f"{TITLE} {declaration.code}",
        first_page=numbered_header(
            issued_by(head, "Núcleo Permanente de Gestão"),
            TITLE,
            "Comprovação do transporte, triagem e destinação dos resíduos da obra",
            f"Nº {declaration.code}",
            [
                f"Emissão: {br_datetime(declaration.decided_at)}    "
                f"Pedido nº {facts.number} de {br_datetime(declaration.requested_at)}",
                f"CTRs recebidos: {facts.ctr_count}    "
                f"Destinado: {br_number(facts.destined_m3)} m³",
            ],
            verify_url,
        ),
        header_height=NUMBERED_HEADER_H,
        running_title=f"Habite-se {declaration.code}",
        generated=br_datetime(timezone.now()),
        compress=compress,
    )
    info = [
        ("Obra*", facts.address),
        ("Bairro", facts.neighbourhood),
        ("Município", facts.municipality),
        ("Alvará", facts.permit_number),
        ("Tipo de obra", facts.work_kind),
        ("Área construída", f"{br_number(facts.built_area_m2)} m²" if facts.built_area_m2 else ""),
        ("Início", br_date(facts.start_date)),
        ("Término", br_date(facts.ended_on)),
        (
            "PGRCC",
            f"versão {facts.plan_version} aprovada"
            if facts.plan_version is not None
            else "sem PGRCC aprovado",
        ),
        ("Gerador", facts.generator_name),
        (document_kind(facts.generator_document), format_document(facts.generator_document)),
        ("Resumo SHA-256*", declaration.digest),
    ]
    class_w = 40 * mm
    figures = grid(
        ["Classe", "Previsto (PGRCC)", "Transportado", "Recebido", "Destinado"],
        [
            [
                waste_class_short(c.waste_class),
                _m3(c.expected_m3),
                _m3(c.transported_m3),
                _m3(c.received_m3),
                _m3(c.destined_m3),
            ]
            for c in facts.classes
        ]
        + [
            [
                "Total",
                _m3(facts.expected_m3),
                _m3(facts.transported_m3),
                _m3(facts.received_m3),
                _m3(facts.destined_m3),
            ]
        ],
        [class_w] + [(CONTENT_W - class_w) / 4] * 4,
        numeric=(1, 2, 3, 4),
        bold_last=True,
    )
    decided_by = declaration.decided_by
    story: list = [
        NextPageTemplate("later"),
        fields(info),
        Spacer(0, 4 * mm),
        p(facts.statement, STATEMENT),
        Spacer(0, 4 * mm),
        KeepTogether(
            [
                section("Previsto, transportado, recebido e destinado (m³)"),
                Spacer(0, 1 * mm),
                figures,
            ]
        ),
        Spacer(0, 4 * mm),
        KeepTogether(
            [
                section("Certificado de Destinação Final"),
                Spacer(0, 1 * mm),
                fields(
                    [
                        ("Código", facts.certificate_code),
                        ("Emitido em", br_datetime(declaration.certificate.issued_at)),
                        ("Resumo SHA-256*", facts.certificate_digest),
                        ("Verificação*", certificate_url),
                    ]
                ),
            ]
        ),
        Spacer(0, 4 * mm),
        p(METHOD, SMALL),
        Spacer(0, 2 * mm),
        p(head.legal_basis(LEGAL_BASIS), SMALL),
        Spacer(0, 2 * mm),
        p(
            "Esta declaração retrata a cadeia de custódia em "
            f"{br_datetime(declaration.decided_at)}. A página {verify_url} mostra o que ela diz "
            "e avisa se a cadeia mudou desde então.",
            SMALL,
        ),
        Spacer(0, 6 * mm),
        KeepTogether(
            signature_boxes(
                [
                    (
                        "Núcleo Permanente de Gestão",
                        decided_by.get_full_name() or decided_by.get_username(),
                    )
                ]
            )
        ),
    ]
    doc.build(story)
    return buffer.getvalue()
