"""How each page and API route is scoped, declared where the view is written.

Every view of the URLconf says which of the `DataScope` kinds it is, through the decorators
below (or the `data_scope` attribute of an API view class); `tests/config/test_scoping.py`
walks every URL pattern and every API route and fails on a view that says nothing. What the
kinds promise, the two-municipality authorization matrix checks (tests/config/
test_authorization_matrix.py)."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.shortcuts import render
from rest_framework import permissions

from .scope import AUDITOR_REFUSAL, jurisdiction_of


class DataScope:
    # Anyone: the public network, the rule catalogue, a citizen's own report by its protocol,
    # a document's verification by its unguessable code; a municipality's public pages take
    # the municipality from the address or the location.
    PUBLIC = "public"
    # The municipal staff: rows of the user's municipalities (ScopedQuerySet.visible_to),
    # lists and maps of the current one.
    STAFF = "staff"
    # One side of the CTR: a transporter's, a facility's or a generator's own rows
    # (ctr.roles.acting_for, Membership).
    SIDE = "side"
    # Any signed-in user, each seeing what visible_to gives it (staff, side, or nothing).
    SIGNED_IN = "signed_in"


KINDS = frozenset(value for name, value in vars(DataScope).items() if not name.startswith("_"))


def declare(kind: str):
    """Mark a view function with how its data is scoped."""
    if kind not in KINDS:
        raise ValueError(f"escopo desconhecido: {kind}")

    def mark(view):
        view.data_scope = kind
        return view

    return mark


def is_staff(user) -> bool:
    """Holds a municipal role somewhere (or is the platform's administrator)."""
    return jurisdiction_of(user).is_staff


SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def reads_only(user) -> bool:
    """Staff who act in no municipality (the auditor): refused every form before it is read,
    on the pages shared with another side too (a generator's worksite form)."""
    j = jurisdiction_of(user)
    return j.is_staff and not j.acts_anywhere


def staff_only(view):
    """Pages of the municipal staff: anonymous users go to the sign-in page, others get a 403;
    an auditor (who reads only) gets a 403 on any form sent. Which rows a page shows is
    `visible_to`'s; which act a role may take, the service's (`require_acting`)."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        j = jurisdiction_of(request.user)
        if not j.is_staff:
            return render(request, "security/sem_acesso.html", status=403)
        if request.method not in SAFE_METHODS and not j.acts_anywhere:
            return render(
                request, "security/sem_acesso.html", {"message": AUDITOR_REFUSAL}, status=403
            )
        return view(request, *args, **kwargs)

    wrapper.data_scope = DataScope.STAFF
    return wrapper


class IsStaff(permissions.BasePermission):
    """The API's staff_only: anonymous callers get 401 (DRF answers NotAuthenticated when a
    permission refuses a request without credentials), others 403; the auditor reads only."""

    message = "Só o Núcleo Permanente de Gestão e a fiscalização municipal têm acesso."

    def has_permission(self, request, view) -> bool:
        j = jurisdiction_of(request.user)
        if not j.is_staff:
            return False
        if request.method not in permissions.SAFE_METHODS and not j.acts_anywhere:
            self.message = AUDITOR_REFUSAL
            return False
        return True
