"""The generator's worksites on the web (pt-BR, /gerador/obras/): its list, the registration
and edit form with the map to click or draw on, and the worksite's page. The generator's
account sees and edits its own; the staff those of its municipalities (the list: of the one
it works in now), and registers on a generator's behalf there. Thin: parse with
worksite_forms, call generators.worksites, render."""

from __future__ import annotations

import functools
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import F
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

import audit
from config.errors import DomainError
from ctr import roles
from ctr.documents import normalize_document
from ctr.models import CTRStatus, Worksite
from jurisdiction.access import DataScope, declare, reads_only
from jurisdiction.scope import AUDITOR_REFUSAL, jurisdiction_of, municipalities

from . import worksite_layers, worksites
from .comparison import worksite_comparison
from .worksite_forms import WorksiteForm

PAGE_SIZE = 25
# The CTRs listed (and their origins drawn) on a worksite's page: the most recent.
RECENT_CTRS = 200
REGISTERED_FILTERS = {
    "cadastradas": {"registered_at__isnull": False},
    "sem-cadastro": {"registered_at__isnull": True},
}


def worksite_role_required(view):
    """Signed in, as a generator's account or the municipality; anyone else a 403. Each sees
    what Worksite.objects.visible_to gives it (its own, its municipalities')."""

    @declare(DataScope.SIGNED_IN)
    @login_required
    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        if not worksites.may_register(request.user):
            return render(
                request,
                "ctr/forbidden.html",
                {
                    "message": "Esta área é dos geradores e do Núcleo. O seu usuário não está "
                    "vinculado a um gerador."
                },
                status=403,
            )
        if request.method == "POST" and reads_only(request.user):
            return render(request, "ctr/forbidden.html", {"message": AUDITOR_REFUSAL}, status=403)
        return view(request, *args, **kwargs)

    return wrapped


def _nav(request) -> str:
    """The main menu's item: the generator's area, or the Núcleo's."""
    return "nucleo" if roles.is_municipal(request.user) else "gerador"


def _visible(request, pk: int) -> Worksite:
    """The worksite, if this user sees it (another generator's is a 404, as if absent)."""
    queryset = worksites.visible_worksites(request.user).select_related(
        "generator", "municipality", "registered_by"
    )
    return get_object_or_404(queryset.defer("municipality__boundary"), pk=pk)


@worksite_role_required
def worksite_list(request):
    municipal = roles.is_municipal(request.user)
    queryset = (
        worksites.visible_worksites(request.user, current=True)
        .select_related("generator", "municipality")
        .defer("municipality__boundary", "area")
        # Those a CTR created, to complete, first; then the latest registered.
        .order_by(F("registered_at").desc(nulls_first=True), "-pk")
    )
    situation = request.GET.get("cadastro", "")
    if situation in REGISTERED_FILTERS:
        queryset = queryset.filter(**REGISTERED_FILTERS[situation])
    document, document_error = request.GET.get("gerador", "").strip(), ""
    if municipal and document:
        try:
            queryset = queryset.filter(generator__document=normalize_document(document))
        except ValidationError as error:
            document_error = error.messages[0]
            queryset = queryset.none()
    page = Paginator(queryset, PAGE_SIZE).get_page(request.GET.get("pagina"))
    query = urlencode({k: v for k, v in (("cadastro", situation), ("gerador", document)) if v})
    context = {
        "nav": _nav(request),
        "page": page,
        "query": query,
        "municipal": municipal,
        "situation": situation,
        "document": document,
        "document_error": document_error,
        "generator": roles.generator_of(request.user),
    }
    return render(request, "generators/worksites/list.html", context)


def _outline_ibge(request) -> str:
    """The municipality the form's map opens on when the worksite has none: the one the staff
    work in now, else the platform's own."""
    current = jurisdiction_of(request.user).current_id
    found = municipalities().filter(pk=current).values_list("ibge_code", flat=True).first()
    return found or settings.DEFAULT_MUNICIPALITY_IBGE


def _form_page(request, form, worksite, status=200):
    context = {
        "nav": _nav(request),
        "form": form,
        "worksite": worksite,
        "map": worksite_layers.form_map(worksite, _outline_ibge(request)),
    }
    return render(request, "generators/worksites/form.html", context, status=status)


def _form_view(request, worksite: Worksite | None, make_form, save, done: str):
    """The form on a GET; on a POST, `save(form)` and the worksite's page, or the form back
    with the refusal on its fields and the input kept (400, or the refusal's status)."""
    if request.method not in ("GET", "HEAD", "POST"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    if request.method != "POST":
        return _form_page(request, make_form(), worksite)
    form = make_form(request.POST)
    status = 400
    if form.is_valid():
        try:
            saved = save(form)
        except DomainError as error:  # the worksite's, or the municipality's
            status = error.status
            form.add_refusal(error)
        else:
            messages.success(request, done.format(address=saved.address))
            return redirect("generators:worksite-detail", pk=saved.pk)
    return _form_page(request, form, worksite, status)


@worksite_role_required
def worksite_new(request):
    municipal = roles.is_municipal(request.user)

    def save(form):
        if municipal:
            data = form.cleaned_data
            generator = worksites.generator_to_register(
                data["generator_document"], data["generator_name"]
            )
        else:
            generator = roles.generator_of(request.user)
        return worksites.register(generator, form.registration(), request.user)

    return _form_view(
        request,
        None,
        lambda *data: WorksiteForm(*data, on_behalf=municipal),
        save,
        "Obra “{address}” cadastrada.",
    )


@worksite_role_required
def worksite_edit(request, pk: int):
    worksite = _visible(request, pk)
    return _form_view(
        request,
        worksite,
        lambda *data: WorksiteForm(*data, worksite=worksite),
        lambda form: worksites.update(worksite, form.registration(), request.user),
        "Cadastro da obra “{address}” atualizado.",
    )


@worksite_role_required
def worksite_detail(request, pk: int):
    worksite = _visible(request, pk)
    audit.record(request, worksite, "Obra: página do cadastro")
    # The worksite's CTRs the user sees (its own, its municipalities').
    ctrs = list(
        roles.visible_ctrs(request.user, worksite.ctrs.all())
        .exclude(status=CTRStatus.CANCELLED)
        .select_related("transporter")
        .only(
            "number", "origin", "transport_date", "status", "findings", "transporter__name",
            "total_volume_m3",
        )
        .order_by("-transport_date", "-pk")[:RECENT_CTRS]
    )  # fmt: skip
    outside = {
        ctr.pk for ctr in ctrs
        if any(f.get("code") == worksite_layers.OUTSIDE_CODE for f in ctr.findings or [])
    }  # fmt: skip
    context = {
        "nav": _nav(request),
        "worksite": worksite,
        "ctrs": ctrs,
        "outside": outside,
        "municipal": roles.is_municipal(request.user),
        "large_by_rule": worksites.large_generator_by_rule(worksite),
        "large_min_area": worksites.large_generator_min_area(worksite.municipality),
        "map": worksite_layers.worksite_map(worksite, ctrs),
        "comparison": worksite_comparison(worksite),
    }
    return render(request, "generators/worksites/detail.html", context)
