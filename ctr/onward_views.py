"""The receiving facility operator's onward CTRs (sorted waste leaving its facility, art. 3 III)
and its stock page, with the processing it records."""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

import audit
from config.br import br_number
from config.errors import add_to_form, errors_back_to
from pev_network.models import waste_class_short

from . import roles, services
from .custody import processing as ctr_processing
from .custody import stock
from .errors import CTRError
from .forms import ONWARD_FINDING_FIELDS, OnwardForm, OnwardWasteFormSet, PeriodForm, ProcessingForm
from .issue_views import issue_forms, map_context, try_issue
from .models import CTR, FacilityOperator, OnSiteProcessing
from .views import OPERATOR_SIDE, detail_cancel, operator_required, render_detail


def _onward_ctrs(request):
    """The onward CTRs leaving the operator's facility (art. 3 III)."""
    return (
        roles.visible_ctrs(request.user, CTR.objects.all())
        .filter(origin_facility=request.facility)
        .select_related("transporter", "vehicle", "equipment", "generator", "destination_facility")
        .defer("destination_facility__area")
    )


def _stock_rows(facility, day) -> list[dict]:
    """Each class the facility received up to `day`: its stock then and how much of it may
    leave (plus the municipality's sorting tolerance), as the onward rules count them."""
    return [
        {
            "waste_class": waste_class,
            "stock": line.stock_m3,
            "allowed": line.allowed_m3.quantize(Decimal("0.001")),
            "tolerance": line.tolerance_pct,
        }
        for waste_class, line in sorted(services.origin_stock(facility, day).items())
        if line.received_m3 > 0
    ]


def _in_stock(rows: list[dict]) -> set[str]:
    return {row["waste_class"] for row in rows if row["stock"] > 0}


@operator_required
def onward_new(request):
    """ "Emitir CTR de saída": sorted waste leaving the operator's facility for a licensed
    destination, carried by a registered transporter (services.issue_onward)."""
    facility = request.facility
    operator = (
        FacilityOperator.objects.select_related("generator").filter(facility=facility).first()
    )
    operator = operator.generator if operator else None
    stock_rows = _stock_rows(facility, timezone.localdate())
    in_stock = _in_stock(stock_rows)
    forms_ = issue_forms(
        request,
        lambda *data: OnwardForm(*data, facility=facility, operator=operator),
        lambda *data: OnwardWasteFormSet(*data, prefix="waste", form_kwargs={"in_stock": in_stock}),
    )
    if forms_ is None:
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    form, formset = forms_
    attempt = try_issue(
        request,
        form,
        formset,
        lambda warnings: services.issue_onward(
            request.user, form.cleaned_data["transporter"].pk, form.to_request(formset.lines())
        ),
        ONWARD_FINDING_FIELDS,
    )
    if attempt.ctr is not None:
        messages.success(request, f"{attempt.ctr.number} emitido.")
        return redirect("ctr_web:onward-detail", number=attempt.ctr.number)
    municipality = facility.municipality
    context = {
        "nav": "recebimentos",
        "section": "onward",
        "facility": facility,
        "operator": operator,
        "stock_rows": stock_rows,
        **attempt.context(form, formset),
        **map_context(municipality.ibge_code if municipality else ""),
    }
    return render(request, "ctr/onward_form.html", context, status=attempt.status)


@require_safe
@operator_required
def onward_detail(request, number: str):
    ctr = get_object_or_404(_onward_ctrs(request), number=number)
    audit.record(request, ctr, "Detalhe do CTR de saída")
    return render_detail(request, ctr, side=OPERATOR_SIDE)


@require_POST
@operator_required
@errors_back_to("ctr_web:onward-detail", "number")  # refused (received already, say)
def onward_cancel(request, number: str):
    return detail_cancel(
        request, get_object_or_404(_onward_ctrs(request), number=number), OPERATOR_SIDE
    )


ONWARD_PAGE_SIZE = 25
STOCK_DEFAULT_DAYS = 30


def _render_stock(request, processing: ProcessingForm | None = None, status: int = 200):
    """The facility's stock page: the balance per class over the period asked (the last 30
    days by default: on the first of a month "this month" would be one day), the stale-stock
    alerts of today, the onward CTRs and the on-site processing of the period, and the form
    that records processing."""
    facility = request.facility
    today = timezone.localdate()
    date_from, date_to = today - datetime.timedelta(days=STOCK_DEFAULT_DAYS - 1), today
    period = PeriodForm(request.GET or None, initial={"date_from": date_from, "date_to": date_to})
    if period.is_bound:
        if period.is_valid():
            date_from, date_to = period.cleaned_data["date_from"], period.cleaned_data["date_to"]
        elif status == 200:
            status = 400
    stock_rows = _stock_rows(facility, today)
    if processing is None:
        processing = ProcessingForm(prefix="b", in_stock=_in_stock(stock_rows))
    onward = _onward_ctrs(request).order_by("-transport_date", "-year", "-sequence")
    processed = OnSiteProcessing.objects.filter(facility=facility).select_related("recorded_by")
    if date_from:
        onward = onward.filter(transport_date__gte=date_from)
        processed = processed.filter(day__gte=date_from)
    if date_to:
        onward = onward.filter(transport_date__lte=date_to)
        processed = processed.filter(day__lte=date_to)
    page = Paginator(onward, ONWARD_PAGE_SIZE).get_page(request.GET.get("pagina"))
    query = request.GET.copy()
    query.pop("pagina", None)
    return render(
        request,
        "ctr/facility_stock.html",
        {
            "nav": "recebimentos",
            "section": "stock",
            "facility": facility,
            "period": period,
            "date_from": date_from,
            "date_to": date_to,
            "today": today,
            "balance": stock.balance(facility, date_from, date_to),
            "stale": stock.stale_stock(facility, today),
            "alert_days": stock.alert_days_of(facility, today),
            "stock_rows": stock_rows,
            "page": page,
            "query": query.urlencode(),
            "processed": processed[:100],
            "processing": processing,
        },
        status=status,
    )


@require_safe
@operator_required
def facility_stock(request):
    return _render_stock(request)


@require_POST
@operator_required
def processing_new(request):
    """Record volume recycled or reused at the facility (custody.processing.record_processing); its
    refusals go back to their fields on the stock page, with what was typed."""
    in_stock = _in_stock(_stock_rows(request.facility, timezone.localdate()))
    form = ProcessingForm(request.POST, prefix="b", in_stock=in_stock)
    if not form.is_valid():
        return _render_stock(request, form, status=400)
    data = form.cleaned_data
    try:
        done = ctr_processing.record_processing(
            request.user,
            request.facility,
            data["waste_class"],
            data["volume_m3"],
            data["day"],
            data["kind"],
            data["note"].strip(),
        )
    except CTRError as error:
        add_to_form(form, error)
        return _render_stock(request, form, status=error.status)
    messages.success(
        request,
        f"Beneficiamento registrado: {br_number(done.volume_m3, grouping=False)} m³ de "
        f"{waste_class_short(done.waste_class)} em {done.day:%d/%m/%Y} "
        f"({done.get_kind_display().lower()}).",
    )
    return redirect("ctr_web:facility-stock")
