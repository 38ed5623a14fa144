"""Who did each act of the procedure, and in what capacity (Lei 3.978/2007 art. 35).

A service writes the acting user and his capacity on the act's own row when it does the act
(`signed`, `sign`): the capacity is text, fixed then, so a later change of the user's groups
leaves the record as it was. The timeline and the case page read it back with `Authors`.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model

from ctr import roles

from .facts import case_of

INSPECTOR = "Fiscal municipal"
AUTHORITY = "Autoridade (Secretário Municipal de Serviços Urbanos, art. 35)"
NUCLEO = "Núcleo Permanente de Gestão"
ADMIN = "Administrador do sistema"


def capacity(user, authority: bool = False, framework=None) -> str:
    """The capacity in which `user` acts now. An act only the authority may take (a penalty,
    an appeal decision) is the authority's, as the case's framework names it (Lei 3.978/2007
    art. 35: the Secretário Municipal de Serviços Urbanos); any other is the user's own role,
    the inspector's first (who does the field work, art. 22)."""
    if user is None:
        return ""
    names = set(user.groups.values_list("name", flat=True))
    if authority:
        # Who passed the permission check holds it; a superuser outside the group holds all.
        if roles.AUTORIDADE not in names and user.is_superuser:
            return ADMIN
        return f"Autoridade: {framework.authority}" if framework else AUTHORITY
    for group, text in ((roles.FISCAL, INSPECTOR), (roles.NUCLEO, NUCLEO)):
        if group in names:
            return text
    if roles.AUTORIDADE in names:
        return AUTHORITY
    return ADMIN if user.is_superuser else ""


def signed(act: str, by, authority: bool = False, framework=None) -> dict:
    """The `<act>_by` and `<act>_as` fields of a row being created by `by` (an authority's act
    under `framework`)."""
    return {f"{act}_by": by, f"{act}_as": capacity(by, authority, framework)}


def sign(row, act: str, by, authority: bool = False) -> list[str]:
    """Write the author of `act` on `row`; the names of the fields, for save(update_fields)."""
    fields = signed(act, by, authority, case_of(row).framework if authority else None)
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
