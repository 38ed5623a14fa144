"""The municipal roles in the admin (the site itself is jurisdiction.admin_site)."""

from __future__ import annotations

from django.contrib import admin

from .models import CurrentMunicipality, StaffRole


@admin.register(StaffRole)
class StaffRoleAdmin(admin.ModelAdmin):
    """Granting a role in a municipality is the platform administrator's act (the superuser's:
    StaffRole has no municipality scope of its own, so the site keeps it AdministratorOnly),
    as bringing a municipality in is (nucleo.onboarding gives a new municipality its first
    Núcleo account): a municipality's staff never grant themselves more."""

    list_display = ["user", "municipality", "role", "granted_at", "granted_by"]
    list_filter = ["role", "municipality"]
    search_fields = ["user__username", "user__email", "municipality__name"]
    autocomplete_fields = ["user", "municipality"]
    list_select_related = ["user", "municipality", "granted_by"]
    readonly_fields = ["granted_at", "granted_by"]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("municipality__boundary")

    def save_model(self, request, obj, form, change):
        if not change:
            obj.granted_by = request.user
        super().save_model(request, obj, form, change)


admin.site.register(CurrentMunicipality)
