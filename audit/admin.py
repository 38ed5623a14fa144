from django.contrib import admin

from config import admin_numbers  # noqa: F401 (decimal comma in every DecimalField)

from .models import AccessLog


@admin.register(AccessLog)
class AccessLogAdmin(admin.ModelAdmin):
    """Read-only: the log is written by the views, and the database refuses changes."""

    list_display = ["at", "username", "purpose", "object_label", "content_type"]
    list_filter = ["purpose", "content_type"]
    search_fields = ["username", "object_label", "object_id"]
    date_hierarchy = "at"
    readonly_fields = [f.name for f in AccessLog._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
