"""Web pages of the generator accounts (pt-BR): the public self-registration and its status,
the invitation link, the Núcleo's queue of registrations, and the invitation forms of the
Núcleo and of transporters. Thin: parse with account_forms, call generators.accounts, render."""

from __future__ import annotations

import functools

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

import audit
from config.br import br_datetime
from config.clients import client_key
from config.errors import add_to_form, errors_back_to
from config.rate_limits import RateLimited
from ctr import roles
from ctr.documents import format_document, mask_document
from ctr.roles import municipal_only
from jurisdiction.access import DataScope, declare
from jurisdiction.scope import jurisdiction_of

from . import accounts
from .account_forms import AcceptInvitationForm, InvitationForm, RefuseForm, RegistrationForm
from .models import GeneratorRegistration, RegistrationStatus

# A new account signs in at once; several backends are configured (axes first), so name one.
BACKEND = "django.contrib.auth.backends.ModelBackend"
RECENT_DECISIONS = 20
RECENT_INVITATIONS = 50
GET_OR_POST = require_http_methods(["GET", "HEAD", "POST"])


def _signed_in_elsewhere(request, template: str, context: dict):
    """A signed-in user would be signed out by a new account: say so, write nothing."""
    context = {**context, "signed_in_as": request.user.get_username()}
    status = 403 if request.method == "POST" else 200
    return render(request, template, context, status=status)


# --- self-registration (public) --------------------------------------------------------------


@declare(DataScope.PUBLIC)
@GET_OR_POST
def registration_new(request):
    """/gerador/cadastro/: a generator asks for its account; the Núcleo confirms it."""
    template = "generators/accounts/registration_form.html"
    if request.user.is_authenticated:
        return _signed_in_elsewhere(request, template, {"form": None})
    if request.method != "POST":
        return render(request, template, {"form": RegistrationForm()})
    form = RegistrationForm(request.POST)
    client = client_key(request.META)
    try:
        accounts.check_registration_attempt(client)
    except RateLimited as error:
        form.is_valid()
        response = render(
            request, template, {"form": form, "rate_limit": error.message}, status=429
        )
        response["Retry-After"] = str(error.retry_after)
        return response
    if not form.is_valid():
        return render(request, template, {"form": form}, status=400)
    try:
        registration = accounts.register(**form.arguments())
    except accounts.AccountError as error:
        add_to_form(form, error)
        return render(request, template, {"form": form}, status=error.status)
    accounts.count_registration(client)
    login(request, registration.user, backend=BACKEND)
    messages.success(
        request,
        "Cadastro enviado. O Núcleo Permanente de Gestão vai conferir os dados; você recebe a "
        "resposta por e-mail.",
    )
    return redirect("generators:registration-status")


@declare(DataScope.SIGNED_IN)  # the person's own registration
@require_safe
@login_required
def registration_status(request):
    """/gerador/cadastro/situacao/: where the signed-in person's registration stands."""
    registration = (
        GeneratorRegistration.objects.filter(user=request.user).select_related("generator").first()
    )
    member = roles.membership(request.user)
    return render(
        request,
        "generators/accounts/registration_status.html",
        {
            "registration": registration,
            "acting_for": member.generator if member and member.generator_id else None,
        },
    )


# --- invitation link (public) ----------------------------------------------------------------


@declare(DataScope.PUBLIC)  # the e-mail's single-use token is the key
@GET_OR_POST
def invitation(request, token: str):
    """/gerador/convite/<token>/: the e-mail's link; the person chooses user name and password.
    Unknown: 404; used or expired: 410."""
    template = "generators/accounts/invitation_accept.html"
    try:
        invited = accounts.invitation_for(token)
    except accounts.AccountError as error:
        return render(
            request,
            "generators/accounts/invitation_gone.html",
            {"message": error.message, "gone": error.status == 410},
            status=error.status,
        )
    context = {"invitation": invited, "inviter": accounts.inviter_label(invited)}
    if request.user.is_authenticated:
        return _signed_in_elsewhere(request, template, {**context, "form": None})
    if request.method != "POST":
        return render(request, template, {**context, "form": AcceptInvitationForm()})
    form = AcceptInvitationForm(request.POST)
    if not form.is_valid():
        return render(request, template, {**context, "form": form}, status=400)
    try:
        user = accounts.accept_invitation(
            token, form.cleaned_data["username"], form.cleaned_data["password"]
        )
    except accounts.InvitationGone as error:  # used a moment ago, in another tab
        return render(
            request,
            "generators/accounts/invitation_gone.html",
            {"message": error.message, "gone": True},
            status=error.status,
        )
    except accounts.AccountError as error:
        add_to_form(form, error)
        return render(request, template, {**context, "form": form}, status=error.status)
    login(request, user, backend=BACKEND)
    messages.success(
        request, f"Conta criada: você entrou como “{user.get_username()}”, pelo gerador."
    )
    return redirect("ctr_web:dashboard")


# --- invitations sent by the Núcleo and by transporters --------------------------------------


def _invitations_page(request, *, can_create: bool, nav: str):
    template = "generators/accounts/invitations.html"
    sent = accounts.invitations_for(request.user)[:RECENT_INVITATIONS]
    # The Núcleo's page (it may register a generator) or a transporter's (in its area).
    context = {"sent": sent, "nav": nav, "transporter_page": not can_create}
    if request.method != "POST":
        return render(request, template, {**context, "form": InvitationForm(can_create=can_create)})
    form = InvitationForm(request.POST, can_create=can_create)
    if not form.is_valid():
        return render(request, template, {**context, "form": form}, status=400)
    try:
        invited = accounts.invite(
            request.user,
            form.cleaned_data["email"],
            form.cleaned_data["document"],
            form.cleaned_data.get("name", ""),
        )
    except accounts.AccountError as error:
        add_to_form(form, error)
        return render(request, template, {**context, "form": form}, status=error.status)
    messages.success(
        request,
        f"Convite enviado para {invited.email}, válido até {br_datetime(invited.expires_at)}.",
    )
    return redirect(request.path)


@GET_OR_POST
@municipal_only
def nucleo_invitations(request):
    """/nucleo/geradores/convites/: the Núcleo invites any generator (and may register it)."""
    return _invitations_page(request, can_create=True, nav="nucleo")


def transporter_only(view):
    @declare(DataScope.SIDE)
    @login_required
    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        if roles.transporter_of(request.user) is None:
            return render(
                request,
                "ctr/forbidden.html",
                {
                    "message": "Esta página é dos transportadores: o seu usuário não está "
                    "vinculado a um transportador cadastrado."
                },
                status=403,
            )
        return view(request, *args, **kwargs)

    return wrapped


@GET_OR_POST
@transporter_only
def transporter_invitations(request):
    """/transportador/geradores/convites/: a transporter invites a generator it carried for."""
    return _invitations_page(request, can_create=False, nav="ctrs")


# --- the Núcleo's queue of self-registrations ------------------------------------------------


@require_safe
@municipal_only
def registration_queue(request):
    """/nucleo/geradores/cadastros/: the registrations to confirm (oldest first), then the last
    decisions, of the municipality the user works in. Documents masked here; in full on each
    registration's page (logged)."""
    pending = list(accounts.pending_registrations(request.user))
    decided = (
        accounts.registrations_for(request.user)
        .exclude(status=RegistrationStatus.PENDING)
        .select_related("decided_by")
        .order_by("-decided_at", "-pk")[:RECENT_DECISIONS]
    )
    for item in [*pending, *decided]:
        item.masked_document = mask_document(item.document)
    return render(
        request,
        "generators/accounts/registration_queue.html",
        {"nav": "nucleo", "pending": pending, "decided": decided},
    )


def _detail_page(request, registration, refuse_form=None, status=200):
    known = accounts.known_generator(registration.document, request.user, registration.user)
    # The person's name, CPF and e-mail (LGPD art. 37), and the registry's generator.
    audit.record(request, registration, "Cadastro de gerador: análise")
    if known is not None:
        audit.record(request, known.generator, "Cadastro de gerador: gerador já cadastrado")
    return render(
        request,
        "generators/accounts/registration_detail.html",
        {
            "nav": "nucleo",
            "registration": registration,
            "document": format_document(registration.document),
            "known": known,
            "pending": registration.status == RegistrationStatus.PENDING,
            # The auditor reads; the staff of the registration's municipality decide.
            "can_decide": jurisdiction_of(request.user).acts(registration.municipality_id),
            "refuse_form": refuse_form or RefuseForm(),
        },
        status=status,
    )


def _registration(request, pk: int) -> GeneratorRegistration:
    """The registration, if one of the user's municipalities (another's is a 404)."""
    return get_object_or_404(
        GeneratorRegistration.objects.visible_to(request.user)
        .select_related("user", "decided_by", "generator", "municipality")
        .defer("municipality__boundary"),
        pk=pk,
    )


@require_safe
@municipal_only
def registration_detail(request, pk: int):
    return _detail_page(request, _registration(request, pk))


@require_POST
@municipal_only
@errors_back_to("generators:registration-detail", "pk")
def registration_confirm(request, pk: int):
    registration = accounts.confirm_registration(_registration(request, pk), request.user)
    messages.success(
        request,
        f"Cadastro confirmado: a conta “{registration.user.get_username()}” age pelo gerador "
        f"“{registration.generator.name}”. A pessoa foi avisada por e-mail.",
    )
    # Back to the registration, which now shows the decision (like a refused second try).
    return redirect("generators:registration-detail", pk=pk)


@require_POST
@municipal_only
def registration_refuse(request, pk: int):
    registration = _registration(request, pk)
    form = RefuseForm(request.POST)
    if not form.is_valid():
        return _detail_page(request, registration, form, status=400)
    try:
        accounts.refuse_registration(registration, request.user, form.cleaned_data["reason"])
    except accounts.AccountError as error:
        add_to_form(form, error)
        return _detail_page(request, registration, form, status=error.status)
    messages.success(request, "Cadastro recusado. A pessoa foi avisada por e-mail, com o motivo.")
    return redirect("generators:registration-detail", pk=pk)
