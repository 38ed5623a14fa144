from django import forms
from django.contrib import admin, messages
from django.db import models
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from leaflet.admin import LeafletGeoAdmin, LeafletGeoAdminMixin

from config import admin_numbers  # noqa: F401 (decimal comma in every DecimalField)
from config.admin_readonly import ReadOnly

from . import fiscal_units, services
from .models import (
    CatchmentBasin,
    FacilityLicense,
    Municipality,
    MunicipalParameters,
    ReceivingFacility,
    UfespRate,
    WasteClass,
    parameter_names,
)

# Map widgets are django-leaflet's: Leaflet and Leaflet.draw come from our static files, where
# Django's own GIS widgets would fetch OpenLayers from a CDN.


class MunicipalParametersInline(ReadOnly, admin.TabularInline):
    """The municipality's sets of parameters, each a link to its page: a set is edited (until it
    starts) or added in "Parâmetros do município" (MunicipalParametersAdmin)."""

    model = MunicipalParameters
    extra = 0
    show_change_link = True
    fields = ["valid_from", "act", "small_volume_limit_m3", "gps_tolerance_m"]
    readonly_fields = fields


@admin.register(Municipality)
class MunicipalityAdmin(LeafletGeoAdmin):
    list_display = ["name", "uf", "ibge_code"]
    list_filter = ["uf"]
    search_fields = ["name", "ibge_code"]
    # A state has 645 municipalities: two lists with a search box, not one long select.
    filter_horizontal = ["accepted_destinations"]
    readonly_fields = ["new_parameters"]
    fieldsets = [
        (None, {"fields": ["ibge_code", "name", "uf", "boundary", "boundary_source"]}),
        # The law its documents and e-mails cite.
        ("Lei municipal de resíduos", {"fields": ["waste_law", "fee_collector"]}),
        (
            # A consortium's shared areas (rule DESTINATION_OUTSIDE_AGREEMENT).
            "Destinos em outros municípios (art. 2 e art. 4 §2 II)",
            {"fields": ["accepted_destinations"]},
        ),
        # The figures themselves are sets by start date (the inline below).
        ("Parâmetros legais (Lei 3.978/2007)", {"fields": ["new_parameters"]}),
    ]
    inlines = [MunicipalParametersInline]

    @admin.display(description="novos parâmetros")
    def new_parameters(self, municipality: Municipality):
        if municipality.pk is None:
            return "Os parâmetros padrão valem desde o início; depois de salvar, cadastre outros."
        url = reverse("admin:pev_network_municipalparameters_add")
        return format_html(
            '<a href="{}?municipality={}">Cadastrar parâmetros a partir de uma data</a> '
            "(hoje ou depois: os vigentes não mudam, valem para os CTRs dos seus dias)",
            url,
            municipality.pk,
        )

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if "boundary" in form.changed_data:
            services.refresh_municipality_pieces([obj.pk])


@admin.register(MunicipalParameters)
class MunicipalParametersAdmin(admin.ModelAdmin):
    """A municipality's parameters by start date, scoped to the user's municipalities by the
    site (MunicipalParameters.objects is a ScopedQuerySet). A set that has started is shown
    read-only and cannot be deleted (it judged the CTRs of its days; the model refuses it
    too): a change is a new set from today or later, which starts from the figures in force."""

    list_display = ["municipality", "valid_from", "act", "in_force_today"]
    list_filter = ["municipality"]
    list_select_related = ["municipality"]
    search_fields = ["act", "municipality__name"]
    fieldsets = [
        (None, {"fields": ["municipality", "valid_from", "act"]}),
        (
            "Parâmetros legais (Lei 3.978/2007)",
            {
                "fields": [
                    "small_volume_limit_m3",
                    "gps_tolerance_m",
                    "received_volume_tolerance_pct",
                    "open_ctr_alert_hours",
                    "sorting_tolerance_pct",
                    "stock_alert_days",
                    "large_generator_min_area_m2",
                    "generator_confirmation_required",
                    "generator_confirmation_hours",
                    "waste_generation_rates",
                    "provisional_sync_max_hours",  # offline CTRs (ctr/field/offline.py)
                ]
            },
        ),
        (
            "Obras suspeitas e grandes geradores sem CTR (art. 9)",
            {
                "fields": [
                    "worksite_overdue_days",
                    "worksite_low_volume_pct",
                    "worksite_low_volume_min_elapsed_pct",
                    "large_generator_idle_days",
                ]
            },
        ),
        (
            "Tempo de viagem no recebimento",
            {
                "fields": [
                    "travel_check_enabled",
                    "travel_detour_factor",
                    "travel_max_speed_kmh",
                    "travel_min_speed_kmh",
                    "travel_slack_minutes",
                ]
            },
        ),
    ]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("municipality__boundary")

    @admin.display(description="situação hoje")
    def in_force_today(self, row: MunicipalParameters) -> str:
        today = services.today()
        if not row.in_force_by(today):
            return "a partir de " + row.valid_from.strftime("%d/%m/%Y")
        return "vigente ou anterior (não muda)"

    def get_changeform_initial_data(self, request):
        # A new set starts today with the figures in force (change the ones that change).
        initial = super().get_changeform_initial_data(request)
        today = services.today()
        initial.setdefault("valid_from", today)
        chosen = str(initial.get("municipality", "")).strip()
        municipality = (
            Municipality.objects.visible_to(request.user)
            .defer("boundary")
            .filter(pk=chosen)
            .first()
            if chosen.isdigit()
            else None
        )
        if municipality is not None:
            in_force = municipality.parameters_on(today)
            initial.update({name: getattr(in_force, name) for name in parameter_names()})
        return initial

    @staticmethod
    def _started(obj) -> bool:
        # As stored: a refused form has already put its (refused) start date on `obj`, and the
        # page that shows the refusal must stay the form.
        return (
            obj is not None
            and obj.pk is not None
            and MunicipalParameters.objects.filter(
                pk=obj.pk, valid_from__lte=services.today()
            ).exists()
        )

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, object_id)
        if self._started(obj):
            messages.info(
                request,
                f"Estes parâmetros valem desde {obj.valid_from:%d/%m/%Y} e já se aplicam aos "
                "CTRs desses dias: não mudam nem são excluídos. Para mudar um valor, cadastre "
                "novos parâmetros a partir de hoje ou depois.",
            )
        return super().change_view(request, object_id, form_url, extra_context)

    def has_change_permission(self, request, obj=None):
        # Shown read-only (the admin's view of a row it may not change).
        return not self._started(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not self._started(obj) and super().has_delete_permission(request, obj)


class FacilityLicenseInline(admin.TabularInline):
    model = FacilityLicense
    extra = 0
    fields = ["number", "issuer", "valid_from", "valid_until", "status", "status_since"]
    # Narrower text boxes: at the default width the six columns overflowed a 1366 px screen.
    formfield_overrides = {models.CharField: {"widget": forms.TextInput(attrs={"size": 16})}}


class ReceivingFacilityForm(forms.ModelForm):
    # One checkbox per class, not the array's comma-separated codes ("A,B,VOLUMOSO").
    accepted_classes = forms.TypedMultipleChoiceField(
        label="Classes aceitas",
        choices=WasteClass.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="Nenhuma marcada: as classes padrão do tipo de área (docs/importacao.md).",
    )

    class Meta:
        model = ReceivingFacility
        exclude: list[str] = []  # every field, as the admin would show them


@admin.register(ReceivingFacility)
class ReceivingFacilityAdmin(LeafletGeoAdmin):
    form = ReceivingFacilityForm
    list_display = ["name", "kind", "code", "municipality", "license_today"]
    list_filter = ["kind", "municipality"]
    search_fields = ["name", "code", "operator"]
    inlines = [FacilityLicenseInline]
    list_select_related = ["municipality"]

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if obj is not None and not self.has_change_permission(request, obj):
            # Read-only (the Núcleo views the network): the classes' names, not their codes.
            return ["accepted_classes_names" if f == "accepted_classes" else f for f in fields]
        return fields

    @admin.display(description="classes aceitas")
    def accepted_classes_names(self, facility: ReceivingFacility) -> str:
        return "; ".join(WasteClass(c).label for c in facility.accepted_classes) or "—"

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .defer("municipality__boundary")
            .prefetch_related("licenses")
        )

    @admin.display(description="licença hoje")
    def license_today(self, facility: ReceivingFacility):
        day = services.today()
        for lic in facility.licenses.all():
            if lic.is_valid_on(day):
                until = lic.valid_until.strftime("%d/%m/%Y") if lic.valid_until else "sem prazo"
                return format_html(
                    '<span style="color:#1a7f37">✔ {} (até {})</span>', lic.number, until
                )
        return mark_safe('<strong style="color:#b42318">✘ sem licença válida</strong>')


@admin.register(FacilityLicense)
class FacilityLicenseAdmin(admin.ModelAdmin):
    list_display = ["number", "issuer", "facility", "valid_from", "valid_until", "status"]
    list_filter = ["status", "issuer"]
    search_fields = ["number", "facility__name"]
    list_select_related = ["facility"]
    date_hierarchy = "valid_until"


@admin.register(CatchmentBasin)
class CatchmentBasinAdmin(LeafletGeoAdminMixin, admin.ModelAdmin):
    list_display = ["name", "code", "municipality", "served_by"]
    list_filter = ["municipality"]
    search_fields = ["name", "code"]
    list_select_related = ["municipality", "served_by"]


@admin.register(UfespRate)
class UfespRateAdmin(admin.ModelAdmin):
    """São Paulo's UFESP by year (one value for every municipality): the platform
    administrator's. Warns, from December, before a year begins without its value."""

    list_display = ["unit", "year", "value_brl"]
    list_filter = ["unit"]

    def changelist_view(self, request, extra_context=None):
        if text := fiscal_units.notice():
            messages.warning(request, text)
        return super().changelist_view(request, extra_context)


if hasattr(admin.site, "add_index_notice"):
    admin.site.add_index_notice(fiscal_units.notice)
