"""Admin of the enforcement procedure.

Data the municipality keeps is editable here: the infraction table of art. 23 (its published
table was lost: the seeded lines are provisional; each municipality confirms its own lines,
here or by the CSV import of this admin's "Importar CSV"), the UFESP values, the municipal
holidays.
The procedure itself (cases, notices, records, appeals, penalties) changes only through the
inspectors' pages (/fiscalizacao/processos/), whose services check the deadlines and apply the
effects on the CTR rules (suspension, revocation); here it is read-only.
"""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from config.admin_readonly import ReadOnly
from config.br import br_number
from config.csv_reader import MAX_BYTES
from config.errors import DomainError, add_to_form
from ctr.admin import formatted_document
from pev_network.models import Municipality

from . import penalty_table
from .models.enforcement import (
    Appeal,
    DeliveryAttempt,
    EmbargoBreach,
    EmbargoFineCharge,
    EnforcementCase,
    EntryStatus,
    InfractionItem,
    InfractionRecord,
    MunicipalHoliday,
    Notice,
    Offender,
    Penalty,
    PenaltyTableEntry,
)


class PenaltyTableImportForm(forms.Form):
    file = forms.FileField(
        label="Arquivo CSV",
        help_text="Colunas e formato em docs/fiscalizacao.md; separado por ponto e vírgula.",
        widget=forms.ClearableFileInput({"accept": ".csv,text/csv"}),
    )
    municipality = forms.ModelChoiceField(
        Municipality.objects.defer("boundary").order_by("name"), label="Município"
    )
    dry_run = forms.BooleanField(
        label="Simular: mostrar o que seria criado ou alterado, sem gravar nada",
        required=False,
        initial=True,
    )
    confirm = forms.BooleanField(
        label="Confirmar os valores (sem isto as linhas ficam provisórias e não podem ser usadas)",
        required=False,
    )
    act = forms.CharField(
        label="Lei que fixa os valores",
        required=False,
        max_length=200,
        help_text=(
            "Obrigatório para confirmar: a lei que dá os valores (Guaratinguetá: “Lei nº "
            "4.699/2017”, a redação da tabela do art. 23 da Lei 3.978/2007), não um decreto."
        ),
    )


@admin.register(PenaltyTableEntry)
class PenaltyTableEntryAdmin(admin.ModelAdmin):
    list_display = [
        "code",
        "description",
        "legal_reference",
        "fine",
        "municipality",
        "valid_from",
        "valid_until",
        "status",
        "active",
    ]
    list_filter = ["municipality", "status", "active"]
    search_fields = ["code", "description", "legal_reference", "confirming_act"]
    fields = [
        "municipality",
        "code",
        "legal_reference",
        "description",
        "fine_ufesp",
        "offender_roles",
        "valid_from",
        "valid_until",
        "active",
        "status",
        "confirming_act",
        "confirmed_by",
        "confirmed_at",
        "note",
    ]
    readonly_fields = ["confirmed_by", "confirmed_at"]

    @admin.display(description="multa (UFESP)", ordering="fine_ufesp")
    def fine(self, entry):
        return br_number(entry.fine_ufesp, 2)

    def save_model(self, request, obj, form, change):
        # Whoever confirms (or changes a confirmed line) is the one on record, now.
        if obj.status == EntryStatus.CONFIRMED:
            if not change or form.changed_data:
                obj.confirmed_by, obj.confirmed_at = request.user, timezone.now()
        else:
            obj.confirmed_by = obj.confirmed_at = None
        super().save_model(request, obj, form, change)

    def has_delete_permission(self, request, obj=None):
        # A line used by a record stays (records keep the line as they were drawn up with
        # it); retire it by unticking "ativa" or ending its validity.
        if obj is not None and InfractionItem.objects.filter(entry=obj).exists():
            return False
        return super().has_delete_permission(request, obj)

    def get_urls(self):
        view = self.admin_site.admin_view(self.import_view)
        return [
            path("importar/", view, name="fiscalization_penaltytableentry_import"),
            *super().get_urls(),
        ]

    def import_view(self, request):
        """Upload the CSV of a municipality's table: a simulation (dry run) by default, the
        report line by line; nothing half-written (fiscalization.penalty_table)."""
        if not self.has_add_permission(request) or not self.has_change_permission(request):
            raise PermissionDenied
        form = PenaltyTableImportForm(request.POST or None, request.FILES or None)
        report = None
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                report = penalty_table.import_table(
                    data["file"].read(MAX_BYTES + 1),
                    data["municipality"],
                    dry_run=data["dry_run"],
                    confirm=data["confirm"],
                    act=data["act"],
                    by=request.user,
                )
            except DomainError as error:
                add_to_form(form, error, {"act": "act"})
            else:
                if report.written:
                    self.message_user(request, report.summary(), messages.SUCCESS)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Importar a tabela de infrações (CSV)",
            "form": form,
            "report": report,
            "columns": penalty_table.COLUMN_HELP,
            "required": penalty_table.REQUIRED_COLUMNS,
        }
        return TemplateResponse(
            request,
            "admin/fiscalization/penaltytableentry/import.html",
            context,
            status=400 if form.errors else 200,
        )


@admin.register(MunicipalHoliday)
class MunicipalHolidayAdmin(admin.ModelAdmin):
    list_display = ["day", "name", "yearly", "municipality"]
    list_filter = ["municipality", "yearly"]


class ReadOnlyAdmin(ReadOnly, admin.ModelAdmin):
    """The procedure's documents: visible, never edited here (see the module docstring)."""


class ReadOnlyInline(ReadOnly, admin.TabularInline):
    extra = 0
    can_delete = False


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
    fields = ["code", "description", "legal_reference", "fine_ufesp", "entry"]
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
