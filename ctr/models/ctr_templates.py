"""The CTR templates a transporter issues from (ctr/field/templates.py)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.gis.db import models
from django.db.models.functions import Lower, Trim
from django.utils import timezone

from pev_network.models import ReceivingFacility

from ..documents import validate_document
from .fleet import Equipment, FleetQuerySet, Vehicle
from .parties import Transporter


class CTRTemplate(models.Model):
    """A load the transporter carries again and again ("CTR Modelo", as SIGOR's and the
    federal MTR's): everything a CTR declares but the day, with the volumes to confirm. It is
    not a CTR and proves nothing: issuing from it builds an IssueRequest that every rule of the
    day checks again (ctr.field.templates.issue)."""

    transporter = models.ForeignKey(
        Transporter,
        on_delete=models.CASCADE,
        related_name="ctr_templates",
        verbose_name="transportador",
    )
    name = models.CharField("nome do modelo", max_length=80)
    generator_name = models.CharField("nome do gerador", max_length=200)
    generator_document = models.CharField(
        "CPF/CNPJ do gerador", max_length=14, validators=[validate_document]
    )
    worksite_address = models.CharField("endereço da obra", max_length=300)
    worksite_neighbourhood = models.CharField("bairro", max_length=120, blank=True)
    # The worksite's location is the origin, as on the issue form. No spatial index: a
    # template is read by its key, never searched by place.
    origin = models.PointField("origem", srid=4326, spatial_index=False)
    destination = models.PointField("ponto de descarga", srid=4326, spatial_index=False)
    destination_facility = models.ForeignKey(
        ReceivingFacility,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="área de destino",
    )
    # SET_NULL: a vehicle or skip sold off leaves the template, which then asks for another.
    vehicle = models.ForeignKey(
        Vehicle, on_delete=models.SET_NULL, null=True, related_name="+", verbose_name="veículo"
    )
    equipment = models.ForeignKey(
        Equipment,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="equipamento",
    )
    # [{"class": "A", "volume_m3": "4.000", "description": "..."}]: read only as a whole.
    waste = models.JSONField("resíduos", default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="+",
        verbose_name="criado por",
    )
    created_at = models.DateTimeField("criado em", default=timezone.now)
    updated_at = models.DateTimeField("alterado em", default=timezone.now)

    objects = FleetQuerySet.as_manager()

    class Meta:
        verbose_name = "modelo de CTR"
        verbose_name_plural = "modelos de CTR"
        constraints = [
            # One name per transporter, case and spacing aside (the service says so first;
            # the index decides between two saves at once).
            models.UniqueConstraint(
                "transporter", Lower(Trim("name")), name="ctr_template_name_unique"
            ),
        ]

    def __str__(self) -> str:
        return self.name
