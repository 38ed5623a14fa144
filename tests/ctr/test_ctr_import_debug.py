"""The web CSV import with DEBUG on and off: `make run` serves with DEBUG on, where
Django wraps every cursor in CursorDebugWrapper, whose copy_expert does not take psycopg2's
`size` keyword; the page answered 500. Both modes, through the page."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from ctr.models import CTR
from tests.ctr.test_ctr_csv import IMPORT, csv_bytes, row
from tests.ctr_world import build_world

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
def test_web_import_issues_the_rows_with_debug_on_and_off(settings, debug):
    # The test runner forces DEBUG off; the page must work as `make run` serves it too.
    settings.DEBUG = debug
    world = build_world()
    client = Client()
    client.force_login(get_user_model().objects.get(pk=world.alfa_user.pk))
    data = csv_bytes([row(world), row(world, worksite_address="Rua B, 2")])

    response = client.post(IMPORT, {"file": SimpleUploadedFile("ctrs.csv", data, "text/csv")})

    assert response.status_code == 200, response.content[:2000]
    html = response.content.decode()
    assert "2 CTRs emitidos" in html
    numbers = list(CTR.objects.order_by("sequence").values_list("number", flat=True))
    assert numbers == ["CTR-3518404-2026-000001", "CTR-3518404-2026-000002"]
    for number in numbers:
        assert f'href="/transportador/ctrs/{number}/"' in html
    assert sorted(CTR.objects.values_list("worksite__address", flat=True)) == [
        "Rua B, 2",
        "Rua das Flores, 10",
    ]
