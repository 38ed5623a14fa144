"""Forms of the inspectors' pages for the enforcement procedure: they parse, the services
(fiscalization.enforcement) decide."""

from __future__ import annotations

import datetime
import re

from django import forms
from django.conf import settings
from django.contrib.gis.geos import Point
from django.core.exceptions import ValidationError
from django.utils import timezone

from config.br import br_number
from config.br_forms import BRDecimalField, CoordinateField
from ctr.documents import format_document, normalize_document
from ctr.models import Generator, Transporter
from pev_network.models import Municipality, ReceivingFacility

from .deadlines import SUSPENSION_MAX_DAYS
from .intake import normalize_protocol
from .models.enforcement import (
    CaseStatus,
    DeliveryMethod,
    OffenderRole,
    PenaltyTableEntry,
)
from .models.reports import DumpingReport

DATETIME_FORMAT = "%Y-%m-%dT%H:%M"


class DateInput(forms.DateInput):
    input_type = "date"

    def __init__(self, attrs=None):
        super().__init__(attrs, format="%Y-%m-%d")


class DateTimeInput(forms.DateTimeInput):
    input_type = "datetime-local"

    def __init__(self, attrs=None):
        super().__init__(attrs, format=DATETIME_FORMAT)


def date_field(label: str, help_text: str = "", required: bool = True) -> forms.DateField:
    return forms.DateField(
        label=label,
        widget=DateInput(),
        help_text=help_text,
        required=required,
        initial=timezone.localdate if required else None,
    )


def datetime_field(label: str, help_text: str = "", required: bool = True) -> forms.DateTimeField:
    return forms.DateTimeField(
        label=label,
        widget=DateTimeInput(),
        input_formats=[DATETIME_FORMAT, "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S"],
        help_text=help_text,
        required=required,
        initial=lambda: timezone.localtime().replace(second=0, microsecond=0),
    )


class CaseFilterForm(forms.Form):
    status = forms.ChoiceField(
        label="Situação", required=False, choices=[("", "Todas"), *CaseStatus.choices]
    )
    q = forms.CharField(label="Número, infrator ou documento", required=False, max_length=100)


def generator_label(generator: Generator) -> str:
    """How a suggestion reads and what the box keeps: the document first, so that the choice
    is unambiguous (two generators may share a name)."""
    return f"{format_document(generator.document)} — {generator.name}"


def find_generator(text: str) -> Generator | None:
    """The generator of a suggestion ("CPF/CNPJ — nome"), of a typed CPF/CNPJ, or of a name
    that only one generator has; a Portuguese error otherwise."""
    text = (text or "").strip()
    if not text:
        return None
    head = text.split("—", 1)[0]
    number = re.sub(r"\D", "", head)
    if len(number) in (11, 14):
        generator = Generator.objects.filter(document=number).first()
        if generator is None:
            raise ValidationError(f"Não há gerador cadastrado com o CPF/CNPJ {head.strip()}.")
        return generator
    matches = list(Generator.objects.filter(name__iexact=text)[:2])
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ValidationError(
            f"Há mais de um gerador chamado “{text}”: escolha na lista ou informe o CPF/CNPJ."
        )
    raise ValidationError(
        f"Não há gerador “{text}”: digite o CPF/CNPJ ou parte do nome e escolha na lista."
    )


def search_generators(text: str, limit: int = 10) -> list[Generator]:
    """Suggestions for the box: by the beginning of the CPF/CNPJ, or by part of the name."""
    text = (text or "").strip()
    if len(text) < 2:
        return []
    number = re.sub(r"[.\-/\s]", "", text)
    queryset = Generator.objects.only("pk", "name", "document")
    if number.isdigit():
        queryset = queryset.filter(document__startswith=number)
    else:
        queryset = queryset.filter(name__icontains=text)
    return list(queryset.order_by("name", "pk")[:limit])


class CaseForm(forms.Form):
    municipality = forms.ModelChoiceField(
        Municipality.objects.defer("boundary"), label="Município", empty_label=None
    )
    opened_at = datetime_field("Constatada em")
    description = forms.CharField(
        label="Irregularidade constatada",
        widget=forms.Textarea(attrs={"rows": 4}),
        max_length=4000,
        help_text="O que a fiscalização viu, onde e quando (art. 22).",
    )
    offender_role = forms.ChoiceField(
        label="Papel do infrator (art. 24)", choices=OffenderRole.choices
    )
    offender_name = forms.CharField(label="Nome ou razão social do infrator", max_length=200)
    offender_document = forms.CharField(label="CPF ou CNPJ do infrator", max_length=20)
    offender_address = forms.CharField(
        label="Endereço para notificação", max_length=300, required=False
    )
    transporter = forms.ModelChoiceField(
        Transporter.objects.all(),
        label="Transportador vinculado",
        required=False,
        help_text="Para o motorista, o proprietário do veículo ou o dirigente da transportadora "
        "(art. 24 III-IV): suspensão e cassação valem para o cadastro dele.",
    )
    facility = forms.ModelChoiceField(
        ReceivingFacility.objects.defer("area"),
        label="Área de recepção vinculada",
        required=False,
        help_text="Para o proprietário, operador ou responsável técnico (art. 24 V): suspensão "
        "e cassação valem para a licença dela.",
    )
    # A text box with suggestions as you type (the municipality's generators are thousands:
    # never all of them in a <select>); fiscalization/static/fiscalization/generator-search.js
    # fills its <datalist> from GET /fiscalizacao/processos/geradores/?q=.
    generator = forms.CharField(
        label="Gerador vinculado",
        required=False,
        max_length=200,
        help_text="Para o proprietário, ocupante ou responsável pela obra (art. 24 I-II). "
        "Digite o CPF/CNPJ ou parte do nome e escolha na lista.",
        widget=forms.TextInput(
            attrs={
                "list": "geradores-sugestoes",
                "autocomplete": "off",
                "spellcheck": "false",
                "data-suggest": "generators",
            }
        ),
    )
    dumping_report = forms.CharField(
        label="Protocolo da denúncia de descarte", max_length=16, required=False
    )
    latitude = CoordinateField("lat", required=False, max_digits=9, decimal_places=6)
    longitude = CoordinateField("lon", required=False, max_digits=10, decimal_places=6)
    obstructed_inspection = forms.BooleanField(
        label="O infrator impediu ou dificultou a fiscalização (agravante, art. 26 I)",
        required=False,
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        default = (
            Municipality.objects.defer("boundary")
            .filter(ibge_code=settings.DEFAULT_MUNICIPALITY_IBGE)
            .first()
        )
        if default:
            self.fields["municipality"].initial = default.pk

    def clean_offender_document(self):
        try:
            return normalize_document(self.cleaned_data["offender_document"])
        except ValidationError as exc:
            raise ValidationError(exc.messages[0]) from None

    def clean_generator(self):
        return find_generator(self.cleaned_data["generator"])

    def clean_dumping_report(self):
        raw = self.cleaned_data["dumping_report"].strip().upper()
        if not raw:
            return None
        protocol = normalize_protocol(raw) or raw
        report = DumpingReport.objects.filter(protocol=protocol).first()
        if report is None:
            raise ValidationError(f"Não há denúncia com o protocolo {protocol}.")
        return report

    def clean(self):
        data = super().clean()
        lat, lon = data.get("latitude"), data.get("longitude")
        if (lat is None) != (lon is None):
            raise ValidationError("Informe latitude e longitude, ou nenhuma das duas.")
        data["location"] = Point(float(lon), float(lat), srid=4326) if lat is not None else None
        return data


class NoticeForm(forms.Form):
    required_action = forms.CharField(
        label="O que o infrator deve fazer",
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
        help_text="A reparação do dano exigida em 72 horas (art. 28 §1).",
    )
    delivery_method = forms.ChoiceField(
        label="Forma de entrega",
        choices=DeliveryMethod.choices,
        help_text="Edital só quando a entrega pessoal for negativa ou impraticável (art. 28 §2).",
    )
    issued_at = datetime_field("Emitida em")


class DeliveryForm(forms.Form):
    """By hand: the date and hour of the receipt. By mail: the AR's date. Public notice: the
    publication date."""

    delivered_date = date_field("Data")
    delivered_time = forms.TimeField(
        label="Hora do recibo",
        required=False,
        widget=forms.TimeInput(attrs={"type": "time"}, format="%H:%M"),
        help_text="Obrigatória na entrega pessoal: as 72 horas contam de minuto a minuto.",
    )

    def __init__(self, *args, method: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.method = method
        labels = {
            DeliveryMethod.HAND: "Data do recibo",
            DeliveryMethod.MAIL: "Data do aviso de recebimento (AR)",
            DeliveryMethod.PUBLIC_NOTICE: "Data da publicação do edital",
        }
        self.fields["delivered_date"].label = labels[method]
        if method != DeliveryMethod.HAND:
            del self.fields["delivered_time"]

    def clean(self):
        data = super().clean()
        day = data.get("delivered_date")
        if day is None:
            return data
        if self.method == DeliveryMethod.HAND:
            moment = data.get("delivered_time")
            if moment is None:
                raise ValidationError("Informe a hora do recibo.")
        else:
            moment = datetime.time(12, 0)  # only the day counts (fiscalization.deadlines)
        data["delivered_on"] = timezone.make_aware(datetime.datetime.combine(day, moment))
        return data


class RepairForm(forms.Form):
    repaired_at = datetime_field("Reparação constatada em")


class EntryChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, entry: PenaltyTableEntry) -> str:
        return (
            f"{entry.code} — {entry.description} ({entry.legal_reference}; "
            f"{br_number(entry.fine_ufesp, 2)} UFESP)"
        )


class RecordForm(forms.Form):
    entries = EntryChoiceField(
        PenaltyTableEntry.objects.filter(active=True),
        label="Infrações (tabela do art. 23)",
        widget=forms.CheckboxSelectMultiple,
        help_text="Infrações simultâneas somam as multas (art. 30 §3).",
    )
    drawn_up_at = datetime_field("Lavrado em")
    delivery_method = forms.ChoiceField(label="Forma de entrega", choices=DeliveryMethod.choices)
    signed_by_offender = forms.BooleanField(label="Assinado pelo infrator", required=False)
    no_signature_reason = forms.CharField(
        label="Sem assinatura: o servidor certifica o motivo",
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
        max_length=1000,
        help_text="Obrigatório quando o infrator não assina (art. 36 p.ú.).",
    )

    def __init__(self, *args, role: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        if role:
            # Lines that name the offender's role, and those that name none.
            ids = [
                e.pk
                for e in PenaltyTableEntry.objects.filter(active=True)
                if not e.offender_roles or role in e.offender_roles
            ]
            self.fields["entries"].queryset = PenaltyTableEntry.objects.filter(pk__in=ids)


class AppealForm(forms.Form):
    filed_on = date_field("Apresentado em")
    text = forms.CharField(
        label="Razões do recurso", widget=forms.Textarea(attrs={"rows": 4}), max_length=8000
    )


class DecisionForm(forms.Form):
    decided_on = date_field("Decidido em")
    upheld = forms.TypedChoiceField(
        label="Decisão",
        choices=[("1", "Auto mantido"), ("0", "Auto anulado")],
        coerce=lambda v: v == "1",
        widget=forms.RadioSelect,
    )
    decision = forms.CharField(
        label="Fundamentos da decisão", widget=forms.Textarea(attrs={"rows": 4}), max_length=8000
    )


class PaymentForm(forms.Form):
    paid_on = date_field(
        "Pago em", "O valor em reais é calculado pela UFESP da data do pagamento (art. 36)."
    )


class DateOnlyForm(forms.Form):
    on = date_field("Data")


class EmbargoForm(forms.Form):
    starts_on = date_field("Início do embargo")
    details = forms.CharField(
        label="Obra embargada e exigências",
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
    )


class SeizureForm(forms.Form):
    starts_on = date_field("Data da apreensão")
    details = forms.CharField(
        label="Equipamentos apreendidos e local de guarda",
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
    )


class SuspensionForm(forms.Form):
    starts_on = date_field("Primeiro dia da suspensão")
    days = forms.IntegerField(
        label="Dias de suspensão",
        min_value=1,
        help_text=f"No máximo {SUSPENSION_MAX_DAYS} dias (art. 25 IV).",
    )
    details = forms.CharField(
        label="Observações", widget=forms.Textarea(attrs={"rows": 2}), required=False
    )


class RevocationForm(forms.Form):
    starts_on = date_field("Cassação a partir de")
    details = forms.CharField(
        label="Observações", widget=forms.Textarea(attrs={"rows": 2}), required=False
    )


class BreachForm(forms.Form):
    day = date_field("Dia do descumprimento")
    note = forms.CharField(
        label="O que foi constatado", widget=forms.Textarea(attrs={"rows": 2}), required=False
    )


class CostsForm(forms.Form):
    custody_costs_brl = BRDecimalField(
        label="Custos de apreensão, remoção e guarda (R$)",
        min_value=0,
        decimal_places=2,
        example="1250,00",
    )
    paid_on = date_field("Pagos em", "Deixe em branco enquanto não pagos.", required=False)


class ReleaseForm(forms.Form):
    on = date_field("Liberados em")
    irregularity_fixed = forms.BooleanField(
        label="A irregularidade objeto do auto foi sanada (art. 32 p.ú.)", required=False
    )
