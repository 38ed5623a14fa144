"""Pages of the printed CTR, its public verification, the worksite destination report and the
monthly fee statement. Thin: parse, scope by role, call ctr.reports / ctr.printing, render."""

from __future__ import annotations

import datetime

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_safe

import audit
from config import csv_safety
from config.br import br_number

from . import printing, reports, roles
from .models import CTR, Transporter, Worksite

ERROR_TEMPLATE = "ctr/documents/error.html"


def error_page(
    request: HttpRequest, status: int, title: str, message: str, **context
) -> HttpResponse:
    """An error in Portuguese, with the right status (never Django's English default)."""
    return render(
        request,
        ERROR_TEMPLATE,
        {"title": title, "message": message, "status": status, **context},
        status=status,
    )


def ctr_not_found(request: HttpRequest, number: str) -> HttpResponse:
    return error_page(
        request,
        404,
        "CTR não encontrado",
        f"Não há CTR com o número “{number[:40]}” que você possa consultar. Confira o número "
        "impresso no documento (formato CTR-0000000-AAAA-000000).",
        show_verify_form=True,
    )


# --- public verification ----------------------------------------------------------------------


@require_safe
def verify_form(request: HttpRequest) -> HttpResponse:
    """/verificar/?numero=…: type the number printed on the paper."""
    raw = request.GET.get("numero", "").strip()
    error = ""
    if raw:
        number = reports.normalize_number(raw)
        if number:
            return redirect("ctr-verify", number=number)
        error = (
            "Número inválido: use o formato impresso no CTR, por exemplo CTR-3518404-2026-000001."
        )
    return render(request, "ctr/documents/verify_form.html", {"value": raw, "error": error})


@require_safe
def verify(request: HttpRequest, number: str) -> HttpResponse:
    """Public: what the QR code of a printed CTR points to. Personal data masked (LGPD)."""
    ctr = reports.find_ctr(CTR.objects.all(), number)
    if ctr is None:
        response = ctr_not_found(request, number)
    else:
        response = render(request, "ctr/documents/verify.html", {"ctr": reports.public_view(ctr)})
    # The status of a CTR changes (received, refused): never serve a stale copy.
    response["Cache-Control"] = "no-store"
    response["X-Robots-Tag"] = "noindex"
    return response


# --- the printed CTR --------------------------------------------------------------------------


@login_required
@require_safe
def ctr_pdf(request: HttpRequest, number: str) -> HttpResponse:
    ctr = reports.find_ctr(roles.visible_ctrs(request.user, CTR.objects.all()), number)
    if ctr is None:
        return ctr_not_found(request, number)
    audit.record(request, ctr, "CTR impresso (PDF)")
    verify_url = request.build_absolute_uri(reverse("ctr-verify", args=[ctr.number]))
    response = HttpResponse(printing.ctr_pdf(ctr, verify_url), content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{ctr.number}.pdf"'
    return response


# --- worksite destination report --------------------------------------------------------------


def _report_scope(request: HttpRequest, pk: int) -> tuple[Worksite, Transporter | None] | None:
    """Núcleo and inspectors see the whole site; a transporter only its own CTRs there (and
    nothing when it has none); anyone else nothing."""
    worksite = Worksite.objects.select_related("generator").filter(pk=pk).first()
    if worksite is None:
        return None
    if roles.is_municipal(request.user):
        return worksite, None
    transporter = roles.transporter_of(request.user)
    if transporter is not None and reports.worksite_ctrs(worksite, transporter).exists():
        return worksite, transporter
    return None


def _report_not_found(request: HttpRequest) -> HttpResponse:
    return error_page(
        request,
        404,
        "Obra não encontrada",
        "Não há obra com este número entre as que você pode consultar.",
    )


@login_required
@require_safe
def worksite_report(request: HttpRequest, pk: int) -> HttpResponse:
    scope = _report_scope(request, pk)
    if scope is None:
        return _report_not_found(request)
    report = reports.worksite_report(*scope)
    return render(request, "ctr/documents/worksite_report.html", {"report": report})


@login_required
@require_safe
def worksite_report_pdf(request: HttpRequest, pk: int) -> HttpResponse:
    scope = _report_scope(request, pk)
    if scope is None:
        return _report_not_found(request)
    pdf = printing.worksite_report_pdf(reports.worksite_report(*scope))
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="relatorio-destinacao-obra-{pk}.pdf"'
    return response


# --- fee statement ----------------------------------------------------------------------------


def _bad_month(request: HttpRequest, period: str) -> HttpResponse:
    return error_page(
        request,
        400,
        "Mês inválido",
        f"“{period[:20]}” não é um mês válido: use o formato AAAA-MM, por exemplo "
        f"/taxas/{timezone.localdate():%Y-%m}/.",
    )


def _fee_scope(request: HttpRequest) -> tuple[Transporter | None, HttpResponse | None]:
    """(transporter, None) for a statement, (None, None) for the Núcleo's summary, or
    (None, error response)."""
    wanted = request.GET.get("transportador", "").strip()
    if roles.is_municipal(request.user):
        if not wanted:
            return None, None
        transporter = (
            Transporter.objects.filter(pk=int(wanted)).first() if wanted.isdigit() else None
        )
        if transporter is None:
            return None, error_page(
                request, 404, "Transportador não encontrado", "Confira o transportador informado."
            )
        return transporter, None
    own = roles.transporter_of(request.user)
    if own is None:
        return None, error_page(
            request,
            403,
            "Acesso restrito",
            "O extrato de taxas é do transportador e da equipe municipal.",
        )
    if wanted and wanted != str(own.pk):
        return None, error_page(
            request,
            404,
            "Transportador não encontrado",
            "Você só pode consultar o extrato do seu próprio cadastro.",
        )
    return own, None


def _neighbour_months(year: int, month: int) -> tuple[str, str]:
    first = datetime.date(year, month, 1)
    previous = first - datetime.timedelta(days=1)
    following = first + datetime.timedelta(days=32)
    return f"{previous:%Y-%m}", f"{following:%Y-%m}"


@login_required
@require_safe
def fee_current(request: HttpRequest) -> HttpResponse:
    query = f"?{request.GET.urlencode()}" if request.GET else ""
    period = f"{timezone.localdate():%Y-%m}"
    return redirect(reverse("fee-statement", args=[period]) + query)


@login_required
@require_safe
def fee_statement(request: HttpRequest, period: str) -> HttpResponse:
    month = reports.parse_month(period)
    if month is None:
        return _bad_month(request, period)
    transporter, error = _fee_scope(request)
    if error is not None:
        return error
    previous, following = _neighbour_months(*month)
    context = {
        "period": period,
        "month_label": reports.month_label(*month),
        "previous": previous,
        "following": following,
        "query": f"?transportador={transporter.pk}"
        if transporter and roles.is_municipal(request.user)
        else "",
    }
    if transporter is None:
        rows = reports.fee_summary(*month)
        totals = reports.fee_summary_totals(*month)
        return render(
            request, "ctr/documents/fee_summary.html", {**context, "rows": rows, "totals": totals}
        )
    statement = reports.fee_statement(transporter, *month)
    return render(
        request,
        "ctr/documents/fee_statement.html",
        {**context, "statement": statement, "totals": statement.fmt()},
    )


def _csv_response(filename: str) -> tuple[HttpResponse, csv_safety.SafeWriter]:
    """Semicolons, decimal comma and a UTF-8 BOM: what a Brazilian Excel opens as columns;
    text cells are never formulas (config/csv_safety.py)."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.write("\ufeff")
    return response, csv_safety.writer(response, delimiter=";", lineterminator="\r\n")


def _csv_decimal(value, places: int) -> str:
    return br_number(value, places, grouping=False)


@login_required
@require_safe
def fee_statement_csv(request: HttpRequest, period: str) -> HttpResponse:
    month = reports.parse_month(period)
    if month is None:
        return _bad_month(request, period)
    transporter, error = _fee_scope(request)
    if error is not None:
        return error
    if transporter is None:
        response, writer = _csv_response(f"taxas-{period}-transportadores.csv")
        writer.writerow(
            [
                "Transportador",
                "CNPJ/CPF",
                "Cadastro",
                "CTRs com taxa devida",
                "Taxa devida (UFESP)",
                "Valor devido (R$)",
                "CTRs pendentes",
                "Taxa pendente (UFESP)",
                "Valor pendente (R$)",
            ]
        )
        for row in reports.fee_summary(*month):
            writer.writerow(
                [
                    row.name,
                    row.document,
                    row.registration_number,
                    row.due_count,
                    _csv_decimal(row.due_ufesp, 2),
                    _csv_decimal(row.due_brl, 2),
                    row.pending_count,
                    _csv_decimal(row.pending_ufesp, 2),
                    _csv_decimal(row.pending_brl, 2),
                ]
            )
        return response
    statement = reports.fee_statement(transporter, *month)
    response, writer = _csv_response(f"taxas-{period}-{transporter.registration_number}.csv")
    writer.writerow(
        [
            "Número do CTR",
            "Data do transporte",
            "Situação do CTR",
            "Cobrança",
            "Área de destino",
            "Município",
            "Volume (m³)",
            "Taxa (UFESP)",
            "Valor (R$)",
        ]
    )
    for line in statement.lines:
        writer.writerow(
            [
                line.number,
                line.transport_date,
                line.status_label,
                "Devida" if line.due else "Pendente",
                line.facility,
                line.municipality,
                _csv_decimal(line.volume_m3, 3),
                _csv_decimal(line.fee, 2),
                _csv_decimal(line.value_brl, 2),
            ]
        )
    return response
