"""The runs of the periodic jobs, read-only, for superusers (platform-level: jobs.models)."""

from django.contrib import admin

from config.admin_readonly import ReadOnly

from .models import JobRun


@admin.register(JobRun)
class JobRunAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ["job", "due_at", "status", "started_at", "finished_at"]
    list_filter = ["job", "status"]
    date_hierarchy = "due_at"
    readonly_fields = [f.name for f in JobRun._meta.fields]

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser
