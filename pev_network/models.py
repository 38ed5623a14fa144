"""Municipalities, bacias de captação and the licensed receiving network (Lei 3.978/2007)."""

from __future__ import annotations

import copy
import datetime
from decimal import Decimal

from django.contrib.gis.db import models
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db.models import Exists, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from jurisdiction.scope import ScopedQuerySet


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
        number = finite_decimal(pct)
        if number is None or number < 0:
            raise ValidationError(f"Tolerância inválida para a classe {key}: {pct}.")


def finite_decimal(value) -> Decimal | None:
    """A JSON parameter's number (given as text or number), or None when it is not one."""
    try:
        number = Decimal(str(value))
    except ArithmeticError:
        return None
    return number if number.is_finite() else None


# --- the PGRCC estimator's rates (generators.estimator) -------------------------------------
# Expected waste of a work, in m³ per m² of built area, by kind of work and waste class. The
# kinds are ctr.models.WorkKind's values (pev_network is below ctr: the test of the estimator
# holds the two lists together).
WORK_KINDS = ("new_building", "renovation", "demolition")
# The published figures behind the defaults (docs/legal.md, "Índices do estimador do PGRCC"):
# - Pinto, T. P. (1999), "Metodologia para a gestão diferenciada de resíduos sólidos da
#   construção urbana" (tese, EPUSP): 150 kg of waste per m² built in new buildings, and a
#   bulk density of 1 200 kg/m³ for mixed construction waste, as a PGRCC quotes them
#   ("Geração de RCC: 150 kg/m²; densidade média dos resíduos: 1200 kg/m³ (PINTO, 1999)").
#   150 / 1 200 = 0,125 m³ per m².
# - Demolition: 1 000 kg per m², the mean "produção média de 1.000 kg/m² de construção" of
#   the studies reviewed by Negrão and Rodrigues, "Gestão de resíduos na construção civil:
#   uma busca por técnicas e ferramentas para otimizar recursos descartados". They give it
#   per m² of construction; we apply it to demolition, where the whole building becomes
#   waste, at Pinto's density: 0,8333 m³ per m².
# - Renovation: no per-m² figure was found; Pinto's new-building rate stands in until the
#   municipality measures its own (the Núcleo edits the rates).
# - The split by class (CONAMA 307 art. 3): A 74 %, B 19 %, C 6 %, D 1 % by volume, the
#   composition the same PGRCC applies to Pinto's rate; volumosos are not construction waste
#   of a permit's work (0).
GENERATION_KG_PER_M2 = {"new_building": 150, "renovation": 150, "demolition": 1000}
WASTE_DENSITY_KG_PER_M3 = 1200
COMPOSITION_PCT = {"A": 74, "B": 19, "C": 6, "D": 1, "VOLUMOSO": 0}
RATE_PLACES = Decimal("0.00001")


def default_generation_rates() -> dict[str, dict[str, str]]:
    """The defaults, computed from the figures above (so the arithmetic is on record)."""
    return {
        kind: {
            waste_class: str(
                (Decimal(kg) / WASTE_DENSITY_KG_PER_M3 * COMPOSITION_PCT[waste_class] / 100)
                .quantize(RATE_PLACES)
                .normalize()
            )
            for waste_class in WasteClass.values
        }
        for kind, kg in GENERATION_KG_PER_M2.items()
    }


def validate_generation_rates(value) -> None:
    """Each kind of work to each class of the network to m³ per m², zero or more."""
    if not isinstance(value, dict):
        raise ValidationError("Informe um objeto: tipo de obra → classe → m³ por m².")
    for kind, rates in value.items():
        if kind not in WORK_KINDS:
            raise ValidationError(f"Tipo de obra desconhecido: {kind}.")
        if not isinstance(rates, dict):
            raise ValidationError(f"Informe as classes do tipo de obra {kind}: classe → m³/m².")
        for waste_class, rate in rates.items():
            if waste_class not in WasteClass.values:
                raise ValidationError(f"Classe desconhecida em {kind}: {waste_class}.")
            number = finite_decimal(rate)
            if number is None or number < 0 or number > 10:
                raise ValidationError(
                    f"Índice inválido para {kind}, classe {waste_class}: {rate} "
                    "(m³ por m², de 0 a 10)."
                )


# The waste laws the platform knows by IBGE code, filled in when the municipality is created
# (save_municipality, the boundaries import) and by migration 0011 for one already there. The
# rule catalogue and the documents cite Lei 3.978/2007 of Guaratinguetá article by article: its
# article numbers are printed beside that law only (pev_network.letterhead).
CATALOGUE_LAW_IBGE = "3518404"
KNOWN_WASTE_LAWS = {CATALOGUE_LAW_IBGE: "Lei Municipal nº 3.978/2007"}


# Who collects the discharge fee (Lei 3.978/2007 art. 12 §3: "ao órgão gestor - CODESG").
KNOWN_FEE_COLLECTORS = {
    CATALOGUE_LAW_IBGE: "Companhia de Desenvolvimento de Guaratinguetá (CODESG)"
}


def known_waste_law(ibge_code: str) -> str:
    return KNOWN_WASTE_LAWS.get(ibge_code, "")


def known_law_fields(ibge_code: str) -> dict[str, str]:
    """What the platform knows of a new municipality's law: its citation and fee collector."""
    return {
        "waste_law": known_waste_law(ibge_code),
        "fee_collector": KNOWN_FEE_COLLECTORS.get(ibge_code, ""),
    }


class FiscalUnit(models.TextChoices):
    """The fiscal units fines and fees are set in (a framework names its own)."""

    UFESP = "UFESP", "UFESP"
    UFIR_RIO = "UFIR_RIO", "UFIR-RJ (valores convertidos pela Lei Municipal 3.145/2000)"


class UfespRateQuerySet(models.QuerySet):
    def value_of(self, year: int, unit: str = FiscalUnit.UFESP) -> Decimal | None:
        """The unit's value in reais for `year`, None when not registered."""
        return self.filter(unit=unit, year=year).values_list("value_brl", flat=True).first()


class UfespRate(models.Model):
    """Value in reais, per year, of a fiscal unit: the UFESP (São Paulo state) in which Lei
    3.978/2007 sets the discharge fee (art. 12 §3: "uma UFESP por descarga", at the value of
    the discharge's year) and the fines (paid at the value of the payment date, art. 36). The
    one home of the UFESP, read by fees (ctr) and fines (fiscalization) alike.

    Scope: none. The UFESP is São Paulo's, the same for every municipality of the state; the
    rows are global reference data edited in the admin, as the holidays of the state."""

    unit = models.CharField(
        "unidade", max_length=8, choices=FiscalUnit.choices, default=FiscalUnit.UFESP
    )
    year = models.PositiveSmallIntegerField("ano")
    value_brl = models.DecimalField(
        "valor (R$)", max_digits=10, decimal_places=4, validators=[MinValueValidator(0)]
    )

    objects = UfespRateQuerySet.as_manager()

    class Meta:
        # Moved from fiscalization: the table keeps its name.
        db_table = "fiscalization_ufesprate"
        verbose_name = "valor de unidade fiscal"
        verbose_name_plural = "valores das unidades fiscais"
        ordering = ["unit", "-year"]
        constraints = [
            models.UniqueConstraint(fields=["unit", "year"], name="fiscal_unit_value_per_year")
        ]

    def __str__(self) -> str:
        return f"{self.get_unit_display()} {self.year}: R$ {self.value_brl}"


class MunicipalityQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        return Q(pk__in=list(ids))


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
    # The printed documents and e-mails of a municipality cite its own law.
    # Empty until the municipality fills it: they then say it is not on record, never another
    # municipality's law.
    waste_law = models.CharField(
        "lei municipal de resíduos",
        max_length=200,
        blank=True,
        default="",
        help_text="Como a lei é citada nos documentos e e-mails do município, por exemplo "
        "“Lei Municipal nº 3.978/2007”. Vazio: os documentos dizem que a lei ainda não foi "
        "informada.",
    )
    # Lei 3.978/2007 art. 12 §3: the fee is paid "ao órgão gestor - CODESG" (Guaratinguetá's
    # Companhia de Desenvolvimento); another municipality names its own.
    fee_collector = models.CharField(
        "órgão que recolhe a taxa de descarga",
        max_length=200,
        blank=True,
        default="",
        help_text="A quem o transportador recolhe a taxa de descarga de grande volume, por "
        "exemplo “Companhia de Desenvolvimento de Guaratinguetá (CODESG)” (Lei 3.978/2007 "
        "art. 12 §3). Vazio: o extrato diz que o órgão ainda não foi informado.",
    )

    # A consortium's shared landfill or ATT. The waste generated here goes
    # to the areas of this municipality's plan (Lei 3.978/2007 art. 2 caput, art. 4 §2 II); a
    # municipality lists the others whose areas its CTRs may use (one way: B listed by A
    # receives A's loads, not the reverse). Rule DESTINATION_OUTSIDE_AGREEMENT reads it.
    accepted_destinations = models.ManyToManyField(
        "self",
        symmetrical=False,
        blank=True,
        related_name="destination_for",
        verbose_name="municípios cujas áreas recebem os CTRs deste",
        help_text="Consórcio ou convênio: os CTRs com origem neste município podem ter como "
        "destino as áreas licenciadas destes municípios (Lei 3.978/2007 art. 2 e art. 4 §2 II). "
        "As áreas do próprio município valem sempre.",
    )

    objects = MunicipalityQuerySet.as_manager()

    class Meta:
        verbose_name = "município"
        verbose_name_plural = "municípios"
        ordering = ["uf", "name"]

    def __str__(self) -> str:
        return f"{self.name}/{self.uf}"

    def save(self, *args, **kwargs):
        # Every municipality has a set of parameters from its first day: the law's defaults
        # until its Núcleo adds another (the readers in SQL join it without a fallback).
        created = self._state.adding
        super().save(*args, **kwargs)
        if created:
            MunicipalParameters.objects.get_or_create(municipality=self, valid_from=FIRST_SET_FROM)

    def parameters_on(self, day: datetime.date) -> MunicipalParameters:
        """The parameters in force on `day` (a CTR's transport date, or today for what has no
        CTR): the latest set that starts on or before it. Before the first set, the first; a
        municipality with none (made by bulk_create) has the law's defaults."""
        sets = MunicipalParameters.objects.filter(municipality_id=self.pk)
        found = sets.filter(valid_from__lte=day).order_by("-valid_from").first()
        found = found or sets.order_by("valid_from").first()
        return found or MunicipalParameters(municipality=self, valid_from=FIRST_SET_FROM)


# The parameters a municipality sets, by name: what MunicipalParameters holds beside its
# municipality and its start date.
def parameter_names() -> tuple[str, ...]:
    return tuple(
        f.name
        for f in MunicipalParameters._meta.concrete_fields
        if f.name not in ("id", "municipality", "valid_from", "act")
    )


# The set that precedes every set a Núcleo adds: the parameters had no dates before they were
# sets, and governed every CTR on record (migration 0016).
FIRST_SET_FROM = datetime.date(2000, 1, 1)


class MunicipalParametersQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        return Q(municipality_id__in=list(ids))


class MunicipalParameters(models.Model):
    """A municipality's legal and operating parameters from a date on, like a penalty
    framework: the law's figures are data the municipality edits, and a CTR is judged by the
    set in force on its transport date, whenever it is checked (at issue, at reception, on a
    correction). A later set changes what comes after its date, never what came before.

    Scope: the municipality's (its Núcleo edits them; everyone may read them, as they are in
    the public law)."""

    municipality = models.ForeignKey(
        "Municipality",
        on_delete=models.CASCADE,
        related_name="parameter_sets",
        verbose_name="município",
    )
    valid_from = models.DateField(
        "vigente desde",
        help_text="Os CTRs com data de transporte a partir deste dia seguem estes parâmetros.",
    )
    act = models.CharField(
        "ato que os fixou",
        max_length=300,
        blank=True,
        default="",
        help_text="A lei, o decreto ou a portaria que fixou estes valores, se houver.",
    )

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
    # The PGRCC estimator (art. 9, generators.estimator): m³ per m² by kind of work and class.
    waste_generation_rates = models.JSONField(
        "índices de geração de resíduos (m³ por m² construído)",
        default=default_generation_rates,
        blank=True,
        validators=[validate_generation_rates],
        help_text="Por tipo de obra e classe: o estimador do PGRCC (art. 9). Padrão: Pinto "
        "(1999), 150 kg/m² a 1 200 kg/m³; ver docs/legal.md.",
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
    # Art. 9 caput: a generator whose works need a building permit writes a PGRCC. Its
    # sole § III ("para as construções de até …") spares small constructions, but the text we
    # hold stops there: the size is the municipality's to set; 0 takes the caput as it reads.
    large_generator_min_area_m2 = models.DecimalField(
        "grande gerador a partir de (m² construídos, com alvará)",
        max_digits=10,
        decimal_places=2,
        default=Decimal("0"),
        validators=[MinValueValidator(Decimal("0"))],
        help_text="Lei 3.978/2007 art. 9: a obra com alvará e pelo menos esta área construída "
        "é de grande gerador e apresenta o PGRCC (0: toda obra com alvará).",
    )
    # The generator confirms each CTR's departure, as in São Paulo's SIGOR.
    # Off by default: Lei 3.978/2007 does not require it (the CTR is the transporter's
    # document, art. 3 VI and art. 13 p.ú.; no article asks the generator to confirm it).
    generator_confirmation_required = models.BooleanField(
        "exigir a confirmação do gerador",
        default=False,
        help_text="Opcional: a Lei 3.978/2007 não exige (o CTR é do transportador, art. 3 VI e "
        "art. 13 p.ú.). Ligado, o gerador confirma a saída de cada carga da obra, como no "
        "SIGOR de São Paulo, e o CTR sem confirmação vai ao Núcleo após o prazo abaixo.",
    )
    generator_confirmation_hours = models.PositiveIntegerField(
        "prazo da confirmação do gerador (horas)",
        default=24,
        validators=[MinValueValidator(1)],
        help_text="Horas, desde o início do transporte, para o gerador confirmar a saída da "
        "carga; depois o CTR aparece ao Núcleo como não confirmado.",
    )
    # Suspect worksites (generators/suspects.py): the law sets no figure;
    # the defaults and their reasons are in docs/legal.md ("Obras suspeitas").
    worksite_overdue_days = models.PositiveIntegerField(
        "obra suspeita: dias além do término previsto",
        default=30,
        help_text="Obra sem término declarado há mais dias que isto depois do término "
        "previsto é alerta (art. 9: o PGRCC descreve uma obra que já devia ter acabado).",
    )
    worksite_low_volume_pct = models.DecimalField(
        "obra suspeita: transportado abaixo de (% do previsto até a data)",
        max_digits=5,
        decimal_places=2,
        default=Decimal("50.00"),
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("100"))],
        help_text="Transportado abaixo desta parte do volume do PGRCC proporcional ao prazo "
        "decorrido é alerta de descarte irregular (art. 9 p.ú. I, art. 2 §1).",
    )
    worksite_low_volume_min_elapsed_pct = models.DecimalField(
        "obra suspeita: volume conferido a partir de (% do prazo)",
        max_digits=5,
        decimal_places=2,
        default=Decimal("25.00"),
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("100"))],
        help_text="Antes desta parte do prazo da obra o volume transportado não é comparado.",
    )
    large_generator_idle_days = models.PositiveIntegerField(
        "grande gerador sem CTR (dias)",
        default=30,
        help_text="Obra ativa de grande gerador sem CTR há mais dias que isto é alerta "
        "(art. 9: o resíduo da obra está saindo sem CTR, ou a obra parou sem avisar).",
    )
    # Travel-time plausibility at reception (ctr.plausibility): the law sets
    # no figure. The road distance is the straight line times the detour factor; the trip is
    # too fast below it at the top speed, too slow above it at the bottom speed plus the slack.
    # The defaults and their reasons (what is a published figure, what is judgement) are in
    # docs/legal.md ("Plausibilidade do recebimento").
    travel_check_enabled = models.BooleanField(
        "conferir o tempo de viagem no recebimento",
        default=True,
        help_text="Desligado, o recebimento não compara o tempo desde a partida com a "
        "distância (para quem ainda emite o CTR fora da hora da saída da carga).",
    )
    travel_detour_factor = models.DecimalField(
        "viagem: fator de desvio (estrada ÷ linha reta)",
        max_digits=4,
        decimal_places=2,
        default=Decimal("1.40"),
        validators=[MinValueValidator(Decimal("1"))],
        help_text="Quanto o caminho pelas ruas é mais longo que a linha reta da origem à área "
        "de destino (1,4: o alto da faixa de 1,2 a 1,4 medida em redes viárias).",
    )
    travel_max_speed_kmh = models.DecimalField(
        "viagem: velocidade média máxima (km/h)",
        max_digits=5,
        decimal_places=1,
        default=Decimal("80.0"),
        validators=[MinValueValidator(Decimal("1"))],
        help_text="Mais rápido que isto em média, da partida ao recebimento, não é possível "
        "(80 km/h: o maior limite urbano do CTB, art. 61 §1 I a).",
    )
    travel_min_speed_kmh = models.DecimalField(
        "viagem: velocidade média mínima (km/h)",
        max_digits=5,
        decimal_places=1,
        default=Decimal("5.0"),
        validators=[MinValueValidator(Decimal("0.1"))],
        help_text="Mais lento que isto em média (além da folga abaixo) sugere um desvio no "
        "caminho (5 km/h: o passo de quem anda; um caminhão no trânsito faz bem mais).",
    )
    travel_slack_minutes = models.PositiveIntegerField(
        "viagem: folga para carga, fila e pesagem (min)",
        default=60,
        help_text="Somada ao tempo mais lento: a espera no portão, a pesagem e a conferência "
        "não são desvio.",
    )

    # Offline provisional CTRs (ctr/field/offline.py, rule PROVISIONAL_SYNC_LATE): the law sets no
    # figure; a day covers a shift out of coverage and the night after it (docs/legal.md).
    provisional_sync_max_hours = models.PositiveIntegerField(
        "CTR provisório: prazo para sincronizar (horas)",
        default=24,
        db_default=24,
        help_text="CTR emitido sem conexão (provisório) que chega ao sistema depois deste prazo "
        "desde a saída recebe um aviso (art. 3 VI, art. 13).",
    )

    objects = MunicipalParametersQuerySet.as_manager()

    class Meta:
        verbose_name = "parâmetros do município"
        verbose_name_plural = "parâmetros do município (por vigência)"
        ordering = ["municipality", "-valid_from"]
        constraints = [
            models.UniqueConstraint(
                fields=["municipality", "valid_from"], name="one_parameter_set_per_start_day"
            )
        ]

    def __str__(self) -> str:
        return f"Parâmetros de {self.municipality} desde {self.valid_from:%d/%m/%Y}"

    def take_values_of(self, other: MunicipalParameters) -> None:
        """Every parameter of `other` (not its municipality, start or act); JSON parameters
        are deep copies, so the two sets never share a dict."""
        for name in parameter_names():
            setattr(self, name, copy.deepcopy(getattr(other, name)))

    def in_force_by(self, day: datetime.date) -> bool:
        """Whether the set has started by `day` (then it may have judged CTRs: it is kept as
        it is, to judge them again the same way on a correction)."""
        return self.valid_from is not None and self.valid_from <= day

    def clean(self):
        # In clean(), not in a form: the admin, the pages and the scripts that validate all
        # meet the same two rules. A later set changes what comes after its date, and a set
        # that has started judged the CTRs of its days (a correction re-checks them by it).
        super().clean()
        today = timezone.localdate()
        stored = MunicipalParameters.objects.filter(pk=self.pk).first() if self.pk else None
        if stored is not None and stored.in_force_by(today):
            changed = [
                str(f.verbose_name)
                for f in self._meta.concrete_fields
                if getattr(self, f.attname) != getattr(stored, f.attname)
            ]
            if changed:
                raise ValidationError(
                    f"Os parâmetros vigentes desde {stored.valid_from:%d/%m/%Y} já valem para "
                    f"CTRs e não mudam (alterado: {'; '.join(changed)}). Para mudar um valor, "
                    f"cadastre um novo conjunto vigente a partir de hoje ({today:%d/%m/%Y}) ou "
                    "depois.",
                    code="parameters_in_force",
                )
        new_start = stored is None or stored.valid_from != self.valid_from
        if new_start and self.valid_from is not None and self.valid_from < today:
            raise ValidationError(
                {
                    "valid_from": ValidationError(
                        "Os parâmetros não mudam para trás: “vigente desde” é hoje "
                        f"({today:%d/%m/%Y}) ou depois; os CTRs de antes seguem os parâmetros "
                        "do seu dia.",
                        code="parameters_backwards",
                    )
                }
            )

    def delete(self, *args, **kwargs):
        if self.in_force_by(timezone.localdate()):
            raise ValidationError(
                f"Os parâmetros vigentes desde {self.valid_from:%d/%m/%Y} já valem para CTRs "
                "e não podem ser excluídos.",
                code="parameters_in_force",
            )
        return super().delete(*args, **kwargs)

    def generation_rate(self, work_kind: str, waste_class: str) -> Decimal:
        """m³ per m² of `work_kind` for `waste_class`; a kind or class the municipality left
        out takes the default."""
        rates = (self.waste_generation_rates or {}).get(work_kind) or {}
        default = default_generation_rates().get(work_kind, {}).get(waste_class, "0")
        return Decimal(str(rates.get(waste_class, default)))

    def sorting_tolerance_of(self, waste_class: str) -> Decimal:
        return Decimal(
            str((self.sorting_tolerance_pct or {}).get(waste_class, DEFAULT_SORTING_TOLERANCE_PCT))
        )


def parameters_sql(municipality_id: str, day: str) -> str:
    """The set in force on `day` for the municipality `municipality_id` (SQL expressions), as
    a subquery to join laterally: `JOIN LATERAL {parameters_sql("m.id", "c.transport_date")}
    AS mp ON true`. The same choice as Municipality.parameters_on: the latest set on or before
    the day, else the first."""
    return (
        "(SELECT * FROM pev_network_municipalparameters p"
        f" WHERE p.municipality_id = {municipality_id}"
        f" ORDER BY p.valid_from > {day},"
        f" CASE WHEN p.valid_from <= {day} THEN p.valid_from END DESC, p.valid_from"
        " LIMIT 1)"
    )


def parameter_on(name: str, day, municipality=None) -> Coalesce:
    """The parameter `name` of the set in force on `day` (a date, or an expression such as
    OuterRef("transport_date") for each row's own day) for `municipality` (by default the
    row's OuterRef("municipality_id")), as a subquery to annotate or filter a queryset with.
    The same choice as Municipality.parameters_on and parameters_sql."""
    day = day if hasattr(day, "resolve_expression") else Value(day)
    sets = MunicipalParameters.objects.filter(
        municipality_id=OuterRef("municipality_id") if municipality is None else municipality
    )
    # Two index walks on (municipality, valid_from), no sort: the latest started, else the
    # first. Every parameter is NOT NULL, so a NULL is only "no such set".
    latest = sets.filter(valid_from__lte=day).order_by("-valid_from").values(name)[:1]
    first = sets.order_by("valid_from").values(name)[:1]
    return Coalesce(Subquery(latest), Subquery(first))


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


class FacilityQuerySet(ScopedQuerySet):
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
# A facility's license (art. 14 §1) and a transporter's licence in a municipality (art. 13,
# ctr.models.TransporterLicence, which builds on in_period, period_q and period_sql) are valid
# from valid_from to valid_until, both days included; without an end date, open-ended. A license is
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


class LicenseQuerySet(ScopedQuerySet):
    municipality_path = "facility__municipality"

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

    objects = ScopedQuerySet.as_manager()

    class Meta:
        verbose_name = "bacia de captação"
        verbose_name_plural = "bacias de captação"
        ordering = ["municipality", "name"]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        if self.served_by_id and self.served_by.kind != FacilityKind.PEV:
            raise ValidationError({"served_by": "Uma bacia de captação é atendida por um PEV."})
