"""The figures of a penalty framework as pages and documents say them, each with its source:
"72 horas", "30 dias corridos da lavratura do auto", "1 UFESP por dia". One home for the
phrases, so that the step pages, the timeline and the PDFs cannot word a deadline differently."""

from __future__ import annotations

from config.br import br_number

from .. import fines
from ..models.frameworks import DayCount, EditalReceipt, Escalation, PaymentFrom, PenaltyFramework

EDITAL_RULES = {
    # Lei 3.978/2007 art. 28 §2, quoted as the law writes it, then the reading adopted.
    EditalReceipt.FIRST_WORKING_DAY: "os prazos contam “a partir do primeiro dia útil da "
    "publicação”: do primeiro dia útil seguinte ao da publicação (publicado numa sexta-feira, "
    "contam da segunda; antes de um feriado, do dia útil seguinte), não prosperando a alegação "
    "de ignorância",
    EditalReceipt.END_OF_PERIOD: "presume-se a ciência no término do prazo de {days} dias "
    "corridos do edital, contado da publicação; os prazos correm do dia seguinte",
    EditalReceipt.PUBLICATION: "presume-se a ciência na data da publicação; os prazos correm do "
    "dia seguinte",
}


def days(count: int | None, day_count: str) -> str:
    return f"{count} {DayCount(day_count).label}" if count else "—"


def terms_of(framework: PenaltyFramework) -> dict[str, str]:
    """The framework's figures in words; `<name>_cite` is the source of each."""
    unit = fines.UNIT_NAMES[framework.money_unit]
    # Rio de Janeiro: no deadline to pay in the law, said instead of one.
    no_deadline = framework.payment_deadline_notice()
    payment = no_deadline or (
        days(framework.payment_days, framework.payment_day_count)
        + f" {PaymentFrom(framework.payment_from).label}"
    )
    post_appeal = (
        days(
            framework.post_appeal_payment_days,
            framework.post_appeal_day_count or framework.payment_day_count,
        )
        + " da decisão"
        if framework.post_appeal_payment_days
        else payment
        if no_deadline
        else payment
        + (
            # Lei 3.978/2007 art. 36 with no other source: the appeal holds the count back.
            ", sem contar os dias do recurso ao julgamento: o restante corre da decisão"
            if framework.appeal_suspensive and framework.payment_from != PaymentFrom.FINAL
            else ""
        )
    )
    figures = {
        "unit": unit,
        "hours": f"{framework.repair_hours} horas"
        if framework.repair_hours
        else "as horas fixadas na notificação",
        "edital": EDITAL_RULES[framework.edital_receipt].format(days=framework.edital_days),
        "appeal": days(framework.appeal_days, framework.appeal_day_count)
        + " do recebimento"
        + ("" if framework.appeal_suspensive else ", sem efeito suspensivo"),
        "payment": payment,
        "post_appeal": post_appeal,
        "discount": f"{framework.discount_percent}% se pago em até {framework.discount_days} "
        "dias da lavratura"
        if framework.discount_percent
        else "nenhum",
        "recidivism": f"× {br_number(framework.recidivism_factor)}; "
        + Escalation(framework.recidivism_escalation).label.lower(),
        "obstruction": f"× {br_number(framework.obstruction_factor)}"
        if framework.obstruction_factor
        else "agravante registrado, sem fator",
        "daily_fine": f"{br_number(framework.embargo_daily_fine)} {unit} por dia"
        if framework.embargo_daily_fine is not None
        else "não prevista",
        "suspension": f"até {framework.suspension_max_days} dias"
        if framework.suspension_max_days
        else "não prevista",
        "revocation": "cassação do alvará"
        if framework.revocation_after_suspension
        else "não prevista",
        "money": framework.money_index,
        "authority": framework.authority,
    }
    sources = {
        "hours": "repair_hours",
        "edital": "edital_receipt",
        "appeal": "appeal_days",
        "payment": "payment_days",
        "post_appeal": "post_appeal_payment_days",
        "discount": "discount_percent",
        "recidivism": "recidivism_escalation",
        "obstruction": "obstruction_factor",
        "daily_fine": "embargo_daily_fine",
        "suspension": "suspension_max_days",
        "revocation": "revocation_after_suspension",
        "money": "money_unit",
        "authority": "authority",
    }
    figures.update({f"{name}_cite": framework.cite(field) for name, field in sources.items()})
    return figures
