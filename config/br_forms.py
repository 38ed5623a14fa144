"""Form fields for numbers as Brazilians type them, shared by every form with a decimal.

A decimal comma ("-22,799585", "2,5") or a point ("-22.799585", what a GPS app copies) both
mean the decimal mark. Thousand separators are refused: "1.500" for a volume would be
ambiguous (one and a half, or fifteen hundred), and "-22.799.585" is a typo, never a
coordinate. Django's own DecimalField reads the text by the active locale and, in an
<input type=number>, lets the browser drop the comma ("-22,799585" arrived as -22799585):
these fields are text inputs with the numeric keyboard and parse the text themselves.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django import forms
from django.core.exceptions import ValidationError

from config.br import br_number

# One optional sign, digits, at most one decimal comma or point.
DECIMAL_RE = re.compile(r"^[+-]?\d+(?:[.,]\d+)?$")

INVALID_NUMBER = (
    "Informe um número: só algarismos e uma vírgula (ou ponto) para os decimais, "
    "sem separador de milhar (ex.: 2,5)."
)


def parse_decimal(text: str) -> Decimal:
    """A number as a Brazilian types it (decimal comma) or as a computer writes it (point).
    Raises ValueError on anything else, NaN and infinity included."""
    value = (text or "").strip().replace(" ", "").replace("\u2212", "-")
    if not DECIMAL_RE.match(value):
        raise ValueError(text)
    try:
        return Decimal(value.replace(",", "."))
    except InvalidOperation:  # pragma: no cover - the regex admits only plain numbers
        raise ValueError(text) from None


def format_point(lon: float, lat: float, places: int = 6) -> str:
    """A point as the coordinate fields show it: latitude first, decimal comma, the two
    numbers apart by a semicolon (a comma would be ambiguous): "(-22,799585; -45,192530)"."""
    return f"({br_number(lat, places, grouping=False)}; {br_number(lon, places, grouping=False)})"


class BRDecimalInput(forms.TextInput):
    """Text, not type=number: number inputs reject or drop the decimal comma in some
    browsers; `inputmode` still brings up the numeric keyboard on phones."""

    def __init__(self, attrs=None):
        super().__init__({"inputmode": "decimal", "autocomplete": "off", **(attrs or {})})

    def format_value(self, value):
        if isinstance(value, Decimal | float | int) and not isinstance(value, bool):
            # No thousands dot: the field refuses one when the form comes back.
            return br_number(value, grouping=False)
        return super().format_value(value)


class BRDecimalField(forms.DecimalField):
    """A DecimalField that takes a decimal comma or point, whatever the active locale."""

    widget = BRDecimalInput
    default_error_messages = {"invalid": INVALID_NUMBER}

    def __init__(self, *args, example: str | None = None, **kwargs):
        # The model's admin form passes `localize`; this field reads both marks anyway.
        kwargs.pop("localize", None)
        custom_invalid = "invalid" in (kwargs.get("error_messages") or {})
        super().__init__(*args, **kwargs)
        if example and not custom_invalid:
            self.error_messages["invalid"] = INVALID_NUMBER.replace("2,5", example)

    def widget_attrs(self, widget):
        # DecimalField adds step/min/max for a NumberInput; a text input needs none of them.
        return forms.Field.widget_attrs(self, widget)

    def to_python(self, value):
        if value in self.empty_values:
            return None
        if isinstance(value, Decimal):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return Decimal(str(value))
        try:
            return parse_decimal(str(value))
        except ValueError:
            raise ValidationError(self.error_messages["invalid"], code="invalid") from None


class BRFloatField(BRDecimalField):
    """The same reading, cleaned to a float (radii and distances of the analysis forms)."""

    def clean(self, value):
        number = super().clean(value)
        return None if number is None else float(number)


class CoordinateField(BRDecimalField):
    """Latitude or longitude in decimal degrees (WGS 84). With `decimal_places`, more
    decimals are rounded to them (GPS noise is no reason to refuse a point)."""

    def __init__(self, axis: str, **kwargs):
        limit = Decimal(90 if axis == "lat" else 180)
        kwargs.setdefault("min_value", -limit)
        kwargs.setdefault("max_value", limit)
        example = "-22,799585" if axis == "lat" else "-45,192530"
        kwargs.setdefault("widget", BRDecimalInput({"placeholder": example[:6]}))
        kwargs.setdefault("label", "Latitude" if axis == "lat" else "Longitude")
        super().__init__(example=example, **kwargs)

    def to_python(self, value):
        number = super().to_python(value)
        if number is None or self.decimal_places is None or abs(number) > 1000:
            return number  # out of range: the min/max validators say so
        return number.quantize(Decimal(1).scaleb(-self.decimal_places), rounding=ROUND_HALF_UP)
