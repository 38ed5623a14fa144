"""The notice and the deliveries of the notice and the record: by hand or mail, a failed
delivery, the edital that supplies it (art. 28 §2), and the repair (art. 27, art. 30 §2)."""

from __future__ import annotations

import datetime

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone

from config.br import br_date

from .. import enforcement
from ..deadlines import br_deadline
from ..enforcement.facts import case_of
from ..models.enforcement import (
    FAILURE_OUTCOMES,
    IMPRACTICABLE,
    INDIVIDUAL_DELIVERY,
    DeliveryMethod,
    DeliveryOutcome,
    Notice,
)
from .fields import StepForm, date_field, datetime_field

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
