"""Who did each act of the procedure, and in what capacity (Lei 3.978/2007 art. 35).

A service writes the acting user and his capacity on the act's own row when it does the act
(`signed`, `sign`): the capacity is text, fixed then, so a later change of the user's roles
leaves the record as it was. The timeline and the case page read it back with `Authors`.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model

from ctr import roles
from jurisdiction.scope import jurisdiction_of

from .facts import case_of

INSPECTOR = "Fiscal municipal"
AUTHORITY = "Autoridade (Secretário Municipal de Serviços Urbanos, art. 35)"
NUCLEO = "Núcleo Permanente de Gestão"
ADMIN = "Administrador do sistema"


def capacity(user, authority: bool = False, framework=None, municipality_id=None) -> str:
    """The capacity in which `user` acts now in the municipality. An act only the authority
    may take (a penalty, an appeal decision) is the authority's, as the case's framework names
    it (Lei 3.978/2007 art. 35: the Secretário Municipal de Serviços Urbanos); any other is the
    user's own role there, the inspector's first (who does the field work, art. 22)."""
    if user is None:
        return ""
    held = jurisdiction_of(user).roles.get(municipality_id, frozenset())
    if authority:
        # Who passed the check holds the role there; a superuser without it holds all.
        if roles.AUTORIDADE not in held and user.is_superuser:
            return ADMIN
        return f"Autoridade: {framework.authority}" if framework else AUTHORITY
    for role, text in ((roles.FISCAL, INSPECTOR), (roles.NUCLEO, NUCLEO)):
        if role in held:
            return text
    if roles.AUTORIDADE in held:
        return AUTHORITY
    return ADMIN if user.is_superuser else ""


def signed(act: str, by, within, authority: bool = False) -> dict:
    """The `<act>_by` and `<act>_as` fields of a row being created by `by` in the case of
    `within` (the case, or the notice, record or penalty the row belongs to)."""
    case = case_of(within)
    framework = case.framework if authority else None
    return {f"{act}_by": by, f"{act}_as": capacity(by, authority, framework, case.municipality_id)}


def sign(row, act: str, by, authority: bool = False) -> list[str]:
    """Write the author of `act` on `row`; the names of the fields, for save(update_fields)."""
    fields = signed(act, by, row, authority)
    for name, value in fields.items():
        setattr(row, name, value)
    return list(fields)


class Authors:
    """“Name — capacity” of who did an act, each user read once however many acts he did."""

    def __init__(self):
        self._names: dict[int, str] = {}

    def text(self, row, act: str, user_field: str = "") -> str:
        """Of `act` on `row` (its `<act>_by`, or `user_field`, and `<act>_as`); "" when the
        author was not recorded."""
        user_id = getattr(row, f"{user_field or act + '_by'}_id")
        if user_id is None:
            return ""
        if user_id not in self._names:
            user = get_user_model().objects.get(pk=user_id)
            self._names[user_id] = user.get_full_name() or user.get_username()
        capacity = getattr(row, f"{act}_as")
        return f"{self._names[user_id]} — {capacity}" if capacity else self._names[user_id]
