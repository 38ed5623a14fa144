"""Admin of the enforcement procedure.

Data the municipality keeps is editable here: the infraction table of art. 23 (its published
table was lost: the seeded lines are provisional), the UFESP values, the municipal holidays.
The procedure itself (cases, notices, records, appeals, penalties) changes only through the
inspectors' pages (/fiscalizacao/processos/), whose services check the deadlines and apply the
effects on the CTR rules (suspension, revocation); here it is read-only.
"""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from config.br import br_number
from ctr.admin import formatted_document

from .models.enforcement import (
    Appeal,
    DeliveryAttempt,
    EmbargoBreach,
    EmbargoFineCharge,
    EnforcementCase,
    InfractionItem,
    InfractionRecord,
    MunicipalHoliday,
    Notice,
    Offender,
    Penalty,
    PenaltyTableEntry,
    UfespRate,
)


@admin.register(PenaltyTableEntry)
class PenaltyTableEntryAdmin(admin.ModelAdmin):
    list_display = ["code", "description", "legal_reference", "fine", "active"]
    list_filter = ["active"]
    search_fields = ["code", "description", "legal_reference"]
    fields = [
        "code",
        "legal_reference",
        "description",
        "fine_ufesp",
        "offender_roles",
        "active",
        "note",
    ]

    @admin.display(description="multa (UFESP)", ordering="fine_ufesp")
    def fine(self, entry):
        return br_number(entry.fine_ufesp, 2)

    def has_delete_permission(self, request, obj=None):
        # A line used by a record stays (records keep the fine they were drawn up with);
        # retire it by unticking "vigente".
        if obj is not None and InfractionItem.objects.filter(entry=obj).exists():
            return False
        return super().has_delete_permission(request, obj)


@admin.register(UfespRate)
class UfespRateAdmin(admin.ModelAdmin):
    list_display = ["unit", "year", "value_brl"]
    list_filter = ["unit"]


@admin.register(MunicipalHoliday)
class MunicipalHolidayAdmin(admin.ModelAdmin):
    list_display = ["day", "name", "yearly", "municipality"]
    list_filter = ["municipality", "yearly"]


class ReadOnlyAdmin(admin.ModelAdmin):
    """The procedure's documents: visible, never edited here (see the module docstring)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Offender)
class OffenderAdmin(admin.ModelAdmin):
    list_display = ["name", formatted_document, "role", "transporter", "facility", "generator"]
    list_filter = ["role"]
    search_fields = ["name", "document"]
    # Name and address may be corrected; who the offender is (document, role, links) may not.
    readonly_fields = ["document", "role", "transporter", "facility", "generator"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class NoticeInline(ReadOnlyInline):
    model = Notice
    fields = ["number", "issued_at", "delivery_method", "delivered_on", "repaired_at"]
    readonly_fields = fields


class RecordInline(ReadOnlyInline):
    model = InfractionRecord
    fields = ["number", "drawn_up_at", "status", "total_ufesp", "recidivist", "proposes_revocation"]
    readonly_fields = fields
    show_change_link = True


@admin.register(EnforcementCase)
class EnforcementCaseAdmin(ReadOnlyAdmin):
    list_display = ["number", "opened_at", "offender", "status", "page"]
    list_filter = ["status", "municipality"]
    search_fields = ["number", "offender__name", "offender__document"]
    date_hierarchy = "opened_at"
    inlines = [NoticeInline, RecordInline]
    exclude = ["location"]

    @admin.display(description="página do processo")
    def page(self, case):
        return format_html(
            '<a href="{}">abrir</a>', reverse("enforcement:case-detail", args=[case.pk])
        )


class FailedDeliveryInline(ReadOnlyInline):
    # The failed attempts an edital supplies (art. 28 §2).
    model = DeliveryAttempt
    fields = ["method", "outcome", "attempted_at", "reason"]
    readonly_fields = fields


@admin.register(Notice)
class NoticeAdmin(ReadOnlyAdmin):
    list_display = ["number", "case", "issued_at", "delivery_method", "delivered_on", "repaired_at"]
    list_filter = ["delivery_method"]
    search_fields = ["number", "case__number"]
    inlines = [FailedDeliveryInline]


class ItemInline(ReadOnlyInline):
    model = InfractionItem
    fields = ["entry", "fine_ufesp"]
    readonly_fields = fields


class PenaltyInline(ReadOnlyInline):
    model = Penalty
    fields = ["kind", "starts_on", "ends_on", "lifted_on", "custody_costs_brl", "costs_paid_on"]
    readonly_fields = fields
    show_change_link = True


@admin.register(InfractionRecord)
class InfractionRecordAdmin(ReadOnlyAdmin):
    list_display = [
        "number",
        "case",
        "drawn_up_at",
        "status",
        "total_ufesp",
        "recidivist",
        "paid_on",
        "paid_brl",
    ]
    list_filter = ["status", "recidivist", "proposes_revocation"]
    search_fields = ["number", "case__number", "case__offender__document"]
    inlines = [ItemInline, PenaltyInline, FailedDeliveryInline]


@admin.register(Appeal)
class AppealAdmin(ReadOnlyAdmin):
    list_display = ["record", "filed_on", "decided_on", "upheld", "decided_by", "decided_as"]
    list_filter = ["upheld"]


class BreachInline(ReadOnlyInline):
    model = EmbargoBreach
    fields = ["day", "note"]
    readonly_fields = fields


@admin.register(Penalty)
class PenaltyAdmin(ReadOnlyAdmin):
    list_display = [
        "record",
        "kind",
        "starts_on",
        "ends_on",
        "lifted_on",
        "applied_by",
        "applied_as",
    ]
    list_filter = ["kind"]
    inlines = [BreachInline]


@admin.register(EmbargoBreach)
class EmbargoBreachAdmin(ReadOnlyAdmin):
    list_display = ["penalty", "day"]


@admin.register(EmbargoFineCharge)
class EmbargoFineChargeAdmin(ReadOnlyAdmin):
    # The daily fines of a disobeyed embargo made payable (art. 31).
    list_display = ["penalty", "assessed_on", "amount_ufesp", "status", "paid_on", "paid_brl"]
    list_filter = ["status"]
    search_fields = ["penalty__record__number", "penalty__record__case__number"]
