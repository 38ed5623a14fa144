"""Scoping is written once: every page and every API route says how its
data is scoped (jurisdiction.access.DataScope), and what each kind promises is what
jurisdiction.scope gives. The two-municipality authorization matrix
(tests/config/test_authorization_matrix.py) checks the promises route by route."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, get_resolver

from jurisdiction.access import KINDS

# Views that are not ours, each with how it is scoped.
FOREIGN_VIEWS = {
    # drf-spectacular: the OpenAPI schema and its Swagger UI describe the API, no row of it.
    "drf_spectacular.views.SpectacularAPIView": "public",
    "drf_spectacular.views.SpectacularSwaggerView": "public",
    # DRF's router root lists the routes, no row; the token view checks a password.
    "rest_framework.routers.APIRootView": "public",
    "rest_framework.authtoken.views.ObtainAuthToken": "public",
    # The favicon's redirect to the static file.
    "django.views.generic.base.RedirectView": "public",
}
EXCLUDED_NAMESPACES = {"admin"}  # tests/config/test_admin.py: the admin's lists are scoped


def patterns(resolver=None, prefix: str = "", namespace: str | None = None):
    resolver = resolver or get_resolver()
    for item in resolver.url_patterns:
        route = prefix + str(item.pattern)
        if isinstance(item, URLResolver):
            ns = item.namespace or namespace
            if ns in EXCLUDED_NAMESPACES:
                continue
            yield from patterns(item, route, ns)
        elif isinstance(item, URLPattern):
            yield route, item.callback


def declared_scope(callback) -> str | None:
    """The view's declaration: the function's `data_scope`, or its API class's."""
    for holder in (callback, getattr(callback, "cls", None), getattr(callback, "view_class", None)):
        if holder is not None and getattr(holder, "data_scope", None):
            return holder.data_scope
    owner = getattr(callback, "cls", None) or getattr(callback, "view_class", None) or callback
    return FOREIGN_VIEWS.get(f"{owner.__module__}.{owner.__qualname__}")


def test_every_page_and_api_route_declares_its_scope():
    undeclared = sorted(route for route, callback in patterns() if declared_scope(callback) is None)
    assert undeclared == [], (
        "Rotas sem escopo declarado (jurisdiction.access: @declare, staff_only, acting_for ou "
        f"o atributo data_scope da classe da API): {undeclared}"
    )


def test_every_declared_scope_is_a_known_kind():
    unknown = sorted(
        f"{route}: {scope}"
        for route, callback in patterns()
        if (scope := declared_scope(callback)) is not None and scope not in KINDS
    )
    assert unknown == []
