"""Words a user understands on the main pages: no select offers Django's
"---------" (each says what choosing nothing means), the admin's included, and no page speaks
of DBSCAN."""

from __future__ import annotations

import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from tests.ctr_world import build_world

pytestmark = pytest.mark.django_db

# The admin is scanned model by model below; these pages answer a file, act on GET, or take the
# user out.
SKIPPED = re.compile(r"^/(admin|api|ogc|static|media)/|\.(csv|pdf|json|geojson|gpkg|zip|xml)$|sair")
EMPTY_DASHES = re.compile(r"<option[^>]*>\s*-{5,}\s*</option>")


def page_paths() -> list[str]:
    """Every page of the site whose URL takes no argument."""

    def walk(resolver, prefix=""):
        for pattern in resolver.url_patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern)

    paths = {"/" + p.lstrip("^").rstrip("$") for p in walk(get_resolver())}
    return sorted(p for p in paths if not re.search(r"[<(\\]", p) and not SKIPPED.search(p))


def test_no_select_of_any_role_offers_dashes_nor_a_page_dbscan():
    world = build_world()
    users = [None, world.alfa_user, world.operator, world.nucleo, world.fiscal, world.authority]
    users.append(world.generator_user)
    seen, found = 0, []
    for user in users:
        client = Client()
        if user is not None:
            client.force_login(user)
        for path in page_paths():
            response = client.get(path)
            if response.status_code != 200 or "text/html" not in response["Content-Type"]:
                continue
            html = response.content.decode()
            seen += html.count("<select")
            who = user.username if user else "visitante"
            found += [f"{who} {path}: {m.group(0)}" for m in EMPTY_DASHES.finditer(html)]
            if "DBSCAN" in html:
                found.append(f"{who} {path}: DBSCAN")
    assert seen > 10  # the scan did reach forms
    assert found == [], "\n".join(found)


def test_no_select_of_the_admin_offers_dashes():
    """Every registered model's list (its actions select, its filters), add page and change
    page (its inlines' selects) of the platform administrator: the blank choice of a foreign
    key, of a field with choices and of the actions says what it is in Portuguese."""
    build_world()  # rows: the lists show their actions, the change pages their inlines
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("raiz", "r@example.org", "x"))
    seen, lists, found = 0, 0, []
    for model in admin.site._registry:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        row = model._default_manager.order_by("pk").first()
        paths = [base, base + "add/"] + ([f"{base}{row.pk}/change/"] if row else [])
        for path in paths:
            response = client.get(path)
            if response.status_code != 200:
                continue
            lists += path == base
            html = response.content.decode()
            seen += html.count("<select")
            found += [f"{path}: {m.group(0)}" for m in re.finditer(r".{0,40}-{9}.{0,20}", html)]
    assert lists == len(admin.site._registry) and seen > 30  # the scan reached every model
    assert found == [], "\n".join(found)
