"""The one domain error of the project, and the two places it is translated.

Every app's errors derive from `DomainError`: a Portuguese message for the user, a stable code
for programs, the field it concerns (when it concerns one) and the HTTP status it deserves. A
service raises it; nothing between the service and the client translates it by hand:

- the API: `config.api_errors.problem_exception_handler` turns it into
  `application/problem+json` (RFC 9457) with `detail`, `code` and `errors`;
- the pages: a view that keeps the user's input shows it on the form with `add_to_form`; an
  action view declares the page it goes back to with `errors_back_to`; any other page request
  that lets it escape gets it as a message on the page it came from
  (`config.middleware.DomainErrorMiddleware`).
"""

from __future__ import annotations

import functools
from urllib.parse import urlsplit

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme


class DomainError(Exception):
    """A rule of the domain refused the operation; nothing was written."""

    status = 400
    code = "invalid"

    def __init__(
        self,
        message: str,
        code: str | None = None,
        field: str | None = None,
        status: int | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.field = field
        if code:
            self.code = code
        if status:
            self.status = status

    def problem_errors(self) -> list[dict]:
        """The `errors` member of the problem document: one entry per field concerned."""
        return [{"campo": self.field, "mensagem": self.message}] if self.field else []


def add_to_form(form, error: DomainError, fields: dict[str, str] | None = None) -> None:
    """Show `error` on the form field it names (through `fields`, the service's names to the
    form's), or above the form when the form has no such field; the user's input stays."""
    name = (fields or {}).get(error.field, error.field)
    form.add_error(name if name in form.fields else None, error.message)


def errors_back_to(url_name: str, *url_kwargs: str):
    """Decorate a page's action view: a DomainError it raises goes back to `url_name` (with the
    view's `url_kwargs`) as a message, the same page its success goes back to."""

    def decorate(view):
        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            try:
                return view(request, *args, **kwargs)
            except DomainError as error:
                messages.error(request, error.message)
                return redirect(url_name, **{name: kwargs[name] for name in url_kwargs})

        return wrapper

    return decorate


def back_to_page(request, error: DomainError) -> HttpResponseRedirect:
    """The page the user acted from, with the error as a message (Post/Redirect/Get)."""
    messages.error(request, error.message)
    referer = request.META.get("HTTP_REFERER", "")
    safe = referer and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    # Never back to the URL that raised: a POST-only action (a confirmation page posts to
    # itself) cannot be fetched, and a GET would raise again. The home page routes by role.
    if safe and urlsplit(referer).path != request.path:
        return HttpResponseRedirect(referer)
    return HttpResponseRedirect("/")
