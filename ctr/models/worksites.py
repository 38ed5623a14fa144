"""Worksites, where waste is generated (a large generator's PGRCC, Lei 3.978/2007 art. 9),
one per generator and address."""

from __future__ import annotations

from django.conf import settings
from django.contrib.gis.db import models
from django.db.models import F, Func, Q, Value
from django.db.models.functions import Lower, Trim

from jurisdiction.scope import ScopedQuerySet
from pev_network.models import Municipality, ReceivingFacility

from .parties import Generator, Transporter, membership_of


def address_key(address) -> Func:
    """The address as the worksite's uniqueness sees it: trimmed, runs of spaces as one,
    lower case. `address` is an expression (F("address"), Value(text)); the same SQL is the
    unique index (worksite_generator_address_unique) and every lookup of a worksite by
    address, so that the lookup uses the index and agrees with it."""
    return Lower(
        Func(Trim(address), Value(r"\s+"), Value(" "), Value("g"), function="regexp_replace")
    )


# The index expression as SQL, for the set-based paths' ON CONFLICT (ctr/bulk/,
# synthetic/generator.py): PostgreSQL infers the unique index only from this exact expression.
ADDRESS_KEY_SQL = "lower(regexp_replace(btrim({}), '\\s+', ' ', 'g'))"
WORKSITE_CONFLICT_SQL = f"(generator_id, ({ADDRESS_KEY_SQL.format('address')}))"


class WorkKind(models.TextChoices):
    """The works whose permit makes a large generator write a PGRCC (art. 9 caput)."""

    NEW_BUILDING = "new_building", "obra nova"
    RENOVATION = "renovation", "reforma"
    DEMOLITION = "demolition", "demolição"


class WorksiteQuerySet(ScopedQuerySet):
    def side_q(self, user) -> Q | None:
        member = membership_of(user)
        return Q(generator_id=member.generator_id) if member and member.generator_id else None


class Worksite(models.Model):
    """Obra or property where waste is generated; a large generator has a PGRCC (art. 9).

    A worksite is created on the fly by the first CTR that names a new address (the
    transporter's), or registered by its generator or the Núcleo with its permit, size, kind
    of work and dates (generators/). `plan_transporters` and `plan_facilities` are the PGRCC in
    force, the one the rules read (NOT_IN_GENERATOR_PLAN): written when the Núcleo approves a
    plan (generators.plans), whose versions and history live in generators.WastePlan."""

    generator = models.ForeignKey(
        Generator, on_delete=models.PROTECT, related_name="worksites", verbose_name="gerador"
    )
    address = models.CharField("endereço", max_length=300)
    neighbourhood = models.CharField("bairro", max_length=120, blank=True)
    location = models.PointField("localização", srid=4326, spatial_index=True)
    # The worksite drawn on the map; without it the origin of its CTRs must lie within the GPS
    # tolerance of `location` (ORIGIN_OUTSIDE_WORKSITE).
    area = models.PolygonField("área da obra", srid=4326, null=True, blank=True)
    # The municipality that issued the permit: permit numbers are unique within it.
    municipality = models.ForeignKey(
        Municipality,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="worksites",
        verbose_name="município",
    )
    permit_number = models.CharField("alvará", max_length=60, blank=True)
    built_area_m2 = models.DecimalField(
        "área construída (m²)", max_digits=12, decimal_places=2, null=True, blank=True
    )
    # db_default: the set-based paths (ctr/bulk/, synthetic/) insert worksites in SQL.
    work_kind = models.CharField(
        "tipo de obra", max_length=20, choices=WorkKind.choices, blank=True, db_default=""
    )
    start_date = models.DateField("início", null=True, blank=True)
    expected_end = models.DateField("término previsto", null=True, blank=True)
    # Set when the generator declares the work finished (it then asks for the Habite-se
    # destination declaration, art. 9 p.ú. II).
    ended_on = models.DateField("término", null=True, blank=True)
    is_large_generator = models.BooleanField("grande gerador (PGRCC)", default=False)
    registered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="cadastrada por",
    )
    registered_at = models.DateTimeField("cadastrada em", null=True, blank=True)
    plan_transporters = models.ManyToManyField(
        Transporter,
        blank=True,
        related_name="planned_worksites",
        verbose_name="transportadores do PGRCC",
    )
    plan_facilities = models.ManyToManyField(
        ReceivingFacility,
        blank=True,
        related_name="planned_worksites",
        verbose_name="destinos do PGRCC",
    )

    objects = WorksiteQuerySet.as_manager()

    class Meta:
        verbose_name = "obra"
        verbose_name_plural = "obras"
        ordering = ["address"]
        constraints = [
            # One worksite per generator and address (case and spacing aside): concurrent
            # issuers naming the same new site meet here (ctr.services.worksite_for).
            models.UniqueConstraint(
                F("generator"),
                address_key(F("address")),
                name="worksite_generator_address_unique",
                violation_error_message="Este gerador já tem uma obra neste endereço.",
            ),
            models.UniqueConstraint(
                fields=["municipality", "permit_number"],
                condition=~Q(permit_number=""),
                name="worksite_permit_unique",
                violation_error_message="Já existe uma obra com este número de alvará.",
            ),
            models.CheckConstraint(
                condition=Q(built_area_m2__isnull=True) | Q(built_area_m2__gt=0),
                name="worksite_built_area_positive",
            ),
            models.CheckConstraint(
                condition=Q(expected_end__isnull=True)
                | Q(start_date__isnull=True)
                | Q(expected_end__gte=F("start_date")),
                name="worksite_end_after_start",
            ),
        ]

    def __str__(self) -> str:
        return self.address
