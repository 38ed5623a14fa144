"""A receiving facility's stock: what it processes on site, the FIFO allocation of what it
received to what it shipped on (ctr/custody/chain.py), and the facilities whose allocation waits for
a rebuild."""

from __future__ import annotations

from django.conf import settings
from django.contrib.gis.db import models
from django.db.models import Q
from django.utils import timezone

from jurisdiction.scope import scoped
from pev_network.models import ReceivingFacility, WasteClass

from .document import CTRWaste


class ProcessingKind(models.TextChoices):
    RECYCLED = "recycled", "Agregado reciclado produzido"
    REUSED = "reused", "Material reutilizado"


class OnSiteProcessing(models.Model):
    """Volume of a class recycled or reused at the facility itself, recorded by its operator:
    it leaves the stock without an onward CTR (art. 2: triagem, reutilização, reciclagem)."""

    facility = models.ForeignKey(
        ReceivingFacility,
        on_delete=models.PROTECT,
        related_name="processing",
        verbose_name="área de recebimento",
    )
    waste_class = models.CharField("classe", max_length=12, choices=WasteClass.choices)
    kind = models.CharField("destinação na área", max_length=10, choices=ProcessingKind.choices)
    volume_m3 = models.DecimalField("volume (m³)", max_digits=10, decimal_places=3)
    day = models.DateField("data")
    note = models.CharField("observação", max_length=300, blank=True)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="registrado por",
    )
    recorded_at = models.DateTimeField("registrado em", default=timezone.now)

    objects = scoped("facility__municipality")

    class Meta:
        verbose_name = "beneficiamento na área"
        verbose_name_plural = "beneficiamentos na área"
        ordering = ["-day", "-pk"]
        indexes = [models.Index(fields=["facility", "day"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(volume_m3__gt=0), name="onsite_processing_volume_positive"
            )
        ]

    def __str__(self) -> str:
        return f"{self.facility}: {self.volume_m3} m³ classe {self.waste_class} em {self.day}"


class CustodyAllocation(models.Model):
    """One piece of the FIFO allocation at a facility that ships on (ctr/custody/chain.py):
    `volume_m3` of the inbound line `inbound` left in the onward line `outbound`, or was
    processed on site (`processing`), or is still in stock (neither). An outbound piece without
    an inbound one is volume shipped past what was received (the sorting tolerance). Derived
    data: rebuilt per facility from the CTRs whenever they change, never edited."""

    # Derived rows, rebuilt by facility: no constraint ties them to the lines they describe,
    # so deleting a CTR never waits on them (its trigger marks the facility to rebuild).
    facility = models.ForeignKey(
        ReceivingFacility, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    waste_class = models.CharField(max_length=12)
    inbound = models.ForeignKey(
        CTRWaste,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        null=True,
        related_name="+",
        db_index=False,
    )
    outbound = models.ForeignKey(
        CTRWaste,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        null=True,
        related_name="+",
        db_index=False,
    )
    processing = models.ForeignKey(
        OnSiteProcessing,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        null=True,
        related_name="+",
        db_index=False,
    )
    volume_m3 = models.DecimalField(max_digits=20, decimal_places=9)
    # The piece's share of its inbound line's volume, for following a load through the chain.
    fraction = models.DecimalField(max_digits=20, decimal_places=18, null=True)

    class Meta:
        # The walk reads pieces by their inbound line; nothing reads them by the outbound one,
        # and every index is one more write per piece rebuilt (docs/performance.md, P6).
        indexes = [
            models.Index(fields=["facility"], name="custody_facility"),
            models.Index(fields=["inbound"], name="custody_inbound"),
        ]


class CustodyStale(models.Model):
    """A facility whose allocation must be rebuilt before it is read: written by database
    triggers on CTRs, their waste lines and on-site processing (migration 0009), so no path
    that changes a movement (a service, the bulk import, the admin, a script) can forget it."""

    facility = models.OneToOneField(
        ReceivingFacility, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
