"""Penalty frameworks: the procedure's figures as the municipality's law gives them.

Every number the enforcement procedure uses (hours to repair, days to appeal and to pay, how
they count, the discount, the recidivism escalation, the embargo's daily fine, the longest
suspension, the money unit) is a field of the framework in force in the case's municipality
when the case opens; the case keeps that framework for good (EnforcementCase.framework). Each
field cites its article in `citations`; a field the law leaves empty is None and says so.

Three frameworks ship with the system (fixtures/penalty_frameworks.json, loaded by a
migration): Guaratinguetá, Lei 3.978/2007, Ferraz de Vasconcelos, Lei 3.190/2013, and the
procedure of Rio de Janeiro's elevators law (as amended by Leis 3.417/2002 and 3.429/2002).
Each governs its own municipality only: a municipality without a framework of its own gets
none, and opens no case until it has one (no municipality's procedure cites
another's law). A framework that governs a case cannot be changed: a new version with its
own validity is created instead.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q

from jurisdiction.scope import ScopedQuerySet, municipalities


class DayCount(models.TextChoices):
    CALENDAR = "CALENDAR", "dias corridos"
    WORKING = "WORKING", "dias úteis"


class NoticeFirst(models.TextChoices):
    # Who gets a notice to repair before any record.
    NON_RECIDIVIST = "NON_RECIDIVIST", "Notificação para reparar antes do auto, ao não reincidente"
    OPTIONAL = "OPTIONAL", "Intimação facultativa antes do auto"
    NEVER = "NEVER", "O procedimento começa pela lavratura do auto"


class EditalReceipt(models.TextChoices):
    # When a public notice (edital) is presumed received, i.e. from when its deadlines run.
    FIRST_WORKING_DAY = (
        "FIRST_WORKING_DAY",
        "Prazos a partir do primeiro dia útil após a publicação",
    )
    END_OF_PERIOD = "END_OF_PERIOD", "Ciência no término do prazo do edital, contado da publicação"
    PUBLICATION = "PUBLICATION", "Ciência na data da publicação"


class PaymentFrom(models.TextChoices):
    RECORD = "RECORD", "da lavratura do auto"
    RECEIPT = "RECEIPT", "da ciência do auto"
    FINAL = "FINAL", "da decisão final (fim do prazo de recurso ou julgamento)"


class Escalation(models.TextChoices):
    # How recidivism raises the fine.
    ONCE = "ONCE", "Em dobro na reincidência"
    REPEATED = "REPEATED", "Em dobro a cada nova reincidência"
    PERSISTENT = "PERSISTENT", "Em dobro; persistindo, cassação e múltiplo da última multa"


class Applier(models.TextChoices):
    # Who applies a penalty (Lei 3.978/2007 art. 35: the Secretary, not the inspector).
    AUTHORITY = "AUTHORITY", "A autoridade, por decisão sobre o auto"
    RECORD = "RECORD", "O próprio auto, lavrado pelo agente"


# The penalties a framework says who applies (applied_by), as fiscalization's PenaltyKind names
# them, with the fine of the record (art. 25 I).
APPLIED_PENALTIES = ("FINE", "EMBARGO", "SEIZURE", "SUSPENSION", "REVOCATION")


def authority_applies_all() -> dict:
    return dict.fromkeys(APPLIED_PENALTIES, Applier.AUTHORITY.value)


class MoneyUnit(models.TextChoices):
    UFESP = "UFESP", "UFESP"
    UFIR_RIO = "UFIR_RIO", "UFIR-RJ (valores convertidos pela Lei Municipal 3.145/2000)"
    BRL = "BRL", "Reais"


# The procedure's parameters: each must cite its article in `citations` (None included: the
# citation then says the law gives no such figure).
PARAMETERS = (
    "repair_hours",
    "notice_first",
    "repair_extension",
    "edital_receipt",
    "edital_days",
    "appeal_days",
    "appeal_day_count",
    "appeal_suspensive",
    "payment_days",
    "payment_day_count",
    "payment_from",
    "post_appeal_payment_days",
    "post_appeal_day_count",
    "discount_percent",
    "discount_days",
    "recidivism_factor",
    "recidivism_escalation",
    "persistent_factor",
    "recidivism_lookback_days",
    "embargo",
    "embargo_daily_fine",
    "suspension_max_days",
    "revocation_after_suspension",
    "obstruction_factor",
    "money_unit",
    "authority",
    "applied_by",
)


FINE_LINE_KEYS = ("code", "legal_reference", "description", "amount")


def _fine_lines_problem(lines) -> str:
    """Why the framework's own fine lines are malformed, "" when they are well formed."""
    if not isinstance(lines, list) or not all(isinstance(line, dict) for line in lines):
        return "Informe uma lista de linhas."
    for line in lines:
        if any(not str(line.get(key, "")).strip() for key in FINE_LINE_KEYS):
            return "Cada linha diz " + ", ".join(FINE_LINE_KEYS) + "."
        try:
            if Decimal(str(line["amount"])) <= 0:
                raise InvalidOperation
        except InvalidOperation:
            return f"Valor inválido na linha {line['code']}: {line['amount']}."
    return ""


class FrameworkQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        """A municipality's own frameworks: no other municipality's law governs it."""
        codes = municipalities().filter(pk__in=list(ids)).values("ibge_code")
        return Q(ibge_code__in=codes)


class PenaltyFramework(models.Model):
    """The enforcement procedure of one law, in force in one municipality for a period."""

    name = models.CharField("nome", max_length=160)
    law = models.CharField(
        "lei", max_length=300, help_text="A norma, como é citada nos documentos."
    )
    ibge_code = models.CharField(
        "código IBGE do município",
        max_length=7,
        validators=[RegexValidator(r"^\d{7}$", "O código IBGE tem 7 dígitos.")],
    )
    valid_from = models.DateField("vigente desde")
    valid_until = models.DateField("vigente até", null=True, blank=True)

    # Notice to repair.
    repair_hours = models.PositiveSmallIntegerField(
        "prazo para reparar o dano (horas)",
        null=True,
        blank=True,
        help_text="Vazio: a lei deixa o prazo à autoridade, fixado em cada notificação.",
    )
    notice_first = models.CharField("notificação prévia", max_length=16, choices=NoticeFirst)
    # Whether the authority may extend the notice's deadline on a justified request (Rio de
    # Janeiro art. 162); data for the case page and the documents.
    repair_extension = models.BooleanField(
        "prorrogação do prazo da notificação a requerimento", default=False
    )
    # Public notice (edital).
    edital_receipt = models.CharField("ciência por edital", max_length=20, choices=EditalReceipt)
    edital_days = models.PositiveSmallIntegerField(
        "prazo do edital (dias corridos)", null=True, blank=True
    )
    # Appeal. Lei 3.978/2007 gives no appeal procedure: the window, its effect and the payment
    # after the decision come from the municipality's own norm (a decree or its administrative
    # procedure law), named here. Empty: the figures below have no source yet, and the records
    # and case pages say so (no municipality borrows another's law).
    appeal_source = models.CharField(
        "norma do município que rege o recurso",
        max_length=300,
        blank=True,
        help_text=(
            "O decreto ou a lei de processo administrativo do próprio município que fixa o "
            "prazo do recurso, o seu efeito e o prazo de pagamento após o julgamento, com os "
            "artigos. Enquanto vazio, autos e processos avisam que o recurso não tem norma "
            "municipal cadastrada."
        ),
    )
    appeal_days = models.PositiveSmallIntegerField("prazo de recurso (dias)")
    appeal_day_count = models.CharField("contagem do recurso", max_length=8, choices=DayCount)
    appeal_suspensive = models.BooleanField("recurso com efeito suspensivo")
    # Payment.
    # Empty where the law sets no deadline to pay (Rio de Janeiro: none; art. 189 sends its
    # omissions to the other municipal norms): no due date is computed, and the documents and
    # the case page say so (payment_deadline_notice). None by analogy.
    payment_days = models.PositiveSmallIntegerField(
        "prazo de pagamento (dias)",
        null=True,
        blank=True,
        help_text="Vazio: a lei não fixa prazo de pagamento; nenhum vencimento é calculado.",
    )
    payment_day_count = models.CharField(
        "contagem do pagamento", max_length=8, choices=DayCount, blank=True
    )
    payment_from = models.CharField(
        "pagamento contado", max_length=8, choices=PaymentFrom, blank=True
    )
    # After a suspensive appeal decided against the offender, when the law counts the payment
    # from the record: days from the decision (never fewer than the ordinary deadline).
    post_appeal_payment_days = models.PositiveSmallIntegerField(
        "prazo de pagamento após o julgamento do recurso (dias)", null=True, blank=True
    )
    post_appeal_day_count = models.CharField(
        "contagem do pagamento após o recurso", max_length=8, choices=DayCount, blank=True
    )
    discount_percent = models.PositiveSmallIntegerField(
        "desconto por pagamento antecipado (%)",
        null=True,
        blank=True,
        validators=[MaxValueValidator(100)],
    )
    discount_days = models.PositiveSmallIntegerField(
        "desconto se pago até (dias corridos da lavratura)", null=True, blank=True
    )
    # Recidivism.
    recidivism_factor = models.DecimalField(
        "fator de reincidência",
        max_digits=4,
        decimal_places=2,
        validators=[MinValueValidator(1)],
    )
    recidivism_escalation = models.CharField(
        "agravamento da reincidência", max_length=12, choices=Escalation
    )
    persistent_factor = models.DecimalField(
        "múltiplo da última multa na reincidência persistente",
        max_digits=4,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
    )
    recidivism_lookback_days = models.PositiveIntegerField(
        "reincidência conta autos dos últimos (dias)", null=True, blank=True
    )
    # Other sanctions. Embargo: only where the law provides it (Lei 3.190/2013 has none).
    embargo = models.BooleanField("embargo previsto na lei", default=True)
    embargo_daily_fine = models.DecimalField(
        "multa diária por embargo descumprido",
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
    )
    suspension_max_days = models.PositiveIntegerField(
        "suspensão máxima (dias)", null=True, blank=True
    )
    revocation_after_suspension = models.BooleanField("cassação após suspensão")
    obstruction_factor = models.DecimalField(
        "fator por embaraço à fiscalização",
        max_digits=4,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Vazio: a lei não fixa fator; o embaraço é registrado como agravante.",
    )
    money_unit = models.CharField("unidade das multas", max_length=8, choices=MoneyUnit)
    # The law that gives the amounts of the fine table: the import confirms lines only by an
    # act citing it (Lei 3.978/2007 art. 23's table is in the law, as worded
    # by Lei 4.699/2017, not in a decree).
    fine_table_law = models.CharField(
        "lei que fixa a tabela de multas",
        max_length=200,
        blank=True,
        help_text=(
            "A lei que dá os valores da tabela de infrações, como o ato de confirmação deve "
            "citá-la (ex.: “Lei nº 4.699/2017”). Vazio: o ato deve ser uma lei, qualquer uma."
        ),
    )
    # The lines of the fine table whose amounts the law itself writes (Lei 3.190/2013 art. 9
    # I: R$ 350,00; II: R$ 500,00), each citing its inciso: installed as confirmed lines of
    # the municipality's table (penalty_table.install_law_lines). Empty where the amounts are
    # not in the text (Lei 3.978/2007 art. 23: the municipality confirms its table).
    fine_lines = models.JSONField(
        "linhas da tabela de multas fixadas na própria lei",
        default=list,
        blank=True,
        help_text="Lista de {code, legal_reference, description, amount}: cada valor com o "
        "artigo e o inciso que o fixam.",
    )
    money_index = models.CharField("atualização dos valores", max_length=300)
    # A yearly update of the amounts by an index (Lei 3.190/2013 art. 9 §6: "atualização de
    # valores anualmente de acordo com a variação do IGP"): the index's name and the year of
    # the amounts the law writes; the variations are the municipality's to enter, with their
    # source (IndexVariation): no figure ships with the system. Empty: no such update.
    index_name = models.CharField(
        "índice de atualização anual das multas",
        max_length=60,
        blank=True,
        help_text="Ex.: IGP. Vazio: a lei não atualiza as multas por índice anual.",
    )
    index_base_year = models.PositiveSmallIntegerField(
        "ano dos valores da lei",
        null=True,
        blank=True,
        help_text="O ano a que se referem os valores da tabela; atualizam-se a partir do seguinte.",
    )
    authority = models.CharField("autoridade que aplica as penalidades", max_length=200)
    # Who applies each penalty: the fine of the record (FINE) and the penalties of art. 25
    # II-V, each AUTHORITY (a decision on the record) or RECORD (the record itself imposes it).
    applied_by = models.JSONField(
        "quem aplica cada penalidade",
        default=authority_applies_all,
        help_text="Para a multa do auto (FINE) e cada penalidade: AUTHORITY (a autoridade "
        "decide sobre o auto) ou RECORD (o próprio auto a impõe).",
    )

    citations = models.JSONField(
        "fundamento de cada parâmetro",
        default=dict,
        help_text="Para cada parâmetro, o artigo que o fixa (ou que a lei não o fixa).",
    )
    notice_text = models.TextField("texto legal impresso na notificação")
    record_text = models.TextField("texto legal impresso no auto")
    readings = models.TextField("leituras adotadas do texto legal", blank=True)

    objects = FrameworkQuerySet.as_manager()

    class Meta:
        verbose_name = "regime de penalidades"
        verbose_name_plural = "regimes de penalidades"
        ordering = ["ibge_code", "-valid_from"]
        constraints = [
            models.CheckConstraint(
                condition=Q(valid_until__isnull=True) | Q(valid_until__gte=models.F("valid_from")),
                name="framework_validity_ordered",
                violation_error_message="O fim da vigência é anterior ao início.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} (desde {self.valid_from:%d/%m/%Y})"

    def save(self, *args, **kwargs):
        if self.pk and self.governs_cases():
            stored = PenaltyFramework.objects.get(pk=self.pk)
            changed = [
                f.name
                for f in self._meta.concrete_fields
                if f.name != "valid_until"
                and getattr(stored, f.attname) != getattr(self, f.attname)
            ]
            if changed:
                raise ValidationError(
                    "Este regime já rege processos e não pode ser alterado (mudaria prazos e "
                    "valores de atos já praticados): encerre a vigência dele e cadastre uma nova "
                    "versão."
                )
        super().save(*args, **kwargs)

    def clean(self) -> None:
        missing = [p for p in PARAMETERS if not str(self.citations.get(p, "")).strip()]
        if missing:
            labels = ", ".join(str(self._meta.get_field(p).verbose_name) for p in missing)
            raise ValidationError({"citations": f"Cite o artigo de: {labels}."})
        applied = self.applied_by if isinstance(self.applied_by, dict) else {}
        if set(applied) != set(APPLIED_PENALTIES) or not set(applied.values()) <= set(Applier):
            raise ValidationError(
                {
                    "applied_by": "Diga, para "
                    + ", ".join(APPLIED_PENALTIES)
                    + ", quem aplica: AUTHORITY ou RECORD."
                }
            )
        if (self.discount_percent is None) != (self.discount_days is None):
            raise ValidationError(
                {"discount_days": "Informe o desconto e o prazo dele, ou nenhum dos dois."}
            )
        if self.payment_days is None and (self.payment_day_count or self.payment_from):
            raise ValidationError(
                {"payment_days": "Sem prazo de pagamento, deixe vazias a contagem e o início."}
            )
        if self.payment_days is not None and not (self.payment_day_count and self.payment_from):
            raise ValidationError(
                {"payment_from": "Informe a contagem e o início do prazo de pagamento."}
            )
        if self.payment_days is None and self.embargo_daily_fine is not None:
            # The daily fine's charges are due in the payment days (facts.charge_last_day).
            raise ValidationError(
                {"embargo_daily_fine": "Multa diária por embargo exige prazo de pagamento."}
            )
        if self.edital_receipt == EditalReceipt.END_OF_PERIOD and not self.edital_days:
            raise ValidationError({"edital_days": "Informe o prazo do edital."})
        if bool(self.index_name.strip()) != (self.index_base_year is not None):
            raise ValidationError(
                {"index_base_year": "Informe o índice e o ano dos valores, ou nenhum dos dois."}
            )
        if self.index_name.strip() and not str(self.citations.get("index_name", "")).strip():
            raise ValidationError({"citations": "Cite o artigo do índice de atualização."})
        if problem := _fine_lines_problem(self.fine_lines):
            raise ValidationError({"fine_lines": problem})
        if self.recidivism_escalation == Escalation.PERSISTENT and self.persistent_factor is None:
            raise ValidationError({"persistent_factor": "Informe o múltiplo da última multa."})
        # OPTIONAL notices may leave the hours to each notice (Rio de Janeiro art. 155 p.ú.).
        if self.notice_first == NoticeFirst.NON_RECIDIVIST and not self.repair_hours:
            raise ValidationError({"repair_hours": "Informe o prazo para reparar o dano."})

    def appeal_notice(self) -> str:
        """What the record and the case page print while the appeal has no municipal norm."""
        if self.appeal_source.strip():
            return ""
        return (
            f"{self.law} não estabelece procedimento de recurso, e o município ainda não "
            "cadastrou a norma própria (decreto ou lei de processo administrativo) que fixa o "
            "prazo do recurso, o seu efeito e o prazo de pagamento após o julgamento. Os prazos "
            "de recurso indicados são provisórios, sem fundamento legal cadastrado."
        )

    def payment_deadline_notice(self) -> str:
        """What the record, the case page and the steps say where the law sets no deadline
        to pay ("" where it sets one): no due date, and so no Dívida Ativa from this system."""
        if self.payment_days is not None:
            return ""
        return (
            f"A lei não fixa prazo de pagamento da multa ({self.cite('payment_days')}): o auto "
            "não tem vencimento nem vai à Dívida Ativa por prazo vencido."
        )

    def applier(self, penalty: str) -> str:
        """Who applies `penalty` (FINE or a PenaltyKind) under this framework."""
        return (self.applied_by or {}).get(penalty, Applier.AUTHORITY)

    def governs_cases(self) -> bool:
        return self.pk is not None and self.cases.exists()

    def cite(self, parameter: str) -> str:
        """The article that gives `parameter`, as printed beside it."""
        return self.citations.get(parameter, "")


class IndexVariationQuerySet(ScopedQuerySet):
    """A municipality's own variations (municipality_path)."""


class IndexVariation(models.Model):
    """The variation of the index by which a framework updates its fines yearly, applied in
    one year, as the municipality's staff enter it with its source (Lei 3.190/2013 art. 9 §6:
    "atualização de valores anualmente de acordo com a variação do IGP … divulgado pela
    Fundação Getúlio Vargas"). No figure ships with the system. A fine drawn up in year Y is
    the law's amount times the variations of the years after the framework's base year up to
    Y (fines.index_update); a year not entered is said on the record, never guessed.

    Scope: the municipality's (ScopedQuerySet by `municipality`): its staff enter and see its
    own; the index is the one its framework names."""

    municipality = models.ForeignKey(
        "pev_network.Municipality",
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="município",
    )
    year = models.PositiveSmallIntegerField(
        "ano em que a atualização se aplica",
        validators=[MinValueValidator(1990), MaxValueValidator(2200)],
        help_text="As multas lavradas neste ano recebem esta variação (e as dos anos anteriores).",
    )
    percent = models.DecimalField(
        "variação do índice (%)",
        max_digits=8,
        decimal_places=4,
        validators=[MinValueValidator(Decimal("-99.9999"))],
        help_text="Ex.: 4,5 para 4,5%; negativa se o índice caiu.",
    )
    source = models.CharField(
        "fonte",
        max_length=300,
        help_text="A publicação do índice (ex.: FGV, IGP-DI acumulado de jan. a dez. do ano "
        "anterior) e o ato municipal que aplica a atualização.",
    )
    entered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="cadastrada por",
    )
    entered_at = models.DateTimeField("cadastrada em", auto_now_add=True)

    objects = IndexVariationQuerySet.as_manager()

    class Meta:
        verbose_name = "variação anual do índice das multas"
        verbose_name_plural = "variações anuais do índice das multas (Lei 3.190/2013 art. 9 §6)"
        ordering = ["municipality", "-year"]
        constraints = [
            models.UniqueConstraint(
                fields=["municipality", "year"],
                name="index_variation_per_year",
                violation_error_message="Já há variação cadastrada para este ano no município.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.year}: {self.percent}% ({self.source})"
