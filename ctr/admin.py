from django import forms
from django.contrib import admin
from django.db import models
from django.db.models import Prefetch
from leaflet.admin import LeafletGeoAdmin

from config import admin_numbers  # noqa: F401 (decimal comma in every DecimalField)
from config.admin_readonly import ReadOnly
from jurisdiction.models import Role
from jurisdiction.scope import jurisdiction_of
from pev_network.models import Municipality

from .documents import format_document
from .models import (
    CTR,
    CTRCorrection,
    CTREvent,
    CTRTemplate,
    CTRWaste,
    Equipment,
    FacilityOperator,
    Generator,
    Membership,
    OnSiteProcessing,
    Transporter,
    TransporterLicence,
    Vehicle,
    Worksite,
)


class VehicleInline(admin.TabularInline):
    model = Vehicle
    extra = 0


class EquipmentInline(admin.TabularInline):
    model = Equipment
    extra = 0


@admin.display(description="CNPJ/CPF", ordering="document")
def formatted_document(obj) -> str:
    return format_document(obj.document)


# Who edits a municipality's licences in the admin: its Núcleo (Lei 3.978/2007 art. 13: the
# municipality registers its transporters; art. 4 §2 V, art. 15: the Núcleo keeps the
# registries). The platform's administrator edits every one.
LICENCE_EDITORS = (Role.NUCLEO,)


def licence_municipalities(request):
    """The municipalities whose licences the user edits; None for every one."""
    return jurisdiction_of(request.user).acting_ids(LICENCE_EDITORS)


class TransporterLicenceInline(admin.TabularInline):
    """The transporter's licences that the user's municipalities granted, one per
    municipality (art. 13). Scoped: a municipality's Núcleo sees and edits its own
    municipality's licence only, never another's."""

    model = TransporterLicence
    extra = 0
    fields = [
        "municipality",
        "number",
        "valid_from",
        "valid_until",
        "status",
        "status_since",
        "suspended_until",
    ]
    formfield_overrides = {models.CharField: {"widget": forms.TextInput(attrs={"size": 14})}}

    def get_queryset(self, request):
        queryset = super().get_queryset(request).select_related("municipality")
        ids = licence_municipalities(request)
        return queryset if ids is None else queryset.filter(municipality_id__in=ids)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "municipality":
            ids = licence_municipalities(request)
            places = Municipality.objects.defer("boundary").order_by("name", "uf")
            kwargs["queryset"] = places if ids is None else places.filter(pk__in=ids)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Transporter)
class TransporterAdmin(admin.ModelAdmin):
    """The transporters of the user's municipalities (those holding a licence there,
    TransporterQuerySet.municipal_q); each one's licences inline, the user's own
    municipality's only."""

    list_display = [
        "name",
        formatted_document,
        "is_self_generator",
        "licences_here",
    ]
    list_filter = ["is_self_generator", "licences__status", "licences__municipality"]
    search_fields = ["name", "document", "licences__number"]
    inlines = [TransporterLicenceInline, VehicleInline, EquipmentInline]

    def get_queryset(self, request):
        # Another municipality's transporter answers 404, as everywhere.
        return Transporter.objects.visible_to(request.user).prefetch_related(
            Prefetch(
                "licences",
                TransporterLicence.objects.visible_to(request.user).select_related("municipality"),
            )
        )

    def has_delete_permission(self, request, obj=None):
        # A transporter is one for every municipality that licensed it: deleting it would
        # take the others' licences with it. Only the platform's administrator deletes.
        return request.user.is_superuser and super().has_delete_permission(request, obj)

    @admin.display(description="licenças")
    def licences_here(self, transporter: Transporter) -> str:
        """Its licences in the user's municipalities, with their status."""
        return (
            "; ".join(
                f"{lic.number} ({lic.place}, {lic.get_status_display().lower()})"
                for lic in transporter.licences.all()
            )
            or "—"
        )


@admin.register(Generator)
class GeneratorAdmin(admin.ModelAdmin):
    list_display = ["name", formatted_document]
    search_fields = ["name", "document"]


@admin.register(Worksite)
class WorksiteAdmin(LeafletGeoAdmin):
    list_display = ["address", "generator", "is_large_generator", "permit_number"]
    list_filter = ["is_large_generator"]
    search_fields = ["address", "permit_number", "generator__name"]
    filter_horizontal = ["plan_transporters", "plan_facilities"]


class CTRWasteInline(admin.TabularInline):
    model = CTRWaste
    extra = 0
    can_delete = False
    readonly_fields = ["waste_class", "volume_m3", "description"]


class CTREventInline(admin.TabularInline):
    # Append-only in the database too (migration 0002): shown, never edited.
    model = CTREvent
    extra = 0
    can_delete = False
    readonly_fields = ["at", "actor", "action", "from_status", "to_status", "data"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(CTR)
class CTRAdmin(ReadOnly, LeafletGeoAdmin):
    """Read-only: a CTR changes only through its life (issue, receive, refuse, cancel)."""

    list_display = ["number", "transport_date", "transporter", "destination_facility", "status"]
    list_filter = ["status", "municipality", "destination_facility__kind"]
    search_fields = [
        "number",
        "vehicle__plate",
        "transporter__name",
        "generator__name",
        "generator_name",
    ]
    date_hierarchy = "transport_date"
    list_select_related = ["transporter", "destination_facility"]
    inlines = [CTRWasteInline, CTREventInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "transporter", "facility", "generator"]
    autocomplete_fields = ["transporter", "generator"]


@admin.register(FacilityOperator)
class FacilityOperatorAdmin(admin.ModelAdmin):
    list_display = ["facility", "generator"]
    autocomplete_fields = ["generator"]


@admin.register(OnSiteProcessing)
class OnSiteProcessingAdmin(admin.ModelAdmin):
    """What the operators recorded as recycled or reused at their facility (ctr.custody.stock)."""

    list_display = ["facility", "day", "waste_class", "kind", "volume_m3", "recorded_by"]
    list_filter = ["kind", "waste_class", "facility__kind"]
    date_hierarchy = "day"
    readonly_fields = ["recorded_by", "recorded_at"]

    def has_add_permission(self, request):
        return False  # recorded by the operator (ctr.custody.processing.record_processing)


@admin.register(CTRTemplate)
class CTRTemplateAdmin(ReadOnly, LeafletGeoAdmin):
    """Read-only: a template is the transporter's own, kept on its page (ctr/field/templates.py),
    which re-validates it against the fleet and the network."""

    list_display = ["name", "transporter", "generator_name", "destination_facility", "updated_at"]
    list_filter = ["transporter__licences__municipality"]
    search_fields = ["name", "transporter__name", "generator_name", "worksite_address"]
    list_select_related = ["transporter", "destination_facility"]


@admin.register(CTRCorrection)
class CTRCorrectionAdmin(ReadOnly, admin.ModelAdmin):
    """Read-only: a correction is proposed, answered and decided on its pages
    (ctr/field/corrections.py), which keep the CTR's append-only history."""

    list_display = ["pk", "ctr", "status", "proposed_side", "proposed_by", "proposed_at"]
    list_filter = ["status", "proposed_side"]
    search_fields = ["ctr__number", "reason"]
    date_hierarchy = "proposed_at"
    list_select_related = ["ctr", "proposed_by"]
