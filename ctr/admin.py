from django.contrib import admin
from leaflet.admin import LeafletGeoAdmin

from config import admin_numbers  # noqa: F401 (decimal comma in every DecimalField)
from config.admin_readonly import ReadOnly

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


@admin.register(Transporter)
class TransporterAdmin(admin.ModelAdmin):
    list_display = ["name", formatted_document, "registration_number", "valid_until", "status"]
    list_filter = ["status", "municipality"]
    search_fields = ["name", "document", "registration_number"]
    inlines = [VehicleInline, EquipmentInline]


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
    """What the operators recorded as recycled or reused at their facility (ctr.stock)."""

    list_display = ["facility", "day", "waste_class", "kind", "volume_m3", "recorded_by"]
    list_filter = ["kind", "waste_class", "facility__kind"]
    date_hierarchy = "day"
    readonly_fields = ["recorded_by", "recorded_at"]

    def has_add_permission(self, request):
        return False  # recorded by the operator (ctr.services.record_processing)


@admin.register(CTRTemplate)
class CTRTemplateAdmin(ReadOnly, LeafletGeoAdmin):
    """Read-only: a template is the transporter's own, kept on its page (ctr/ctr_templates.py),
    which re-validates it against the fleet and the network."""

    list_display = ["name", "transporter", "generator_name", "destination_facility", "updated_at"]
    list_filter = ["transporter__municipality"]
    search_fields = ["name", "transporter__name", "generator_name", "worksite_address"]
    list_select_related = ["transporter", "destination_facility"]


@admin.register(CTRCorrection)
class CTRCorrectionAdmin(ReadOnly, admin.ModelAdmin):
    """Read-only: a correction is proposed, answered and decided on its pages
    (ctr/corrections.py), which keep the CTR's append-only history."""

    list_display = ["pk", "ctr", "status", "proposed_side", "proposed_by", "proposed_at"]
    list_filter = ["status", "proposed_side"]
    search_fields = ["ctr__number", "reason"]
    date_hierarchy = "proposed_at"
    list_select_related = ["ctr", "proposed_by"]
