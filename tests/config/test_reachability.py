"""Every page can be reached: on the demo, each role starts from its landing page (/painel/) and
follows the links of its menus and of the pages it reaches (the Django test client, GET only, this
host only, bounded); every URL name the role uses must be reached. A page nobody links to fails here
with the role and the URL names it missed."""

from __future__ import annotations

import io
import re
from collections import Counter, deque
from html import unescape
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import transaction
from django.test import Client, override_settings
from django.urls import Resolver404, resolve

from tests.clock import frozen_clock

pytestmark = pytest.mark.django_db

FAST_HASHER = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# What each demo account may use, by URL name: the GET pages of its area (from the urlconfs:
# ctr/urls.py, ctr/document_urls.py, generators/urls.py, fiscalization/*_urls.py, nucleo/urls.py,
# maps/urls.py, webhooks/urls.py). Forms posted from these pages (receive, refuse, approve...)
# are not pages; the public pages every role shares are in PUBLIC. The Núcleo's list of CTRs
# without the generator's confirmation (generators:unconfirmed) is linked from its dashboard
# only where the municipality asks for that confirmation, which the demo town does not.
PUBLIC = {
    "maps:home",
    "maps:onde-descartar",
    "intake:new",
    "ctr-verify-form",
    "ctr_web:rules",
}
ROLE_PAGES: dict[str, set[str]] = {
    "transportador": PUBLIC
    | {
        "ctr_web:ctr-list",
        "ctr_web:ctr-new",
        "ctr_web:ctr-import",
        "ctr_web:ctr-import-example",
        "ctr_web:ctr-detail",
        "ctr_web:vehicles",
        "ctr_web:equipment",
        "ctr_web:template-list",
        "ctr_web:template-new",
        "ctr_web:corrections",
        "ctr-pdf",
        "generators:transporter-invitations",
        "webhooks:list",
    },
    "operador": PUBLIC
    | {
        "ctr_web:receptions",
        "ctr_web:onward-new",
        "ctr_web:facility-stock",
        "ctr_web:corrections",
        "ctr-pdf",
        "webhooks:list",
    },
    "gerador": PUBLIC
    | {
        "generators:home",
        "generators:ctr-list",
        "generators:ctr-map",
        "generators:ctr-detail",
        "generators:worksite-list",
        "generators:worksite-new",
        "generators:worksite-detail",
        "generators:worksite-edit",
        "generators:worksite-plan",
        "generators:declaration-request",
        "ctr-pdf",
    },
    "nucleo": PUBLIC
    | {
        "nucleo:painel",
        "nucleo:mapa",
        "nucleo:exportar",
        "nucleo:exportar-arquivo",
        "nucleo:obras",
        "nucleo:obra",
        "ctr_web:nucleo-corrections",
        "generators:registration-queue",
        "generators:registration-detail",
        "generators:nucleo-invitations",
        "generators:plan-queue",
        "generators:plan-rates",
        "generators:plan-review",
        "generators:declaration-queue",
        "generators:declaration-review",
        "intake:inspect",
        "enforcement:case-list",
    },
    "fiscal": PUBLIC
    | {
        "intake:inspect",
        "intake:inspect-report",
        "fiscalization_analysis:hotspots",
        "fiscalization_analysis:roadside",
        "enforcement:case-list",
        "enforcement:case-new",
        "enforcement:case-detail",
    },
    "autoridade": PUBLIC
    | {
        "intake:inspect",
        "enforcement:case-list",
        "enforcement:case-detail",
    },
}

# Bounds: each URL name is fetched at most this many times (a list's 300 CTRs, its sort and
# page links, are one page each for this purpose), and a role at most MAX_PAGES pages.
PER_NAME = 3
MAX_PAGES = 400
# Not followed: signing out, the admin (its own menus), the API and OGC, files.
SKIP_PREFIXES = ("/sair/", "/admin/", "/api/", "/ogc/", "/static/", "/media/")
HREF = re.compile(r'<a\b[^>]*?\bhref="([^"#][^"]*)"', re.I)


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker):
    # The demo network's licences have fixed dates: load and walk on a day they are in force.
    with (
        frozen_clock(),
        django_db_blocker.unblock(),
        override_settings(PASSWORD_HASHERS=FAST_HASHER),
        transaction.atomic(),
    ):
        call_command("load_demo", stdout=io.StringIO())
        yield
        transaction.set_rollback(True)


def url_name(path: str) -> str | None:
    try:
        return resolve(path).view_name
    except Resolver404:
        return None


def walk(client: Client) -> tuple[set[str], list[str]]:
    """The URL names reached from /painel/, and the pages that answered with an error."""
    reached: set[str] = set()
    fetched: Counter[str] = Counter()
    errors: list[str] = []
    seen: set[str] = set()
    queue: deque[str] = deque(["/painel/"])
    pages = 0
    while queue and pages < MAX_PAGES:
        url = queue.popleft()
        path = urlsplit(url).path
        name = url_name(path)
        if name is not None:
            reached.add(name)
            if fetched[name] >= PER_NAME:
                continue
            fetched[name] += 1
        response = client.get(url, follow=True)
        pages += 1
        if response.status_code >= 400:
            errors.append(f"{url} → {response.status_code}")
            continue
        for hop, _status in response.redirect_chain:
            hop_name = url_name(urlsplit(hop).path)
            if hop_name:
                reached.add(hop_name)
        if "text/html" not in response.get("Content-Type", ""):
            continue
        for href in HREF.findall(response.content.decode()):
            link = urlsplit(unescape(href))
            if link.scheme or link.netloc or not link.path.startswith("/"):
                continue  # another host, mailto:, javascript:
            if link.path.startswith(SKIP_PREFIXES):
                continue
            target = link.path + (f"?{link.query}" if link.query else "")
            if target in seen:
                continue
            seen.add(target)
            target_name = url_name(link.path)
            if target_name is not None:
                reached.add(target_name)
                if fetched[target_name] >= PER_NAME:
                    continue
            queue.append(target)
    return reached, errors


@pytest.mark.parametrize("username", sorted(ROLE_PAGES))
def test_every_page_of_the_role_is_reached_from_its_landing_page(demo, username):
    client = Client(raise_request_exception=False)
    client.force_login(get_user_model().objects.get(username=username))
    reached, errors = walk(client)
    missing = sorted(ROLE_PAGES[username] - reached)
    assert not missing, f"{username} cannot reach: {missing}"
    assert not errors, errors


def test_the_generators_worksite_page_leads_to_its_pgrcc_and_habite_se_with_its_menu(demo):
    from ctr import roles
    from ctr.models import Worksite

    user = get_user_model().objects.get(username="gerador")
    client = Client()
    client.force_login(user)
    worksite = Worksite.objects.filter(generator=roles.generator_of(user)).first()
    page = client.get(f"/gerador/obras/{worksite.pk}/").content.decode()
    for name, path in (
        ("link-pgrcc", f"/gerador/obras/{worksite.pk}/pgrcc/"),
        ("link-habite-se", f"/gerador/obras/{worksite.pk}/habite-se/"),
    ):
        assert re.search(rf'href="{path}" id="{name}"', page), name
        target = client.get(path)
        assert target.status_code == 200
        assert 'aria-label="Área do gerador"' in target.content.decode(), path
