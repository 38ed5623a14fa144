"""Actors and the CTR document (Lei 3.978/2007 art. 3 VI, art. 9, art. 12-13)."""

from __future__ import annotations

import datetime
import secrets
from decimal import Decimal

from django.conf import settings
from django.contrib.gis.db import models
from django.core.validators import MinValueValidator
from django.db.models import F, Func, Q, Value
from django.db.models.functions import Lower, Trim
from django.utils import timezone

from pev_network.models import (
    FacilityKind,
    Municipality,
    ReceivingFacility,
    WasteClass,
    in_period,
)

from .documents import validate_document, validate_plate


class RegistrationStatus(models.TextChoices):
    ACTIVE = "ACTIVE", "Ativo"
    SUSPENDED = "SUSPENDED", "Suspenso"
    REVOKED = "REVOKED", "Cassado"


class Transporter(models.Model):
    """Transportador de RCC e volumosos, registered with the municipality (art. 13)."""

    name = models.CharField("razão social / nome", max_length=200)
    document = models.CharField(
        "CNPJ/CPF", max_length=14, unique=True, validators=[validate_document]
    )
    registration_number = models.CharField("número do cadastro", max_length=40, unique=True)
    municipality = models.ForeignKey(
        Municipality,
        on_delete=models.PROTECT,
        related_name="transporters",
        verbose_name="município",
    )
    valid_from = models.DateField("cadastro válido desde")
    valid_until = models.DateField("cadastro válido até", null=True, blank=True)
    status = models.CharField(
        "situação", max_length=10, choices=RegistrationStatus.choices, default="ACTIVE"
    )
    # Suspension (art. 25 IV) or revocation (art. 25 V) takes effect on a day.
    status_since = models.DateField("situação desde", null=True, blank=True)
    suspended_until = models.DateField("suspenso até", null=True, blank=True)
    # Art. 12 §4 (second): a generator may carry its own waste without the license.
    is_self_generator = models.BooleanField(
        "gerador que transporta os próprios resíduos",
        default=False,
        help_text="Lei 3.978/2007 art. 12 §4: dispensa o licenciamento, mas não as demais regras.",
    )

    class Meta:
        verbose_name = "transportador"
        verbose_name_plural = "transportadores"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def registered_on(self, day: datetime.date) -> bool:
        return in_period(self.valid_from, self.valid_until, day)

    def restricted_on(self, day: datetime.date) -> str | None:
        """SUSPENDED or REVOKED when that status is in force on `day`, else None."""
        if self.status == RegistrationStatus.ACTIVE or self.status_since is None:
            return None
        if self.status_since > day:
            return None
        if (
            self.status == RegistrationStatus.SUSPENDED
            and self.suspended_until
            and day > self.suspended_until
        ):
            return None
        return self.status


class Vehicle(models.Model):
    transporter = models.ForeignKey(
        Transporter, on_delete=models.CASCADE, related_name="vehicles", verbose_name="transportador"
    )
    plate = models.CharField("placa", max_length=7, unique=True, validators=[validate_plate])
    description = models.CharField("descrição", max_length=120, blank=True)
    active = models.BooleanField("ativo", default=True)

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


class Generator(models.Model):
    """Gerador: owner/responsible of a site, or occupant with bulky waste (art. 3 VIII-IX)."""

    name = models.CharField("nome", max_length=200)
    document = models.CharField(
        "CPF/CNPJ", max_length=14, unique=True, validators=[validate_document]
    )

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


class Worksite(models.Model):
    """Obra or property where waste is generated; a large generator has a PGRCC (art. 9)."""

    generator = models.ForeignKey(
        Generator, on_delete=models.PROTECT, related_name="worksites", verbose_name="gerador"
    )
    address = models.CharField("endereço", max_length=300)
    neighbourhood = models.CharField("bairro", max_length=120, blank=True)
    location = models.PointField("localização", srid=4326, spatial_index=True)
    permit_number = models.CharField("alvará", max_length=60, blank=True)
    is_large_generator = models.BooleanField("grande gerador (PGRCC)", default=False)
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
            )
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
    # A default, not auto_now_add: historical CTRs (imports, the demo) keep their real time.
    created_at = models.DateTimeField("emitido em", default=timezone.now, db_index=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="emitido por",
    )

    class Meta:
        verbose_name = "CTR"
        verbose_name_plural = "CTRs"
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["municipality", "year", "sequence"], name="ctr_sequence_unique"
            ),
            models.CheckConstraint(condition=Q(total_volume_m3__gt=0), name="ctr_volume_positive"),
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
        ]

    def __str__(self) -> str:
        return self.number

    @property
    def declared_generator_name(self) -> str:
        """The generator's name as this CTR declares it (what the documents print); CTRs
        stored without one (before the field, or by hand) show the registry's."""
        return self.generator_name or self.generator.name

    @property
    def is_large_volume(self) -> bool:
        return self.total_volume_m3 > self.municipality.small_volume_limit_m3

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

    class Meta:
        verbose_name = "evento do CTR"
        verbose_name_plural = "eventos do CTR"
        ordering = ["at", "pk"]


class Membership(models.Model):
    """Whom a user acts for: a transporter or a receiving facility (per-object scoping).
    Núcleo and Fiscalização are Django groups and see everything."""

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

    class Meta:
        verbose_name = "vínculo de usuário"
        verbose_name_plural = "vínculos de usuários"
        constraints = [
            models.CheckConstraint(
                condition=Q(transporter__isnull=True) | Q(facility__isnull=True),
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


def new_certificate_code() -> str:
    """CDF-XXXX-XXXX-XXXX: 30^12 codes, unguessable, so that nobody walks through the public
    pages of other people's certificates."""
    code = "".join(secrets.choice(CERTIFICATE_ALPHABET) for _ in range(12))
    return f"CDF-{code[:4]}-{code[4:8]}-{code[8:]}"


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
