"""The webhooks' page (/integracoes/webhooks/): a transporter's or a facility operator's
endpoints, their deliveries with every attempt, the manual replay. Thin: webhooks.services."""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from config.errors import add_to_form
from ctr.models import Transporter
from jurisdiction.access import DataScope

from . import services
from .errors import WebhookError
from .forms import EndpointForm


def owner_required(view):
    """Signed in (else the login) and acting for a transporter or a facility (else 403)."""

    @login_required
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        owner = services.owner_of(request.user)
        if owner is None:
            return render(
                request,
                "ctr/forbidden.html",
                {"message": "Os webhooks são dos transportadores e das áreas de recebimento."},
                status=403,
            )
        request.webhook_owner = owner
        return view(request, *args, **kwargs)

    # A transporter's or a facility's own endpoints: no municipality's staff reads them here.
    wrapped.data_scope = DataScope.SIDE
    return wrapped


def _nav(request) -> str:
    is_transporter = isinstance(request.webhook_owner, Transporter)
    return "ctr/_transporter_nav.html" if is_transporter else "ctr/_operator_nav.html"


def _secret_page(request, endpoint, heading: str):
    # Shown once: the page of the POST itself, never stored in the session or a redirect.
    response = render(
        request,
        "webhooks/secret.html",
        {"endpoint": endpoint, "heading": heading, "nav": _nav(request), "section": "webhooks"},
    )
    response["Cache-Control"] = "no-store"
    return response


@require_http_methods(["GET", "POST"])
@owner_required
def endpoint_list(request):
    form = EndpointForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                endpoint = services.register(
                    request.user, data["url"], data["events"], data["description"]
                )
            except WebhookError as error:
                add_to_form(form, error)
            else:
                return _secret_page(request, endpoint, "Webhook cadastrado")
        status = 400
    endpoints = services.endpoints_of(request.user)
    return render(
        request,
        "webhooks/list.html",
        {"endpoints": endpoints, "form": form, "nav": _nav(request), "section": "webhooks"},
        status=status,
    )


@require_safe
@owner_required
def endpoint_detail(request, pk: int):
    endpoint = get_object_or_404(services.endpoints_of(request.user), pk=pk)
    return render(
        request,
        "webhooks/detail.html",
        {
            "endpoint": endpoint,
            "deliveries": services.deliveries_of(endpoint),
            "nav": _nav(request),
            "section": "webhooks",
        },
    )


@require_POST
@owner_required
def endpoint_rotate(request, pk: int):
    endpoint = services.rotate_secret(
        get_object_or_404(services.endpoints_of(request.user), pk=pk), request.user
    )
    return _secret_page(request, endpoint, "Segredo trocado")


def _set_active(request, pk: int, active: bool):
    endpoint = services.set_active(
        get_object_or_404(services.endpoints_of(request.user), pk=pk), request.user, active
    )
    messages.success(request, "Webhook reativado." if active else "Webhook desativado.")
    return redirect("webhooks:detail", pk=endpoint.pk)


@require_POST
@owner_required
def endpoint_enable(request, pk: int):
    return _set_active(request, pk, True)


@require_POST
@owner_required
def endpoint_disable(request, pk: int):
    return _set_active(request, pk, False)


@require_POST
@owner_required
def delivery_replay(request, pk: int):
    delivery = get_object_or_404(services.webhook_deliveries_of(request.user), pk=pk)
    services.replay(delivery, request.user)
    messages.success(request, "Entrega recolocada na fila: sai na próxima passada do envio.")
    return redirect("webhooks:detail", pk=delivery.endpoint_id)
