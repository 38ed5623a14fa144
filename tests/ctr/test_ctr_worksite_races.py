"""Concurrent issues naming the same new worksite (two drivers at one site, a client's
retries): one worksite, no 5xx, gapless numbers. Real HTTP against a live server,
each request in its own server thread and database connection."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token

from ctr import services
from ctr.bulk import csv_import
from ctr.models import CTR, Generator, Worksite
from tests.ctr.test_ctr_csv import csv_bytes, row
from tests.ctr.test_ctr_races import all_at_once, call
from tests.ctr_world import CPF_GENERATOR, build_world, ctr_payload

pytestmark = pytest.mark.django_db(transaction=True)

CLIENTS = 20


def test_twenty_clients_naming_one_new_worksite_make_one_worksite(live_server):
    world = build_world()
    # The generator is known (an earlier CTR elsewhere): only the worksite is new, so nothing
    # else serialises the issuers before they look the worksite up.
    Generator.objects.create(name="Maria da Obra", document=CPF_GENERATOR)
    token = Token.objects.create(user=world.alfa_user).key
    payload = ctr_payload(world)
    # The same site as each driver types it: case and spacing differ.
    spellings = ["Rua das Flores, 10", "rua das flores, 10", "Rua das  Flores, 10 "]

    def issue(i):
        body = {**payload, "worksite": {**payload["worksite"], "address": spellings[i % 3]}}
        return call(f"{live_server.url}/api/v1/ctrs/", token, body)

    results = all_at_once(CLIENTS, issue)

    assert [status for status, _ in results] == [201] * CLIENTS, results
    assert Worksite.objects.count() == 1
    site = Worksite.objects.get()
    assert CTR.objects.filter(worksite=site).count() == CLIENTS
    numbers = sorted(body["number"] for _, body in results)
    assert numbers == [f"CTR-3518404-2026-{n:06d}" for n in range(1, CLIENTS + 1)]

    # And afterwards, the site is found, not duplicated (the get that raised
    # MultipleObjectsReturned once duplicates existed).
    status, body = call(f"{live_server.url}/api/v1/ctrs/", token, payload)
    assert status == 201, body
    assert Worksite.objects.count() == 1


def test_twenty_clients_naming_a_new_generator_and_worksite(live_server):
    world = build_world()
    token = Token.objects.create(user=world.alfa_user).key
    payload = ctr_payload(world, generator={"name": "José Reforma", "document": "11444777000161"})

    results = all_at_once(
        CLIENTS, lambda i: call(f"{live_server.url}/api/v1/ctrs/", token, payload)
    )

    assert [status for status, _ in results] == [201] * CLIENTS, results
    assert Generator.objects.filter(document="11444777000161").count() == 1
    assert Worksite.objects.count() == 1


def test_worksite_lookup_ignores_case_and_spacing():
    world = build_world()
    generator = Generator.objects.create(name="Maria da Obra", document=CPF_GENERATOR)
    data = services.WorksiteData("Rua das Flores, 10", world.origin)
    first = services.worksite_for(generator, data)
    again = services.worksite_for(
        generator, services.WorksiteData("  RUA DAS   flores, 10", world.origin)
    )
    assert again.pk == first.pk
    other = services.worksite_for(
        generator, services.WorksiteData("Rua das Flores, 12", world.origin)
    )
    assert other.pk != first.pk


@pytest.mark.parametrize("per_row", [False, True], ids=["bulk", "per-row"])
def test_csv_rows_spelling_one_site_differently_make_one_worksite(per_row):
    world = build_world()
    generator = Generator.objects.create(name="Maria da Obra", document=CPF_GENERATOR)
    existing = services.worksite_for(
        generator, services.WorksiteData("Rua das Flores, 10", world.origin)
    )
    data = csv_bytes(
        [
            row(world, worksite_address="RUA DAS FLORES, 10"),
            row(world, worksite_address="Rua das  Flores, 10"),
            row(world, worksite_address="Rua Nova, 1"),
            row(world, worksite_address="rua nova, 1"),
        ]
    )

    report = csv_import.import_ctrs(data, world.alfa, world.alfa_user, per_row=per_row)

    assert len(report.issued) == 4
    assert Worksite.objects.count() == 2
    sites = list(CTR.objects.order_by("sequence").values_list("worksite_id", flat=True))
    assert sites[:2] == [existing.pk, existing.pk]
    assert sites[2] == sites[3] != existing.pk
    assert Worksite.objects.get(pk=sites[2]).address == "Rua Nova, 1"  # the first row's
