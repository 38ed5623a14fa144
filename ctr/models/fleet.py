"""A transporter's fleet: its vehicles and its equipment of collection and transport
(Lei 3.978/2007 art. 3 VII)."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.gis.db import models
from django.core.validators import MinValueValidator
from django.db.models import Q

from jurisdiction.scope import ScopedQuerySet

from ..documents import validate_plate
from .parties import Transporter, membership_of


class FleetQuerySet(ScopedQuerySet):
    """A transporter's vehicles and equipment: its municipalities', and its own people's."""

    scope_via = "transporter"

    def side_q(self, user) -> Q | None:
        member = membership_of(user)
        return Q(transporter_id=member.transporter_id) if member and member.transporter_id else None


class Vehicle(models.Model):
    transporter = models.ForeignKey(
        Transporter, on_delete=models.CASCADE, related_name="vehicles", verbose_name="transportador"
    )
    plate = models.CharField("placa", max_length=7, unique=True, validators=[validate_plate])
    description = models.CharField("descrição", max_length=120, blank=True)
    active = models.BooleanField("ativo", default=True)

    objects = FleetQuerySet.as_manager()

    class Meta:
        verbose_name = "veículo"
        verbose_name_plural = "veículos"
        ordering = ["plate"]

    def __str__(self) -> str:
        return f"{self.plate[:3]}-{self.plate[3:]}"


class EquipmentKind(models.TextChoices):
    # Art. 3 VII: equipment of collection and transport.
    STATIONARY_SKIP = "CACAMBA", "Caçamba metálica estacionária"
    TIPPER = "BASCULANTE", "Caçamba basculante"
    FLATBED = "CARROCERIA", "Carroceria para carga seca"
    CART = "CARROCA", "Carroça"
    OTHER = "OUTRO", "Outro"


class Equipment(models.Model):
    transporter = models.ForeignKey(
        Transporter,
        on_delete=models.CASCADE,
        related_name="equipment",
        verbose_name="transportador",
    )
    code = models.CharField("código pintado no equipamento", max_length=30)
    kind = models.CharField(
        "tipo", max_length=12, choices=EquipmentKind.choices, default=EquipmentKind.STATIONARY_SKIP
    )
    nominal_capacity_m3 = models.DecimalField(
        "capacidade nominal (m³)",
        max_digits=6,
        decimal_places=2,
        validators=[MinValueValidator(Decimal("0.01"))],
    )
    active = models.BooleanField("ativo", default=True)

    objects = FleetQuerySet.as_manager()

    class Meta:
        verbose_name = "equipamento"
        verbose_name_plural = "equipamentos"
        ordering = ["code"]
        constraints = [
            models.UniqueConstraint(fields=["transporter", "code"], name="equipment_code_unique"),
            models.CheckConstraint(
                condition=Q(nominal_capacity_m3__gt=0), name="equipment_capacity_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} ({self.nominal_capacity_m3} m³)"
