"""Who may see and do what: Django groups for the municipal roles, Membership for the rest."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AnonymousUser, Group, Permission
from django.contrib.auth.views import redirect_to_login
from django.db.models import Q, QuerySet
from django.shortcuts import render
from rest_framework import permissions

from .models import Worksite

NUCLEO = "Núcleo Permanente de Gestão"
FISCAL = "Fiscalização"
# The authority that applies the penalties: in Guaratinguetá the Secretário Municipal de
# Serviços Urbanos (Lei 3.978/2007 art. 35), not the inspectors who draw up the records.
AUTORIDADE = "Autoridade"
MUNICIPAL_GROUPS = (NUCLEO, FISCAL, AUTORIDADE)
# What only the authority may do (the permissions are fiscalization's models').
APPLY_PENALTY = "fiscalization.apply_penalty"
DECIDE_APPEAL = "fiscalization.decide_appeal"
GROUP_PERMISSIONS = {AUTORIDADE: (APPLY_PENALTY, DECIDE_APPEAL)}


def ensure_groups() -> None:
    for name in MUNICIPAL_GROUPS:
        group, _ = Group.objects.get_or_create(name=name)
        for permission in GROUP_PERMISSIONS.get(name, ()):
            app_label, codename = permission.split(".")
            group.permissions.add(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )


def is_municipal(user) -> bool:
    """Núcleo and inspectors see everything (art. 4 §2 V, art. 22)."""
    if isinstance(user, AnonymousUser) or not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    cached = getattr(user, "_ctr_is_municipal", None)
    if cached is None:
        cached = user.groups.filter(name__in=MUNICIPAL_GROUPS).exists()
        user._ctr_is_municipal = cached
    return cached


def municipal_only(view):
    """Pages of the Núcleo and Fiscalização only: anonymous users go to the login, others get
    a 403."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_municipal(request.user):
            return render(request, "security/sem_acesso.html", status=403)
        return view(request, *args, **kwargs)

    return wrapper


def acting_for(side_of, attribute: str, refusal: str):
    """Decorate the pages of one side (a transporter's, a facility's, a generator's): signed
    in (else the login), and acting for that side (`side_of(user)` is not None), which the
    view finds as `request.<attribute>`; anyone else gets a 403 saying whose pages they are
    (`refusal`, in Portuguese)."""

    def decorate(view):
        @login_required
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            side = side_of(request.user)
            if side is None:
                return render(request, "ctr/forbidden.html", {"message": refusal}, status=403)
            setattr(request, attribute, side)
            return view(request, *args, **kwargs)

        return wrapped

    return decorate


class IsMunicipal(permissions.BasePermission):
    """The API's municipal_only: Núcleo and Fiscalização; anonymous callers get 401 (DRF
    answers NotAuthenticated when a permission refuses a request without credentials)."""

    message = "Só o Núcleo Permanente de Gestão e a fiscalização municipal têm acesso."

    def has_permission(self, request, view) -> bool:
        return is_municipal(request.user)


def is_inspector(user) -> bool:
    """In the Fiscalização group and not the Núcleo's (who also sees the fiscalização)."""
    if not user.is_authenticated or user.is_superuser:
        return False
    names = set(user.groups.filter(name__in=MUNICIPAL_GROUPS).values_list("name", flat=True))
    return FISCAL in names and NUCLEO not in names


def is_nucleo(user) -> bool:
    """In the Núcleo Permanente de Gestão's group: the decisions that are the Núcleo's own (the
    Habite-se declaration issued or refused), not the inspectors' nor the authority's."""
    if not user.is_authenticated:
        return False
    return user.is_superuser or user.groups.filter(name=NUCLEO).exists()


def membership(user):
    if not user.is_authenticated:
        return None
    try:
        return user.membership
    except user._meta.model.membership.RelatedObjectDoesNotExist:
        return None


def transporter_of(user):
    member = membership(user)
    return member.transporter if member else None


def facility_of(user):
    member = membership(user)
    return member.facility if member else None


def generator_of(user):
    """The generator a user acts for (Membership.generator), or None."""
    member = membership(user)
    return member.generator if member else None


def generator_ctrs_q(generator_id: int) -> Q:
    """The CTRs of a generator (art. 3 VIII-IX): those that name it, and those of its
    worksites whoever declared them. An onward CTR names a facility's operator as its
    generator (FacilityOperator, art. 3 VIII: the sorted waste is the operator's), so the
    operator's generator account sees those too. A subquery, not a join: the worksite's
    generator must not multiply or reorder the rows of a list."""
    return Q(generator_id=generator_id) | Q(
        worksite_id__in=Worksite.objects.filter(generator_id=generator_id).values("pk")
    )


def visible_ctrs(user, queryset: QuerySet) -> QuerySet:
    """A transporter's users see its own CTRs, a facility's operators those destined to it
    and those leaving it (onward CTRs), a generator's those that name it or its worksites
    (read only: it issues, receives and cancels nothing), Núcleo and inspectors all; anyone
    else none."""
    if is_municipal(user):
        return queryset
    member = membership(user)
    if member is None:
        return queryset.none()
    if member.transporter_id:
        return queryset.filter(transporter_id=member.transporter_id)
    if member.facility_id:
        return queryset.filter(
            Q(destination_facility_id=member.facility_id) | Q(origin_facility_id=member.facility_id)
        )
    if member.generator_id:
        return queryset.filter(generator_ctrs_q(member.generator_id))
    return queryset.none()
