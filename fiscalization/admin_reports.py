"""Admin of dumping reports: a registry view with the map, photos and history.

Status, duplicates and the history are decisions with a trail: they change only through the
inspectors' page (/fiscalizacao/denuncias/<id>/) or the API, which record an event each time;
here they are read-only. Photos are served by the private view (MEDIA is not public).
"""

from django.contrib import admin
from django.db.models import Count
from django.urls import reverse
from django.utils.html import format_html
from leaflet.admin import LeafletGeoAdmin

from config.br_forms import format_point

from .models import DumpingPhoto, DumpingReport, DumpingReportEvent


class DumpingPhotoInline(admin.TabularInline):
    model = DumpingPhoto
    extra = 0
    can_delete = False
    fields = ["preview", "content_type", "width", "height", "size_bytes", "exif_location_text"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False  # photos come only through the checked intake (fiscalization.photos)

    @admin.display(description="foto")
    def preview(self, photo):
        url = reverse("intake:photo", args=[photo.pk])
        return format_html(
            '<a href="{}"><img src="{}" alt="" style="max-height: 6rem; max-width: 10rem"></a>',
            url,
            url,
        )

    @admin.display(description="local no EXIF (lat.; long.)")
    def exif_location_text(self, photo):
        if photo.exif_location is None:
            return "—"
        return format_point(photo.exif_location.x, photo.exif_location.y)


class DumpingReportEventInline(admin.TabularInline):
    model = DumpingReportEvent
    extra = 0
    can_delete = False
    fields = ["at", "actor", "from_status", "to_status", "note"]
    readonly_fields = fields
    ordering = ["at", "pk"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(DumpingReport)
class DumpingReportAdmin(LeafletGeoAdmin):
    list_display = [
        "protocol", "created_at", "municipality", "category", "status", "reporter_kind",
        "photo_count",
    ]  # fmt: skip
    list_filter = ["status", "category", "reporter_kind", "municipality"]
    search_fields = ["protocol", "description", "contact_name", "contact"]
    date_hierarchy = "created_at"
    list_select_related = ["municipality"]
    readonly_fields = [
        "protocol", "status", "duplicate_of", "reporter_kind", "reporter", "created_at",
        "updated_at", "cleaned_at", "inspector_page",
    ]  # fmt: skip
    fieldsets = [
        (None, {"fields": ["protocol", "inspector_page", "status", "duplicate_of"]}),
        (
            "Denúncia",
            {
                "fields": [
                    "municipality",
                    "location",
                    "category",
                    "description",
                    "estimated_volume_m3",
                ]
            },
        ),  # fmt: skip
        (
            "Quem denunciou (dados pessoais: LGPD)",
            {"fields": ["reporter_kind", "reporter", "contact_name", "contact"]},
        ),
        ("Datas", {"fields": ["created_at", "updated_at", "cleaned_at"]}),
    ]
    inlines = [DumpingPhotoInline, DumpingReportEventInline]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .defer("municipality__boundary")
            .annotate(n_photos=Count("photos"))
        )

    def has_add_permission(self, request):
        return False  # reports come through /denunciar/ or the API (one checked path)

    @admin.display(description="fotos", ordering="n_photos")
    def photo_count(self, report):
        return report.n_photos

    @admin.display(description="página da fiscalização")
    def inspector_page(self, report):
        if not report.pk:
            return "—"
        return format_html(
            '<a href="{}">Mudar situação, mesclar, ver sugestões</a>',
            reverse("intake:inspect-report", args=[report.pk]),
        )
