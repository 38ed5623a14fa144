"""The worksite registration form (pt-BR): it parses what the page sends into a
generators.worksites.Registration; the rules of a registration are the service's."""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.contrib.gis.geos import Point
from django.core.exceptions import ValidationError

from config.br_forms import BRDecimalField, CoordinateField
from config.errors import DomainError
from ctr.documents import normalize_document
from ctr.forms import DATE_FORMATS, DateInput
from ctr.models import WorkKind, Worksite

from . import worksites
from .worksites import Registration, WorksiteInvalid

POINT, POLYGON = "point", "polygon"
SHAPES = [(POINT, "Um ponto"), (POLYGON, "O contorno da obra")]


class WorksiteForm(forms.Form):
    """A worksite's registration. `on_behalf`: the municipality registers it for a generator
    named by CPF/CNPJ (and name, when the registry does not know it yet)."""

    generator_document = forms.CharField(
        label="CPF ou CNPJ do gerador",
        max_length=20,
        widget=forms.TextInput({"inputmode": "numeric", "autocomplete": "off"}),
    )
    generator_name = forms.CharField(
        label="Nome do gerador",
        max_length=200,
        required=False,
        help_text="Só se o gerador ainda não estiver no cadastro.",
    )
    address = forms.CharField(label="Endereço da obra", max_length=300)
    neighbourhood = forms.CharField(label="Bairro", max_length=120, required=False)
    shape = forms.ChoiceField(
        label="Como marcar a obra no mapa",
        choices=SHAPES,
        initial=POINT,
        widget=forms.RadioSelect,
    )
    location_lat = CoordinateField("lat", decimal_places=6, required=False)
    location_lon = CoordinateField("lon", decimal_places=6, required=False)
    # The polygon drawn on the map, as GeoJSON (the page's script writes it).
    area = forms.CharField(required=False, widget=forms.HiddenInput)
    permit_number = forms.CharField(
        label="Número do alvará",
        max_length=60,
        required=False,
        help_text="O alvará de aprovação e execução da obra (Lei 3.978/2007 art. 9).",
    )
    built_area_m2 = BRDecimalField(
        label="Área construída (m²)",
        max_digits=12,
        decimal_places=2,
        example="350,5",
        help_text="Na demolição, a área a demolir.",
    )
    work_kind = forms.ChoiceField(
        label="Tipo de obra", choices=[("", "— escolha —"), *WorkKind.choices]
    )
    start_date = forms.DateField(label="Início", input_formats=DATE_FORMATS, widget=DateInput())
    expected_end = forms.DateField(
        label="Término previsto", input_formats=DATE_FORMATS, widget=DateInput()
    )
    declared_large_generator = forms.BooleanField(
        label="Declaro que sou grande gerador nesta obra (PGRCC, Lei 3.978/2007 art. 9)",
        required=False,
    )

    # The service's names of the fields, to the form's.
    FIELDS = {
        "generator": "generator_document",
        "geometry": "area",
    }

    def __init__(self, *args, on_behalf: bool = False, worksite: Worksite | None = None, **kw):
        if worksite is not None and "initial" not in kw:
            kw["initial"] = initial_of(worksite)
        super().__init__(*args, **kw)
        self.worksite = worksite
        if not on_behalf or worksite is not None:
            del self.fields["generator_document"]
            del self.fields["generator_name"]

    def clean_generator_document(self) -> str:
        try:
            return normalize_document(self.cleaned_data["generator_document"])
        except ValidationError as error:
            raise ValidationError(error.messages) from None

    def clean(self):
        data = super().clean()
        if data.get("shape") == POINT:
            lat, lon = data.get("location_lat"), data.get("location_lon")
            if lat is None and "location_lat" not in self.errors:
                self.add_error("location_lat", "Clique no mapa ou digite a latitude da obra.")
            if lon is None and "location_lon" not in self.errors:
                self.add_error("location_lon", "Clique no mapa ou digite a longitude da obra.")
        elif data.get("shape") == POLYGON and not data.get("area"):
            self.add_error(
                "area",
                "Desenhe o contorno da obra no mapa: toque em cada canto e depois em "
                "“Fechar contorno”.",
            )
        return data

    def registration(self) -> Registration:
        """The registration the form declares; the service checks the rest. A polygon that
        cannot be read raises WorksiteInvalid, as the service would."""
        data = self.cleaned_data
        if data["shape"] == POLYGON:
            geometry = worksites.geometry_from_geojson(data["area"])
        else:
            geometry = Point(float(data["location_lon"]), float(data["location_lat"]), srid=4326)
        return Registration(
            address=data["address"],
            geometry=geometry,
            work_kind=data["work_kind"],
            built_area_m2=data["built_area_m2"],
            start_date=data["start_date"],
            expected_end=data["expected_end"],
            neighbourhood=data.get("neighbourhood", ""),
            permit_number=data.get("permit_number", ""),
            declared_large_generator=data.get("declared_large_generator", False),
        )

    def add_refusal(self, error: DomainError) -> None:
        """Put the service's refusal on the fields it names (every problem of a
        WorksiteInvalid), the user's input kept."""
        problems = (
            error.problems if isinstance(error, WorksiteInvalid) else [(error.field, error.message)]
        )
        for field, message in problems:
            name = self.FIELDS.get(field, field)
            if name == "area" and self.cleaned_data.get("shape") == POINT:
                name = "location_lat"
            self.add_error(name if name in self.fields else None, message)


def initial_of(worksite: Worksite) -> dict:
    """The form as the worksite stands (an edit)."""
    registration = Registration.of(worksite)
    location = worksite.location
    drawn = worksite.area is not None
    return {
        "address": worksite.address,
        "neighbourhood": worksite.neighbourhood,
        "shape": POLYGON if drawn else POINT,
        "location_lat": Decimal(f"{location.y:.6f}"),
        "location_lon": Decimal(f"{location.x:.6f}"),
        "area": worksite.area.geojson if drawn else "",
        "permit_number": worksite.permit_number,
        "built_area_m2": worksite.built_area_m2,
        "work_kind": worksite.work_kind,
        "start_date": worksite.start_date,
        "expected_end": worksite.expected_end,
        "declared_large_generator": registration.declared_large_generator,
    }
