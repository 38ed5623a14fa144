"""Forms of the public map pages (pt-BR)."""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.contrib.gis.geos import Point

from config.br_forms import BRDecimalField, CoordinateField
from pev_network.models import WasteClass

# A load larger than this is not a "where do I take it" question but a licensing one; the
# limit also keeps typos (10000 for 1.0000) from reaching the database.
MAX_VOLUME_M3 = Decimal("1000")


class CoordinateInput(forms.TextInput):
    """Text, not type=number: Brazilians type a decimal comma, which number inputs reject in
    some browsers; `inputmode` still brings up the numeric keyboard on phones."""

    def __init__(self, attrs=None):
        super().__init__({"inputmode": "decimal", "autocomplete": "off", **(attrs or {})})


class NearestFacilityForm(forms.Form):
    """Where can I legally take this load? A point (no address: a click on the map or typed
    coordinates) and a volume; optionally the class of the waste."""

    # Both "-22,81" and "-22.81" (the dot the map writes): config/br_forms.py.
    longitude = CoordinateField(
        "lon",
        label="Longitude",
        widget=CoordinateInput({"placeholder": "-45,19"}),
        help_text="Em graus decimais (oeste é negativo).",
    )
    latitude = CoordinateField(
        "lat",
        label="Latitude",
        widget=CoordinateInput({"placeholder": "-22,81"}),
        help_text="Em graus decimais (sul é negativo).",
    )
    volume_m3 = BRDecimalField(
        label="Volume (m³)",
        max_value=MAX_VOLUME_M3,
        decimal_places=3,
        widget=CoordinateInput({"placeholder": "0,5"}),
        help_text="Uma caçamba comum tem de 3 a 5 m³; um carrinho de mão, cerca de 0,06 m³.",
    )
    waste_class = forms.ChoiceField(
        label="Classe do resíduo (opcional)",
        required=False,
        choices=[("", "Qualquer classe")] + list(WasteClass.choices),
    )

    field_names = ("longitude", "latitude", "volume_m3", "waste_class")

    def clean_volume_m3(self) -> Decimal:
        volume = self.cleaned_data["volume_m3"]
        if volume <= 0:
            raise forms.ValidationError("Informe um volume maior que zero.", code="min_value")
        return volume

    def point(self) -> Point:
        """The chosen point, WGS 84 (longitude first, as GEOS and GeoJSON order it)."""
        return Point(
            float(self.cleaned_data["longitude"]), float(self.cleaned_data["latitude"]), srid=4326
        )
