"""Actors and the CTR document (Lei 3.978/2007 art. 3 VI, art. 9, art. 12-13)."""

from __future__ import annotations

import datetime
import secrets
from decimal import Decimal

from django.conf import settings
from django.contrib.gis.db import models
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db.models import Exists, F, Func, OuterRef, Q, Value
from django.db.models.functions import Lower, Trim
from django.utils import timezone

from jurisdiction.scope import ScopedQuerySet, scoped
from pev_network.models import (
    FacilityKind,
    Municipality,
    MunicipalParameters,
    ReceivingFacility,
    WasteClass,
    in_period,
    period_q,
    period_sql,
)

from .documents import validate_document, validate_plate


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


class GeneratorQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        """A generator (a person or company, CPF/CNPJ, LGPD) is a municipality's when it has a
        worksite there or a CTR issued or received there."""
        ids = list(ids)
        worksites = Worksite.objects.filter(generator=OuterRef("pk"), municipality_id__in=ids)
        ctrs = CTR.objects.in_municipalities(ids).filter(generator=OuterRef("pk"))
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


def address_key(address) -> Func:
    """The address as the worksite's uniqueness sees it: trimmed, runs of spaces as one,
    lower case. `address` is an expression (F("address"), Value(text)); the same SQL is the
    unique index (worksite_generator_address_unique) and every lookup of a worksite by
    address, so that the lookup uses the index and agrees with it."""
    return Lower(
        Func(Trim(address), Value(r"\s+"), Value(" "), Value("g"), function="regexp_replace")
    )


# The index expression as SQL, for the set-based paths' ON CONFLICT (ctr/bulk.py,
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
    # db_default: the set-based paths (ctr/bulk.py, synthetic/) insert worksites in SQL.
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


class CTRWasteClass(models.TextChoices):
    """What a CTR line may declare: the network's classes, and the prohibited kinds so that a
    declaration of them is refused by rule (art. 7, art. 14 §6) rather than by the parser."""

    A = "A", WasteClass.A.label
    B = "B", WasteClass.B.label
    C = "C", WasteClass.C.label
    D = "D", WasteClass.D.label
    VOLUMOSO = "VOLUMOSO", WasteClass.VOLUMOSO.label
    DOMICILIAR = "DOMICILIAR", "Resíduo domiciliar não inerte (proibido)"
    INDUSTRIAL = "INDUSTRIAL", "Resíduo industrial (proibido)"
    SAUDE = "SAUDE", "Resíduo de serviço de saúde (proibido)"


PROHIBITED_CLASSES = {CTRWasteClass.DOMICILIAR, CTRWasteClass.INDUSTRIAL, CTRWasteClass.SAUDE}


class CTRStatus(models.TextChoices):
    ISSUED = "issued", "Emitido"
    RECEIVED = "received", "Recebido"
    REFUSED = "refused", "Recusado"
    CANCELLED = "cancelled", "Cancelado"


def membership_of(user):
    """The Membership a signed-in user acts by (a transporter's, a facility's or a generator's
    people), or None."""
    if user is None or not user.is_authenticated:
        return None
    try:
        return user.membership
    except user._meta.model.membership.RelatedObjectDoesNotExist:
        return None


def generator_ctrs_q(generator_id: int) -> Q:
    """The CTRs of a generator (art. 3 VIII-IX): those that name it, and those of its
    worksites whoever declared them. An onward CTR names a facility's operator as its
    generator (FacilityOperator, art. 3 VIII: the sorted waste is the operator's), so the
    operator's generator account sees those too. A subquery, not a join: the worksite's
    generator must not multiply or reorder the rows of a list."""
    return Q(generator_id=generator_id) | Q(
        worksite_id__in=Worksite.objects.filter(generator_id=generator_id).values("pk")
    )


def crossed_into(municipality_id: int | None, facility_municipality_id: int | None):
    """CTR.crossing_into: the destination facility's municipality when it is another."""
    if facility_municipality_id is None or facility_municipality_id == municipality_id:
        return None
    return facility_municipality_id


# The same in SQL, for the set-based paths (ctr/bulk.py, synthetic/): {0} the CTR's
# municipality, {1} its destination facility's.
CROSSING_INTO_SQL = "CASE WHEN {1} <> {0} THEN {1} END"


class CTRQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        """A CTR is its origin's municipality's (the number says so); the municipality of its
        destination facility sees it too (a consortium's shared landfill):
        the loads that arrive at its facilities, not the rest of the other's data. Two index
        scans OR-ed, never a join nor a subquery: the municipality's CTRs and those crossing
        into it (CTR.crossing_into, its own partial index). With the facilities' ids in a
        subquery, PostgreSQL could use no index for that branch nor estimate it: a small
        municipality's newest CTRs were looked for by walking every CTR of the state, newest
        first, and its count read the whole table (docs/performance.md)."""
        ids = list(ids)
        return Q(municipality_id__in=ids) | Q(crossing_into_id__in=ids)

    def side_q(self, user) -> Q | None:
        """A transporter's users see its own CTRs, a facility's operators those destined to it
        and those leaving it (onward CTRs), a generator's those that name it or its worksites
        (read only: it issues, receives and cancels nothing)."""
        member = membership_of(user)
        if member is None:
            return None
        if member.transporter_id:
            return Q(transporter_id=member.transporter_id)
        if member.facility_id:
            return Q(destination_facility_id=member.facility_id) | Q(
                origin_facility_id=member.facility_id
            )
        if member.generator_id:
            return generator_ctrs_q(member.generator_id)
        return None


class CTR(models.Model):
    """Controle de Transporte de Resíduos: one per load (art. 3 VI, art. 13 sole §)."""

    Status = CTRStatus

    number = models.CharField("número", max_length=32, unique=True)
    # No single-column indexes on municipality, transporter and destination_facility: the
    # (municipality, year, sequence), (transporter, -created_at) and (destination_facility,
    # status) indexes lead with them, and each index is paid on every insert (ctr/bulk.py).
    municipality = models.ForeignKey(
        Municipality,
        on_delete=models.PROTECT,
        related_name="ctrs",
        verbose_name="município",
        db_index=False,
    )
    year = models.PositiveSmallIntegerField("ano")
    sequence = models.PositiveIntegerField("sequência")
    transporter = models.ForeignKey(
        Transporter,
        on_delete=models.PROTECT,
        related_name="ctrs",
        verbose_name="transportador",
        db_index=False,
    )
    vehicle = models.ForeignKey(
        Vehicle, on_delete=models.PROTECT, related_name="ctrs", verbose_name="veículo"
    )
    equipment = models.ForeignKey(
        Equipment,
        on_delete=models.PROTECT,
        related_name="ctrs",
        verbose_name="equipamento",
        null=True,
        blank=True,
    )
    generator = models.ForeignKey(
        Generator, on_delete=models.PROTECT, related_name="ctrs", verbose_name="gerador"
    )
    # The name as the transporter declared it on this CTR: the document records what was
    # declared, even when the registry knows the CPF/CNPJ under another name.
    generator_name = models.CharField("nome do gerador (declarado)", max_length=200)
    worksite = models.ForeignKey(
        Worksite,
        on_delete=models.PROTECT,
        related_name="ctrs",
        verbose_name="obra",
        null=True,
        blank=True,
    )
    origin = models.PointField("origem", srid=4326, spatial_index=True)
    destination = models.PointField("ponto de descarga", srid=4326, spatial_index=True)
    # An onward CTR: sorted waste leaving the facility that received it (art. 3 III: the ATT
    # sorts "e posterior remoção para adequada disposição"); its origin is inside this area.
    origin_facility = models.ForeignKey(
        ReceivingFacility,
        on_delete=models.PROTECT,
        related_name="onward_ctrs",
        verbose_name="área de origem (CTR de saída)",
        null=True,
        blank=True,
        db_index=False,
    )
    destination_facility = models.ForeignKey(
        ReceivingFacility,
        on_delete=models.PROTECT,
        related_name="ctrs",
        verbose_name="área de destino",
        db_index=False,
    )
    # The municipality of the destination facility when it is not the CTR's own: a load across
    # the border, which that municipality sees too (CTRQuerySet.municipal_q);
    # NULL when the load stays home, as nearly every one does, so that its partial index holds
    # only the crossings and costs an insert nothing otherwise. Written on creation (save(),
    # the issue path; ctr/bulk.py and synthetic/ in their SQL, CROSSING_INTO_SQL) and kept by
    # the database when a facility moves to another municipality (migration ctr 0021).
    crossing_into = models.ForeignKey(
        Municipality,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="município de destino (outro)",
        null=True,
        blank=True,
        editable=False,
        db_index=False,
    )
    transport_date = models.DateField("data do transporte")
    total_volume_m3 = models.DecimalField("volume total (m³)", max_digits=8, decimal_places=3)
    status = models.CharField(
        "situação", max_length=10, choices=CTRStatus.choices, default=CTRStatus.ISSUED
    )
    findings = models.JSONField("constatações", default=list, blank=True)
    fee_ufesp = models.DecimalField("taxa (UFESP)", max_digits=6, decimal_places=2, default=0)
    received_volume_m3 = models.DecimalField(
        "volume recebido (m³)", max_digits=8, decimal_places=3, null=True, blank=True
    )
    closed_at = models.DateTimeField("encerrado em", null=True, blank=True)
    # Where the receiver's device was when it confirmed the load (browser
    # geolocation or the API's `location`), for the Núcleo's map of receptions given away from
    # the facility. No spatial index: it is read only by that map, filtered by transport date.
    received_location = models.PointField(
        "local do recebimento", srid=4326, null=True, blank=True, spatial_index=False
    )
    # A default, not auto_now_add: historical CTRs (imports, the demo) keep their real time.
    created_at = models.DateTimeField("emitido em", default=timezone.now, db_index=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="emitido por",
    )
    # The generator's confirmation of the load's departure, where the municipality asks for
    # it (Municipality.generator_confirmation_required; generators.confirmation).
    generator_confirmed_at = models.DateTimeField(
        "saída confirmada pelo gerador em", null=True, blank=True
    )
    # No index: nothing looks CTRs up by who confirmed them, and every index is paid on every
    # insert (ctr/bulk.py); deleting a user (its PROTECT check) is rare.
    generator_confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="saída confirmada por",
        db_index=False,
    )
    # The offline provisional CTR (ctr/offline.py): the number the driver's
    # device gave the load while there was no connection, and when it left. db_default: the
    # set-based paths (ctr/bulk.py, synthetic/) insert CTRs in SQL and never have one.
    provisional_number = models.CharField(
        "número provisório", max_length=20, blank=True, default="", db_default=""
    )
    provisional_departure_at = models.DateTimeField("saída (CTR provisório)", null=True, blank=True)

    objects = CTRQuerySet.as_manager()

    class Meta:
        verbose_name = "CTR"
        verbose_name_plural = "CTRs"
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["municipality", "year", "sequence"], name="ctr_sequence_unique"
            ),
            models.CheckConstraint(condition=Q(total_volume_m3__gt=0), name="ctr_volume_positive"),
            # One device number is one load of the transporter (a retry
            # of the sync must not issue it twice).
            models.UniqueConstraint(
                fields=["transporter", "provisional_number"],
                condition=~Q(provisional_number=""),
                name="ctr_provisional_number_unique",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "transport_date"]),
            models.Index(fields=["transporter", "-created_at"]),
            models.Index(fields=["destination_facility", "status"]),
            # The stock of a facility reads its onward CTRs (ctr/stock.py): few CTRs are.
            models.Index(
                fields=["origin_facility", "status"],
                name="ctr_onward_origin",
                condition=Q(origin_facility__isnull=False),
            ),
            # "Which transporters carried from this municipality" (the Núcleo's filter form,
            # nucleo/forms.py) and "has this municipality any CTR": answered from the
            # index alone. Without it the planner walked each transporter's CTRs: 1.4 s for
            # São Paulo at a million CTRs, against 2 ms with it (docs/performance.md).
            models.Index(
                fields=["municipality", "transporter"], name="ctr_municipality_transporter"
            ),
            # The loads crossing into a municipality (CTRQuerySet.municipal_q's second branch);
            # the first is answered by the two indexes above that lead with the municipality.
            models.Index(
                fields=["crossing_into"],
                name="ctr_crossing_into",
                condition=Q(crossing_into__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return self.number

    def save(self, *args, **kwargs):
        if self._state.adding:
            self.set_crossing_into()
        super().save(*args, **kwargs)

    def set_crossing_into(self) -> None:
        """What save() sets on a new CTR (also the issue path's own INSERT, issue_writes)."""
        if self.destination_facility_id is not None:
            # The facility the issue path resolved is already loaded: no query.
            self.crossing_into_id = crossed_into(
                self.municipality_id, self.destination_facility.municipality_id
            )

    @property
    def declared_generator_name(self) -> str:
        """The generator's name as this CTR declares it (what the documents print); CTRs
        stored without one (before the field, or by hand) show the registry's."""
        return self.generator_name or self.generator.name

    def parameters(self) -> MunicipalParameters:
        """The municipality's parameters in force on the transport date: every rule, alert and
        fee judges the CTR by its own day's set, whenever it is checked (at issue, at
        reception, on a correction)."""
        return self.municipality.parameters_on(self.transport_date)

    @property
    def is_large_volume(self) -> bool:
        # Lei 3.978/2007 art. 12 §3: the limit of the transport date's set.
        return self.total_volume_m3 > self.parameters().small_volume_limit_m3

    @property
    def goes_to_pev(self) -> bool:
        return self.destination_facility.kind == FacilityKind.PEV

    @property
    def is_onward(self) -> bool:
        return self.origin_facility_id is not None


class CTRWaste(models.Model):
    ctr = models.ForeignKey(CTR, on_delete=models.CASCADE, related_name="waste", verbose_name="CTR")
    waste_class = models.CharField("classe", max_length=12, choices=CTRWasteClass.choices)
    volume_m3 = models.DecimalField("volume (m³)", max_digits=8, decimal_places=3)
    description = models.CharField("descrição", max_length=300, blank=True)

    objects = scoped(via="ctr")

    class Meta:
        verbose_name = "resíduo do CTR"
        verbose_name_plural = "resíduos do CTR"
        constraints = [
            models.CheckConstraint(condition=Q(volume_m3__gt=0), name="ctr_waste_volume_positive")
        ]


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


class NumberSequence(models.Model):
    """Last CTR number given per municipality and year. Incremented inside the issuing
    transaction (INSERT … ON CONFLICT DO UPDATE … RETURNING), so a failed issue rolls its
    number back and concurrent issues queue on the row: no gaps, no duplicates."""

    municipality = models.ForeignKey(Municipality, on_delete=models.CASCADE)
    year = models.PositiveSmallIntegerField()
    last_value = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["municipality", "year"], name="ctr_number_seq_unique")
        ]


class CTRAction(models.TextChoices):
    ISSUE = "issue", "Emissão"
    RECEIVE = "receive", "Recebimento"
    REFUSE = "refuse", "Recusa"
    CANCEL = "cancel", "Cancelamento"
    # The generator confirms the load left its worksite (generators.confirmation): the status
    # does not change.
    CONFIRM_DEPARTURE = "confirm_departure", "Confirmação do gerador"
    # A correction after reception: proposed by the transporter or the receiver,
    # decided by the counterpart or, when they disagree, by the Núcleo. The status does not
    # change; an approved correction changes the CTR's values, the event keeps the originals.
    CORRECTION_PROPOSED = "correction_proposed", "Correção proposta"
    CORRECTION_APPROVED = "correction_approved", "Correção aprovada"
    CORRECTION_REFUSED = "correction_refused", "Correção recusada"
    # A refused correction sent to the Núcleo (ctr/corrections.py).
    CORRECTION_ESCALATED = "correction_escalated", "Correção enviada ao Núcleo"


class CTREvent(models.Model):
    """Append-only history of a CTR; the database refuses UPDATE and DELETE (migration)."""

    ctr = models.ForeignKey(
        CTR, on_delete=models.PROTECT, related_name="events", verbose_name="CTR"
    )
    at = models.DateTimeField("quando", default=timezone.now)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="quem"
    )
    action = models.CharField("ação", max_length=20, choices=CTRAction.choices)
    from_status = models.CharField("de", max_length=10, blank=True, choices=CTRStatus.choices)
    to_status = models.CharField("para", max_length=10, choices=CTRStatus.choices)
    data = models.JSONField("dados", default=dict, blank=True)

    objects = scoped(via="ctr")

    class Meta:
        verbose_name = "evento do CTR"
        verbose_name_plural = "eventos do CTR"
        ordering = ["at", "pk"]


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


class CustodyAllocation(models.Model):
    """One piece of the FIFO allocation at a facility that ships on (ctr/custody.py): `volume_m3`
    of the inbound line `inbound` left in the onward line `outbound`, or was processed on site
    (`processing`), or is still in stock (neither). An outbound piece without an inbound one is
    volume shipped past what was received (the sorting tolerance). Derived data: rebuilt per
    facility from the CTRs whenever they change, never edited."""

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


# The verification code's letters: no 0/O, 1/I/L or U/V to misread on paper (as the dumping
# reports' protocols).
CERTIFICATE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
# The Habite-se declaration's codes (generators.declarations), HAB-XXXX-XXXX-XXXX: here, below
# generators, so that /verificar/ reads them without importing the app above ctr.
DECLARATION_CODE_PREFIX = "HAB"


def new_verification_code(prefix: str) -> str:
    """PREFIX-XXXX-XXXX-XXXX: 30^12 codes, unguessable, so that nobody walks through the public
    pages of other people's documents (the certificate's CDF, the Habite-se declaration's)."""
    code = "".join(secrets.choice(CERTIFICATE_ALPHABET) for _ in range(12))
    return f"{prefix}-{code[:4]}-{code[4:8]}-{code[8:]}"


def new_certificate_code() -> str:
    return new_verification_code("CDF")


class DestinationCertificate(models.Model):
    """A Certificado de Destinação Final as issued (ctr/certificates.py, Lei 3.978/2007 art. 9
    p.ú. II and art. 13 p.ú.): what it said, about whom, when, by whom. `content` holds the
    certificate's facts as they were; `digest` is their SHA-256, so issuing again while nothing
    changed gives back the same certificate (the same code), and the public page can tell a
    certificate whose chain changed since. Never edited nor deleted: a paper in someone's hands
    points to it."""

    code = models.CharField("código de verificação", max_length=20, unique=True)
    digest = models.CharField("resumo do conteúdo (SHA-256)", max_length=64, unique=True)
    worksite = models.ForeignKey(
        Worksite, on_delete=models.PROTECT, null=True, related_name="+", verbose_name="obra"
    )
    generator = models.ForeignKey(
        Generator, on_delete=models.PROTECT, related_name="+", verbose_name="gerador"
    )
    date_from = models.DateField("período desde", null=True)
    date_to = models.DateField("período até", null=True)
    # Set when only this transporter's CTRs are covered (the transporter proves the
    # destination of the loads it carried, art. 13 p.ú.).
    transporter = models.ForeignKey(
        Transporter, on_delete=models.PROTECT, null=True, related_name="+"
    )
    content = models.JSONField("conteúdo emitido")
    conclusive = models.BooleanField("conclusivo")
    issued_at = models.DateTimeField("emitido em", default=timezone.now)
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="emitido por",
    )

    class Meta:
        verbose_name = "certificado de destinação final"
        verbose_name_plural = "certificados de destinação final"

    def __str__(self) -> str:
        return self.code


# --- Idempotency keys ---


class IdempotencyKey(models.Model):
    """A client's `Idempotency-Key` and the first response to it (ctr/idempotency.py).

    Inserted before the operation runs and completed (`status`, `body`) in the operation's own
    transaction, so a committed key always has its response and a committed operation always
    has its key. One key per user: another user's key never replays this one."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        # The unique (user, key) index starts with user_id: a second index only costs writes.
        db_index=False,
    )
    key = models.CharField("chave", max_length=255)
    method = models.CharField("método", max_length=10)
    path = models.CharField("caminho", max_length=300)
    fingerprint = models.CharField("resumo do corpo (SHA-256)", max_length=64)
    created_at = models.DateTimeField("recebida em", default=timezone.now)
    # Null only inside the first request's transaction: never seen committed.
    status = models.PositiveSmallIntegerField("status da resposta", null=True)
    content_type = models.CharField("tipo da resposta", max_length=100, blank=True)
    body = models.BinaryField("corpo da resposta", default=b"")

    class Meta:
        verbose_name = "chave de idempotência"
        verbose_name_plural = "chaves de idempotência"
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_per_user"),
        ]
        # The purge deletes by age (manage.py purge_idempotency_keys).
        indexes = [models.Index(fields=["created_at"], name="idempotency_key_created")]

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({self.key})"


# --- CTR templates ---
class CTRTemplate(models.Model):
    """A load the transporter carries again and again ("CTR Modelo", as SIGOR's and the
    federal MTR's): everything a CTR declares but the day, with the volumes to confirm. It is
    not a CTR and proves nothing: issuing from it builds an IssueRequest that every rule of the
    day checks again (ctr.ctr_templates.issue)."""

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


# --- Corrections after reception ---


class CorrectionSide(models.TextChoices):
    """Who proposes and who decides a correction: the two parties of the reception, and the
    Núcleo when they disagree."""

    TRANSPORTER = "transporter", "transportador"
    FACILITY = "facility", "área de destino"
    # Not "nucleo": that is also a username shown on pages (tests: no code shown as text).
    NUCLEO = "management", "Núcleo Permanente de Gestão"


class CorrectionStatus(models.TextChoices):
    PROPOSED = "proposed", "Proposta"
    APPROVED = "approved", "Aprovada"
    REFUSED = "refused", "Recusada"
    ESCALATED = "escalated", "Enviada ao Núcleo"
    DECIDED = "decided", "Decidida pelo Núcleo"


# Awaiting someone's decision: at most one per CTR (ctr_correction_one_open).
OPEN_CORRECTION_STATUSES = (CorrectionStatus.PROPOSED, CorrectionStatus.ESCALATED)


class CTRCorrection(models.Model):
    """A correction of a received CTR (ctr/corrections.py), as SIGOR's adjustments and
    Trackdéchets' revisions: proposed by the transporter or the receiver with a reason,
    approved or refused by the other, decided by the Núcleo when they disagree. `original`
    and `changes` hold the values before and the ones proposed (only the fields that change);
    the CTR's history (CTREvent) keeps them too, append-only. Applied when `applied`."""

    ctr = models.ForeignKey(
        CTR, on_delete=models.PROTECT, related_name="corrections", verbose_name="CTR"
    )
    status = models.CharField(
        "situação",
        max_length=10,
        choices=CorrectionStatus.choices,
        default=CorrectionStatus.PROPOSED,
    )
    proposed_side = models.CharField(
        "proposta por (parte)", max_length=12, choices=CorrectionSide.choices
    )
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="proposta por",
    )
    proposed_at = models.DateTimeField("proposta em", default=timezone.now)
    reason = models.TextField("motivo")
    original = models.JSONField("valores originais")
    changes = models.JSONField("valores propostos")
    # The counterpart's answer (a refusal says why).
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="respondida por",
    )
    answered_at = models.DateTimeField("respondida em", null=True, blank=True)
    answer_note = models.TextField("motivo da recusa", blank=True)
    escalated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="enviada ao Núcleo por",
    )
    escalated_at = models.DateTimeField("enviada ao Núcleo em", null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="decidida pelo Núcleo por",
    )
    decided_at = models.DateTimeField("decidida em", null=True, blank=True)
    note = models.TextField("nota do Núcleo", blank=True)
    applied = models.BooleanField("aplicada ao CTR", default=False)

    objects = scoped(via="ctr")

    class Meta:
        verbose_name = "correção do CTR"
        verbose_name_plural = "correções do CTR"
        ordering = ["proposed_at", "pk"]
        constraints = [
            # One correction awaiting a decision per CTR: two proposals at once meet here.
            models.UniqueConstraint(
                fields=["ctr"],
                condition=Q(status__in=["proposed", "escalated"]),
                name="ctr_correction_one_open",
            ),
        ]

    def __str__(self) -> str:
        return f"Correção {self.pk} do {self.ctr}"

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_CORRECTION_STATUSES

    @property
    def counterpart(self) -> str:
        return (
            CorrectionSide.FACILITY
            if self.proposed_side == CorrectionSide.TRANSPORTER
            else CorrectionSide.TRANSPORTER
        )
