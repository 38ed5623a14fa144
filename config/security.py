"""Site-wide security pieces (docs/security.md): the Content Security Policy middleware, the
rate limits of the public endpoints, and the glue of the login lockout (django-axes)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from axes.backends import AxesStandaloneBackend
from axes.helpers import get_cool_off
from axes.signals import user_locked_out
from csp.middleware import CSPMiddleware as BaseCSPMiddleware
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from config.clients import client_address, client_key
from config.rate_limits import RateLimit, RateLimited, parse_rate

PROBLEM_CONTENT_TYPE = "application/problem+json"
API_PREFIXES = ("/api/", "/ogc/")


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIXES)


def client_ip(request) -> str:
    """The client's address for django-axes: the same reading as the rate limits
    (REMOTE_ADDR, or X-Forwarded-For behind CTR_TRUSTED_PROXY_COUNT proxies)."""
    return client_address(request.META)


def axes_client_str(username, ip_address, user_agent, path_info, request) -> str:
    """How django-axes names a client in the log: the user name typed (masked like any log
    line if it is an e-mail or a document) and the keyed hash of the address, not the address
    nor the browser's user agent."""
    meta = {"REMOTE_ADDR": ip_address or ""}
    return f'{{usuário: "{username}", cliente: {client_key(meta)}, rota: "{path_info}"}}'


def too_many(request: HttpRequest, message: str, retry_after: int) -> HttpResponse:
    """429 in Portuguese with Retry-After: problem details (RFC 9457) for API clients, a page
    for browsers."""
    if is_api(request):
        response = JsonResponse(
            {
                "type": "about:blank",
                "title": "Muitas requisições",
                "status": 429,
                "detail": message,
                "instance": request.path,
            },
            status=429,
            content_type=PROBLEM_CONTENT_TYPE,
            json_dumps_params={"ensure_ascii": False},
        )
    else:
        response = render(
            request, "security/muitas_requisicoes.html", {"message": message}, status=429
        )
    response["Retry-After"] = str(max(1, int(retry_after)))
    response["Cache-Control"] = "no-store"
    return response


# --- Content Security Policy ---------------------------------------------------------------


class CSPMiddleware(BaseCSPMiddleware):
    """django-csp's middleware, for documents only: HTML pages (and SVG, which can script)
    get the policy; PDFs, JSON, CSV and images are not documents a policy protects, and a
    policy on a PDF can keep the browser's viewer from opening it. A response that sets its own
    policy (a report's photo: `default-src 'none'; sandbox`) keeps it."""

    DOCUMENT_TYPES = ("text/html", "image/svg+xml", "application/xhtml+xml")

    def process_response(self, request, response):
        content_type = response.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type and content_type not in self.DOCUMENT_TYPES:
            return response
        return super().process_response(request, response)


# --- rate limits of the public endpoints -------------------------------------------------------


def _always(response: HttpResponse) -> bool:
    return True


def _failed_login(response: HttpResponse) -> bool:
    """A sign-in that did not succeed: on success the login forms redirect (302) and the
    token endpoint answers 200 with JSON; a failed form comes back as a 200 page."""
    if response.status_code == 302:
        return False
    json = response.get("Content-Type", "").startswith("application/json")
    return not (response.status_code == 200 and json)


@dataclass(frozen=True)
class Rule:
    scope: str  # a key of settings.CTR_RATE_LIMITS
    methods: frozenset[str]
    path: re.Pattern
    what: str  # pt-BR feminine plural, for the message ("Muitas consultas enviadas…")
    # Whether a response counts against the limit (the login rules count failures only).
    counts: Callable[[HttpResponse], bool] = _always


READ = frozenset({"GET", "HEAD"})
RULES = (
    Rule(
        "login",
        frozenset({"POST"}),
        re.compile(r"^/(api/v1/auth/token|entrar|admin/login)/$"),
        "tentativas de entrada",
        _failed_login,
    ),
    Rule("nearest", READ, re.compile(r"^/api/v1/facilities/nearest/$"), "consultas"),
    Rule("verify", READ, re.compile(r"^/verificar/"), "consultas"),
    Rule("follow", READ, re.compile(r"^/denuncia/[^/]+/$"), "consultas"),
)


def _limit_for(rule: Rule) -> RateLimit | None:
    text = (getattr(settings, "CTR_RATE_LIMITS", {}) or {}).get(rule.scope)
    if not text:
        return None
    return RateLimit(f"public-{rule.scope}", parse_rate(text), rule.what)


class PublicRateLimitMiddleware:
    """Per-client limits of the public endpoints (settings.CTR_RATE_LIMITS): the API token,
    the login forms (failures only), the nearest-facility query, the CTR verification and the
    follow-up of a dumping report. Same mechanism as the dumping-report limits: a sliding
    window per keyed hash of the client's address, in the database cache."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        rule = next(
            (r for r in RULES if request.method in r.methods and r.path.match(request.path_info)),
            None,
        )
        limit = _limit_for(rule) if rule else None
        if limit is None:
            return self.get_response(request)
        client = client_key(request.META)
        try:
            limit.check(client)
        except RateLimited as error:
            return too_many(request, error.message, error.retry_after)
        response = self.get_response(request)
        if rule.counts(response):
            limit.hit(client)
        return response


# --- login lockout (django-axes) ---------------------------------------------------------------


class LockoutBackend(AxesStandaloneBackend):
    """django-axes' standalone backend (first in AUTHENTICATION_BACKENDS: a locked-out client
    is refused before any password is checked). A call without a request (the shell, a
    management command) cannot come from a remote client and is not monitored; axes would
    raise instead."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def _flag_drf_request(sender, request=None, **kwargs) -> None:
    """DRF's token view hands axes its own Request wrapper, so axes marks the wrapper and its
    middleware (which sees Django's HttpRequest) would not know: mark the inner request too."""
    inner = getattr(request, "_request", None)
    if inner is not None:
        inner.axes_locked_out = True
        inner.axes_credentials = getattr(request, "axes_credentials", None)


user_locked_out.connect(_flag_drf_request, dispatch_uid="config.security.drf_lockout")


def _minutes_text(seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return f"{minutes} minuto{'s' if minutes > 1 else ''}"


def lockout_response(request, original_response=None, credentials=None) -> HttpResponse:
    """settings.AXES_LOCKOUT_CALLABLE: 429 in Portuguese with Retry-After (the cool-off)."""
    cool_off = get_cool_off(request)
    seconds = int(cool_off.total_seconds()) if cool_off else 3600
    message = (
        f"Acesso bloqueado temporariamente: foram {settings.AXES_FAILURE_LIMIT} tentativas de "
        f"entrada sem sucesso com este usuário a partir desta conexão. Aguarde "
        f"{_minutes_text(seconds)} e tente de novo; se esqueceu a senha, procure a "
        "administração do sistema."
    )
    if is_api(request):
        return too_many(request, message, seconds)
    response = render(
        request,
        "security/bloqueado.html",
        {"message": message, "minutes": _minutes_text(seconds)},
        status=429,
    )
    response["Retry-After"] = str(seconds)
    response["Cache-Control"] = "no-store"
    return response


def axes_username(request, credentials) -> str | None:
    """The user name axes records for a login attempt, cut to what a user name can be."""
    source = credentials or {}
    name = source.get("username")
    if name is None and request is not None:
        name = request.POST.get("username") if request.method == "POST" else None
    if name is None:
        return None
    return str(name)[:150]
