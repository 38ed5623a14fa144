"""What waits for the user, on every page that renders the menu: lazy, so
a page that does not show it costs no query, and computed once per request."""

from django.utils.functional import SimpleLazyObject

from .waiting import waiting_for


def waiting(request) -> dict:
    return {"waiting": SimpleLazyObject(lambda: waiting_for(request))}
