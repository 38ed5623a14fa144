"""The municipal roles in the admin: who holds which role in which municipality. Granting one
is the platform administrator's act (the superuser's), as bringing a municipality in is
(nucleo.onboarding gives a new municipality its first Núcleo account): no other account of
the admin sees or changes this list, whatever model permissions it holds."""

from django.contrib import admin

from .models import StaffRole


@admin.register(StaffRole)
class StaffRoleAdmin(admin.ModelAdmin):
    list_display = ["user", "municipality", "role", "granted_at", "granted_by"]
    list_filter = ["role", "municipality"]
    search_fields = ["user__username", "user__email", "municipality__name"]
    autocomplete_fields = ["user", "municipality"]
    list_select_related = ["user", "municipality", "granted_by"]
    readonly_fields = ["granted_at", "granted_by"]

    def get_queryset(self, request):
        return super().get_queryset(request).defer("municipality__boundary")

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return self.has_module_permission(request)

    def has_add_permission(self, request):
        return self.has_module_permission(request)

    def has_change_permission(self, request, obj=None):
        return self.has_module_permission(request)

    def has_delete_permission(self, request, obj=None):
        return self.has_module_permission(request)

    def save_model(self, request, obj, form, change):
        if not change:
            obj.granted_by = request.user
        super().save_model(request, obj, form, change)
