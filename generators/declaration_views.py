"""Pages of the Habite-se destination declaration (Lei 3.978/2007 art. 9 p.ú. II): the
generator asks for it on its worksite; the Núcleo's queue and review page (the comparison of
planned, transported and destined volumes, the certificate's conclusion), where it issues or
refuses it; the declaration's PDF and its public verification page. Thin: the forms parse,
generators.declarations decides, generators.declaration_pdf draws."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

import audit
from config.errors import DomainError, add_to_form
from config.replica import replica_readable
from ctr import roles
from ctr.custody import certificates
from ctr.forms import DATE_FORMATS, DateInput
from ctr.models import Worksite
from jurisdiction.access import DataScope, declare
from maps import municipal

from . import declaration_pdf, declarations
from .models import DeclarationStatus, HabiteSeDeclaration

TEMPLATES = "generators/declarations/"


class RequestForm(forms.Form):
    ended_on = forms.DateField(
        label="Término da obra",
        input_formats=DATE_FORMATS,
        widget=DateInput(),
        help_text="O dia em que a obra terminou: não pode ser depois de hoje nem antes do início.",
    )
    note = forms.CharField(
        label="Observação para o Núcleo",
        required=False,
        max_length=declarations.NOTE_MAX,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Por exemplo, o que foi feito de uma carga recusada por uma área.",
    )


class IssueForm(forms.Form):
    refused_note = forms.CharField(
        label="Cargas recusadas: o que foi feito delas",
        required=False,
        max_length=declarations.NOTE_MAX,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Obrigatório quando uma área recusou uma carga da obra: sai impresso na "
        "declaração.",
    )


class RefuseForm(forms.Form):
    reasons = forms.CharField(
        label="Motivos da recusa",
        max_length=declarations.NOTE_MAX,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="O gerador recebe os motivos por e-mail e pode pedir de novo depois.",
    )


def error_page(request: HttpRequest, status: int, title: str, message: str, **context):
    # ctr's error and refusal pages, so that every refusal of the site looks alike.
    return render(
        request,
        "ctr/documents/error.html",
        {"title": title, "message": message, "status": status, **context},
        status=status,
    )


def forbidden(request: HttpRequest, message: str) -> HttpResponse:
    return render(request, "ctr/forbidden.html", {"message": message}, status=403)


def _no_store(response: HttpResponse) -> HttpResponse:
    # The figures follow the chain of custody, which changes: never a stale copy.
    response["Cache-Control"] = "no-store"
    return response


def _not_found(request: HttpRequest, title: str = "Pedido não encontrado") -> HttpResponse:
    return error_page(
        request,
        404,
        title,
        "Não há declaração de destinação com este número entre as que você pode consultar.",
    )


# --- the generator ----------------------------------------------------------------------------


@declare(DataScope.SIDE)
@login_required
def request_page(request: HttpRequest, pk: int) -> HttpResponse:
    """/gerador/obras/<id>/habite-se/: the worksite's figures, whether the declaration can be
    issued now, its requests and decisions, and the form to ask for it."""
    generator = roles.generator_of(request.user)
    if generator is None:
        return forbidden(
            request,
            "Esta página é do gerador da obra. O seu usuário não está vinculado a um gerador.",
        )
    worksite = (
        Worksite.objects.select_related("generator", "municipality")
        .filter(pk=pk, generator=generator)
        .first()
    )
    if worksite is None:
        return error_page(
            request, 404, "Obra não encontrada", "Não há obra com este número entre as suas."
        )
    status = 200
    form = RequestForm(request.POST or None)
    review = declarations.review(worksite)
    if request.method == "POST":
        if form.is_valid():
            try:
                declaration = declarations.request(
                    worksite, request.user, form.cleaned_data["ended_on"], form.cleaned_data["note"]
                )
            except declarations.Blocked as error:
                # A load left the worksite since the page offered the form: the page lists it
                # again, with no form to send until it is destined.
                messages.error(request, error.message)
                review = declarations.review(worksite)
                status = error.status
            except DomainError as error:
                add_to_form(form, error)
                status = error.status
            else:
                messages.success(
                    request,
                    f"Pedido nº {declaration.pk} enviado ao Núcleo Permanente de Gestão. Você "
                    "recebe a decisão por e-mail.",
                )
                return redirect("generators:declaration-request", pk=pk)
        else:
            status = 400
    history = list(worksite.declarations.select_related("decided_by"))
    settled = next((d for d in history if d.status != DeclarationStatus.REFUSED), None)
    audit.record(request, worksite, "Habite-se: pedido do gerador")
    return _no_store(
        render(
            request,
            TEMPLATES + "request.html",
            {
                "worksite": worksite,
                "review": review,
                "history": history,
                "latest": history[0] if history else None,
                "settled": settled,
                # No form while a request is open or once issued, unless a stale tab posted
                # one: then it comes back with the refusal.
                "form": form if (settled is None and review.can_issue) or form.errors else None,
                "waits_for_blockers": settled is None and not review.can_issue,
            },
            status=status,
        )
    )


# --- the Núcleo -------------------------------------------------------------------------------

QUEUE_FILTERS = (
    (DeclarationStatus.REQUESTED, "Em análise"),
    (DeclarationStatus.ISSUED, "Emitidas"),
    (DeclarationStatus.REFUSED, "Recusadas"),
    ("todas", "Todas"),
)


@require_safe
@roles.municipal_only
def queue(request: HttpRequest) -> HttpResponse:
    """/nucleo/habite-se/: the requests waiting for a decision (or the decided ones)."""
    chosen = request.GET.get("situacao", DeclarationStatus.REQUESTED)
    if chosen not in {value for value, _ in QUEUE_FILTERS}:
        chosen = DeclarationStatus.REQUESTED
    items = declarations.queue(request.user, None if chosen == "todas" else chosen)[:200]
    return render(
        request,
        TEMPLATES + "queue.html",
        {"nav": "nucleo", "items": items, "filters": QUEUE_FILTERS, "chosen": chosen},
    )


def _declaration(request: HttpRequest, pk: int) -> HabiteSeDeclaration | None:
    """The declaration, if the user sees it (its worksite's generator, its municipality's
    staff); another's is as if it did not exist."""
    return (
        HabiteSeDeclaration.objects.visible_to(request.user)
        .select_related(
            "worksite",
            "worksite__generator",
            "worksite__municipality",
            "requested_by",
            "decided_by",
            "certificate",
        )
        .filter(pk=pk)
        .first()
    )


def _review_page(
    request: HttpRequest,
    declaration: HabiteSeDeclaration,
    issue_form: IssueForm | None = None,
    refuse_form: RefuseForm | None = None,
    status: int = 200,
) -> HttpResponse:
    audit.record(request, declaration.worksite, "Habite-se: análise do Núcleo")
    waiting = declaration.status == DeclarationStatus.REQUESTED
    decides = waiting and roles.is_nucleo(request.user, declaration.worksite.municipality_id)
    return _no_store(
        render(
            request,
            TEMPLATES + "review.html",
            {
                "nav": "nucleo",
                "declaration": declaration,
                "worksite": declaration.worksite,
                "review": declarations.review(declaration.worksite),
                "decides": decides,
                "issue_form": (issue_form or IssueForm(prefix="emitir")) if decides else None,
                "refuse_form": (refuse_form or RefuseForm(prefix="recusar")) if decides else None,
                "facts": (
                    declarations.facts(declaration)
                    if declaration.status == DeclarationStatus.ISSUED
                    else None
                ),
            },
            status=status,
        )
    )


@require_safe
@roles.municipal_only
def review_page(request: HttpRequest, pk: int) -> HttpResponse:
    declaration = _declaration(request, pk)
    if declaration is None:
        return _not_found(request)
    return _review_page(request, declaration)


def _decide(request: HttpRequest, pk: int, form_class, prefix: str, verb: str, act, done: str):
    """Issue or refuse from the review page: its form with what was typed and the refusal
    beside it, or back to the page with `done`."""
    declaration = _declaration(request, pk)
    if declaration is None:
        return _not_found(request)
    try:
        declarations.require_nucleo(request.user, verb, declaration.worksite)
    except DomainError as error:
        if error.status == 404:
            return _not_found(request)
        return forbidden(request, error.message)
    form = form_class(request.POST, prefix=prefix)
    status = 400
    if form.is_valid():
        try:
            decided = act(declaration, request.user, **form.cleaned_data)
        except DomainError as error:
            add_to_form(form, error)
            status = error.status
        else:
            messages.success(request, done.format(declaration=decided))
            return redirect("generators:declaration-review", pk=pk)
    forms_ = {"issue_form": None, "refuse_form": None}
    forms_["issue_form" if form_class is IssueForm else "refuse_form"] = form
    return _review_page(request, declaration, status=status, **forms_)


@require_POST
@roles.municipal_only
def issue(request: HttpRequest, pk: int) -> HttpResponse:
    return _decide(
        request,
        pk,
        IssueForm,
        "emitir",
        "emite",
        declarations.issue,
        "Declaração emitida: código {declaration.code}. O gerador foi avisado por e-mail.",
    )


@require_POST
@roles.municipal_only
def refuse(request: HttpRequest, pk: int) -> HttpResponse:
    return _decide(
        request,
        pk,
        RefuseForm,
        "recusar",
        "recusa",
        declarations.refuse,
        "Pedido nº {declaration.pk} recusado. O gerador recebeu os motivos por e-mail.",
    )


# --- the document -----------------------------------------------------------------------------


@declare(DataScope.SIGNED_IN)  # its generator's and its municipality's (visible_to)
@login_required
@require_safe
def pdf(request: HttpRequest, pk: int) -> HttpResponse:
    """The issued declaration in PDF, for the generator and the municipality."""
    declaration = _declaration(request, pk)
    if (
        declaration is None
        or declaration.status != DeclarationStatus.ISSUED
        or not declarations.can_see(request.user, declaration)
    ):
        return _not_found(request, "Declaração não encontrada")
    audit.record(request, declaration.worksite, "Habite-se: declaração (PDF)")
    verify_url = request.build_absolute_uri(
        reverse("generators:declaration-verify", args=[declaration.code])
    )
    certificate_url = request.build_absolute_uri(
        reverse("cdf-verify", args=[declaration.certificate.code])
    )
    response = HttpResponse(
        declaration_pdf.declaration_pdf(declaration, verify_url, certificate_url),
        content_type="application/pdf",
    )
    response["Content-Disposition"] = f'inline; filename="{declaration.code}.pdf"'
    return response


@replica_readable
@declare(DataScope.PUBLIC)
@require_safe
def verify(request: HttpRequest, code: str) -> HttpResponse:
    """Public: what the QR code of a printed declaration points to, under the name of the
    worksite's municipality. Its facts as issued, personal data masked as
    on the certificate's page (LGPD), and whether the chain of custody behind it changed
    since."""
    verification = declarations.verify(code)
    if verification is None:
        response = error_page(
            request,
            404,
            "Declaração não encontrada",
            f"Não há declaração de destinação emitida com o código “{code[:40]}”. Confira o "
            "código impresso no documento (formato HAB-XXXX-XXXX-XXXX).",
            show_verify_form=True,
        )
    else:
        worksite = verification.declaration.worksite
        place = municipal.of(certificates.worksite_municipality(worksite))
        response = render(
            request,
            TEMPLATES + "verify.html",
            {**place.context(), "verification": verification, "nav": "verificar"},
        )
    response["X-Robots-Tag"] = "noindex"
    return _no_store(response)
