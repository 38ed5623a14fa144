"""Illegal dumping reports (Lei 3.978/2007 art. 2 §1) and their history."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.gis.db import models
from django.core.validators import MinValueValidator
from django.utils import timezone

from jurisdiction.scope import scoped
from pev_network.models import Municipality

# Crockford's base32 without look-alikes: a protocol is read aloud on the phone.
PROTOCOL_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_protocol() -> str:
    """Unguessable, so that nobody can walk through other people's reports."""
    code = "".join(secrets.choice(PROTOCOL_ALPHABET) for _ in range(8))
    return f"{timezone.localdate().year}-{code[:4]}-{code[4:]}"


class DumpingCategory(models.TextChoices):
    # Art. 2 §1: where RCC and volumosos may not be disposed of.
    BOTA_FORA = "BOTA_FORA", "Área de bota-fora"
    SLOPE = "ENCOSTA", "Encosta"
    WATER_BODY = "CORPO_DAGUA", "Corpo d’água"
    VACANT_LOT = "LOTE_VAGO", "Lote vago"
    PUBLIC_AREA = "VIA_PUBLICA", "Passeio, via ou outra área pública"
    UNLICENSED_AREA = "AREA_NAO_LICENCIADA", "Área não licenciada"
    PROTECTED_AREA = "AREA_PROTEGIDA", "Área protegida por lei"


class ReportStatus(models.TextChoices):
    NEW = "NEW", "Nova"
    CONFIRMED = "CONFIRMED", "Confirmada"
    CLEANUP_SCHEDULED = "CLEANUP_SCHEDULED", "Limpeza agendada"
    CLEANED = "CLEANED", "Limpa"
    DUPLICATE = "DUPLICATE", "Duplicada"
    UNFOUNDED = "UNFOUNDED", "Improcedente"


class ReporterKind(models.TextChoices):
    CITIZEN = "CITIZEN", "Munícipe"
    INSPECTOR = "INSPECTOR", "Fiscal"


class DumpingReport(models.Model):
    Status = ReportStatus
    Category = DumpingCategory

    protocol = models.CharField("protocolo", max_length=16, unique=True, default=new_protocol)
    municipality = models.ForeignKey(
        Municipality,
        on_delete=models.PROTECT,
        related_name="dumping_reports",
        verbose_name="município",
    )
    location = models.PointField("local", srid=4326, spatial_index=True)
    description = models.TextField("descrição", max_length=2000, blank=True)
    category = models.CharField("categoria", max_length=20, choices=DumpingCategory.choices)
    estimated_volume_m3 = models.DecimalField(
        "volume estimado (m³)",
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
    )
    status = models.CharField(
        "situação", max_length=20, choices=ReportStatus.choices, default=ReportStatus.NEW
    )
    reporter_kind = models.CharField(
        "quem denunciou", max_length=10, choices=ReporterKind.choices, default="CITIZEN"
    )
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="usuário que registrou",
    )
    contact_name = models.CharField("nome para contato", max_length=120, blank=True)
    contact = models.CharField("telefone ou e-mail", max_length=120, blank=True)
    duplicate_of = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="duplicates",
        verbose_name="duplicada de",
    )
    created_at = models.DateTimeField("recebida em", default=timezone.now, db_index=True)
    # The moment of the report's last event: the intake services set it with the event they
    # write (not auto_now: a service told `at=` records a past moment, as the demo does).
    updated_at = models.DateTimeField("atualizada em", default=timezone.now, editable=False)
    cleaned_at = models.DateTimeField("limpa em", null=True, blank=True)

    objects = scoped()

    class Meta:
        verbose_name = "denúncia de descarte irregular"
        verbose_name_plural = "denúncias de descarte irregular"
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["municipality", "status", "-created_at"])]

    def __str__(self) -> str:
        return self.protocol


class DumpingReportEvent(models.Model):
    report = models.ForeignKey(
        DumpingReport, on_delete=models.CASCADE, related_name="events", verbose_name="denúncia"
    )
    at = models.DateTimeField("quando", default=timezone.now)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="quem",
    )
    from_status = models.CharField("de", max_length=20, blank=True, choices=ReportStatus.choices)
    to_status = models.CharField("para", max_length=20, choices=ReportStatus.choices)
    note = models.TextField("observação", blank=True)

    objects = scoped(via="report")

    class Meta:
        verbose_name = "evento da denúncia"
        verbose_name_plural = "eventos da denúncia"
        ordering = ["at", "pk"]


def photo_path(photo: DumpingPhoto, filename: str) -> str:
    # Never the uploader's file name: it may carry personal data or path tricks.
    return f"denuncias/{photo.report.protocol}/{secrets.token_hex(8)}.{photo.extension}"


class DumpingPhoto(models.Model):
    """A photo of a report, checked by content (JPEG, PNG or WebP). Its EXIF location is kept
    here for inspectors; the stored file itself has its metadata stripped."""

    report = models.ForeignKey(
        DumpingReport, on_delete=models.CASCADE, related_name="photos", verbose_name="denúncia"
    )
    image = models.FileField("arquivo", upload_to=photo_path)
    content_type = models.CharField("formato", max_length=20)
    extension = models.CharField("extensão", max_length=5)
    size_bytes = models.PositiveIntegerField("tamanho (bytes)")
    width = models.PositiveIntegerField("largura (px)")
    height = models.PositiveIntegerField("altura (px)")
    sha256 = models.CharField("SHA-256", max_length=64, db_index=True)
    exif_location = models.PointField("local no EXIF", srid=4326, null=True, blank=True)
    created_at = models.DateTimeField("enviada em", default=timezone.now)

    objects = scoped(via="report")

    class Meta:
        verbose_name = "foto da denúncia"
        verbose_name_plural = "fotos das denúncias"
