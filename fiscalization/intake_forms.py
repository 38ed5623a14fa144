"""Forms of the dumping-report pages (pt-BR): the citizen's report and the inspectors' tools."""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.contrib.gis.geos import Point

from config.api_errors import InvalidParameter
from config.api_params import parse_bbox
from config.br_forms import BRDecimalField, CoordinateField
from maps.forms import CoordinateInput
from pev_network.models import CatchmentBasin

from . import intake
from .models import DumpingCategory, ReportStatus
from .photos import MAX_PHOTO_BYTES, MAX_PHOTOS

MAX_VOLUME_M3 = Decimal("10000")


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleImageField(forms.FileField):
    """Several files in one input; each is checked by content later (fiscalization.photos)."""

    widget = MultipleFileInput

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        if not data:
            return []
        files = data if isinstance(data, list | tuple) else [data]
        return [super(MultipleImageField, self).clean(f, initial) for f in files if f]


class ReportForm(forms.Form):
    """A citizen's report: where (a click on the map, the device's location or typed
    coordinates), what, and optionally photos and a way to be contacted."""

    longitude = CoordinateField(
        "lon",
        label="Longitude",
        widget=CoordinateInput({"placeholder": "-45,19"}),
        error_messages={"required": "Marque o local no mapa ou informe a longitude."},
    )
    latitude = CoordinateField(
        "lat",
        label="Latitude",
        widget=CoordinateInput({"placeholder": "-22,81"}),
        error_messages={"required": "Marque o local no mapa ou informe a latitude."},
    )
    category = forms.ChoiceField(
        label="Onde está o descarte",
        choices=[("", "Escolha…")] + list(DumpingCategory.choices),
        help_text="Os locais onde a lei proíbe dispor entulho e volumosos (art. 2º, § 1º).",
        error_messages={"required": "Escolha onde está o descarte."},
    )
    description = forms.CharField(
        label="Descrição (opcional)",
        required=False,
        max_length=2000,
        widget=forms.Textarea({"rows": 4}),
        help_text="O que foi descartado, há quanto tempo, pontos de referência. Não escreva "
        "nomes nem dados de outras pessoas.",
    )
    estimated_volume_m3 = BRDecimalField(
        label="Volume estimado em m³ (opcional)",
        required=False,
        min_value=Decimal("0"),
        max_value=MAX_VOLUME_M3,
        decimal_places=2,
        widget=CoordinateInput({"placeholder": "1,5"}),
        help_text="Uma caçamba tem de 3 a 5 m³; um carrinho de mão, cerca de 0,06 m³.",
    )
    photos = MultipleImageField(
        label=f"Fotos (opcional, até {MAX_PHOTOS})",
        widget=MultipleFileInput({"accept": "image/jpeg,image/png,image/webp"}),
        help_text=f"JPEG, PNG ou WebP, até {MAX_PHOTO_BYTES // (1024 * 1024)} MB cada.",
    )
    contact_name = forms.CharField(label="Seu nome (opcional)", required=False, max_length=120)
    contact = forms.CharField(
        label="Telefone ou e-mail (opcional)",
        required=False,
        max_length=120,
        widget=forms.TextInput({"autocomplete": "email"}),
    )
    confirm_new = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def clean_photos(self):
        photos = self.cleaned_data.get("photos") or []
        if len(photos) > MAX_PHOTOS:
            raise forms.ValidationError(f"Envie no máximo {MAX_PHOTOS} fotos.")
        return photos

    def point(self) -> Point:
        return Point(
            float(self.cleaned_data["longitude"]), float(self.cleaned_data["latitude"]), srid=4326
        )

    def new_report(self) -> intake.NewReport:
        data = self.cleaned_data
        return intake.NewReport(
            location=self.point(),
            category=data["category"],
            description=data["description"],
            estimated_volume_m3=data["estimated_volume_m3"],
            contact_name=data["contact_name"],
            contact=data["contact"],
        )


class InspectorFilterForm(forms.Form):
    """The filters of /fiscalizacao/: the same as GET /api/v1/dumping-reports/, within the
    municipality the user works in now (the page lists its reports only; another is
    chosen at /municipio/)."""

    bacia = forms.ModelChoiceField(
        label="Bacia de captação",
        required=False,
        queryset=CatchmentBasin.objects.none(),
        empty_label="Todas",
    )
    date_from = forms.DateField(
        label="Recebidas de", required=False, widget=forms.DateInput({"type": "date"})
    )
    date_to = forms.DateField(label="até", required=False, widget=forms.DateInput({"type": "date"}))
    status = forms.MultipleChoiceField(
        label="Situação",
        required=False,
        choices=ReportStatus.choices,
        widget=forms.CheckboxSelectMultiple,
    )
    category = forms.MultipleChoiceField(
        label="Categoria",
        required=False,
        choices=DumpingCategory.choices,
        # Checkboxes: a multiple <select> needs ctrl-click, unknown to most and impossible on
        # a phone.
        widget=forms.CheckboxSelectMultiple,
    )
    # Latitude first, as every other form and message of the platform shows a point.
    near_lat = CoordinateField(
        "lat",
        label="Perto de: latitude",
        required=False,
        widget=CoordinateInput({"placeholder": "-22,81"}),
    )
    near_lon = CoordinateField(
        "lon",
        label="longitude",
        required=False,
        widget=CoordinateInput({"placeholder": "-45,19"}),
    )
    radius_m = forms.IntegerField(
        label="raio (m)", required=False, min_value=1, max_value=intake.MAX_RADIUS_M
    )
    bbox = forms.CharField(
        label="Retângulo (minlon,minlat,maxlon,maxlat)", required=False, max_length=200
    )
    polygon = forms.CharField(
        label="Polígono (GeoJSON ou WKT, WGS 84)",
        required=False,
        widget=forms.Textarea({"rows": 3}),
        max_length=intake.MAX_POLYGON_TEXT,
    )

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        # The bacias of the municipality the user works in now.
        self.fields["bacia"].queryset = (
            CatchmentBasin.objects.visible_to(user, current=True).defer("area").order_by("name")
        )

    def clean_bbox(self):
        raw = self.cleaned_data.get("bbox", "").strip()
        if not raw:
            return None
        try:
            return parse_bbox("bbox", raw)
        except InvalidParameter as error:
            raise forms.ValidationError(error.detail["bbox"][0]) from None

    def clean_polygon(self):
        raw = self.cleaned_data.get("polygon", "").strip()
        if not raw:
            return None
        try:
            return intake.polygon_from_text(raw)
        except intake.IntakeError as error:
            raise forms.ValidationError(error.message) from None

    def clean(self):
        data = super().clean()
        near = [data.get("near_lon"), data.get("near_lat"), data.get("radius_m")]
        if any(v is not None for v in near) and not all(v is not None for v in near):
            raise forms.ValidationError(
                "Para buscar perto de um ponto, informe longitude, latitude e raio."
            )
        if data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            self.add_error("date_to", "A data final é anterior à inicial.")
        return data

    def query(self) -> intake.ReportQuery:
        data = self.cleaned_data
        near = None
        if data.get("near_lon") is not None:
            near = Point(float(data["near_lon"]), float(data["near_lat"]), srid=4326)
        return intake.ReportQuery(
            bbox=data.get("bbox"),
            polygon=data.get("polygon"),
            basin_id=data["bacia"].pk if data.get("bacia") else None,
            date_from=data.get("date_from"),
            date_to=data.get("date_to"),
            statuses=list(data.get("status") or []),
            categories=list(data.get("category") or []),
            near=near,
            radius_m=float(data["radius_m"]) if data.get("radius_m") else None,
        )


class StatusForm(forms.Form):
    status = forms.ChoiceField(label="Nova situação", choices=())
    note = forms.CharField(
        label="Observação (interna)",
        required=False,
        max_length=2000,
        widget=forms.Textarea({"rows": 3}),
        help_text="Obrigatória para declarar improcedente ou reabrir. Não aparece ao munícipe.",
    )

    def __init__(self, *args, allowed: tuple[str, ...] = (), **kwargs):
        super().__init__(*args, **kwargs)
        labels = dict(ReportStatus.choices)
        self.fields["status"].choices = [(s, labels[s]) for s in allowed]


class MergeForm(forms.Form):
    into = forms.CharField(
        label="Denúncia original (protocolo ou número)",
        max_length=40,
        widget=forms.TextInput({"placeholder": "2026-ABCD-EFGH"}),
    )
    note = forms.CharField(
        label="Observação (interna)",
        required=False,
        max_length=2000,
        widget=forms.Textarea({"rows": 2}),
    )

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user  # the original is one of the reports this user sees

    def clean_into(self):
        report = intake.find_report(self.cleaned_data["into"], self.user)
        if report is None:
            raise forms.ValidationError("Nenhuma denúncia com este protocolo ou número.")
        return report


class CategoryForm(forms.Form):
    category = forms.ChoiceField(label="Categoria", choices=DumpingCategory.choices)
    note = forms.CharField(
        label="Observação (interna)",
        required=False,
        max_length=2000,
        widget=forms.Textarea({"rows": 2}),
    )
