"""Forms of the inspectors' pages for the enforcement procedure: they parse, the services
(fiscalization.enforcement) decide.

A step's page (fiscalization.enforcement.actions names its form) is a StepForm: its fields are
named as the service's parameters, and it says what the page is about and what was done."""

from __future__ import annotations

import datetime
import re
from decimal import Decimal

from django import forms
from django.contrib.gis.geos import Point
from django.core.exceptions import ValidationError
from django.utils import timezone

from config.br import br_date, br_money, br_number
from config.br_forms import BRDecimalField, CoordinateField
from ctr.documents import format_document, normalize_document
from ctr.models import Generator, Transporter
from jurisdiction.scope import jurisdiction_of, municipalities
from pev_network.models import Municipality, ReceivingFacility

from . import enforcement, fines, penalty_table
from .deadlines import br_deadline, local_date
from .enforcement.facts import case_of
from .enforcement.terms import terms_of
from .intake import normalize_protocol
from .models.enforcement import (
    FAILURE_OUTCOMES,
    IMPRACTICABLE,
    INDIVIDUAL_DELIVERY,
    CaseStatus,
    DeliveryMethod,
    DeliveryOutcome,
    Notice,
    OffenderRole,
    PenaltyKind,
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


def find_generator(text: str, user=None) -> Generator | None:
    """The generator of a suggestion ("CPF/CNPJ — nome"), of a typed CPF/CNPJ, or of a name
    that only one generator has, among those `user` sees (its municipalities'); a
    Portuguese error otherwise."""
    text = (text or "").strip()
    if not text:
        return None
    generators = Generator.objects.visible_to(user)
    head = text.split("—", 1)[0]
    number = re.sub(r"\D", "", head)
    if len(number) in (11, 14):
        generator = generators.filter(document=number).first()
        if generator is None:
            raise ValidationError(f"Não há gerador cadastrado com o CPF/CNPJ {head.strip()}.")
        return generator
    matches = list(generators.filter(name__iexact=text)[:2])
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ValidationError(
            f"Há mais de um gerador chamado “{text}”: escolha na lista ou informe o CPF/CNPJ."
        )
    raise ValidationError(
        f"Não há gerador “{text}”: digite o CPF/CNPJ ou parte do nome e escolha na lista."
    )


def search_generators(text: str, user, limit: int = 10) -> list[Generator]:
    """Suggestions for the box: by the beginning of the CPF/CNPJ, or by part of the name,
    among the generators `user` sees (its municipalities': CPFs are personal data, LGPD)."""
    text = (text or "").strip()
    if len(text) < 2:
        return []
    number = re.sub(r"[.\-/\s]", "", text)
    queryset = Generator.objects.visible_to(user).only("pk", "name", "document")
    if number.isdigit():
        queryset = queryset.filter(document__startswith=number)
    else:
        queryset = queryset.filter(name__icontains=text)
    return list(queryset.order_by("name", "pk")[:limit])


class CaseForm(forms.Form):
    """A case opened by hand: it is the municipality's where the facts
    happened, the report's or the location's; without either, the one chosen here among those
    where the user acts (the one it works in now first). Its links (transporter, facility,
    generator, report) are among those the user sees."""

    municipality = forms.ModelChoiceField(
        Municipality.objects.none(),
        label="Município",
        empty_label=None,
        required=False,
        help_text="Com a denúncia ou o local, o processo é do município onde eles ficam.",
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
        Transporter.objects.none(),
        label="Transportador vinculado",
        required=False,
        empty_label="Nenhum",
        help_text="Para o motorista, o proprietário do veículo ou o dirigente da transportadora "
        "(art. 24 III-IV): suspensão e cassação valem para o cadastro dele.",
    )
    facility = forms.ModelChoiceField(
        ReceivingFacility.objects.none(),
        label="Área de recepção vinculada",
        required=False,
        empty_label="Nenhuma",
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

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        j = jurisdiction_of(user)
        acting = j.acting_ids()
        places = municipalities().order_by("name", "uf")
        if acting is not None:
            places = places.filter(pk__in=acting)
        elif not j.everywhere:
            places = places.none()
        self.fields["municipality"].queryset = places
        if j.current_id is not None and (acting is None or j.current_id in acting):
            self.fields["municipality"].initial = j.current_id
        self.fields["transporter"].queryset = Transporter.objects.visible_to(user)
        self.fields["facility"].queryset = ReceivingFacility.objects.visible_to(user).defer("area")

    def clean_offender_document(self):
        try:
            return normalize_document(self.cleaned_data["offender_document"])
        except ValidationError as exc:
            raise ValidationError(exc.messages[0]) from None

    def clean_generator(self):
        return find_generator(self.cleaned_data["generator"], self.user)

    def clean_dumping_report(self):
        raw = self.cleaned_data["dumping_report"].strip().upper()
        if not raw:
            return None
        protocol = normalize_protocol(raw) or raw
        # Another municipality's report does not exist for the user.
        report = (
            DumpingReport.objects.visible_to(self.user)
            .select_related("municipality")
            .defer("municipality__boundary")
            .filter(protocol=protocol)
            .first()
        )
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


class StepForm(forms.Form):
    """The page of a step of the procedure, about `subject` (the case, notice, record or
    penalty the step acts on): its fields, its title and lead, what the user is told after.

    The lead and the fields' help texts name the case's framework figures as `{hours}`,
    `{unit}`, `{appeal}`... (enforcement.terms.terms_of), so no page states a number the
    case's law does not give."""

    title = ""
    lead = ""
    submit = "Registrar"

    def __init__(self, data=None, *, subject, **kwargs):
        self.subject = subject
        super().__init__(data, **kwargs)
        self.terms = terms_of(case_of(subject).framework)
        for field in self.fields.values():
            if "{" in str(field.help_text):
                field.help_text = str(field.help_text).format(**self.terms)

    def heading(self) -> str:
        return self.title

    def intro(self) -> str:
        return self.lead.format(**self.terms)

    def notes(self) -> list[str]:
        return []

    def legal(self, default: str) -> str:
        return default

    def arguments(self) -> dict:
        """The service's keyword arguments, after the subject."""
        return dict(self.cleaned_data)

    def done(self, result) -> str:
        """The message after the service returned `result`."""
        raise NotImplementedError


# The individual deliveries: the edital has its own step, after a failed one (art. 28 §2).
INDIVIDUAL_CHOICES = [(m.value, m.label) for m in INDIVIDUAL_DELIVERY]


class NoticeForm(StepForm):
    title = "Notificação para reparar o dano"
    lead = (
        "O infrator tem {hours}, contadas do recebimento, para reparar o dano; só depois cabem "
        "as penalidades ({hours_cite})."
    )
    submit = "Emitir notificação"

    required_action = forms.CharField(
        label="O que o infrator deve fazer",
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
        help_text="A reparação do dano exigida em {hours} ({hours_cite}).",
    )
    delivery_method = forms.ChoiceField(
        label="Forma de entrega",
        choices=INDIVIDUAL_CHOICES,
        help_text="O edital vem depois, só se a entrega for frustrada (art. 28 §2).",
    )
    issued_at = datetime_field("Emitida em")
    repair_hours = forms.IntegerField(
        label="Prazo para cumprimento (horas)",
        min_value=1,
        max_value=32767,
        required=False,
        help_text="Fixado pela autoridade autuante nesta notificação ({hours_cite}).",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Rio de Janeiro art. 155 p.ú.: the authority sets the deadline in each notice; where
        # the law fixes it (Lei 3.978/2007 art. 28 §1) there is nothing to choose.
        if case_of(self.subject).framework.repair_hours is None:
            self.fields["repair_hours"].required = True
        else:
            del self.fields["repair_hours"]

    def done(self, notice) -> str:
        return (
            f"Notificação {notice.number} emitida. Registre a entrega para o prazo começar a "
            "correr."
        )


DELIVERY_LEADS = {
    DeliveryMethod.HAND: "Entrega pessoal: vale a data e a hora do recibo; as horas contam "
    "de minuto a minuto.",
    DeliveryMethod.MAIL: "Carta registrada: vale a data e a hora da entrega no aviso de "
    "recebimento (AR); as horas contam de minuto a minuto, os prazos em dias no dia seguinte.",
    DeliveryMethod.PUBLIC_NOTICE: "Edital: {edital} ({edital_cite}).",
}


class DeliveryForm(StepForm):
    """The delivery of a notice or record. By hand: the date and hour of the receipt. By mail:
    the AR's date and hour. Public notice (correcting it): the publication date."""

    delivered_date = date_field("Data")
    delivered_time = forms.TimeField(
        label="Hora do recibo",
        required=False,
        widget=forms.TimeInput(attrs={"type": "time"}, format="%H:%M"),
        help_text="As horas contam de minuto a minuto a partir desta hora (Código Civil art. "
        "132 §4).",
    )

    def __init__(self, data=None, *, subject, **kwargs):
        super().__init__(data, subject=subject, **kwargs)
        self.method = method = subject.delivery_method
        labels = {
            DeliveryMethod.HAND: "Data do recibo",
            DeliveryMethod.MAIL: "Data do aviso de recebimento (AR)",
            DeliveryMethod.PUBLIC_NOTICE: "Data da publicação do edital",
        }
        self.fields["delivered_date"].label = labels[method]
        # The hour counts where 72 hours run from it: a notice by hand or by mail, a record by
        # hand. A record's deadlines are in days: by mail its AR's hour may be left out.
        self.hour_required = method == DeliveryMethod.HAND or (
            method == DeliveryMethod.MAIL and isinstance(subject, Notice)
        )
        if method == DeliveryMethod.MAIL:
            self.fields["delivered_time"].label = "Hora da entrega no AR"
            if not self.hour_required:
                self.fields["delivered_time"].help_text = "Os prazos do auto contam em dias."
        elif method != DeliveryMethod.HAND:
            del self.fields["delivered_time"]

    def clean(self):
        data = super().clean()
        day = data.get("delivered_date")
        if day is None:
            return data
        moment = data.get("delivered_time")
        if moment is None and self.hour_required:
            raise ValidationError(
                "Informe a hora do recibo."
                if self.method == DeliveryMethod.HAND
                else "Informe a hora da entrega escrita no AR."
            )
        if moment is None:
            moment = datetime.time(12, 0)  # only the day counts (fiscalization.deadlines)
        data["delivered_on"] = timezone.make_aware(datetime.datetime.combine(day, moment))
        return data

    def intro(self) -> str:
        return DELIVERY_LEADS[self.method]

    def arguments(self) -> dict:
        return {"delivered_on": self.cleaned_data["delivered_on"]}


class NoticeDeliveryForm(DeliveryForm):
    def heading(self) -> str:
        return f"Entrega da notificação {self.subject.number}"

    def done(self, notice) -> str:
        due = br_deadline(enforcement.notice_due(notice))
        return f"Entrega registrada: o prazo para reparar vence em {due}."


class RecordDeliveryForm(DeliveryForm):
    def heading(self) -> str:
        return f"Entrega do auto {self.subject.number}"

    def done(self, record) -> str:
        return f"Entrega registrada: recurso até {br_date(enforcement.appeal_last_day(record))}."


class FailureForm(StepForm):
    """A failed individual delivery of a notice or record: what happened, when, and the
    circumstances the server or the post office certified (art. 28 §2)."""

    submit = "Registrar entrega frustrada"

    outcome = forms.ChoiceField(label="O que houve", widget=forms.RadioSelect)
    attempted_at = datetime_field(
        "Data e hora da tentativa",
        "Impraticável: a data e hora em que se constatou (infrator ou endereço desconhecido).",
    )
    reason = forms.CharField(
        label="Circunstâncias",
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
        help_text="Quem tentou entregar, onde, o que houve (ou o motivo da devolução no AR); "
        "impraticável: o que se sabe do infrator e o que se buscou.",
    )

    def __init__(self, data=None, *, subject, **kwargs):
        super().__init__(data, subject=subject, **kwargs)
        outcomes = FAILURE_OUTCOMES.get(subject.delivery_method, ())
        self.fields["outcome"].choices = [(o, DeliveryOutcome(o).label) for o in outcomes]
        if len(outcomes) == 1:
            self.fields["outcome"].initial = outcomes[0]
        if subject.delivery_method == DeliveryMethod.MAIL:
            self.fields["attempted_at"].label = "Data e hora da devolução no AR"

    def intro(self) -> str:
        return (
            "Registrada a entrega frustrada — ou impraticável, quando o infrator ou o endereço "
            "dele é desconhecido, sem tentativa —, o edital na imprensa oficial supre a entrega "
            "individual (art. 28 §2: “As notificações individuais, quando negativas ou "
            "impraticáveis, serão supridas por editais”)."
        )

    def done(self, attempt) -> str:
        what = "impraticável" if attempt.outcome in IMPRACTICABLE else "frustrada"
        return (
            f"Entrega individual {what} registrada ({attempt.get_outcome_display()}): publique "
            "o edital."
        )


class NoticeFailureForm(FailureForm):
    def heading(self) -> str:
        return f"Entrega frustrada da notificação {self.subject.number}"


class RecordFailureForm(FailureForm):
    def heading(self) -> str:
        return f"Entrega frustrada do auto {self.subject.number}"


class EditalForm(StepForm):
    """The public notice that supplies a failed individual delivery (art. 28 §2)."""

    submit = "Registrar a publicação"
    lead = "Edital: {edital} ({edital_cite})."

    published_on = date_field("Data da publicação do edital")


class NoticeEditalForm(EditalForm):
    def heading(self) -> str:
        return f"Edital da notificação {self.subject.number}"

    def done(self, notice) -> str:
        due = br_deadline(enforcement.notice_due(notice))
        return f"Edital registrado: o prazo para reparar vence em {due}."


class RecordEditalForm(EditalForm):
    def heading(self) -> str:
        return f"Edital do auto {self.subject.number}"

    def done(self, record) -> str:
        return f"Edital registrado: recurso até {br_date(enforcement.appeal_last_day(record))}."


class RepairForm(StepForm):
    repaired_at = datetime_field("Reparação constatada em")

    def __init__(self, data=None, *, subject, **kwargs):
        super().__init__(data, subject=subject, **kwargs)
        # The deadline as the notice stood when the page was asked for.
        self.due = enforcement.notice_due(subject)

    def heading(self) -> str:
        return f"Reparação do dano — notificação {self.subject.number}"

    def intro(self) -> str:
        return f"Prazo: {br_deadline(self.due)}." if self.due else ""

    def done(self, notice) -> str:
        if self.due and notice.repaired_at <= self.due:
            return "Dano reparado no prazo: processo sem penalidade (art. 27)."
        return "Reparação registrada fora do prazo: o auto de infração ainda cabe (art. 29)."


class RecordRepairForm(StepForm):
    lead = (
        "O pagamento da multa não exime o infrator de reparar o dano (art. 30 §2): o processo "
        "só se encerra com a reparação registrada."
    )

    repaired_at = datetime_field("Reparação constatada em")

    def heading(self) -> str:
        return f"Reparação do dano — auto {self.subject.number}"

    def done(self, record) -> str:
        return "Reparação do dano registrada (art. 30 §2)."


class EntryChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, entry: PenaltyTableEntry) -> str:
        return (
            f"{entry.code} — {entry.description} ({entry.legal_reference}; "
            f"{br_number(entry.fine_ufesp, 2)} UFESP)"
        )


class RecordForm(StepForm):
    title = "Auto de infração"
    lead = "Escolha as infrações constatadas. A multa soma as linhas (art. 30 §3)."
    submit = "Lavrar auto"

    entries = EntryChoiceField(
        PenaltyTableEntry.objects.none(),
        label="Infrações (tabela do art. 23)",
        widget=forms.CheckboxSelectMultiple,
        help_text="Infrações simultâneas somam as multas (art. 30 §3).",
    )
    drawn_up_at = datetime_field("Lavrado em")
    delivery_method = forms.ChoiceField(
        label="Forma de entrega",
        choices=INDIVIDUAL_CHOICES,
        help_text="O edital vem depois, só se a entrega for frustrada (art. 28 §2).",
    )
    signed_by_offender = forms.BooleanField(label="Assinado pelo infrator", required=False)
    no_signature_reason = forms.CharField(
        label="Sem assinatura: o servidor certifica o motivo",
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
        max_length=1000,
        help_text="Obrigatório quando o infrator não assina (art. 36 p.ú.).",
    )

    def __init__(self, data=None, *, subject, **kwargs):
        super().__init__(data, subject=subject, **kwargs)
        role = subject.offender.role
        # The lines the record may use (confirmed, active, of the case's municipality, valid
        # on the day of the finding) that name the offender's role, and those that name none.
        day = local_date(subject.opened_at)
        usable = PenaltyTableEntry.objects.usable(subject.municipality, day)
        self.no_usable_entry = not usable.exists()
        ids = [e.pk for e in usable if not e.offender_roles or role in e.offender_roles]
        field = self.fields["entries"]
        field.queryset = PenaltyTableEntry.objects.filter(pk__in=ids)
        if self.no_usable_entry:
            field.help_text = "Nenhuma linha da tabela pode ser usada: veja o aviso acima."

    def notes(self) -> list[str]:
        case, notes = self.subject, []
        if self.no_usable_entry:
            day = local_date(case.opened_at)
            notes.append(penalty_table.no_usable_entry_message(case.municipality, day))
        framework = case.framework
        earlier = enforcement.earlier_final_records(case).count()
        if earlier:
            factor = fines.recidivism_factor(earlier, framework)
            notes.append(
                f"Infrator reincidente ({earlier} auto(s) anterior(es) definitivo(s)): a multa "
                f"será multiplicada por {br_number(factor)} "
                f"({framework.cite('recidivism_escalation')})."
            )
        if case.obstructed_inspection:
            factor = fines.obstruction_factor(True, framework)
            notes.append(
                "Embaraço à fiscalização registrado como agravante "
                + (
                    f"de {br_number(factor)}× ({framework.cite('obstruction_factor')})."
                    if factor > 1
                    else f"sem fator: {framework.cite('obstruction_factor')}."
                )
            )
        suspension = enforcement.earlier_suspension(case)
        if suspension:
            notes.append(
                f"Nova infração após a suspensão de {br_date(suspension.starts_on)}: o auto "
                "proporá a cassação (art. 34)."
            )
        return notes

    def arguments(self) -> dict:
        return {**self.cleaned_data, "entries": list(self.cleaned_data["entries"])}

    def done(self, record) -> str:
        total = f"{br_number(record.total_ufesp, 2)} {self.terms['unit']}"
        if record.fine_applied_at is None:
            authority = self.subject.framework.authority
            return (
                f"Auto {record.number} lavrado: multa proposta de {total}, que aguarda a "
                f"aplicação pela autoridade — {authority}."
            )
        return f"Auto {record.number} lavrado: {total}."


class ApplyFineForm(StepForm):
    lead = (
        "O fiscal lavrou o auto e propôs a multa; as penalidades são aplicadas pela "
        "autoridade (art. 35). O prazo de pagamento conta da aplicação."
    )
    submit = "Aplicar a multa"

    applied_at = datetime_field("Aplicada em")

    def heading(self) -> str:
        record = self.subject
        total = f"{br_number(record.total_ufesp, 2)} {self.terms['unit']}"
        return f"Aplicar a multa do auto {record.number} ({total})"

    def legal(self, default: str) -> str:
        return self.subject.case.framework.cite("applied_by") or default

    def done(self, record) -> str:
        total = f"{br_number(record.total_ufesp, 2)} {self.terms['unit']}"
        return f"Multa de {total} do auto {record.number} aplicada (art. 35)."


class AppealForm(StepForm):
    filed_on = date_field("Apresentado em")
    text = forms.CharField(
        label="Razões do recurso", widget=forms.Textarea(attrs={"rows": 4}), max_length=8000
    )

    def heading(self) -> str:
        return f"Recurso contra o auto {self.subject.number}"

    def intro(self) -> str:
        last = enforcement.appeal_last_day(self.subject)
        terms = self.terms
        if not last:
            return ""
        return f"Prazo: {terms['appeal']}, até {br_date(last)} ({terms['appeal_cite']})."

    def done(self, appeal) -> str:
        return "Recurso registrado; o auto aguarda a decisão."


class DecisionForm(StepForm):
    lead = (
        "Mantido, o auto fica definitivo e a multa vence em {post_appeal} ({post_appeal_cite}). "
        "Com provimento parcial, o auto fica com a nova multa, que passa a ser a cobrada. "
        "Anulado, as penalidades caem."
    )

    decided_on = date_field("Decidido em")
    upheld = forms.ChoiceField(
        label="Decisão",
        choices=[
            ("1", "Auto mantido"),
            ("partial", "Provimento parcial: auto mantido com multa menor"),
            ("0", "Auto anulado"),
        ],
        widget=forms.RadioSelect,
    )
    new_total_ufesp = BRDecimalField(
        label="Nova multa (provimento parcial)",
        required=False,
        min_value=Decimal("0.01"),
        max_digits=10,
        decimal_places=2,
        example="50,00",
        help_text="Na unidade da multa ({unit}); só no provimento parcial.",
    )
    decision = forms.CharField(
        label="Fundamentos da decisão", widget=forms.Textarea(attrs={"rows": 4}), max_length=8000
    )

    def heading(self) -> str:
        return f"Decisão do recurso — auto {self.subject.number}"

    def clean(self):
        data = super().clean()
        partial = data.get("upheld") == "partial"
        if partial and data.get("new_total_ufesp") is None and "new_total_ufesp" not in self.errors:
            self.add_error("new_total_ufesp", "Informe a nova multa do provimento parcial.")
        if not partial and data.get("new_total_ufesp") is not None:
            self.add_error("new_total_ufesp", "A nova multa só cabe no provimento parcial.")
        return data

    def arguments(self) -> dict:
        data = dict(self.cleaned_data)
        data["upheld"] = data["upheld"] != "0"
        return data

    def done(self, appeal) -> str:
        if appeal.reduced_from_ufesp is not None:
            total = br_number(appeal.record.total_ufesp, 2)
            return f"Provimento parcial: auto mantido com multa de {total} {self.terms['unit']}."
        return "Auto mantido." if appeal.upheld else "Auto anulado."


class MoneyField(BRDecimalField):
    """Reais as a treasury's guia writes them: "R$ 3.702,00", "3702,00" or "3702.00" (with a
    decimal comma, the points group thousands)."""

    def to_python(self, value):
        if isinstance(value, str):
            value = value.replace("R$", "").strip()
            if "," in value:
                value = value.replace(".", "")
        return super().to_python(value)


def amount_field() -> MoneyField:
    return MoneyField(
        label="Valor pago (R$)",
        min_value=Decimal("0.01"),
        max_digits=12,
        decimal_places=2,
        example="740,40",
        help_text="O valor que a tesouraria recebeu, como está na guia paga.",
    )


def guide_field() -> forms.CharField:
    return forms.CharField(
        label="Nº da guia/DAM",
        max_length=60,
        help_text="O número da guia (DAM) em que a multa foi recolhida (art. 36: “guia própria”).",
    )


def payment_done(subject, what: str, late: bool) -> str:
    """The payment compared with the amount due on its date, as the page says it."""
    when = " fora do prazo" if late else " no prazo"
    result = subject.payment_result
    paid, due = br_money(subject.paid_brl), br_money(subject.due_brl)
    if result == "a menor":
        rest = br_money(-subject.payment_difference_brl)
        return (
            f"Pagamento{when} {what} registrado a menor: faltam {rest} dos {due} devidos na "
            "data; continua em aberto pelo restante."
        )
    if result == "a maior":
        over = br_money(subject.payment_difference_brl)
        return f"Pagamento{when} {what} registrado a maior: {over} além dos {due} devidos."
    return f"Pagamento{when} {what} registrado: {paid}, exato."


def paid_so_far(subject, units: Decimal, unit: str) -> str:
    """After a short payment: what was paid and what remains, in the fine's unit."""
    if not subject.paid_on:
        return ""
    rest = br_number(max(units - subject.paid_units, Decimal(0)), 2)
    return (
        f" Já pago: {br_money(subject.paid_brl)} (guia/DAM {subject.payment_guide}); restam "
        f"{rest} {unit}, em reais pelo valor da data do pagamento."
    )


class PaymentForm(StepForm):
    paid_on = date_field(
        "Pago em", "O valor devido é calculado pela {unit} da data do pagamento ({money_cite})."
    )
    amount_brl = amount_field()
    guide = guide_field()

    def heading(self) -> str:
        return f"Pagamento da multa — auto {self.subject.number}"

    def intro(self) -> str:
        record = self.subject
        framework = record.case.framework
        last = enforcement.payment_last_day(record)
        due = f"a pagar até {br_date(last)}" if last else "prazo de pagamento ainda não iniciado"
        if framework.payment_days is None:
            due = "sem prazo de pagamento na lei"
        discount = enforcement.discount_last_day(record)
        offer = (
            f"Desconto de {framework.discount_percent}% se pago até {br_date(discount)} "
            f"({framework.cite('discount_percent')})."
            if discount
            else "Não há desconto por pagamento antecipado."
        )
        return (
            f"{br_number(record.total_ufesp, 2)} {enforcement.unit_label(framework)}, {due} "
            f"({framework.cite('payment_days')}), em reais pelo valor da data do pagamento. "
            + offer
            + paid_so_far(record, record.total_ufesp, enforcement.unit_label(framework))
        )

    def done(self, record) -> str:
        return payment_done(record, "da multa", enforcement.paid_late(record))


class DateOnlyForm(StepForm):
    on = date_field("Data")


class DividaAtivaForm(DateOnlyForm):
    submit = "Enviar"

    def heading(self) -> str:
        return f"Enviar o auto {self.subject.number} à Dívida Ativa"

    def intro(self) -> str:
        last = enforcement.payment_last_day(self.subject)
        return f"O prazo de pagamento venceu em {br_date(last)}."

    def done(self, record) -> str:
        return f"Auto {record.number} enviado à Dívida Ativa."


class LiftForm(DateOnlyForm):
    """Cancelling an embargo, or lifting a suspension early."""

    submit = "Confirmar"

    @property
    def embargo(self) -> bool:
        return self.subject.kind == PenaltyKind.EMBARGO

    def heading(self) -> str:
        return "Cancelar o embargo" if self.embargo else "Levantar a suspensão"

    def intro(self) -> str:
        if self.embargo:
            return "O embargo é cancelado quando o infrator cumpre as exigências (art. 31 p.ú.)."
        return "A partir desta data o transportador ou a área voltam a operar."

    requirements_met = forms.CharField(
        label="Exigências do auto cumpridas",
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        max_length=2000,
        help_text="Quais exigências do auto o infrator cumpriu, como constatado (art. 31 p.ú.).",
    )
    requirements_met_on = date_field("Exigências cumpridas em", required=False)

    def __init__(self, data=None, *, subject, **kwargs):
        super().__init__(data, subject=subject, **kwargs)
        if not self.embargo:  # a suspension is lifted by date alone
            del self.fields["requirements_met"], self.fields["requirements_met_on"]

    def legal(self, default: str) -> str:
        return default if self.embargo else "Lei 3.978/2007 art. 25 IV"

    def done(self, penalty) -> str:
        if self.embargo:
            return (
                f"Embargo cancelado em {br_date(penalty.lifted_on)}: exigências cumpridas em "
                f"{br_date(penalty.requirements_met_on)} (art. 31 p.ú.)."
            )
        return (
            f"Penalidade levantada: {penalty.get_kind_display()}, em {br_date(penalty.lifted_on)}."
        )


class PenaltyForm(StepForm):
    """Applying one of the penalties of art. 25 II-V to a record."""

    kind: PenaltyKind
    submit = "Aplicar"

    def heading(self) -> str:
        return f"{self.kind.label} — auto {self.subject.number}"

    def done(self, penalty) -> str:
        return (
            f"Penalidade aplicada: {penalty.get_kind_display()}, a partir de "
            f"{br_date(penalty.starts_on)}."
        )


class EmbargoForm(PenaltyForm):
    kind = PenaltyKind.EMBARGO
    lead = "Descumprido o embargo, multa diária: {daily_fine} ({daily_fine_cite})."

    starts_on = date_field("Início do embargo")
    details = forms.CharField(
        label="Obra embargada e exigências",
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
    )


class SeizureForm(PenaltyForm):
    kind = PenaltyKind.SEIZURE
    lead = (
        "Os equipamentos são liberados quando sanada a irregularidade e pagos os custos de "
        "apreensão, remoção e guarda (art. 32 p.ú.)."
    )

    starts_on = date_field("Data da apreensão")
    details = forms.CharField(
        label="Equipamentos apreendidos e local de guarda",
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
    )


class SuspensionForm(PenaltyForm):
    kind = PenaltyKind.SUSPENSION
    lead = (
        "Transportador ou área vinculados ficam impedidos de emitir e receber CTRs desde o "
        "primeiro dia."
    )

    starts_on = date_field("Primeiro dia da suspensão")
    days = forms.IntegerField(label="Dias de suspensão", min_value=1)
    details = forms.CharField(
        label="Observações", widget=forms.Textarea(attrs={"rows": 2}), required=False
    )

    def __init__(self, data=None, *, subject, **kwargs):
        super().__init__(data, subject=subject, **kwargs)
        framework = subject.case.framework
        if framework.suspension_max_days:
            self.fields["days"].help_text = (
                f"No máximo {framework.suspension_max_days} dias "
                f"({framework.cite('suspension_max_days')})."
            )


class RevocationForm(PenaltyForm):
    kind = PenaltyKind.REVOCATION
    lead = "Cassação do alvará: transportador ou área vinculados ficam impedidos desde a data."

    starts_on = date_field("Cassação a partir de")
    details = forms.CharField(
        label="Observações", widget=forms.Textarea(attrs={"rows": 2}), required=False
    )


class BreachForm(StepForm):
    title = "Descumprimento do embargo"
    lead = "Cada dia de descumprimento constatado soma a multa diária: {daily_fine}."

    day = date_field("Dia do descumprimento")
    note = forms.CharField(
        label="O que foi constatado", widget=forms.Textarea(attrs={"rows": 2}), required=False
    )

    def done(self, breach) -> str:
        if self.subject.record.case.framework.embargo_daily_fine is None:
            return f"Descumprimento de {br_date(breach.day)} registrado."
        total = br_number(enforcement.embargo_fine_ufesp(self.subject))
        unit = self.terms["unit"]
        return f"Descumprimento de {br_date(breach.day)} registrado: total de {total} {unit}."


class EmbargoFineForm(DateOnlyForm):
    """Making the daily fines of the days of breach not yet charged payable (art. 31)."""

    submit = "Lançar"

    def heading(self) -> str:
        return "Lançar a multa diária do embargo"

    def intro(self) -> str:
        days = enforcement.uncharged_breaches(self.subject).count()
        framework, terms = self.subject.record.case.framework, self.terms
        if framework.embargo_daily_fine is None:
            return f"Multa diária {terms['daily_fine']} ({terms['daily_fine_cite']})."
        return (
            f"{days} dia(s) de descumprimento ainda sem cobrança: "
            f"{br_number(fines.embargo_fine(days, framework))} {terms['unit']} "
            f"({terms['daily_fine']}, {terms['daily_fine_cite']}), a pagar em "
            f"{terms['payment']} ({terms['payment_cite']}), em reais pelo valor da data do "
            "pagamento."
        )

    def done(self, charge) -> str:
        return (
            f"Multa diária lançada: {br_number(charge.amount_ufesp)} {self.terms['unit']}, a "
            "pagar até "
            f"{br_date(enforcement.charge_last_day(charge))}."
        )


class ChargePaymentForm(StepForm):
    paid_on = date_field(
        "Paga em", "O valor devido é calculado pela {unit} da data do pagamento ({money_cite})."
    )
    amount_brl = amount_field()
    guide = guide_field()

    def heading(self) -> str:
        return "Pagamento da multa diária do embargo"

    def intro(self) -> str:
        charge = self.subject
        return (
            f"{br_number(charge.amount_ufesp)} {self.terms['unit']}, a pagar até "
            f"{br_date(enforcement.charge_last_day(charge))}, em reais pelo valor da data do "
            "pagamento." + paid_so_far(charge, charge.amount_ufesp, self.terms["unit"])
        )

    def done(self, charge) -> str:
        return payment_done(charge, "da multa diária", enforcement.charge_paid_late(charge))


class ChargeDividaAtivaForm(DateOnlyForm):
    submit = "Enviar"

    def heading(self) -> str:
        return "Enviar a multa diária do embargo à Dívida Ativa"

    def intro(self) -> str:
        last = enforcement.charge_last_day(self.subject)
        return f"O prazo de pagamento vence em {br_date(last)}."

    def done(self, charge) -> str:
        return "Multa diária do embargo enviada à Dívida Ativa."


class CostsForm(StepForm):
    title = "Custos de apreensão, remoção e guarda"

    custody_costs_brl = BRDecimalField(
        label="Custos de apreensão, remoção e guarda (R$)",
        min_value=0,
        decimal_places=2,
        example="1250,00",
    )
    paid_on = date_field("Pagos em", "Deixe em branco enquanto não pagos.", required=False)

    def __init__(self, data=None, *, subject, **kwargs):
        initial = {"custody_costs_brl": subject.custody_costs_brl, "paid_on": subject.costs_paid_on}
        super().__init__(data, subject=subject, initial=initial, **kwargs)

    def done(self, penalty) -> str:
        paid = (
            f", pagos em {br_date(penalty.costs_paid_on)}."
            if penalty.costs_paid_on
            else ", ainda não pagos."
        )
        return f"Custos de {br_money(penalty.custody_costs_brl)} registrados{paid}"


class ReleaseForm(StepForm):
    title = "Liberação dos equipamentos apreendidos"
    lead = "Só depois de sanada a irregularidade e pagos os custos de apreensão, remoção e guarda."
    submit = "Liberar"

    on = date_field("Liberados em")
    irregularity_fixed = forms.BooleanField(
        label="A irregularidade objeto do auto foi sanada (art. 32 p.ú.)", required=False
    )

    def done(self, penalty) -> str:
        return f"Equipamentos liberados em {br_date(penalty.lifted_on)}."
