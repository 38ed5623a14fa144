"""The current municipality on every page (maps/base.html shows it to the municipal staff)."""

from .scope import jurisdiction_of


def jurisdiction(request) -> dict:
    return {"jurisdiction": jurisdiction_of(getattr(request, "user", None))}
