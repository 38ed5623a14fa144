"""Municipalities, bacias de captação and the licensed receiving network (Lei 3.978/2007)."""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.contrib.gis.db import models
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db.models import Exists, OuterRef, Q


class WasteClass(models.TextChoices):
    """CONAMA 307/348 classes (Lei 3.978/2007 art. 3 XV) plus resíduos volumosos (art. 3 XVII)."""

    A = "A", "Classe A (agregados: concreto, tijolo, solo…)"
    B = "B", "Classe B (recicláveis: plástico, papel, metal, vidro, madeira, gesso)"
    C = "C", "Classe C (sem tecnologia de reciclagem viável)"
    D = "D", "Classe D (perigosos: tintas, solventes, amianto…)"
    VOLUMOSO = "VOLUMOSO", "Resíduos volumosos (móveis, podas, grandes embalagens)"


class FacilityKind(models.TextChoices):
    # Lei 3.978/2007 art. 14 §2: the four kinds of the receiving network.
    PEV = "PEV", "Ponto de Entrega Voluntária (PEV)"
    ATT = "ATT", "Área de Transbordo e Triagem (ATT)"
    RECYCLING = "RECYCLING", "Área de Reciclagem"
    LANDFILL = "LANDFILL", "Aterro de RCC"


# Short names for tables, charts and spreadsheets, where the full label does not fit; the
# codes (RECYCLING, VOLUMOSO) are for data exchange, never for a reader.
FACILITY_KIND_SHORT = {
    FacilityKind.PEV: "PEV",
    FacilityKind.ATT: "ATT",
    FacilityKind.RECYCLING: "Área de reciclagem",
    FacilityKind.LANDFILL: "Aterro de RCC",
}
WASTE_CLASS_SHORT = {
    WasteClass.A: "Classe A",
    WasteClass.B: "Classe B",
    WasteClass.C: "Classe C",
    WasteClass.D: "Classe D",
    WasteClass.VOLUMOSO: "Volumosos",
    # Declared on a CTR only to be refused (ctr.models.CTRWasteClass).
    "DOMICILIAR": "Domiciliar (proibido)",
    "INDUSTRIAL": "Industrial (proibido)",
    "SAUDE": "Serviço de saúde (proibido)",
}


def facility_kind_short(kind: str) -> str:
    return FACILITY_KIND_SHORT.get(kind, kind)


def waste_class_short(code: str) -> str:
    return WASTE_CLASS_SHORT.get(code, code)


# What each kind receives unless the municipality says otherwise.
DEFAULT_ACCEPTED_CLASSES: dict[str, list[str]] = {
    # art. 3 XII: small volumes of RCC and volumosos, sorted on site (NBR 15.112). Class D
    # (hazardous) needs its own licensed destination (CONAMA 307 art. 10 IV), so no default.
    FacilityKind.PEV: [WasteClass.A, WasteClass.B, WasteClass.C, WasteClass.VOLUMOSO],
    # art. 3 III: RCC and volumosos for sorting (NBR 15.112).
    FacilityKind.ATT: [WasteClass.A, WasteClass.B, WasteClass.C, WasteClass.VOLUMOSO],
    # art. 3 II: class A already sorted (NBR 15.114).
    FacilityKind.RECYCLING: [WasteClass.A],
    # art. 3 IV and art. 18 sole §: class A only (NBR 15.113).
    FacilityKind.LANDFILL: [WasteClass.A],
}


def default_accepted_classes(kind: str) -> list[str]:
    return [str(c) for c in DEFAULT_ACCEPTED_CLASSES[FacilityKind(kind)]]


DEFAULT_SORTING_TOLERANCE_PCT = "10"


def default_sorting_tolerance() -> dict[str, str]:
    return {c.value: DEFAULT_SORTING_TOLERANCE_PCT for c in WasteClass}


def validate_sorting_tolerance(value) -> None:
    """A class of the network to a percentage of zero or more (the SQL casts it to numeric)."""
    if not isinstance(value, dict):
        raise ValidationError("Informe um objeto: classe → porcentagem.")
    for key, pct in value.items():
        if key not in WasteClass.values:
            raise ValidationError(f"Classe desconhecida: {key}.")
        try:
            number = Decimal(str(pct))
        except ArithmeticError:
            raise ValidationError(f"Tolerância inválida para a classe {key}: {pct}.") from None
        if not number.is_finite() or number < 0:
            raise ValidationError(f"Tolerância inválida para a classe {key}: {pct}.")


class Municipality(models.Model):
    ibge_code = models.CharField(
        "código IBGE",
        max_length=7,
        unique=True,
        validators=[RegexValidator(r"^\d{7}$", "O código IBGE tem 7 dígitos.")],
    )
    name = models.CharField("nome", max_length=120)
    uf = models.CharField("UF", max_length=2)
    # Multipolygon in WGS 84: coastal municipalities have islands.
    boundary = models.MultiPolygonField("limite", srid=4326, spatial_index=True)
    boundary_source = models.CharField("fonte do limite", max_length=300, blank=True)

    # Legal parameters: the law's figures are data, editable by the municipality.
    small_volume_limit_m3 = models.DecimalField(
        "limite de pequeno volume (m³ por descarga)",
        max_digits=6,
        decimal_places=3,
        default=Decimal("1.000"),
        validators=[MinValueValidator(Decimal("0"))],
        help_text="Lei 3.978/2007 art. 3 X-XI e art. 12 §1-2: até 1 m³ por descarga no PEV.",
    )
    gps_tolerance_m = models.DecimalField(
        "tolerância do GPS (m)",
        max_digits=6,
        decimal_places=1,
        default=Decimal("15.0"),
        validators=[MinValueValidator(Decimal("0"))],
        help_text="Distância máxima entre o ponto de descarga e o polígono da área licenciada.",
    )
    ufesp_value = models.DecimalField(
        "valor da UFESP (R$)",
        max_digits=10,
        decimal_places=2,
        default=Decimal("37.02"),
        validators=[MinValueValidator(Decimal("0"))],
        help_text="Lei 3.978/2007 art. 12 §3: uma UFESP por descarga de grande volume.",
    )
    ufesp_year = models.PositiveSmallIntegerField("ano da UFESP", default=2025)
    received_volume_tolerance_pct = models.DecimalField(
        "tolerância de volume no recebimento (%)",
        max_digits=5,
        decimal_places=2,
        default=Decimal("10.00"),
        validators=[MinValueValidator(Decimal("0"))],
        help_text="Diferença admitida entre o volume declarado e o recebido (art. 13 p.ú.).",
    )
    # Sorting changes volumes (crushing, separating, re-loading): how far the onward shipments
    # of a class may exceed what the facility received of it, in % of the received volume.
    # Default 10 % for every class, the reception's tolerance: both are the same estimate of
    # a load's volume by eye, and a municipality that measures its ATTs can set each class.
    sorting_tolerance_pct = models.JSONField(
        "tolerância de triagem por classe (%)",
        default=default_sorting_tolerance,
        blank=True,
        validators=[validate_sorting_tolerance],
        help_text="Quanto a saída de uma classe pode exceder o recebido dela (art. 3 III).",
    )
    stock_alert_days = models.PositiveIntegerField(
        "alerta de estoque parado (dias)",
        default=90,
        help_text="Estoque acima de zero por mais dias que isto é alerta: a área de triagem "
        "não pode virar bota-fora (art. 3 III, art. 2 §1).",
    )
    open_ctr_alert_hours = models.PositiveIntegerField(
        "alerta de CTR aberto (horas)",
        default=48,
        help_text="CTR não recebido após este prazo é sinal de descarte irregular (art. 2 §1).",
    )

    class Meta:
        verbose_name = "município"
        verbose_name_plural = "municípios"
        ordering = ["uf", "name"]

    def __str__(self) -> str:
        return f"{self.name}/{self.uf}"

    def sorting_tolerance_of(self, waste_class: str) -> Decimal:
        return Decimal(
            str((self.sorting_tolerance_pct or {}).get(waste_class, DEFAULT_SORTING_TOLERANCE_PCT))
        )


class MunicipalityPiece(models.Model):
    """A small piece of a boundary (ST_Subdivide), for fast point lookups.

    A municipal boundary has hundreds of vertices and is TOASTed; testing a point against
    pieces of at most a few dozen vertices, found through the GiST index, is far cheaper
    (MapIt does the same).
    """

    municipality = models.ForeignKey(Municipality, on_delete=models.CASCADE, related_name="pieces")
    geom = models.PolygonField(srid=4326, spatial_index=True)

    class Meta:
        verbose_name = "parte do limite municipal"
        verbose_name_plural = "partes dos limites municipais"


def licensed_exists(day: datetime.date) -> Exists:
    """Whether the facility of the outer query has a license in force on `day`."""
    return Exists(FacilityLicense.objects.valid_on(day).filter(facility=OuterRef("pk")))


class FacilityQuerySet(models.QuerySet):
    def licensed_on(self, day: datetime.date) -> FacilityQuerySet:
        """Facilities whose license is valid on `day` (Lei 3.978/2007 art. 14 §1)."""
        return self.filter(licensed_exists(day))


class ReceivingFacility(models.Model):
    Kind = FacilityKind

    code = models.CharField(
        "código",
        max_length=40,
        unique=True,
        null=True,
        blank=True,
        help_text="Identificador do cadastro municipal; a importação atualiza pelo código.",
    )
    kind = models.CharField("tipo", max_length=12, choices=FacilityKind.choices)
    name = models.CharField("nome", max_length=200)
    operator = models.CharField("operador", max_length=200, blank=True)
    address = models.CharField("endereço", max_length=300, blank=True)
    municipality = models.ForeignKey(
        Municipality,
        verbose_name="município",
        on_delete=models.PROTECT,
        related_name="facilities",
        null=True,
        blank=True,
    )
    # A facility is an area, not a point: a load counts only if discharged inside it
    # (art. 13 sole §). Multipolygon: some areas are split by a road or a river.
    area = models.MultiPolygonField("área", srid=4326, spatial_index=True)
    accepted_classes = ArrayField(
        models.CharField(max_length=10, choices=WasteClass.choices),
        verbose_name="classes aceitas",
        blank=True,
        default=list,
        help_text="Vazio: o padrão do tipo (ver docs).",
    )
    capacity_m3_per_day = models.DecimalField(
        "capacidade (m³/dia)", max_digits=10, decimal_places=2, null=True, blank=True
    )

    objects = FacilityQuerySet.as_manager()

    class Meta:
        verbose_name = "área de recebimento"
        verbose_name_plural = "áreas de recebimento"
        ordering = ["kind", "name"]
        indexes = [models.Index(fields=["kind"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.name}"

    def save(self, *args, **kwargs):
        if not self.accepted_classes:
            self.accepted_classes = default_accepted_classes(self.kind)
        super().save(*args, **kwargs)

    def license_on(self, day: datetime.date) -> FacilityLicense | None:
        return FacilityLicense.objects.valid_on(day).filter(facility=self).first()


class LicenseStatus(models.TextChoices):
    ACTIVE = "ACTIVE", "Ativa"
    SUSPENDED = "SUSPENDED", "Suspensa"
    REVOKED = "REVOKED", "Cassada"


# --- validity on a day, written once ------------------------------------------------------------
# A facility's license (art. 14 §1) and a transporter's registration (art. 13) are valid from
# valid_from to valid_until, both days included; without an end date, open-ended. A license is
# in force on a day when it is valid then and was not suspended or revoked on or before that
# day (status_since). One test in three forms: SQL for raw queries (valid_on_sql, period_sql,
# licensed_sql), a queryset method (LicenseQuerySet.valid_on, whence licensed_exists and
# FacilityQuerySet.licensed_on) and, for rows in memory, FacilityLicense.is_valid_on and
# in_period; tests/pev_network/test_network_services.py holds them to each other.


def in_period(valid_from: datetime.date, valid_until: datetime.date | None, day) -> bool:
    return valid_from <= day and (valid_until is None or valid_until >= day)


def period_q(day: datetime.date) -> Q:
    """Queryset condition: `day` inside the row's valid_from..valid_until (in_period as a Q)."""
    return Q(valid_from__lte=day) & (Q(valid_until__gte=day) | Q(valid_until__isnull=True))


def period_sql(valid_from: str, valid_until: str, day: str) -> str:
    """SQL condition: `day` inside the period; each argument is an SQL expression."""
    return f"({valid_from} <= {day} AND ({valid_until} IS NULL OR {valid_until} >= {day}))"


def valid_on_sql(alias: str, day: str = "%(day)s") -> str:
    """SQL condition: the license row `alias` is in force on `day` (an SQL expression)."""
    return (
        f"({period_sql(f'{alias}.valid_from', f'{alias}.valid_until', day)}"
        f" AND ({alias}.status = '{LicenseStatus.ACTIVE.value}' OR {alias}.status_since > {day}))"
    )


def licensed_sql(facility: str, day: str = "%(day)s") -> str:
    """SQL condition: the facility of id `facility` has a license in force on `day`."""
    return (
        f"EXISTS (SELECT 1 FROM {FacilityLicense._meta.db_table} l"
        f" WHERE l.facility_id = {facility} AND {valid_on_sql('l', day)})"
    )


class LicenseQuerySet(models.QuerySet):
    def valid_on(self, day: datetime.date) -> LicenseQuerySet:
        """Licenses in force on `day` (valid_on_sql as a queryset)."""
        return self.filter(period_q(day), Q(status=LicenseStatus.ACTIVE) | Q(status_since__gt=day))


class FacilityLicense(models.Model):
    Status = LicenseStatus

    facility = models.ForeignKey(
        ReceivingFacility, on_delete=models.CASCADE, related_name="licenses", verbose_name="área"
    )
    number = models.CharField("número", max_length=60)
    issuer = models.CharField("órgão emissor", max_length=120)
    valid_from = models.DateField("válida desde")
    valid_until = models.DateField("válida até", null=True, blank=True)
    status = models.CharField(
        "situação", max_length=10, choices=LicenseStatus.choices, default=LicenseStatus.ACTIVE
    )
    # A suspension or revocation takes effect on a day; CTRs from before it stay valid.
    status_since = models.DateField(
        "situação desde",
        null=True,
        blank=True,
        help_text="Data em que a suspensão ou cassação passou a valer.",
    )

    objects = LicenseQuerySet.as_manager()

    class Meta:
        verbose_name = "licença"
        verbose_name_plural = "licenças"
        ordering = ["-valid_from"]
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "number"], name="license_issuer_number_unique"
            ),
            models.CheckConstraint(
                condition=Q(valid_until__isnull=True) | Q(valid_until__gte=models.F("valid_from")),
                name="license_period_ordered",
                violation_error_message="A validade termina antes de começar.",
            ),
            models.CheckConstraint(
                condition=Q(status=LicenseStatus.ACTIVE) | Q(status_since__isnull=False),
                name="license_status_dated",
                violation_error_message="Informe desde quando a licença está suspensa ou cassada.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.number} ({self.issuer})"

    def is_valid_on(self, day: datetime.date) -> bool:
        """LicenseQuerySet.valid_on for a license already in memory."""
        return in_period(self.valid_from, self.valid_until, day) and (
            self.status == LicenseStatus.ACTIVE
            or (self.status_since is not None and self.status_since > day)
        )

    def clean(self):
        if self.status != LicenseStatus.ACTIVE and not self.status_since:
            raise ValidationError(
                {"status_since": "Informe desde quando a licença está suspensa ou cassada."}
            )


class CatchmentBasin(models.Model):
    """Bacia de captação: part of the urban area served by one PEV (Lei 3.978/2007 art. 3 V)."""

    municipality = models.ForeignKey(
        Municipality, on_delete=models.CASCADE, related_name="basins", verbose_name="município"
    )
    code = models.CharField("código", max_length=40, blank=True)
    name = models.CharField("nome", max_length=120)
    area = models.MultiPolygonField("área", srid=4326, spatial_index=True)
    served_by = models.ForeignKey(
        ReceivingFacility,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="basins",
        verbose_name="PEV que atende",
        limit_choices_to={"kind": FacilityKind.PEV},
    )

    class Meta:
        verbose_name = "bacia de captação"
        verbose_name_plural = "bacias de captação"
        ordering = ["municipality", "name"]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        if self.served_by_id and self.served_by.kind != FacilityKind.PEV:
            raise ValidationError({"served_by": "Uma bacia de captação é atendida por um PEV."})
