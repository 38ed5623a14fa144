"""The enforcement procedure of Lei 3.978/2007 art. 21-36: offenders, notices to repair,
infraction records with fines in UFESP, penalties, appeals, payments.

Deadlines and amounts are computed by fiscalization.enforcement (services), never stored as
free numbers typed by hand; what is stored are the facts (dates of delivery, of payment...).
"""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.conf import settings
from django.contrib.gis.db import models
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from config.br import br_date, br_money
from ctr.documents import validate_document
from ctr.models import Generator, Transporter, Worksite
from jurisdiction.scope import ScopedQuerySet, scoped
from pev_network.models import (  # noqa: F401 (UfespRate: its home moved, its name stays)
    Municipality,
    ReceivingFacility,
    UfespRate,
    in_period,
    period_q,
)

from .frameworks import PenaltyFramework
from .reports import DumpingReport


def authorship(act: str) -> tuple[models.ForeignKey, models.CharField]:
    """Who did an act of the procedure and in what capacity (Lei 3.978/2007 art. 35: the
    penalties are the Secretary's), both written when the act is done, so that a later change
    of the user's groups does not rewrite the record. Empty on acts registered before the
    platform kept their authors."""
    return (
        models.ForeignKey(
            settings.AUTH_USER_MODEL,
            on_delete=models.PROTECT,
            null=True,
            blank=True,
            related_name="+",
            verbose_name=f"{act} por",
        ),
        models.CharField(f"{act} na qualidade de", max_length=120, blank=True),
    )


class OffenderRole(models.TextChoices):
    # Lei 3.978/2007 art. 24 I-V: who can be the offender.
    PROPERTY = "PROPERTY", "Proprietário, ocupante, locatário ou síndico do imóvel"
    REPRESENTATIVE = (
        "REPRESENTATIVE",
        "Representante legal do proprietário ou responsável técnico da obra",
    )
    DRIVER = "DRIVER", "Motorista ou proprietário do veículo transportador"
    TRANSPORT_DIRECTOR = "TRANSPORT_DIRECTOR", "Dirigente legal da empresa transportadora"
    FACILITY = "FACILITY", "Proprietário, operador ou responsável técnico da área de recepção"


class MunicipalHoliday(models.Model):
    """A municipal holiday (the national and São Paulo state ones come from the `holidays`
    package): deadlines counted in working days skip it (Lei 3.978/2007 art. 28 §2)."""

    municipality = models.ForeignKey(
        Municipality, on_delete=models.CASCADE, related_name="+", verbose_name="município"
    )
    day = models.DateField("data")
    name = models.CharField("feriado", max_length=120)
    yearly = models.BooleanField(
        "repete todo ano", default=True, help_text="Mesmo dia e mês em todos os anos."
    )

    objects = scoped()

    class Meta:
        verbose_name = "feriado municipal"
        verbose_name_plural = "feriados municipais"
        ordering = ["municipality", "day"]
        constraints = [
            models.UniqueConstraint(
                fields=["municipality", "day"], name="municipal_holiday_unique_day"
            )
        ]

    def __str__(self) -> str:
        return f"{self.day:%d/%m} {self.name}"


class EnforcementSequence(models.Model):
    """Last number given per municipality, year and kind of document (case, notice, record).
    Incremented inside the issuing transaction by an upsert, like ctr.NumberSequence: a rollback
    returns the number, concurrent issuers queue on the row; no gaps, no duplicates."""

    municipality = models.ForeignKey(Municipality, on_delete=models.CASCADE, related_name="+")
    year = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=4)
    last_value = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["municipality", "year", "kind"], name="enforcement_seq_unique"
            )
        ]


class EntryStatus(models.TextChoices):
    # Nothing invented is usable: a line counts only once the municipality confirmed its amount
    # by a norm of its own (the published Lei 3.978/2007 lost the table of art. 23).
    PROVISIONAL = "PROVISIONAL", "Provisória (não confirmada pelo município)"
    CONFIRMED = "CONFIRMED", "Confirmada pelo município"


class PenaltyTableEntryQuerySet(ScopedQuerySet):
    def usable(self, municipality: Municipality, day: datetime.date) -> PenaltyTableEntryQuerySet:
        """The lines a record of `municipality` may use for an infraction on `day`: confirmed,
        active and valid then (PenaltyTableEntry.refusal for a line in memory)."""
        return self.filter(
            period_q(day),
            municipality=municipality,
            status=EntryStatus.CONFIRMED,
            active=True,
        )


class PenaltyTableEntry(models.Model):
    """A line of the infraction table of art. 23 of one municipality, valid from a day: data,
    not code. The published text lost its table; the lines seeded by migration 0003 are the
    law's obligations with provisional fines, kept inactive and provisional until the
    municipality confirms each amount by a norm of its own (admin or CSV import)."""

    Status = EntryStatus

    municipality = models.ForeignKey(
        Municipality, on_delete=models.PROTECT, related_name="+", verbose_name="município"
    )
    code = models.CharField("código", max_length=20)
    legal_reference = models.CharField("fundamento legal", max_length=120)
    description = models.CharField("infração", max_length=400)
    fine_ufesp = models.DecimalField(
        "multa (UFESP)", max_digits=8, decimal_places=2, validators=[MinValueValidator(0)]
    )
    offender_roles = ArrayField(
        models.CharField(max_length=20, choices=OffenderRole.choices),
        verbose_name="quem pode ser autuado",
        default=list,
        blank=True,
    )
    valid_from = models.DateField("vigente desde")
    valid_until = models.DateField("vigente até", null=True, blank=True)
    active = models.BooleanField("ativa", default=True)
    status = models.CharField(
        "situação", max_length=12, choices=EntryStatus.choices, default=EntryStatus.PROVISIONAL
    )
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="confirmada por",
    )
    confirmed_at = models.DateTimeField("confirmada em", null=True, blank=True)
    confirming_act = models.CharField(
        "ato que fixa o valor",
        max_length=200,
        blank=True,
        help_text=(
            "A lei que dá a multa desta linha, como o regime a cita (Guaratinguetá: a tabela do "
            "art. 23 da Lei 3.978/2007, com a redação da “Lei nº 4.699/2017”)."
        ),
    )
    note = models.TextField("observação", blank=True)

    objects = PenaltyTableEntryQuerySet.as_manager()

    class Meta:
        verbose_name = "linha da tabela de infrações"
        verbose_name_plural = "tabela de infrações (art. 23)"
        ordering = ["municipality", "code", "-valid_from"]
        constraints = [
            models.UniqueConstraint(
                fields=["municipality", "code", "valid_from"], name="penalty_entry_unique_code"
            ),
            models.CheckConstraint(
                condition=Q(valid_until__isnull=True) | Q(valid_until__gte=models.F("valid_from")),
                name="penalty_entry_period_ordered",
                violation_error_message="A vigência termina antes de começar.",
            ),
            models.CheckConstraint(
                condition=Q(status=EntryStatus.PROVISIONAL)
                | (Q(confirmed_at__isnull=False) & ~Q(confirming_act="")),
                name="penalty_entry_confirmed_by_an_act",
                violation_error_message="Uma linha confirmada diz quando e por qual ato.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} — {self.description}"

    def clean(self):
        if self.status == EntryStatus.CONFIRMED and not self.confirming_act.strip():
            raise ValidationError(
                {"confirming_act": "Para confirmar a linha, informe o ato que fixa o valor."}
            )
        if self.municipality_id and self.valid_from:
            # One line per code on any day, so a record's line is never ambiguous.
            overlapping = PenaltyTableEntry.objects.filter(
                Q(valid_until__isnull=True) | Q(valid_until__gte=self.valid_from),
                municipality_id=self.municipality_id,
                code=self.code,
            ).exclude(pk=self.pk)
            if self.valid_until:
                overlapping = overlapping.filter(valid_from__lte=self.valid_until)
            if other := overlapping.first():
                raise ValidationError(
                    {
                        "valid_from": f"A linha {other.code} vigente desde "
                        f"{other.valid_from:%d/%m/%Y} já vale neste período: encerre-a antes."
                    }
                )

    def refusal(self, municipality: Municipality, day: datetime.date) -> str:
        """Why a record of `municipality` for an infraction on `day` cannot use this line
        ("" when it can): PenaltyTableEntryQuerySet.usable for a line in memory."""
        if self.municipality_id != municipality.pk:
            return "é da tabela de outro município"
        if self.status != EntryStatus.CONFIRMED:
            return "é provisória: o município não confirmou o valor"
        if not self.active:
            return "está inativa"
        if not in_period(self.valid_from, self.valid_until, day):
            return f"não está vigente em {day:%d/%m/%Y}"
        return ""


class OffenderQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        """A person answering for an infraction is a municipality's when a case of it names
        them (LGPD: their name, document and address stop at that municipality)."""
        cases = EnforcementCase.objects.filter(
            offender=OuterRef("pk"), municipality_id__in=list(ids)
        )
        return Q(Exists(cases))


class Offender(models.Model):
    """The person or company answering for an infraction; recidivism is per document."""

    name = models.CharField("nome", max_length=200)
    document = models.CharField("CPF/CNPJ", max_length=14, validators=[validate_document])
    role = models.CharField("papel (art. 24)", max_length=20, choices=OffenderRole.choices)
    transporter = models.ForeignKey(
        Transporter,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="offences",
        verbose_name="transportador",
    )
    facility = models.ForeignKey(
        ReceivingFacility,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="offences",
        verbose_name="área de recepção",
    )
    generator = models.ForeignKey(
        Generator,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="offences",
        verbose_name="gerador",
    )
    address = models.CharField("endereço para notificação", max_length=300, blank=True)

    objects = OffenderQuerySet.as_manager()

    class Meta:
        verbose_name = "infrator"
        verbose_name_plural = "infratores"
        indexes = [models.Index(fields=["document"])]

    def __str__(self) -> str:
        return self.name


class CaseStatus(models.TextChoices):
    OPEN = "OPEN", "Aberto"
    NOTIFIED = "NOTIFIED", "Notificado para reparar (72 h)"
    REPAIRED = "REPAIRED", "Dano reparado no prazo"
    RECORDED = "RECORDED", "Auto de infração lavrado"
    CLOSED = "CLOSED", "Encerrado"


class EnforcementCase(models.Model):
    """One irregularity found by the inspection, and everything the procedure did about it."""

    number = models.CharField("número", max_length=24, unique=True)
    municipality = models.ForeignKey(
        Municipality, on_delete=models.PROTECT, related_name="+", verbose_name="município"
    )
    offender = models.ForeignKey(
        Offender, on_delete=models.PROTECT, related_name="cases", verbose_name="infrator"
    )
    inspector = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="fiscal"
    )
    opened_as = models.CharField("aberto na qualidade de", max_length=120, blank=True)
    opened_at = models.DateTimeField("aberto em", default=timezone.now)
    description = models.TextField("irregularidade constatada")
    location = models.PointField("local", srid=4326, null=True, blank=True)
    dumping_report = models.ForeignKey(
        DumpingReport,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="cases",
        verbose_name="denúncia de descarte",
    )
    worksite = models.ForeignKey(
        Worksite,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="cases",
        verbose_name="obra",
    )
    obstructed_inspection = models.BooleanField(
        "impediu ou dificultou a fiscalização (art. 26 I)", default=False
    )
    status = models.CharField(
        "situação", max_length=10, choices=CaseStatus.choices, default=CaseStatus.OPEN
    )
    # The framework in force in the municipality when the case opened: its deadlines, fines
    # and texts govern the whole case, whatever changes later.
    framework = models.ForeignKey(
        PenaltyFramework,
        on_delete=models.PROTECT,
        related_name="cases",
        verbose_name="regime de penalidades",
    )

    objects = scoped()

    class Meta:
        verbose_name = "processo de fiscalização"
        verbose_name_plural = "processos de fiscalização"
        ordering = ["-opened_at"]

    def __str__(self) -> str:
        return self.number


class DeliveryMethod(models.TextChoices):
    # How a notice or record reaches the offender, each with its presumed date of receipt
    # (Lei 3.190/2013 de Ferraz de Vasconcelos art. 11-12; Lei 3.978/2007 art. 28 §2).
    HAND = "HAND", "Pessoalmente (recibo)"
    MAIL = "MAIL", "Carta registrada com aviso de recebimento"
    PUBLIC_NOTICE = "PUBLIC_NOTICE", "Edital na imprensa oficial"


# The individual notice (art. 28 §1) comes first; the public notice only supplies it.
INDIVIDUAL_DELIVERY = (DeliveryMethod.HAND, DeliveryMethod.MAIL)


class Notice(models.Model):
    """Notificação to repair the damage within 72 hours (art. 28), for a non-recidivist."""

    case = models.ForeignKey(
        EnforcementCase, on_delete=models.PROTECT, related_name="notices", verbose_name="processo"
    )
    number = models.CharField("número", max_length=24, unique=True)
    issued_at = models.DateTimeField("emitida em", default=timezone.now)
    delivery_method = models.CharField(
        "forma de entrega", max_length=15, choices=DeliveryMethod.choices
    )
    # HAND: signed receipt; MAIL: date on the returned AR; PUBLIC_NOTICE: publication date.
    delivered_on = models.DateTimeField("entregue/publicada em", null=True, blank=True)
    repaired_at = models.DateTimeField("dano reparado em", null=True, blank=True)
    required_action = models.TextField("o que deve ser feito")
    # The hours this notice gives: the framework's when its law fixes them (Lei 3.978/2007 art.
    # 28 §1: 72), else the authority's in each notice (Rio de Janeiro art. 155 p.ú.).
    repair_hours = models.PositiveSmallIntegerField(
        "prazo para cumprimento (horas)", null=True, blank=True
    )
    issued_by, issued_as = authorship("emitida")
    # The delivery, by receipt or AR, or the edital's publication.
    delivery_by, delivery_as = authorship("entrega registrada")
    repair_by, repair_as = authorship("reparação registrada")

    objects = scoped(via="case")

    class Meta:
        verbose_name = "notificação"
        verbose_name_plural = "notificações"


class TreasuryPayment(models.Model):
    """A fine's payment as the treasury records it (Lei 3.978/2007 art. 36: "recolhida em guia
    própria"): the amount paid in reais and the guia/DAM, compared with what was due on the
    payment date. A short payment leaves the fine open for the rest, in the fine's unit
    (`paid_units` is what the payments covered so far, each at its own date's value)."""

    payment_guide = models.CharField("guia/DAM", max_length=200, blank=True)
    due_brl = models.DecimalField(
        "devido na data do pagamento (R$)", max_digits=12, decimal_places=2, null=True, blank=True
    )
    payment_difference_brl = models.DecimalField(
        "diferença do último pagamento (R$)",
        max_digits=12,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="Pago menos devido na data do pagamento: negativa a menor, positiva a maior.",
    )
    paid_units = models.DecimalField(
        "quitado (na unidade da multa)", max_digits=14, decimal_places=4, default=0
    )

    class Meta:
        abstract = True

    @property
    def payment_result(self) -> str:
        """ "exato", "a menor" or "a maior" for the last payment; "" before any."""
        diff = self.payment_difference_brl
        if diff is None:
            return ""
        return "exato" if diff == 0 else ("a menor" if diff < 0 else "a maior")

    @property
    def payment_text(self) -> str:
        """What the case page and the documents say of the payments."""
        if self.paid_on is None:
            return ""
        diff = self.payment_difference_brl or 0
        head = (
            f"Pago em {br_date(self.paid_on)}: {br_money(self.paid_brl)} (guia/DAM "
            f"{self.payment_guide or 'não informada'}); devido na data: {br_money(self.due_brl)}"
        )
        if diff < 0:
            return (
                f"{head} — pago a menor, faltam {br_money(-diff)}: continua em aberto pelo "
                "restante, em reais pelo valor da data do próximo pagamento."
            )
        if diff > 0:
            return f"{head} — pago a maior em {br_money(diff)} (restituição a pedido do infrator)."
        return f"{head} — pago exato."


class RecordStatus(models.TextChoices):
    ISSUED = "ISSUED", "Lavrado"
    APPEALED = "APPEALED", "Em recurso"
    UPHELD = "UPHELD", "Mantido após recurso"
    ANNULLED = "ANNULLED", "Anulado"
    PAID = "PAID", "Pago"
    DIVIDA_ATIVA = "DIVIDA_ATIVA", "Enviado à Dívida Ativa"


class InfractionRecord(TreasuryPayment):
    """Auto de infração (art. 22 III, art. 36): the infractions, the fine in UFESP (cumulative,
    art. 30 §3; doubled for a recidivist, art. 30), and the offender's signature or the
    inspector's certificate of why not (art. 36 sole §)."""

    case = models.ForeignKey(
        EnforcementCase, on_delete=models.PROTECT, related_name="records", verbose_name="processo"
    )
    number = models.CharField("número", max_length=24, unique=True)
    drawn_up_at = models.DateTimeField("lavrado em", default=timezone.now)
    entries = models.ManyToManyField(
        PenaltyTableEntry, through="InfractionItem", verbose_name="infrações"
    )
    recidivist = models.BooleanField("reincidente (art. 26 II, art. 30)", default=False)
    # How many earlier final records made the offender a recidivist (the escalation of the
    # framework reads it) and the factor applied, frozen with the record.
    earlier_records = models.PositiveSmallIntegerField("autos anteriores definitivos", default=0)
    recidivism_factor = models.DecimalField(
        "fator de reincidência aplicado", max_digits=8, decimal_places=2, default=1
    )
    # Lei 3.190/2013 art. 9 §2: persisting recidivism costs a multiple of the last fine.
    persistent_of_ufesp = models.DecimalField(
        "última multa multiplicada (reincidência persistente)",
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
    )
    # The factor for obstruction (art. 26 I) the framework gave, 1 = none. Records drawn up
    # before frameworks may hold the 1.5 of the old setting: kept as drawn up.
    obstruction_multiplier = models.DecimalField(
        "agravante por embaraço à fiscalização (art. 26 I)",
        max_digits=4,
        decimal_places=2,
        default=1,
        validators=[MinValueValidator(1)],
    )
    total_ufesp = models.DecimalField("multa total (UFESP)", max_digits=10, decimal_places=2)
    # The yearly index update of the table's amounts, frozen when drawn up (Lei 3.190/2013
    # art. 9 §6): the factor applied (None: the framework has no such update) and the
    # computation as the record and the case page print it, with the years not entered.
    index_factor = models.DecimalField(
        "fator de atualização do índice", max_digits=12, decimal_places=6, null=True, blank=True
    )
    index_update = models.TextField("atualização anual aplicada", blank=True)
    proposes_revocation = models.BooleanField(
        "propõe cassação (nova infração após suspensão, art. 34)", default=False
    )
    signed_by_offender = models.BooleanField("assinado pelo infrator", default=False)
    no_signature_reason = models.TextField("motivo da falta de assinatura", blank=True)
    delivery_method = models.CharField(
        "forma de entrega", max_length=15, choices=DeliveryMethod.choices
    )
    delivered_on = models.DateTimeField("entregue/publicado em", null=True, blank=True)
    status = models.CharField(
        "situação", max_length=15, choices=RecordStatus.choices, default="ISSUED"
    )
    paid_on = models.DateField("pago em", null=True, blank=True)
    paid_brl = models.DecimalField("valor pago (R$)", max_digits=12, decimal_places=2, null=True,
                                   blank=True)  # fmt: skip
    # Paying does not end the duty to repair (art. 30 §2): the repair found after the record,
    # when no notice of the case registered it.
    repaired_at = models.DateTimeField("dano reparado em (art. 30 §2)", null=True, blank=True)
    drawn_up_by, drawn_up_as = authorship("lavrado")
    delivery_by, delivery_as = authorship("entrega registrada")
    payment_by, payment_as = authorship("pagamento registrado")
    divida_ativa_by, divida_ativa_as = authorship("enviado à Dívida Ativa")
    repair_by, repair_as = authorship("reparação registrada")
    # The fine the record proposes, applied by the authority where the framework says so
    # (Lei 3.978/2007 art. 35: "As penalidades … serão aplicadas pelo Secretário"); where the
    # record itself imposes it, applied when drawn up. Null: awaiting the authority.
    fine_applied_at = models.DateTimeField("multa aplicada em", null=True, blank=True)
    fine_applied_by, fine_applied_as = authorship("multa aplicada")

    objects = scoped(via="case")

    class Meta:
        verbose_name = "auto de infração"
        verbose_name_plural = "autos de infração"
        ordering = ["-drawn_up_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(signed_by_offender=True) | ~Q(no_signature_reason=""),
                name="record_signed_or_certified",
                violation_error_message="Sem a assinatura do infrator, certifique o motivo.",
            )
        ]

    def __str__(self) -> str:
        return self.number


class InfractionItem(models.Model):
    record = models.ForeignKey(
        InfractionRecord, on_delete=models.CASCADE, related_name="items", verbose_name="auto"
    )
    entry = models.ForeignKey(
        PenaltyTableEntry, on_delete=models.PROTECT, verbose_name="infração (art. 23)"
    )
    # The table's line as it read when the record was drawn up: an issued record is a legal
    # act, and later edits of the table (or a new line's validity) never reach it.
    code = models.CharField("código", max_length=20)
    legal_reference = models.CharField("fundamento legal", max_length=120)
    description = models.CharField("infração", max_length=400)
    fine_ufesp = models.DecimalField("multa (UFESP)", max_digits=8, decimal_places=2)

    objects = scoped(via="record")

    class Meta:
        verbose_name = "infração do auto"
        verbose_name_plural = "infrações do auto"
        ordering = ["code"]

    @classmethod
    def frozen(
        cls, record: InfractionRecord, entry: PenaltyTableEntry, fine: Decimal | None = None
    ) -> InfractionItem:
        """The line as the record uses it; `fine`: its amount updated by the framework's
        index (Lei 3.190/2013 art. 9 §6), else the line's."""
        return cls(
            record=record,
            entry=entry,
            code=entry.code,
            legal_reference=entry.legal_reference,
            description=entry.description,
            fine_ufesp=entry.fine_ufesp if fine is None else fine,
        )


class DeliveryOutcome(models.TextChoices):
    # Why an individual notice or record did not reach the offender: the "notificações
    # individuais negativas ou impraticáveis" that the public notice supplies (art. 28 §2).
    REFUSED = "REFUSED", "Recusou-se a receber (entrega pessoal)"
    NOT_FOUND = "NOT_FOUND", "Destinatário não encontrado (entrega pessoal)"
    RETURNED = "RETURNED", "AR devolvido sem entrega (correio)"
    # Impracticable without any attempt (art. 28 §2, "impraticáveis"): nobody to hand it to,
    # nowhere to send it.
    NO_OFFENDER = "UNKNOWN", "Impraticável: infrator não identificado"
    NO_ADDRESS = "NO_ADDRESS", "Impraticável: endereço do infrator desconhecido"


# Individual delivery impracticable, whatever the method planned: recorded without an attempt.
IMPRACTICABLE = (DeliveryOutcome.NO_OFFENDER, DeliveryOutcome.NO_ADDRESS)
# What can go wrong with each individual delivery.
FAILURE_OUTCOMES = {
    DeliveryMethod.HAND: (DeliveryOutcome.REFUSED, DeliveryOutcome.NOT_FOUND, *IMPRACTICABLE),
    DeliveryMethod.MAIL: (DeliveryOutcome.RETURNED, *IMPRACTICABLE),
}


class DeliveryAttemptQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        ids = list(ids)
        return Q(notice__case__municipality_id__in=ids) | Q(record__case__municipality_id__in=ids)


class DeliveryAttempt(models.Model):
    """A failed attempt to deliver a notice or a record by hand or by mail: the fact that opens
    the way to the public notice (art. 28 §2; Lei 3.190/2013 art. 11 III, "quando improfícuo")."""

    notice = models.ForeignKey(
        Notice,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="failed_deliveries",
        verbose_name="notificação",
    )
    record = models.ForeignKey(
        InfractionRecord,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="failed_deliveries",
        verbose_name="auto",
    )
    method = models.CharField("forma de entrega", max_length=15, choices=DeliveryMethod.choices)
    outcome = models.CharField("resultado", max_length=10, choices=DeliveryOutcome.choices)
    attempted_at = models.DateTimeField("tentativa em")
    reason = models.TextField("circunstâncias")
    registered_by, registered_as = authorship("registrada")

    objects = DeliveryAttemptQuerySet.as_manager()

    class Meta:
        verbose_name = "entrega frustrada"
        verbose_name_plural = "entregas frustradas"
        ordering = ["attempted_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(notice__isnull=False, record__isnull=True)
                | Q(notice__isnull=True, record__isnull=False),
                name="delivery_attempt_of_one_document",
                violation_error_message="A tentativa é de uma notificação ou de um auto.",
            )
        ]


class Appeal(models.Model):
    """Recurso within 30 days of receiving the record (Lei 3.190/2013 art. 13)."""

    record = models.OneToOneField(
        InfractionRecord, on_delete=models.PROTECT, related_name="appeal", verbose_name="auto"
    )
    filed_on = models.DateField("apresentado em")
    text = models.TextField("razões")
    decided_on = models.DateField("decidido em", null=True, blank=True)
    upheld = models.BooleanField("auto mantido", null=True, blank=True)
    # Provimento parcial: the record stands with a smaller fine, which it then charges; its
    # fine as drawn up is kept here.
    reduced_from_ufesp = models.DecimalField(
        "multa antes do provimento parcial",
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
    )
    decision = models.TextField("decisão", blank=True)
    filed_by, filed_as = authorship("recurso registrado")
    decided_by, decided_as = authorship("decidido")

    objects = scoped(via="record")

    class Meta:
        verbose_name = "recurso"
        verbose_name_plural = "recursos"
        # The authority's, not the inspectors' (art. 35; ctr.roles.AUTORIDADE).
        permissions = [("decide_appeal", "Pode decidir recursos contra autos de infração")]

    def __str__(self) -> str:
        return f"Recurso contra o auto {self.record.number}"

    @property
    def outcome(self) -> str:
        """The decision in words: "mantido", "parcialmente provido" or "anulado"."""
        if self.upheld is None:
            return ""
        if self.reduced_from_ufesp is not None:
            return "parcialmente provido"
        return "mantido" if self.upheld else "anulado"


class PenaltyKind(models.TextChoices):
    # Art. 25 II-V (the fine, I, is the record's total).
    EMBARGO = "EMBARGO", "Embargo de obra"
    SEIZURE = "SEIZURE", "Apreensão de equipamentos"
    SUSPENSION = "SUSPENSION", "Suspensão da atividade (até 15 dias)"
    REVOCATION = "REVOCATION", "Cassação do alvará"


class Penalty(models.Model):
    record = models.ForeignKey(
        InfractionRecord, on_delete=models.PROTECT, related_name="penalties", verbose_name="auto"
    )
    kind = models.CharField("tipo", max_length=12, choices=PenaltyKind.choices)
    starts_on = models.DateField("início")
    ends_on = models.DateField("fim", null=True, blank=True)
    lifted_on = models.DateField("levantada em", null=True, blank=True)
    # Lei 3.978/2007 art. 31 sole §: the embargo is cancelled once the offender met every
    # requirement of the record within its deadlines: which, and when, as the inspector found.
    requirements_met = models.TextField(
        "exigências cumpridas (art. 31 p.ú.)", blank=True, default=""
    )
    requirements_met_on = models.DateField("exigências cumpridas em", null=True, blank=True)
    details = models.TextField("detalhes (equipamentos apreendidos, obra embargada...)", blank=True)
    # Seizure (art. 32 sole §): release once fixed and the costs of removal and custody paid.
    custody_costs_brl = models.DecimalField(
        "custos de remoção e guarda (R$)", max_digits=12, decimal_places=2, null=True, blank=True
    )
    costs_paid_on = models.DateField("custos pagos em", null=True, blank=True)
    applied_by, applied_as = authorship("aplicada")
    # Lifted, released, or fallen with the record annulled on appeal.
    lifted_by, lifted_as = authorship("levantada")
    costs_by, costs_as = authorship("custos registrados")

    objects = scoped(via="record")

    class Meta:
        verbose_name = "penalidade"
        verbose_name_plural = "penalidades"
        # The longest suspension is the framework's (Lei 3.978/2007 art. 25 IV: 15 days),
        # checked by apply_suspension; the database only asks for an end.
        # Applying one is the authority's, not the inspectors' (art. 35; ctr.roles.AUTORIDADE).
        permissions = [("apply_penalty", "Pode aplicar penalidades (art. 25 II-V, art. 35)")]
        constraints = [
            models.CheckConstraint(
                condition=~Q(kind="SUSPENSION")
                | (Q(ends_on__isnull=False) & Q(ends_on__gte=models.F("starts_on"))),
                name="suspension_has_an_end",
                violation_error_message="A suspensão tem início e fim.",
            )
        ]


class ChargeStatus(models.TextChoices):
    OPEN = "OPEN", "Em aberto"
    PAID = "PAID", "Paga"
    DIVIDA_ATIVA = "DIVIDA_ATIVA", "Enviada à Dívida Ativa"
    CANCELLED = "CANCELLED", "Cancelada (auto anulado)"


class EmbargoFineCharge(TreasuryPayment):
    """The daily fines of a disobeyed embargo (art. 31, one UFESP a day) made payable: the
    days of breach not yet charged, their amount in UFESP frozen when assessed, paid in reais
    at the UFESP of the payment date (art. 36) or sent to Dívida Ativa (art. 22 IV)."""

    penalty = models.ForeignKey(
        Penalty, on_delete=models.PROTECT, related_name="charges", verbose_name="embargo"
    )
    assessed_on = models.DateField("lançada em")
    amount_ufesp = models.DecimalField("valor (UFESP)", max_digits=10, decimal_places=2)
    status = models.CharField(
        "situação", max_length=15, choices=ChargeStatus.choices, default=ChargeStatus.OPEN
    )
    paid_on = models.DateField("paga em", null=True, blank=True)
    paid_brl = models.DecimalField(
        "valor pago (R$)", max_digits=12, decimal_places=2, null=True, blank=True
    )
    assessed_by, assessed_as = authorship("lançada")
    payment_by, payment_as = authorship("pagamento registrado")
    divida_ativa_by, divida_ativa_as = authorship("enviada à Dívida Ativa")

    objects = scoped(via="penalty")

    class Meta:
        verbose_name = "multa diária de embargo"
        verbose_name_plural = "multas diárias de embargo"
        ordering = ["assessed_on", "pk"]

    def __str__(self) -> str:
        return f"Multa diária de {self.amount_ufesp} UFESP ({self.assessed_on:%d/%m/%Y})"


class EmbargoBreach(models.Model):
    """A day on which an embargo was found disobeyed: one UFESP of daily fine (art. 31)."""

    penalty = models.ForeignKey(
        Penalty, on_delete=models.PROTECT, related_name="breaches", verbose_name="penalidade"
    )
    # The charge that made this day's fine payable; None while not yet charged.
    charge = models.ForeignKey(
        EmbargoFineCharge,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="breaches",
        verbose_name="cobrança",
    )
    day = models.DateField("dia")
    note = models.TextField("observação", blank=True)
    registered_by, registered_as = authorship("registrado")

    objects = scoped(via="penalty")

    class Meta:
        verbose_name = "descumprimento de embargo"
        verbose_name_plural = "descumprimentos de embargo"
        constraints = [
            models.UniqueConstraint(fields=["penalty", "day"], name="one_breach_per_day")
        ]
