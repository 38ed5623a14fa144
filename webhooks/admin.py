from django.contrib import admin
from django.db import models

from .models import Attempt, Delivery, Endpoint


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    list_display = ["url", "transporter", "facility", "active", "disabled_reason", "created_at"]
    list_filter = ["active"]
    # The secret is the owner's: never shown here (they rotate it on their page).
    exclude = ["secret"]
    readonly_fields = ["created_by", "created_at", "disabled_at", "secret_rotated_at"]
    raw_id_fields = ["transporter", "facility"]
    # A URL typed without its scheme is https: deliveries carry CTR data and their signature
    # (webhooks/targets.py refuses plain http but to the loopback).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


class AttemptInline(admin.TabularInline):
    model = Attempt
    extra = 0
    can_delete = False
    readonly_fields = [f.name for f in Attempt._meta.fields]


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["event_type", "kind", "endpoint", "status", "attempts", "next_attempt_at"]
    list_filter = ["kind", "status"]
    inlines = [AttemptInline]
    readonly_fields = [f.name for f in Delivery._meta.fields]

    def has_add_permission(self, request):
        return False
