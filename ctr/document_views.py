"""Pages of the printed CTR, its public verification, the worksite destination report, the
Certificado de Destinação Final (and its public verification) and the monthly fee statement.
Thin: parse, scope by role, call ctr.reports / ctr.custody.certificates / ctr.printing, render."""

from __future__ import annotations

import datetime

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_safe

import audit
from config.br import br_number
from config.csv_safety import csv_response
from config.replica import replica_readable
from jurisdiction.access import DataScope, declare
from jurisdiction.scope import jurisdiction_of
from maps import municipal
from pev_network.letterhead import letterhead_of
from pev_network.models import Municipality

from . import printing, reports, roles
from .custody import certificates
from .field import corrections
from .models import CTR, DECLARATION_CODE_PREFIX, Generator, Transporter, Worksite

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


@replica_readable
@declare(DataScope.PUBLIC)
@require_safe
def verify_form(request: HttpRequest, ibge: str | None = None) -> HttpResponse:
    """/verificar/?numero=… (and /m/<IBGE code>/verificar/, the box with the municipality's
    name): type the number printed on the paper, as the gate search reads it:
    the whole number with or without "CTR" and the dashes, or its last digits with the
    municipality chosen (the page's, or `municipio`); or a CDF's or a Habite-se
    declaration's code. Public: every municipality's CTRs, the one chosen narrowing them."""
    place = municipal.place(ibge) if ibge else municipal.Place(None)
    raw = request.GET.get("numero", "").strip()
    chosen = place.municipality if ibge else _chosen_municipality(request.GET.get("municipio"))
    error = ""
    if raw:
        target, error = _verification_target(raw, chosen)
        if target:
            return redirect(target)
    return render(
        request,
        "ctr/documents/verify_form.html",
        {
            "value": raw,
            "error": error,
            "municipalities": [] if ibge else municipal.choices(),
            "chosen": chosen.ibge_code if chosen else "",
            **place.context(),
        },
    )


def _chosen_municipality(ibge: str | None):
    if not ibge:
        return None
    return next((m for m in municipal.choices() if m.ibge_code == ibge), None)


def _verification_target(raw: str, municipality) -> tuple[str, str]:
    """Where the text typed in the box leads, or the Portuguese error to show."""
    code = certificates.normalize_code(raw)
    if code:
        return reverse("cdf-verify", args=[code]), ""
    code = certificates.normalize_code(raw, DECLARATION_CODE_PREFIX)
    if code:
        return reverse("generators:declaration-verify", args=[code]), ""
    digits = reports.number_digits(raw)
    if digits is None:
        return "", (
            "Número inválido: use o número impresso no CTR (por exemplo "
            "CTR-3518404-2026-000001, com ou sem o “CTR” e os traços, ou só os últimos "
            "dígitos com o município), ou o código do CDF (CDF-ABCD-EFGH-JKMN) ou da "
            "declaração de Habite-se (HAB-ABCD-EFGH-JKMN)."
        )
    if len(digits) < 17 and municipality is None:
        return "", (
            f"Só os últimos dígitos ({digits}): escolha o município do CTR, ou digite o "
            "número inteiro."
        )
    found = reports.numbers_typed(CTR.objects.all(), raw, municipality)
    if len(found) == 1:
        return reverse("ctr-verify", args=[found[0]]), ""
    if found:
        return "", (
            f"Mais de um CTR termina em {digits}: digite também o ano, por exemplo "
            f"2026-{digits.zfill(6)}."
        )
    return "", f"Nenhum CTR com o número {raw}. Confira o número impresso no documento."


@replica_readable
@declare(DataScope.PUBLIC)
@require_safe
def verify(request: HttpRequest, number: str) -> HttpResponse:
    """Public: what the QR code of a printed CTR points to, under the name of the CTR's
    municipality. Personal data masked (LGPD)."""
    ctr = reports.find_ctr(CTR.objects.all(), number)
    if ctr is None:
        response = ctr_not_found(request, number)
    else:
        response = render(
            request,
            "ctr/documents/verify.html",
            {
                **municipal.of(ctr.municipality).context(),
                "ctr": reports.public_view(ctr),
                # Corrections after reception: the fields' names, no values.
                "corrections": corrections.applied_notes(ctr, False),
            },
        )
    # The status of a CTR changes (received, refused): never serve a stale copy.
    response["Cache-Control"] = "no-store"
    response["X-Robots-Tag"] = "noindex"
    return response


# --- the printed CTR --------------------------------------------------------------------------


@declare(DataScope.SIGNED_IN)
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


def _worksite_scope(request: HttpRequest, pk: int) -> certificates.Scope | None:
    """The worksite's loads the user may see (certificates.for_user: the municipality and the
    worksite's generator all, a transporter its own); None when there is nothing for the user
    there."""
    worksite = Worksite.objects.select_related("generator").filter(pk=pk).first()
    if worksite is None:
        return None
    return certificates.for_user(request.user, certificates.Scope.of_worksite(worksite))


def _report_not_found(request: HttpRequest) -> HttpResponse:
    return error_page(
        request,
        404,
        "Obra não encontrada",
        "Não há obra com este número entre as que você pode consultar.",
    )


@declare(DataScope.SIGNED_IN)
@login_required
@require_safe
def worksite_report(request: HttpRequest, pk: int) -> HttpResponse:
    scope = _worksite_scope(request, pk)
    if scope is None:
        return _report_not_found(request)
    report = reports.worksite_report(scope.worksite, scope.transporter)
    # The worksite's municipality's law, in the text and the footer.
    head = letterhead_of(certificates.worksite_municipality(scope.worksite))
    return render(
        request,
        "ctr/documents/worksite_report.html",
        {"report": report, "page_letterhead": head},
    )


@declare(DataScope.SIGNED_IN)
@login_required
@require_safe
def worksite_report_pdf(request: HttpRequest, pk: int) -> HttpResponse:
    scope = _worksite_scope(request, pk)
    if scope is None:
        return _report_not_found(request)
    pdf = printing.worksite_report_pdf(reports.worksite_report(scope.worksite, scope.transporter))
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="relatorio-destinacao-obra-{pk}.pdf"'
    return response


# --- Certificado de Destinação Final ----------------------------------------------------------


def _no_store(response: HttpResponse) -> HttpResponse:
    # A certificate's chain changes (stock shipped on, a reception): never serve a stale copy.
    response["Cache-Control"] = "no-store"
    return response


def _generator_not_found(request: HttpRequest) -> HttpResponse:
    return error_page(
        request,
        404,
        "Gerador não encontrado",
        "Não há gerador com este número entre os que você pode consultar.",
    )


def _period(request: HttpRequest) -> tuple[datetime.date | None, datetime.date | None] | None:
    """?date_from=&date_to= (AAAA-MM-DD, both optional); None when either is not a date or the
    period is inverted."""
    days = []
    for name in ("date_from", "date_to"):
        raw = request.GET.get(name, "").strip()
        try:
            days.append(datetime.date.fromisoformat(raw) if raw else None)
        except ValueError:
            return None
    date_from, date_to = days
    if date_from and date_to and date_from > date_to:
        return None
    return date_from, date_to


def _generator_cdf_scope(
    request: HttpRequest, pk: int
) -> tuple[certificates.Scope | None, HttpResponse | None]:
    period = _period(request)
    if period is None:
        return None, error_page(
            request,
            400,
            "Período inválido",
            "Informe as datas no formato AAAA-MM-DD, por exemplo ?date_from=2026-01-01&"
            "date_to=2026-12-31, com o início antes do fim.",
        )
    generator = Generator.objects.filter(pk=pk).first()
    scope = (
        certificates.for_user(request.user, certificates.Scope(generator, None, *period))
        if generator is not None
        else None
    )
    return scope, None if scope is not None else _generator_not_found(request)


def _cdf_page(request: HttpRequest, scope: certificates.Scope, pdf_url: str) -> HttpResponse:
    issued, cdf = certificates.issue(scope, request.user)
    audit.record(request, scope.worksite or scope.generator, "Certificado de destinação final")
    return _no_store(
        render(
            request,
            "ctr/documents/cdf.html",
            {
                "issued": issued,
                "cdf": cdf,
                "pdf_url": pdf_url,
                # The certificate's municipality's law (or the platform's).
                "page_letterhead": certificates.letterhead(issued, cdf),
            },
        )
    )


def _cdf_pdf(request: HttpRequest, scope: certificates.Scope) -> HttpResponse:
    issued, cdf = certificates.issue(scope, request.user)
    audit.record(request, scope.worksite or scope.generator, "Certificado de destinação (PDF)")
    verify_url = request.build_absolute_uri(reverse("cdf-verify", args=[issued.code]))
    response = HttpResponse(
        printing.cdf_pdf(issued, cdf, verify_url), content_type="application/pdf"
    )
    response["Content-Disposition"] = f'inline; filename="{issued.code}.pdf"'
    return _no_store(response)


@declare(DataScope.SIGNED_IN)
@login_required
@require_safe
def worksite_cdf(request: HttpRequest, pk: int) -> HttpResponse:
    scope = _worksite_scope(request, pk)
    if scope is None:
        return _report_not_found(request)
    return _cdf_page(request, scope, reverse("worksite-cdf-pdf", args=[pk]))


@declare(DataScope.SIGNED_IN)
@login_required
@require_safe
def worksite_cdf_pdf(request: HttpRequest, pk: int) -> HttpResponse:
    scope = _worksite_scope(request, pk)
    if scope is None:
        return _report_not_found(request)
    return _cdf_pdf(request, scope)


@declare(DataScope.SIGNED_IN)
@login_required
@require_safe
def generator_cdf(request: HttpRequest, pk: int) -> HttpResponse:
    scope, error = _generator_cdf_scope(request, pk)
    if error is not None:
        return error
    query = f"?{request.GET.urlencode()}" if request.GET else ""
    return _cdf_page(request, scope, reverse("generator-cdf-pdf", args=[pk]) + query)


@declare(DataScope.SIGNED_IN)
@login_required
@require_safe
def generator_cdf_pdf(request: HttpRequest, pk: int) -> HttpResponse:
    scope, error = _generator_cdf_scope(request, pk)
    if error is not None:
        return error
    return _cdf_pdf(request, scope)


@replica_readable
@declare(DataScope.PUBLIC)
@require_safe
def cdf_verify(request: HttpRequest, code: str) -> HttpResponse:
    """Public: what the QR code of a printed certificate points to. The content as issued,
    personal data masked as on the CTR's page (LGPD), and whether the chain changed since."""
    verification = certificates.verify(code)
    if verification is None:
        response = error_page(
            request,
            404,
            "Certificado não encontrado",
            f"Não há certificado de destinação com o código “{code[:40]}”. Confira o código "
            "impresso no documento (formato CDF-XXXX-XXXX-XXXX).",
            show_verify_form=True,
        )
    else:
        response = render(
            request,
            "ctr/documents/cdf_verify.html",
            {
                **municipal.of(
                    certificates.municipality_of(verification.issued, verification.certificate)
                ).context(),
                "issued": verification.issued,
                "certificate": verification.certificate,
                "subject": certificates.public_subject(verification.certificate.subject),
                "current": verification.current,
                "changed": verification.changed,
            },
        )
    response["X-Robots-Tag"] = "noindex"
    return _no_store(response)


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
        # A transporter of the user's municipalities; another's does not exist for it.
        transporter = (
            Transporter.objects.visible_to(request.user).filter(pk=int(wanted)).first()
            if wanted.isdigit()
            else None
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


def _fee_municipality(request: HttpRequest) -> int | None:
    """The staff's fees are their current municipality's (each collects its own, art. 12 §3);
    a transporter's statement has the lines of every municipality, each named."""
    if roles.is_municipal(request.user):
        return jurisdiction_of(request.user).current_id
    return None


def _neighbour_months(year: int, month: int) -> tuple[str, str]:
    first = datetime.date(year, month, 1)
    previous = first - datetime.timedelta(days=1)
    following = first + datetime.timedelta(days=32)
    return f"{previous:%Y-%m}", f"{following:%Y-%m}"


@declare(DataScope.SIGNED_IN)
@login_required
@require_safe
def fee_current(request: HttpRequest) -> HttpResponse:
    query = f"?{request.GET.urlencode()}" if request.GET else ""
    period = f"{timezone.localdate():%Y-%m}"
    return redirect(reverse("fee-statement", args=[period]) + query)


@declare(DataScope.SIGNED_IN)
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
    within = _fee_municipality(request)
    if transporter is None:
        rows = reports.fee_summary(*month, within)
        totals = reports.fee_summary_totals(*month, within)
        collector = (
            Municipality.objects.filter(pk=within).values_list("fee_collector", flat=True).first()
            if within
            else ""
        )
        return render(
            request,
            "ctr/documents/fee_summary.html",
            {
                **context,
                "rows": rows,
                "totals": totals,
                "ufesp": reports.year_rate(month[0]),
                "collector": collector,
            },
        )
    statement = reports.fee_statement(transporter, *month, within)
    return render(
        request,
        "ctr/documents/fee_statement.html",
        {**context, "statement": statement, "totals": statement.fmt()},
    )


def _csv_decimal(value, places: int) -> str:
    return br_number(value, places, grouping=False)


@declare(DataScope.SIGNED_IN)
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
        summary = reports.fee_summary(*month, _fee_municipality(request))
        return csv_response(
            f"taxas-{period}-transportadores.csv",
            [
                "Transportador",
                "CNPJ/CPF",
                "Município",
                "Licença",
                "CTRs com taxa devida",
                "Taxa devida (UFESP)",
                "Valor devido (R$)",
                "CTRs pendentes",
                "Taxa pendente (UFESP)",
                "Valor pendente (R$)",
            ],
            (
                [
                    row.name,
                    row.document,
                    row.municipality,
                    row.licence_number,
                    row.due_count,
                    _csv_decimal(row.due_ufesp, 2),
                    _csv_decimal(row.due_brl, 2),
                    row.pending_count,
                    _csv_decimal(row.pending_ufesp, 2),
                    _csv_decimal(row.pending_brl, 2),
                ]
                for row in summary
            ),
        )
    statement = reports.fee_statement(transporter, *month, _fee_municipality(request))
    return csv_response(
        f"taxas-{period}-transportador-{transporter.pk}.csv",
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
        ],
        (
            [
                line.number,
                line.transport_date,
                line.status_label,
                "Devida" if line.due else "Pendente",
                line.facility,
                line.municipality,
                _csv_decimal(line.volume_m3, 3),
                _csv_decimal(line.fee, 2),
                # Empty while the year's UFESP is not registered.
                "" if line.value_brl is None else _csv_decimal(line.value_brl, 2),
            ]
            for line in statement.lines
        ),
    )
