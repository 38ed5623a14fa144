"""Forms of the CTR web pages (pt-BR). They parse and validate input; the rules of the
catalogue run in ctr.services, and their findings come back onto these forms' fields."""

from __future__ import annotations

import re
from decimal import Decimal

from django import forms
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.gis.geos import Point
from django.core.exceptions import ValidationError
from django.utils import timezone

from config.br import br_number
from config.br_forms import (  # noqa: F401 (DECIMAL_RE and parse_decimal: ctr.bulk.csv_format)
    DECIMAL_RE,
    BRDecimalField,
    BRDecimalInput,
    CoordinateField,
    parse_decimal,
)
from pev_network.models import ReceivingFacility, WasteClass

from . import onward, rules, services
from .documents import normalize_document
from .fleet import MAX_CAPACITY
from .models import (
    CTRStatus,
    CTRWasteClass,
    Equipment,
    EquipmentKind,
    ProcessingKind,
    Transporter,
    Vehicle,
)

# Same ceilings as the API: no single load of RCC comes near 100 m³ a line.
MAX_LINE_VOLUME = Decimal("100")
MAX_WASTE_LINES = 20


class DateInput(forms.DateInput):
    input_type = "date"

    def __init__(self, attrs=None):
        # An <input type=date> speaks ISO whatever the page's language.
        super().__init__(attrs, format="%Y-%m-%d")


DATE_FORMATS = ["%Y-%m-%d", "%d/%m/%Y"]

# A plate, a CTR number, a caçamba's code: a phone's keyboard in capitals,
# without spelling correction or the browser's suggestions.
CAPITALS = {"autocomplete": "off", "autocapitalize": "characters", "spellcheck": "false"}


# --- sign in ----------------------------------------------------------------------------------


class SignInForm(AuthenticationForm):
    error_messages = {
        "invalid_login": (
            "Usuário ou senha incorretos. Atenção: maiúsculas e minúsculas fazem diferença."
        ),
        "inactive": "Esta conta está desativada.",
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].label = "Usuário"
        self.fields["password"].label = "Senha"


# --- issuing a CTR ------------------------------------------------------------------------------


class LoadForm(forms.Form):
    """What every CTR form declares about the load: the day, the vehicle, the generator, the
    origin and the discharge point. CTRForm (the transporter's, from a worksite) and
    OnwardForm (the operator's, from its facility) add their own parts."""

    transport_date = forms.DateField(
        label="Data do transporte", input_formats=DATE_FORMATS, widget=DateInput()
    )
    vehicle = forms.ModelChoiceField(
        label="Veículo (placa)",
        queryset=Vehicle.objects.none(),
        empty_label="— escolha o veículo —",
    )
    equipment = forms.ModelChoiceField(
        label="Equipamento (caçamba)",
        queryset=Equipment.objects.none(),
        required=False,
        empty_label="— sem equipamento —",
    )
    generator_name = forms.CharField(label="Nome do gerador", max_length=200)
    generator_document = forms.CharField(
        label="CPF ou CNPJ do gerador",
        max_length=20,
        help_text="Só os números, ou com pontos, barra e traço.",
        widget=forms.TextInput({"inputmode": "numeric", "autocomplete": "off"}),
    )
    # Latitude first, as the page and every message show a point (the error summary follows
    # the order of the fields).
    origin_lat = BRDecimalField(
        label="Latitude da origem",
        min_value=Decimal("-90"),
        max_value=Decimal("90"),
        widget=BRDecimalInput({"placeholder": "-22,81"}),
    )
    origin_lon = BRDecimalField(
        label="Longitude da origem",
        min_value=Decimal("-180"),
        max_value=Decimal("180"),
        widget=BRDecimalInput({"placeholder": "-45,19"}),
    )
    destination_lat = BRDecimalField(
        label="Latitude do destino",
        min_value=Decimal("-90"),
        max_value=Decimal("90"),
        widget=BRDecimalInput({"placeholder": "-22,80"}),
    )
    destination_lon = BRDecimalField(
        label="Longitude do destino",
        min_value=Decimal("-180"),
        max_value=Decimal("180"),
        widget=BRDecimalInput({"placeholder": "-45,17"}),
    )
    destination_facility = forms.ModelChoiceField(
        label="Área de destino",
        queryset=ReceivingFacility.objects.none(),
        required=False,
        empty_label="— identificar pelo ponto de descarga —",
        help_text="Se informada, o ponto de descarga deve estar dentro dela.",
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("initial", {}).setdefault("transport_date", timezone.localdate())
        super().__init__(*args, **kwargs)
        self.fields["equipment"].label_from_instance = lambda e: (
            f"{e.code} ({br_number(e.nominal_capacity_m3, grouping=False)} m³)"
        )
        self.fields["destination_facility"].label_from_instance = lambda f: (
            f"{f.name} ({f.get_kind_display()})"
        )

    def clean_generator_document(self) -> str:
        return normalize_document(self.cleaned_data["generator_document"])

    def clean_generator_name(self) -> str:
        return self.cleaned_data["generator_name"].strip()

    def origin(self) -> Point:
        data = self.cleaned_data
        return Point(float(data["origin_lon"]), float(data["origin_lat"]), srid=4326)

    def destination(self) -> Point:
        data = self.cleaned_data
        return Point(float(data["destination_lon"]), float(data["destination_lat"]), srid=4326)


class CTRForm(LoadForm):
    """What the transporter declares; the rules of the catalogue are checked by the service."""

    # Asked only when the CPF/CNPJ is registered under another name (ask_generator_name):
    # which name goes on the CTR. `offered` is the registered name the question showed, so
    # that an answer does not carry over to another document.
    generator_name_choice = forms.ChoiceField(
        label="Nome do gerador no CTR",
        required=False,
        choices=[("registered", "Nome do cadastro"), ("declared", "Nome digitado")],
        widget=forms.RadioSelect,
    )
    generator_name_offered = forms.CharField(
        required=False, max_length=200, widget=forms.HiddenInput
    )
    worksite_address = forms.CharField(label="Endereço da obra ou imóvel", max_length=300)
    worksite_neighbourhood = forms.CharField(label="Bairro", max_length=120, required=False)

    field_order = [
        "transport_date",
        "vehicle",
        "equipment",
        "generator_name",
        "generator_document",
        "generator_name_choice",
        "generator_name_offered",
        "worksite_address",
        "worksite_neighbourhood",
    ]

    def __init__(self, *args, transporter: Transporter, **kwargs):
        super().__init__(*args, **kwargs)
        self.transporter = transporter
        self.fields["vehicle"].queryset = Vehicle.objects.filter(
            transporter=transporter, active=True
        )
        self.fields["equipment"].queryset = Equipment.objects.filter(
            transporter=transporter, active=True
        )
        self.fields["destination_facility"].queryset = ReceivingFacility.objects.defer(
            "area"
        ).order_by("kind", "name")
        # A fleet of one truck (or one caçamba) is chosen already, two taps
        # fewer for the driver on a phone; with more, the driver chooses.
        for name in ("vehicle", "equipment"):
            only = list(self.fields[name].queryset.values_list("pk", flat=True)[:2])
            if len(only) == 1:
                self.initial.setdefault(name, only[0])

    generator_name_question = ""  # the registered name, when the form asks
    # The answer given (offered name, choice), carried while the form comes back for other
    # reasons (a rule broken): it is not asked twice.
    generator_name_answer: tuple[str, str] | None = None

    def generator_name_to_use(self, registered: str | None) -> str | None:
        """The generator's name for the CTR, or None when the form must ask first: the
        typed one unless the registry knows the document by another name (`registered`) and
        the user has not chosen, for that name, between the two."""
        typed = self.cleaned_data["generator_name"]
        if registered is None:
            return typed
        if self.cleaned_data.get("generator_name_offered") != registered:
            return None
        choice = self.cleaned_data.get("generator_name_choice")
        if choice not in ("registered", "declared"):
            return None
        self.generator_name_answer = (registered, choice)
        return registered if choice == "registered" else typed

    def ask_generator_name(self, registered: str) -> None:
        """Show the registered name and ask which one goes on the CTR; nothing typed is lost
        (the bound form shows it again)."""
        typed = self.cleaned_data["generator_name"]
        self.generator_name_question = registered
        self.fields["generator_name_choice"].choices = [
            ("registered", f"Usar o nome do cadastro: “{registered}”"),
            ("declared", f"Manter o nome digitado: “{typed}”"),
        ]
        self.add_error(
            "generator_name",
            f"Este CPF/CNPJ está cadastrado em nome de “{registered}”, não “{typed}”. "
            "Escolha abaixo qual nome vai no CTR e emita de novo.",
        )

    def clean_worksite_address(self) -> str:
        return self.cleaned_data["worksite_address"].strip()

    def to_request(self, waste: list[rules.WasteLine]) -> services.IssueRequest:
        data = self.cleaned_data
        equipment = data.get("equipment")
        facility = data.get("destination_facility")
        origin = self.origin()
        return services.IssueRequest(
            transport_date=data["transport_date"],
            vehicle_plate=data["vehicle"].plate,
            equipment_code=equipment.code if equipment else "",
            origin=origin,
            destination=self.destination(),
            waste=waste,
            generator=services.GeneratorData(data["generator_name"], data["generator_document"]),
            # The worksite is where the load starts: its location is the origin.
            worksite=services.WorksiteData(
                data["worksite_address"], origin, data.get("worksite_neighbourhood", "").strip()
            ),
            destination_facility_id=facility.pk if facility else None,
        )


# Short labels for the form's select (the model's are whole sentences); the prohibited kinds
# stay selectable so that the rule, not the parser, refuses them (art. 7, art. 14 §6).
SHORT_CLASS_LABELS = {
    CTRWasteClass.A: "A — entulho: concreto, tijolo, solo",
    CTRWasteClass.B: "B — recicláveis: plástico, papel, metal, madeira, gesso",
    CTRWasteClass.C: "C — sem reciclagem viável",
    CTRWasteClass.D: "D — perigosos: tinta, solvente, amianto",
    CTRWasteClass.VOLUMOSO: "Volumosos: móveis, podas",
    CTRWasteClass.DOMICILIAR: "Lixo domiciliar (proibido)",
    CTRWasteClass.INDUSTRIAL: "Resíduo industrial (proibido)",
    CTRWasteClass.SAUDE: "Resíduo de serviço de saúde (proibido)",
}
WASTE_CLASS_CHOICES = [(c.value, SHORT_CLASS_LABELS.get(c, c.label)) for c in CTRWasteClass]


class WasteLineForm(forms.Form):
    # An empty first choice: the spare rows of the formset stay "unchanged" until filled.
    waste_class = forms.ChoiceField(
        label="Classe", choices=[("", "— classe —"), *WASTE_CLASS_CHOICES]
    )
    volume_m3 = BRDecimalField(
        label="Volume (m³)",
        min_value=Decimal("0.001"),
        max_value=MAX_LINE_VOLUME,
        decimal_places=3,
    )
    description = forms.CharField(label="Descrição", max_length=300, required=False)


class BaseWasteFormSet(forms.BaseFormSet):
    def clean(self):
        super().clean()
        if any(self.errors):
            return
        if not self.lines():
            raise ValidationError("Informe ao menos um resíduo: classe e volume.", code="no_waste")

    def filled_forms(self) -> list[forms.Form]:
        """The rows the user filled, in order (the spare empty rows are skipped)."""
        return [form for form in self.forms if form.has_changed() and form.is_valid()]

    def lines(self) -> list[rules.WasteLine]:
        return [
            rules.WasteLine(
                form.cleaned_data["waste_class"],
                form.cleaned_data["volume_m3"],
                form.cleaned_data.get("description", "").strip(),
            )
            for form in self.filled_forms()
        ]


def waste_formset(form: type[forms.Form]) -> type[BaseWasteFormSet]:
    return forms.formset_factory(
        form,
        formset=BaseWasteFormSet,
        extra=3,
        max_num=MAX_WASTE_LINES,
        validate_max=True,
        absolute_max=MAX_WASTE_LINES,
    )


WasteFormSet = waste_formset(WasteLineForm)


# Where each finding's `field` (the API's names) is shown on the form. Waste lines
# ("waste[i].class") go to their row; fields not listed go to the top of the form.
FINDING_FIELDS = {
    "transport_date": "transport_date",
    "vehicle_plate": "vehicle",
    "equipment_code": "equipment",
    "generator": "generator_document",
    "worksite": "worksite_address",
    "worksite_id": "worksite_address",
    "origin": "origin",
    "destination": "destination",
    "destination_facility": "destination_facility",
    "waste": "waste",
}
WASTE_LINE_RE = re.compile(r"^waste\[(\d+)\]")


# --- onward CTR and on-site processing -------------------------------------------------------


def stock_class_choices(in_stock: set[str]) -> list:
    """The network's classes for a facility's forms: those it has in stock first."""
    label = {c.value: SHORT_CLASS_LABELS[c] for c in CTRWasteClass}
    held = [(c, label[c]) for c in WasteClass.values if c in in_stock]
    others = [(c, label[c]) for c in WasteClass.values if c not in in_stock]
    choices: list = [("", "— classe —")]
    if held:
        choices.append(("Em estoque nesta área", held))
    if others:
        choices.append(("Sem estoque nesta área", others))
    return choices


class OnwardWasteLineForm(WasteLineForm):
    """A waste line of an onward CTR: the classes the facility holds come first."""

    def __init__(self, *args, in_stock: set[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["waste_class"].choices = stock_class_choices(in_stock)


OnwardWasteFormSet = waste_formset(OnwardWasteLineForm)


class FleetSelect(forms.Select):
    """Vehicles or equipment of several transporters in one select: each option says whose it
    is (data-transporter), and the page narrows the list to the transporter chosen."""

    def create_option(self, name, value, *args, **kwargs):
        option = super().create_option(name, value, *args, **kwargs)
        instance = getattr(value, "instance", None)
        if instance is not None:
            option["attrs"]["data-transporter"] = instance.transporter_id
        return option


def decimal_degrees(value: float) -> Decimal:
    return Decimal(f"{value:.6f}")


class OnwardForm(LoadForm):
    """An onward CTR as the facility's operator declares it (art. 3 III): the registered
    transporter that carries the sorted waste to a licensed facility. The origin is the
    facility (a point inside it unless another is typed), the discharge point a point inside
    the destination unless one is marked; the generator is the facility's operator company,
    asked only on its first onward CTR (ctr.services.onward_generator)."""

    transporter = forms.ModelChoiceField(
        label="Transportador",
        queryset=Transporter.objects.none(),
        empty_label="— escolha o transportador —",
        help_text="Transportadores com licença válida hoje no município da área, nem suspensa "
        "nem cassada.",
    )

    field_order = [
        "transporter",
        "transport_date",
        "vehicle",
        "equipment",
        "generator_name",
        "generator_document",
        "destination_facility",
    ]

    def __init__(self, *args, facility: ReceivingFacility, operator=None, **kwargs):
        anchor = facility.area.point_on_surface
        initial = kwargs.setdefault("initial", {})
        initial.setdefault("origin_lat", decimal_degrees(anchor.y))
        initial.setdefault("origin_lon", decimal_degrees(anchor.x))
        super().__init__(*args, **kwargs)
        self.facility = facility
        self.operator = operator
        if operator is not None:
            del self.fields["generator_name"]
            del self.fields["generator_document"]
        else:
            self.fields["generator_name"].label = "Empresa operadora da área (gerador)"
            self.fields["generator_document"].label = "CNPJ ou CPF da empresa operadora"
        today = timezone.localdate()
        # The CTR's municipality is the facility's, where the load leaves (art. 13).
        carriers = onward.carriers_on(today, facility.municipality_id)
        fields = self.fields
        fields["transporter"].queryset = carriers
        fields["transporter"].label_from_instance = lambda t: (
            f"{t.name} (licença {t.licence_number})"
        )
        for name, model in (("vehicle", Vehicle), ("equipment", Equipment)):
            # The widget first: the queryset's setter gives it the choices.
            fields[name].widget = FleetSelect()
            fields[name].queryset = (
                model.objects.filter(active=True, transporter__in=carriers.values("pk"))
                .select_related("transporter")
                .order_by("transporter__name", "pk")
            )
        fields["vehicle"].label_from_instance = lambda v: f"{v} — {v.transporter.name}"
        fields["equipment"].label_from_instance = lambda e: (
            f"{e.code} ({br_number(e.nominal_capacity_m3, grouping=False)} m³) — "
            f"{e.transporter.name}"
        )
        destination = fields["destination_facility"]
        destination.required = True
        destination.empty_label = "— escolha a área de destino —"
        destination.help_text = (
            "Áreas licenciadas hoje. O ponto de descarga fica dentro da área escolhida, "
            "ou onde você marcar no mapa."
        )
        destination.queryset = (
            ReceivingFacility.objects.licensed_on(today)
            .exclude(pk=facility.pk)
            .defer("area")
            .order_by("kind", "name")
        )
        for name in ("origin_lat", "origin_lon", "destination_lat", "destination_lon"):
            fields[name].required = False

    def clean(self):
        data = super().clean()
        for lat, lon in (("origin_lat", "origin_lon"), ("destination_lat", "destination_lon")):
            given = [data.get(name) is not None for name in (lat, lon)]
            if any(given) and not all(given) and lat not in self.errors and lon not in self.errors:
                missing = lon if given[0] else lat
                self.add_error(missing, "Informe a latitude e a longitude, ou nenhuma das duas.")
        return data

    def _typed(self, kind: str) -> Point | None:
        data = self.cleaned_data
        if data.get(f"{kind}_lat") is None:
            return None
        return self.origin() if kind == "origin" else self.destination()

    def to_request(self, waste: list[rules.WasteLine]) -> services.IssueRequest:
        data = self.cleaned_data
        facility = data["destination_facility"]
        equipment = data.get("equipment")
        return services.IssueRequest(
            transport_date=data["transport_date"],
            vehicle_plate=data["vehicle"].plate,
            equipment_code=equipment.code if equipment else "",
            # None: ctr.services.issue_onward starts it inside the facility.
            origin=self._typed("origin"),
            destination=self._typed("destination") or facility.area.point_on_surface,
            waste=waste,
            generator=services.GeneratorData(data["generator_name"], data["generator_document"])
            if self.operator is None
            else None,
            destination_facility_id=facility.pk,
            origin_facility_id=self.facility.pk,
        )


# Where an onward CTR's findings are shown: the issue form's places, plus the transporter
# chosen; what concerns the facility itself goes above the form.
ONWARD_FINDING_FIELDS = {**FINDING_FIELDS, "transporter": "transporter"}


class ProcessingForm(forms.Form):
    """Volume recycled or reused at the facility itself (ctr.custody.processing.record_processing,
    which checks the volume against the stock)."""

    waste_class = forms.ChoiceField(label="Classe")
    kind = forms.ChoiceField(
        label="Destinação na área",
        choices=[("", "— escolha —"), *ProcessingKind.choices],
    )
    volume_m3 = BRDecimalField(label="Volume (m³)", max_digits=10, decimal_places=3)
    day = forms.DateField(label="Data", input_formats=DATE_FORMATS, widget=DateInput())
    note = forms.CharField(label="Observação", max_length=300, required=False)

    def __init__(self, *args, in_stock: set[str], **kwargs):
        kwargs.setdefault("initial", {}).setdefault("day", timezone.localdate())
        super().__init__(*args, **kwargs)
        self.fields["waste_class"].choices = stock_class_choices(in_stock)


# --- lists and filters -----------------------------------------------------------------------


class PeriodForm(forms.Form):
    """Two days, both optional, the first not after the second."""

    date_from = forms.DateField(
        label="De", required=False, input_formats=DATE_FORMATS, widget=DateInput()
    )
    date_to = forms.DateField(
        label="até", required=False, input_formats=DATE_FORMATS, widget=DateInput()
    )

    def clean(self):
        data = super().clean()
        if data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            self.add_error("date_to", "A data final é anterior à inicial.")
        return data


class CTRFilterForm(PeriodForm):
    status = forms.ChoiceField(
        label="Situação", required=False, choices=[("", "Todas"), *CTRStatus.choices]
    )
    # Plates and numbers are capitals: the phone's keyboard starts in capitals, no spelling.
    plate = forms.CharField(
        label="Placa", required=False, max_length=10, widget=forms.TextInput(CAPITALS)
    )
    number = forms.CharField(
        label="Número", required=False, max_length=32, widget=forms.TextInput(CAPITALS)
    )

    field_order = ["status", "date_from", "date_to"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["date_from"].label = "Transporte de"

    def clean_plate(self) -> str:
        # The whole plate or a part of it ("ABC", "1D2"), with or without the dash.
        plate = re.sub(r"[\s-]", "", self.cleaned_data["plate"]).upper()
        if plate and not plate.isalnum():
            raise ValidationError(
                "Placa inválida: use só letras e números (a placa inteira ou uma parte).",
                code="invalid",
            )
        return plate

    def clean_number(self) -> str:
        return self.cleaned_data["number"].strip().upper()

    def apply(self, queryset):
        """The queryset filtered by every valid filter; invalid ones are ignored (and shown)."""
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        if data.get("status"):
            queryset = queryset.filter(status=data["status"])
        if data.get("date_from"):
            queryset = queryset.filter(transport_date__gte=data["date_from"])
        if data.get("date_to") and "date_to" not in self.errors:
            queryset = queryset.filter(transport_date__lte=data["date_to"])
        if data.get("plate"):
            queryset = queryset.filter(vehicle__plate__contains=data["plate"])
        if data.get("number"):
            queryset = queryset.filter(number__icontains=data["number"])
        return queryset


# --- fleet -----------------------------------------------------------------------------------


class VehicleForm(forms.Form):
    """The page's input; ctr.fleet.add_vehicle holds the rules, as it does for the API."""

    model = Vehicle

    plate = forms.CharField(
        label="Placa",
        max_length=10,
        help_text="Formato antigo (ABC-1234) ou Mercosul (ABC1D23).",
        widget=forms.TextInput({**CAPITALS, "style": "text-transform: uppercase"}),
    )
    description = forms.CharField(
        label="Descrição",
        max_length=120,
        required=False,
        help_text="Ex.: caminhão poliguindaste, basculante.",
    )


class EquipmentForm(forms.Form):
    """The page's input; ctr.fleet.add_equipment holds the rules, as it does for the API."""

    model = Equipment

    code = forms.CharField(
        label="Código pintado no equipamento",
        max_length=30,
        help_text="Como está escrito na caçamba (ex.: C-01).",
        widget=forms.TextInput(CAPITALS),
    )
    kind = forms.ChoiceField(label="Tipo", choices=EquipmentKind.choices)
    nominal_capacity_m3 = BRDecimalField(
        label="Capacidade nominal (m³)",
        max_digits=6,
        decimal_places=2,
        max_value=MAX_CAPACITY,
        widget=BRDecimalInput({"placeholder": "5"}),
        help_text="Sem chapas de aumento (art. 12 §4 II).",
    )


# --- reception -------------------------------------------------------------------------------


class ReceiveForm(forms.Form):
    received_volume_m3 = BRDecimalField(
        label="Volume recebido (m³)",
        max_value=MAX_LINE_VOLUME * 20,
        decimal_places=3,
    )
    note = forms.CharField(label="Observação", max_length=500, required=False)
    # The device's location, filled by ctr/static/ctr/reception-location.js
    # when the operator allows geolocation; both empty without permission (no finding then).
    location_lat = CoordinateField("lat", required=False, widget=forms.HiddenInput)
    location_lon = CoordinateField("lon", required=False, widget=forms.HiddenInput)

    def clean_received_volume_m3(self) -> Decimal:
        volume = self.cleaned_data["received_volume_m3"]
        if volume <= 0:
            raise ValidationError("O volume recebido deve ser maior que zero.", code="min_value")
        return volume

    def location(self) -> Point | None:
        """The device's point, when the page sent both coordinates (one alone is no place)."""
        lat, lon = self.cleaned_data.get("location_lat"), self.cleaned_data.get("location_lon")
        if lat is None or lon is None:
            return None
        return Point(float(lon), float(lat), srid=4326)


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label="Motivo",
        max_length=500,
        # Said beside the field before a confirmation dialog (maps/forms.js), as clean says it.
        widget=forms.TextInput({"data-required-message": "Informe o motivo."}),
    )

    def clean_reason(self) -> str:
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise ValidationError("Informe o motivo.", code="required")
        return reason


# --- CSV import ------------------------------------------------------------------------------


class ImportForm(forms.Form):
    file = forms.FileField(
        label="Arquivo CSV",
        help_text="Até 2 MB e 5.000 linhas; separado por ponto e vírgula ou vírgula.",
        widget=forms.ClearableFileInput({"accept": ".csv,text/csv"}),
    )
    dry_run = forms.BooleanField(
        label="Só verificar: conferir as linhas sem emitir nenhum CTR",
        required=False,
    )
