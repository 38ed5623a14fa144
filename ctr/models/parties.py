"""The actors: transporters and their licence in each municipality (Lei 3.978/2007
art. 12-13), generators (art. 3 VIII-IX), the facilities' operators, and whom a user acts for
(Membership)."""

from __future__ import annotations

import datetime

from django.apps import apps
from django.conf import settings
from django.contrib.gis.db import models
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, Q

from jurisdiction.scope import ScopedQuerySet, scoped
from pev_network.models import (
    Municipality,
    ReceivingFacility,
    in_period,
    period_q,
    period_sql,
)

from ..documents import validate_document


class LicenceStatus(models.TextChoices):
    ACTIVE = "ACTIVE", "Ativa"
    SUSPENDED = "SUSPENDED", "Suspensa"
    REVOKED = "REVOKED", "Cassada"


class TransporterQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        """A transporter is a municipality's when it holds a licence there, in any status (a
        suspended or revoked one stays on the municipality's registry). An Exists on the
        unique (transporter, municipality) index, not a join: a transporter licensed in
        several municipalities is one row."""
        return Q(
            Exists(
                TransporterLicence.objects.filter(
                    transporter=OuterRef("pk"), municipality_id__in=list(ids)
                )
            )
        )

    def side_q(self, user) -> Q | None:
        member = membership_of(user)
        return Q(pk=member.transporter_id) if member and member.transporter_id else None


class Transporter(models.Model):
    """Transportador de RCC e volumosos (art. 3 XVIII): one CNPJ/CPF, one account, one fleet;
    a licence (TransporterLicence) in each municipality that licensed it (art. 13)."""

    name = models.CharField("razão social / nome", max_length=200)
    document = models.CharField(
        "CNPJ/CPF", max_length=14, unique=True, validators=[validate_document]
    )
    # Art. 12 §4 (second): a generator may carry its own waste without the license.
    is_self_generator = models.BooleanField(
        "gerador que transporta os próprios resíduos",
        default=False,
        help_text="Lei 3.978/2007 art. 12 §4: dispensa o licenciamento, mas não as demais regras.",
    )

    objects = TransporterQuerySet.as_manager()

    class Meta:
        verbose_name = "transportador"
        verbose_name_plural = "transportadores"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def home_municipality(self) -> Municipality | None:
        """Where its own pages open (the issue form's map, the phone's offline bundle): the
        municipality of its first licence, None without one (a self-generator)."""
        licence = (
            self.licences.select_related("municipality")
            .defer("municipality__boundary")
            .order_by("pk")
            .first()
        )
        return licence.municipality if licence else None

    def licence_in(self, municipality_id: int | None) -> TransporterLicence | None:
        """Its licence in the municipality (any status), or None: one query, or none when the
        licences were prefetched."""
        if municipality_id is None:
            return None
        cached = getattr(self, "_prefetched_objects_cache", {}).get("licences")
        if cached is not None:
            return next((x for x in cached if x.municipality_id == municipality_id), None)
        return self.licences.filter(municipality_id=municipality_id).first()


# --- a transporter's licence on a day, written once ----------------------------------------------
# Art. 13: the transporter is licensed ("cadastrado") by each municipality where it works. A
# licence is valid from valid_from to valid_until, both days included, open-ended without an
# end (pev_network.models.in_period, as a facility's license). A suspension (art. 25 IV) or a
# revocation (art. 25 V, art. 34) holds from status_since; a suspension ends after
# suspended_until when it has one. Three forms held to each other by
# tests/ctr/test_transporter_licences.py: SQL (licence_valid_sql, licence_restriction_sql),
# a queryset (TransporterLicenceQuerySet.valid_on, restricted_on, in_force_on) and memory
# (TransporterLicence.is_valid_on, restricted_on).


def licence_valid_sql(alias: str, day: str) -> str:
    """SQL condition: `day` (an SQL expression) inside the period of licence row `alias`."""
    return period_sql(f"{alias}.valid_from", f"{alias}.valid_until", day)


def licence_restriction_sql(alias: str, day: str) -> str:
    """SQL expression: the status (SUSPENDED or REVOKED) of licence row `alias` in force on
    `day`, else NULL."""
    a = alias
    return (
        f"(CASE WHEN {a}.status <> '{LicenceStatus.ACTIVE.value}'"
        f" AND {a}.status_since IS NOT NULL AND {a}.status_since <= {day}"
        f" AND NOT ({a}.status = '{LicenceStatus.SUSPENDED.value}'"
        f" AND {a}.suspended_until IS NOT NULL AND {day} > {a}.suspended_until)"
        f" THEN {a}.status END)"
    )


def restricted_q(day: datetime.date) -> Q:
    """licence_restriction_sql IS NOT NULL, as a queryset condition."""
    return (
        ~Q(status=LicenceStatus.ACTIVE)
        & Q(status_since__lte=day)
        & ~Q(status=LicenceStatus.SUSPENDED, suspended_until__lt=day)
    )


class TransporterLicenceQuerySet(ScopedQuerySet):
    """A licence is its municipality's; the transporter's own people see theirs."""

    def side_q(self, user) -> Q | None:
        member = membership_of(user)
        if member and member.transporter_id:
            return Q(transporter_id=member.transporter_id)
        return None

    def valid_on(self, day: datetime.date) -> TransporterLicenceQuerySet:
        """Licences whose period holds `day` (licence_valid_sql as a queryset)."""
        return self.filter(period_q(day))

    def restricted_on(self, day: datetime.date) -> TransporterLicenceQuerySet:
        """Licences suspended or revoked on `day` (licence_restriction_sql as a queryset)."""
        return self.filter(restricted_q(day))

    def in_force_on(self, day: datetime.date) -> TransporterLicenceQuerySet:
        """Valid on `day` and neither suspended nor revoked then: the licence a CTR needs."""
        return self.valid_on(day).exclude(restricted_q(day))


class TransporterLicence(models.Model):
    """A transporter's licence in one municipality (Lei 3.978/2007 art. 13: "devem ser
    cadastrados" by the municipality), with its own number, validity, status, suspension and
    revocation. The rules read the licence of the CTR's municipality on the transport date
    (TRANSPORTER_NOT_LICENSED, TRANSPORTER_SUSPENDED): a suspension in one municipality does
    not stop CTRs in another."""

    Status = LicenceStatus

    # No index of their own: the unique (transporter, municipality) and (municipality, number)
    # indexes lead with each and serve its lookups (TransporterQuerySet.municipal_q, the
    # rules' licence of a CTR's municipality, a municipality's registry).
    transporter = models.ForeignKey(
        Transporter,
        on_delete=models.CASCADE,
        related_name="licences",
        verbose_name="transportador",
        db_index=False,
    )
    municipality = models.ForeignKey(
        Municipality,
        on_delete=models.PROTECT,
        related_name="transporter_licences",
        verbose_name="município",
        db_index=False,
    )
    number = models.CharField("número da licença", max_length=40)
    valid_from = models.DateField("válida desde")
    valid_until = models.DateField("válida até", null=True, blank=True)
    status = models.CharField(
        "situação", max_length=10, choices=LicenceStatus.choices, default=LicenceStatus.ACTIVE
    )
    # Suspension (art. 25 IV) or revocation (art. 25 V) takes effect on a day; a suspension
    # may end on a day (the days after it, the licence works again).
    status_since = models.DateField(
        "situação desde",
        null=True,
        blank=True,
        help_text="Data em que a suspensão ou cassação passou a valer.",
    )
    suspended_until = models.DateField(
        "suspensa até",
        null=True,
        blank=True,
        help_text="Último dia da suspensão (vazio: até ser levantada).",
    )

    objects = TransporterLicenceQuerySet.as_manager()

    class Meta:
        verbose_name = "licença de transportador"
        verbose_name_plural = "licenças de transportadores"
        ordering = ["municipality_id", "transporter_id"]
        # No check constraints on the dates: the registrations migrated into licences
        # (migration 0020) had none, and nothing of theirs may be lost; the admin's form
        # checks them (clean).
        constraints = [
            models.UniqueConstraint(
                fields=["transporter", "municipality"],
                name="transporter_licence_one_per_municipality",
                violation_error_message="O transportador já tem licença neste município.",
            ),
            models.UniqueConstraint(
                fields=["municipality", "number"],
                name="transporter_licence_number_unique",
                violation_error_message="Já existe uma licença com este número no município.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.number} ({self.municipality.name}/{self.municipality.uf})"

    @property
    def place(self) -> str:
        """Its municipality as the messages name it: "Guaratinguetá/SP"."""
        return f"{self.municipality.name}/{self.municipality.uf}"

    def is_valid_on(self, day: datetime.date) -> bool:
        """TransporterLicenceQuerySet.valid_on for a licence in memory."""
        return in_period(self.valid_from, self.valid_until, day)

    def restricted_on(self, day: datetime.date) -> str | None:
        """SUSPENDED or REVOKED when that status is in force on `day`, else None
        (licence_restriction_sql for a licence in memory)."""
        if self.status == LicenceStatus.ACTIVE or self.status_since is None:
            return None
        if self.status_since > day:
            return None
        if (
            self.status == LicenceStatus.SUSPENDED
            and self.suspended_until
            and day > self.suspended_until
        ):
            return None
        return self.status

    def in_force_on(self, day: datetime.date) -> bool:
        return self.is_valid_on(day) and self.restricted_on(day) is None

    def clean(self):
        errors = {}
        if self.valid_until and self.valid_from and self.valid_until < self.valid_from:
            errors["valid_until"] = "A validade termina antes de começar."
        if self.status != LicenceStatus.ACTIVE and not self.status_since:
            errors["status_since"] = "Informe desde quando a licença está suspensa ou cassada."
        if self.suspended_until and self.status != LicenceStatus.SUSPENDED:
            errors["suspended_until"] = "Só uma licença suspensa tem fim da suspensão."
        if self.suspended_until and self.status_since and self.suspended_until < self.status_since:
            errors["suspended_until"] = "A suspensão termina antes de começar."
        if errors:
            raise ValidationError(errors)


class GeneratorQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        """A generator (a person or company, CPF/CNPJ, LGPD) is a municipality's when it has a
        worksite there or a CTR issued or received there."""
        ids = list(ids)
        # Worksites and CTRs point to the generator, so their modules import this one: they
        # are reached through the app registry, not imported back.
        worksite, ctr = apps.get_model("ctr", "Worksite"), apps.get_model("ctr", "CTR")
        worksites = worksite.objects.filter(generator=OuterRef("pk"), municipality_id__in=ids)
        ctrs = ctr.objects.in_municipalities(ids).filter(generator=OuterRef("pk"))
        return Q(Exists(worksites)) | Q(Exists(ctrs))

    def side_q(self, user) -> Q | None:
        member = membership_of(user)
        return Q(pk=member.generator_id) if member and member.generator_id else None


class Generator(models.Model):
    """Gerador: owner/responsible of a site, or occupant with bulky waste (art. 3 VIII-IX)."""

    name = models.CharField("nome", max_length=200)
    document = models.CharField(
        "CPF/CNPJ", max_length=14, unique=True, validators=[validate_document]
    )

    objects = GeneratorQuerySet.as_manager()

    class Meta:
        verbose_name = "gerador"
        verbose_name_plural = "geradores"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class FacilityOperator(models.Model):
    """The generator of the sorted waste an ATT or PEV ships onward: its operator (art. 3 III,
    art. 3 VIII). Its onward CTRs name this generator, so CTR.generator stays required for
    every CTR; one company may operate several facilities. Set by the first onward CTR that
    declares the operator's CPF/CNPJ, or in the admin."""

    facility = models.OneToOneField(
        ReceivingFacility,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="operator_generator",
        verbose_name="área de recebimento",
    )
    generator = models.ForeignKey(
        Generator,
        on_delete=models.PROTECT,
        related_name="operated_facilities",
        verbose_name="operador (gerador dos CTRs de saída)",
    )

    objects = scoped("facility__municipality")

    class Meta:
        verbose_name = "operador da área"
        verbose_name_plural = "operadores das áreas"

    def __str__(self) -> str:
        return f"{self.facility}: {self.generator}"


def membership_of(user):
    """The Membership a signed-in user acts by (a transporter's, a facility's or a generator's
    people), or None."""
    if user is None or not user.is_authenticated:
        return None
    try:
        return user.membership
    except user._meta.model.membership.RelatedObjectDoesNotExist:
        return None


class MembershipQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        """The people of the municipality's transporters, facilities and generators."""
        ids = list(ids)
        return (
            Q(transporter_id__in=Transporter.objects.in_municipalities(ids).values("pk"))
            | Q(facility__municipality_id__in=ids)
            | Q(generator_id__in=Generator.objects.in_municipalities(ids).values("pk"))
        )


class Membership(models.Model):
    """Whom a user acts for: a transporter, a receiving facility or a generator (per-object
    scoping). The municipal roles are jurisdiction.StaffRole's, per municipality."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="membership",
        verbose_name="usuário",
    )
    transporter = models.ForeignKey(
        Transporter,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="members",
        verbose_name="transportador",
    )
    facility = models.ForeignKey(
        ReceivingFacility,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="members",
        verbose_name="área de recebimento",
    )
    # A generator's account (art. 3 VIII-IX, art. 9): it sees the CTRs that name it or its
    # worksites, registers worksites and their PGRCC, asks for the Habite-se declaration.
    generator = models.ForeignKey(
        Generator,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="members",
        verbose_name="gerador",
    )

    objects = MembershipQuerySet.as_manager()

    class Meta:
        verbose_name = "vínculo de usuário"
        verbose_name_plural = "vínculos de usuários"
        constraints = [
            # At most one side: a transporter, a facility or a generator.
            models.CheckConstraint(
                condition=(
                    Q(transporter__isnull=True, facility__isnull=True)
                    | Q(transporter__isnull=True, generator__isnull=True)
                    | Q(facility__isnull=True, generator__isnull=True)
                ),
                name="membership_one_side",
            )
        ]
