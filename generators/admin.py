"""The generator's side in the admin: to look up, not to decide. Every decision (confirming a
registration, approving a PGRCC, issuing a Habite-se declaration) goes through its page, which
checks the rules, keeps the history and sends the e-mails; here each record is read only."""

from django.contrib import admin

from config.admin_readonly import ReadOnly

from .models import (
    GeneratorInvitation,
    GeneratorRegistration,
    HabiteSeDeclaration,
    PlannedVolume,
    UnconfirmedDepartureNotice,
    WastePlan,
    WastePlanEvent,
)


class PlannedVolumeInline(ReadOnly, admin.TabularInline):
    model = PlannedVolume
    extra = 0


class WastePlanEventInline(ReadOnly, admin.TabularInline):
    model = WastePlanEvent
    extra = 0
    fields = ["at", "actor", "action", "note"]


@admin.register(WastePlan)
class WastePlanAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["worksite", "version", "status", "submitted_at", "decided_at"]
    list_filter = ["status"]
    search_fields = ["worksite__address", "worksite__generator__name", "worksite__permit_number"]
    list_select_related = ["worksite"]
    inlines = [PlannedVolumeInline, WastePlanEventInline]


@admin.register(GeneratorInvitation)
class GeneratorInvitationAdmin(ReadOnly, admin.ModelAdmin):
    """The token's hash stays out of sight: it identifies a live link."""

    list_display = [
        "generator", "email", "municipality", "invited_by", "created_at", "expires_at",
        "accepted_at",
    ]  # fmt: skip
    search_fields = ["generator__name", "generator__document", "email"]
    list_select_related = ["generator", "invited_by", "municipality"]
    exclude = ["token_hash"]


@admin.register(GeneratorRegistration)
class GeneratorRegistrationAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["name", "user", "municipality", "status", "created_at", "decided_at"]
    list_filter = ["status"]
    search_fields = ["name", "document", "email", "user__username"]
    list_select_related = ["user", "municipality"]


@admin.register(HabiteSeDeclaration)
class HabiteSeDeclarationAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["pk", "worksite", "status", "requested_at", "decided_at", "code"]
    list_filter = ["status"]
    search_fields = ["code", "worksite__address", "worksite__generator__name"]
    list_select_related = ["worksite"]


@admin.register(UnconfirmedDepartureNotice)
class UnconfirmedDepartureNoticeAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["ctr", "mailed_at", "recipients"]
    date_hierarchy = "mailed_at"
