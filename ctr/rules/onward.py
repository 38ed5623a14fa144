"""The rules checked at issue of an onward CTR: sorted waste leaving an ATT or a PEV, within
what the facility received and holds in stock."""

from __future__ import annotations

from decimal import Decimal

from pev_network.models import FacilityKind

from .catalogue import Message, Severity, breach, rule
from .drafts import CTRDraft
from .issue import FACTS, WASTE_FIELD, WASTE_LINES

# --- onward CTRs: sorted waste leaving an ATT or a PEV --------------------------------------

# In the SQL, an onward row is one with f.origin_facility_id (the facility it leaves, known
# and the importing user's to ship from); ctr_bulk_origin_class holds, per line and class, the
# volume shipped and the stock stored at the end of the transport day (ctr.custody.stock), and
# ctr_bulk_stock the stock the row finds once the rows before it in the file are issued.
SHIPPING_KINDS = (FacilityKind.ATT, FacilityKind.PEV)
ONWARD_FACTS = f"{FACTS} WHERE f.origin_facility_id IS NOT NULL"


@rule(
    "ORIGIN_FACILITY_KIND",
    Severity.ERROR,
    "Lei 3.978/2007 art. 3 III e V",
    "CTR de saída parte de uma ATT ou de um PEV",
    message=Message(
        "Só ATT e PEV expedem resíduos recebidos: “{facility}” é {kind:kind}.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'origin_facility' AS field, f.origin_name AS facility,
               f.origin_kind AS kind
        FROM {ONWARD_FACTS}
          AND f.origin_kind NOT IN ({", ".join(f"'{k.value}'" for k in SHIPPING_KINDS)})
        """,
    ),
)
def origin_facility_kind(ctr: CTRDraft):
    """A ATT recebe e faz a triagem dos resíduos para posterior remoção (art. 3 III); o PEV
    concentra pequenos volumes que o município leva adiante (art. 3 V). Aterro e área de
    reciclagem são destinos."""
    facility = ctr.origin_facility
    if facility is not None and facility.kind not in SHIPPING_KINDS:
        yield breach("origin_facility", facility=facility.name, kind=facility.kind)


@rule(
    "ORIGIN_FACILITY_NOT_LICENSED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 14 §1",
    "Área de origem do CTR de saída com licença válida na data do transporte",
    message=Message(
        "A área de origem “{facility}” não tem licença válida em {day:date}.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'origin_facility' AS field, f.origin_name AS facility,
               r.transport_date AS day
        FROM {ONWARD_FACTS} AND NOT f.origin_licensed
        """,
    ),
)
def origin_facility_not_licensed(ctr: CTRDraft):
    """Os receptores devem ser licenciados (art. 14 §1), também quando expedem o que
    receberam."""
    if ctr.origin_facility is not None and not ctr.origin_facility_licensed:
        yield breach("origin_facility", facility=ctr.origin_facility.name, day=ctr.transport_date)


@rule(
    "ORIGIN_OUTSIDE_ORIGIN_FACILITY",
    Severity.ERROR,
    "Lei 3.978/2007 art. 3 III e VI",
    "Origem do CTR de saída dentro da área de origem",
    message=Message(
        "A origem {origin:point} não está dentro da área “{facility}”.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'origin' AS field, r.origin, f.origin_name AS facility
        FROM {ONWARD_FACTS} AND NOT f.origin_inside
        """,
    ),
)
def origin_outside_origin_facility(ctr: CTRDraft):
    """O CTR de saída parte da área que recebeu os resíduos: a origem fica dentro do seu
    polígono, com a tolerância do GPS do município."""
    if ctr.origin_facility is not None and not ctr.origin_in_facility:
        yield breach("origin", origin=ctr.origin, facility=ctr.origin_facility.name)


@rule(
    "CLASS_NOT_RECEIVED_AT_ORIGIN",
    Severity.ERROR,
    "Lei 3.978/2007 art. 3 III",
    "A área de origem recebeu cada classe que expede",
    message=Message(
        "A área “{facility}” não recebeu {cls:class} até {day:date} (CTRs recebidos): não "
        "pode expedi-la.",
        sql=f"""
        SELECT r.line, {WASTE_FIELD}, f.origin_name AS facility, w.c AS cls,
               r.transport_date AS day
        FROM {FACTS} {WASTE_LINES}
        LEFT JOIN ctr_bulk_origin_class s ON s.line = r.line AND s.waste_class = w.c
        WHERE f.origin_facility_id IS NOT NULL AND coalesce(s.received, 0) <= 0
        """,
    ),
)
def class_not_received_at_origin(ctr: CTRDraft):
    """Uma área de triagem expede o que recebeu: uma classe que nenhum CTR confirmado levou
    até ela não pode sair dela."""
    if ctr.origin_facility is None:
        return
    for index, line in enumerate(ctr.waste):
        stock = ctr.origin_stock.get(line.waste_class)
        if stock is None or stock.received_m3 <= 0:
            yield breach(
                f"waste[{index}].class",
                facility=ctr.origin_facility.name,
                cls=line.waste_class,
                day=ctr.transport_date,
            )


# OriginStock.allowed_m3 in SQL, on the columns stock, received and tolerance of {s} (exact:
# a product, where "/ 100" would round to the division's scale), and the breach
# over_facility_stock finds on them (ctr.bulk's walk of the file reads it too: a row that
# breaks it issues nothing, so ships nothing).
ALLOWED_SQL = "({s}.stock + {s}.received * {s}.tolerance * 0.01)"
OVER_STOCK_SQL = "{s}.received > 0 AND {s}.volume > {s}.allowed"
# Decimal.quantize(Decimal("0.001")) in SQL: to the thousandth, half to even (PostgreSQL's
# round() takes half away from zero).
QUANTIZE_SQL = (
    "(CASE WHEN {0} * 1000 - floor({0} * 1000) = 0.5"
    " THEN (floor({0} * 1000) + abs(mod(floor({0} * 1000), 2))) / 1000"
    " ELSE round({0}, 3) END)"
)


@rule(
    "OVER_FACILITY_STOCK",
    Severity.ERROR,
    "Lei 3.978/2007 art. 3 III, art. 13 p.ú.",
    "Volume expedido dentro do estoque da área de origem, mais a tolerância de triagem",
    message=Message(
        "Saída de {volume:decimal} m³ de {cls:class} acima do que a área “{facility}” pode "
        "expedir em {day:date}: estoque de {stock:decimal} m³ mais {tolerance:decimal}% do "
        "recebido ({allowed:decimal} m³).",
        sql=f"""
        SELECT s.line, s.sub, 'waste' AS field, s.volume, s.waste_class AS cls,
               f.origin_name AS facility, r.transport_date AS day, s.stock, s.tolerance,
               {QUANTIZE_SQL.format("s.allowed")} AS allowed
        FROM ctr_bulk_stock s
        JOIN ctr_bulk_fact f ON f.line = s.line JOIN ctr_bulk_row r ON r.line = s.line
        WHERE {OVER_STOCK_SQL.format(s="s")}
        """,
    ),
    sequential=True,
)
def over_facility_stock(ctr: CTRDraft):
    """O volume que sai de uma classe não passa do estoque da área (recebido − expedido −
    beneficiado na área), mais a variação de volume que a triagem admite (parâmetro do
    município, por classe). Uma classe nunca recebida já é outra constatação."""
    if ctr.origin_facility is None:
        return
    for waste_class, volume in ctr.shipped_by_class().items():
        stock = ctr.origin_stock.get(waste_class)
        if stock is None or stock.received_m3 <= 0:
            continue
        if volume > stock.allowed_m3:
            yield breach(
                "waste",
                volume=volume,
                cls=waste_class,
                facility=ctr.origin_facility.name,
                day=ctr.transport_date,
                stock=stock.stock_m3,
                tolerance=stock.tolerance_pct,
                allowed=stock.allowed_m3.quantize(Decimal("0.001")),
            )
