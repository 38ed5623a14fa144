"""Admin of the penalty frameworks: the municipality's procedure as data.

A framework that governs a case is shown read-only except its end of validity: changing a
figure would change deadlines and amounts of acts already done (the model refuses it too).
A new law or decree is a new framework with its own validity."""

from django.contrib import admin

from config.br import br_number

from .models.frameworks import PARAMETERS, IndexVariation, PenaltyFramework


@admin.register(PenaltyFramework)
class PenaltyFrameworkAdmin(admin.ModelAdmin):
    list_display = ["name", "ibge_code", "valid_from", "valid_until", "cases"]
    list_filter = ["money_unit"]
    search_fields = ["name", "law", "ibge_code"]
    fieldsets = [
        (None, {"fields": ["name", "law", "ibge_code", "valid_from", "valid_until"]}),
        (
            "Parâmetros do procedimento",
            {
                "fields": [
                    "appeal_source",
                    *PARAMETERS,
                    "money_index",
                    "fine_table_law",
                    "fine_lines",
                ]
            },
        ),
        (
            "Fundamentos e textos",
            {"fields": ["citations", "notice_text", "record_text", "readings"]},
        ),
    ]

    @admin.display(description="processos")
    def cases(self, framework):
        return framework.cases.count()

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.governs_cases():
            return [f.name for f in obj._meta.concrete_fields if f.name != "valid_until"]
        return []

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.governs_cases():
            return False
        return super().has_delete_permission(request, obj)


@admin.register(IndexVariation)
class IndexVariationAdmin(admin.ModelAdmin):
    """The yearly variations of the index a framework updates its fines by (Lei 3.190/2013
    art. 9 §6), entered by the municipality's staff with their source; scoped to the
    municipality by the site (IndexVariation.objects is a ScopedQuerySet)."""

    list_display = ["municipality", "year", "variation", "source", "entered_by", "entered_at"]
    list_filter = ["municipality"]
    search_fields = ["source"]
    fields = ["municipality", "year", "percent", "source", "entered_by", "entered_at"]
    readonly_fields = ["entered_by", "entered_at"]

    @admin.display(description="variação (%)", ordering="percent")
    def variation(self, row):
        return f"{br_number(row.percent, 4)}%"

    def save_model(self, request, obj, form, change):
        obj.entered_by = request.user
        super().save_model(request, obj, form, change)
