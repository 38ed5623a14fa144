"""Who may see and do what: the municipal roles are jurisdiction's (per municipality), the
sides of a CTR (a transporter's, a facility's, a generator's people) are Membership's."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.shortcuts import render

from jurisdiction.access import DataScope, IsStaff, is_staff, staff_only
from jurisdiction.models import Role
from jurisdiction.scope import jurisdiction_of

from .models import CTR, membership_of
from .models import generator_ctrs_q as generator_ctrs_q

# The municipal roles (jurisdiction.models.Role), granted per municipality.
NUCLEO = Role.NUCLEO
FISCAL = Role.FISCAL
# The authority that applies the penalties: in Guaratinguetá the Secretário Municipal de
# Serviços Urbanos (Lei 3.978/2007 art. 35), not the inspectors who draw up the records.
AUTORIDADE = Role.AUTHORITY
AUDITOR = Role.AUDITOR
# What only the authority may do, as the enforcement table names it (fiscalization.enforcement.
# actions): held by the AUTHORITY role in the case's municipality.
APPLY_PENALTY = "fiscalization.apply_penalty"
DECIDE_APPEAL = "fiscalization.decide_appeal"
AUTHORITY_POWERS = {APPLY_PENALTY: (AUTORIDADE,), DECIDE_APPEAL: (AUTORIDADE,)}

# The staff's part of who sees what is jurisdiction's (one mechanism for every app); these
# are its names as the apps have always called them.
is_municipal = is_staff
municipal_only = staff_only
IsMunicipal = IsStaff


def is_inspector(user) -> bool:
    """An inspector in the current municipality and not its Núcleo (who also sees the
    fiscalização): the one whose home page is the fiscalização's."""
    j = jurisdiction_of(user)
    if j.everywhere:
        return False
    held = j.roles_in(j.current_id)
    return FISCAL in held and NUCLEO not in held


def is_nucleo(user, municipality_id: int | None) -> bool:
    """Of the Núcleo Permanente de Gestão of the municipality: the decisions that are the
    Núcleo's own (the Habite-se declaration, the PGRCC, a correction sent to it), not the
    inspectors' nor the authority's."""
    return jurisdiction_of(user).acts(municipality_id, (NUCLEO,))


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

        wrapped.data_scope = DataScope.SIDE
        return wrapped

    return decorate


membership = membership_of


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


def visible_ctrs(user, queryset: QuerySet | None = None) -> QuerySet:
    """The CTRs `user` sees (CTRQuerySet.visible_to): the municipal staff those of its
    municipalities, a transporter's users its own, a facility's operators those destined to
    it and those leaving it (onward CTRs), a generator's those that name it or its worksites
    (read only); anyone else none."""
    queryset = CTR.objects.all() if queryset is None else queryset
    return queryset.visible_to(user)
