"""Display filters for Brazilian readers: `{% load br %}`.

- `documento`: a CPF as 000.000.000-00, a CNPJ as 00.000.000/0000-00; a masked document
  (***.456.789-**, from ctr.documents.mask_document) is shown as it is, never unmasked.
- `classe` and `tipo_area`: the short names of a waste class and a facility kind (the codes
  VOLUMOSO and RECYCLING are data, not text for a reader).
- `titulo_regra`: the title of a rule of the catalogue, from its code.
- `br_num`: a volume or amount with the decimal comma, as many decimals as it has.
- `coluna_csv`: a CTR file's column(s) by the Portuguese names of the example file.
"""

from decimal import Decimal, InvalidOperation

from django import template

from config.br import br_number
from ctr import rules
from ctr.bulk.csv_format import PORTUGUESE_NAMES
from ctr.documents import format_document
from pev_network.models import facility_kind_short, waste_class_short

register = template.Library()


@register.filter
def documento(value) -> str:
    text = "" if value is None else str(value)
    if "*" in text:  # already masked for a public page: keep it so
        return text
    return format_document(text)


@register.filter
def classe(value) -> str:
    return waste_class_short(str(value))


@register.filter
def tipo_area(value) -> str:
    return facility_kind_short(str(value))


@register.filter
def titulo_regra(code) -> str:
    rule = rules.REGISTRY.get(str(code))
    return rule.title if rule else str(code)


@register.filter
def br_num(value) -> str:
    """10.000 → "10", 1.500 → "1,5" (never "1E+1", as Decimal.normalize() alone would)."""
    if value is None or value == "":
        return "—"
    try:
        return br_number(Decimal(value), grouping=False)
    except (InvalidOperation, TypeError, ValueError):
        return str(value)


@register.filter
def coluna_csv(columns) -> str:
    """A column as the example file names it ("origin_lon, origin_lat" → "origem_lon,
    origem_lat"), whichever name the uploaded file used."""
    names = [name.strip() for name in str(columns).split(",")]
    return ", ".join(PORTUGUESE_NAMES.get(name, name) for name in names)
