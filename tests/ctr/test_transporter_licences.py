"""A transporter's licence per municipality (Lei 3.978/2007 art. 13): one
company, one fleet, a licence in each municipality that licensed it; its validity written once
(SQL, queryset, memory); the rules read the licence of the CTR's municipality; who sees it."""

from __future__ import annotations

import datetime

import pytest
from django.db import IntegrityError, connection, transaction
from django.test import Client

from ctr import onward
from ctr.models import (
    Equipment,
    LicenceStatus,
    Transporter,
    TransporterLicence,
    Vehicle,
    licence_restriction_sql,
    licence_valid_sql,
)
from jurisdiction.models import Role
from tests.builders import licence, municipality, offset
from tests.ctr.test_ctr_api import error_codes, issue
from tests.ctr_world import TODAY, build_world, make_user

pytestmark = pytest.mark.django_db

D = datetime.date
NEIGHBOUR = ("3502507", "Aparecida (teste)")


@pytest.fixture
def world():
    return build_world()


def neighbour_of(world):
    """Aparecida beside the town (east), whose CTRs may go to the town's areas (a consortium
    sharing the town's ATT and landfill)."""
    neighbour = municipality(*NEIGHBOUR, east_m=20_000)
    neighbour.accepted_destinations.add(world.town)
    return neighbour


def from_neighbour(world) -> dict:
    """The payload's origin 20 km east of the town's worksite: in the neighbour."""
    return {"type": "Point", "coordinates": list(offset(*world.origin.coords, 20_000))}


def messages(response) -> list[str]:
    return [e["message"] for e in response.json()["errors"]]


# --- validity on a day, written once ------------------------------------------------------------

# Licences around their boundary days: the period's ends, open-ended, suspended until a day,
# suspended with no end, revoked on the period's last day, suspended before the period starts,
# a status without its day (a registration migrated as it was: never in force).
LICENCE_CASES = [  # (valid_from, valid_until, status, status_since, suspended_until)
    (D(2026, 1, 1), D(2026, 6, 30), "ACTIVE", None, None),
    (D(2026, 1, 1), None, "ACTIVE", None, None),
    (D(2026, 1, 1), None, "SUSPENDED", D(2026, 3, 1), D(2026, 6, 29)),
    (D(2026, 1, 1), None, "SUSPENDED", D(2026, 3, 1), None),
    (D(2026, 1, 1), D(2026, 6, 30), "REVOKED", D(2026, 6, 30), None),
    (D(2026, 3, 1), None, "SUSPENDED", D(2026, 1, 1), D(2026, 2, 28)),
    (D(2026, 1, 1), None, "SUSPENDED", None, None),
]
DAYS = [D(2025, 12, 31), D(2026, 1, 1), D(2026, 2, 28), D(2026, 3, 1), D(2026, 6, 29),
        D(2026, 6, 30), D(2026, 7, 1)]  # fmt: skip


def test_licence_validity_reads_the_same_in_sql_queryset_and_memory(world):
    licences = []
    for i, (valid_from, valid_until, status, since, until) in enumerate(LICENCE_CASES):
        place = municipality(f"99000{i:02d}", f"Município {i}", east_m=40_000 * (i + 1))
        licences.append(
            licence(
                world.alfa,
                place,
                f"L-{i}",
                valid_from,
                valid_until,
                status=status,
                status_since=since,
                suspended_until=until,
            )
        )
    seen = set()
    for day in DAYS:
        valid = {x.pk for x in licences if x.is_valid_on(day)}
        restricted = {x.pk: x.restricted_on(day) for x in licences if x.restricted_on(day)}
        in_force = {x.pk for x in licences if x.in_force_on(day)}
        mine = TransporterLicence.objects.filter(pk__in=[x.pk for x in licences])
        assert valid == set(mine.valid_on(day).values_list("pk", flat=True)), day
        assert set(restricted) == set(mine.restricted_on(day).values_list("pk", flat=True)), day
        assert in_force == set(mine.in_force_on(day).values_list("pk", flat=True)), day
        assert in_force == valid - set(restricted)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT l.id, {licence_valid_sql('l', '%(day)s')}, "
                f"{licence_restriction_sql('l', '%(day)s')} "
                "FROM ctr_transporterlicence l WHERE l.id = ANY(%(ids)s)",
                {"day": day, "ids": [x.pk for x in licences]},
            )
            rows = cursor.fetchall()
        assert {pk for pk, is_valid, _ in rows if is_valid} == valid, day
        assert {pk: status for pk, _, status in rows if status} == restricted, day
        seen.add((frozenset(valid), frozenset(restricted.items())))
    assert len(seen) > 4  # the days tell the cases apart


def test_one_licence_per_municipality_and_numbers_unique_within_one(world):
    with pytest.raises(IntegrityError), transaction.atomic():
        licence(world.alfa, world.town, "TR-009")  # alfa holds the town's TR-001
    with pytest.raises(IntegrityError), transaction.atomic():
        licence(world.alfa, municipality(*NEIGHBOUR, east_m=20_000), "AP-1")
        licence(world.beta, TransporterLicence.objects.get(number="AP-1").municipality, "AP-1")
    # The same number in another municipality is another licence.
    neighbour = municipality(*NEIGHBOUR, east_m=20_000)
    licence(world.beta, neighbour, "TR-001")
    assert TransporterLicence.objects.filter(number="TR-001").count() == 2


# --- the rules read the licence of the CTR's municipality ----------------------------------------


def test_a_transporter_licensed_in_the_town_only_is_refused_in_the_neighbour(world):
    neighbour_of(world)
    refused = issue(world, origin=from_neighbour(world))
    assert error_codes(refused) == ["TRANSPORTER_NOT_LICENSED"]
    assert messages(refused) == [
        "O transportador não tem licença em Aparecida (teste)/SP na data do transporte "
        "(30/11/2026)."
    ]
    assert issue(world).status_code == 201  # in the town it is licensed


def test_a_transporter_licensed_in_both_issues_in_both_with_its_numbering(world):
    neighbour = neighbour_of(world)
    licence(world.alfa, neighbour, "AP-001", D(2025, 1, 1))
    there = issue(world, origin=from_neighbour(world))
    here = issue(world)
    assert (there.status_code, here.status_code) == (201, 201)
    assert there.json()["number"].startswith("CTR-3502507-")
    assert here.json()["number"].startswith("CTR-3518404-")


def test_a_suspension_in_the_town_does_not_stop_ctrs_in_the_neighbour(world):
    neighbour = neighbour_of(world)
    licence(world.alfa, neighbour, "AP-001", D(2025, 1, 1))
    world.alfa.licences.filter(municipality=world.town).update(
        status=LicenceStatus.SUSPENDED, status_since=D(2026, 11, 1), suspended_until=D(2026, 12, 15)
    )
    refused = issue(world)
    assert error_codes(refused) == ["TRANSPORTER_SUSPENDED"]
    assert messages(refused) == [
        "O transportador está suspenso em Guaratinguetá (teste)/SP desde 01/11/2026 até 15/12/2026."
    ]
    assert issue(world, origin=from_neighbour(world)).status_code == 201


def test_a_licence_of_the_neighbour_out_of_date_is_named_with_its_number(world):
    neighbour = neighbour_of(world)
    licence(world.alfa, neighbour, "AP-001", D(2025, 1, 1), D(2026, 6, 30))
    refused = issue(world, origin=from_neighbour(world))
    assert messages(refused) == [
        "A licença AP-001 do transportador em Aparecida (teste)/SP não é válida em 30/11/2026 "
        "(válida de 01/01/2025 a 30/06/2026)."
    ]


def test_a_revocation_is_the_municipalitys_that_revoked(world):
    neighbour = neighbour_of(world)
    licence(
        world.alfa,
        neighbour,
        "AP-001",
        D(2025, 1, 1),
        status=LicenceStatus.REVOKED,
        status_since=D(2026, 10, 1),
    )
    refused = issue(world, origin=from_neighbour(world))
    assert messages(refused) == [
        "A licença do transportador em Aparecida (teste)/SP foi cassada em 01/10/2026."
    ]
    assert issue(world).status_code == 201


def test_a_generator_carrying_its_own_waste_needs_no_licence_anywhere(world):
    own = Transporter.objects.create(
        name="Maria da Obra", document="52998224725", is_self_generator=True
    )
    user = make_user("maria", transporter=own)
    Vehicle.objects.create(transporter=own, plate="MAR1A23")
    Equipment.objects.create(transporter=own, code="M-01", nominal_capacity_m3=5)
    response = issue(world, user=user, vehicle_plate="MAR1A23", equipment_code="M-01")
    assert response.status_code == 201, response.content


# --- who sees a transporter: its municipalities (an Exists on the licences) -------------------


def test_a_transporter_is_each_municipality_that_licensed_it_once(world):
    neighbour = municipality(*NEIGHBOUR, east_m=20_000)
    licence(world.alfa, neighbour, "AP-001")
    licence(world.beta, neighbour, "AP-002", status="REVOKED", status_since=D(2026, 1, 1))
    only_there = Transporter.objects.create(name="Só Aparecida", document="11222333000262")
    licence(only_there, neighbour, "AP-003")
    town_side = Transporter.objects.in_municipalities([world.town.pk])
    both = Transporter.objects.in_municipalities([world.town.pk, neighbour.pk])
    assert set(town_side) == {world.alfa, world.beta}
    assert list(both.order_by("pk")) == [world.alfa, world.beta, only_there]  # no repeats
    # A revoked licence keeps the transporter on that municipality's registry.
    assert world.beta in Transporter.objects.in_municipalities([neighbour.pk])


def test_the_transporters_of_a_municipality_ride_on_the_licences_unique_index(world):
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        sql, params = Transporter.objects.in_municipalities([world.town.pk]).query.sql_with_params()
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Seq Scan on ctr_transporterlicence" not in plan, plan
    assert (
        "transporter_licence_one_per_municipality" in plan
        or "transporter_licence_number_unique" in plan
    ), plan


def test_carriers_of_an_onward_ctr_are_those_licensed_where_the_facility_is(world):
    neighbour = municipality(*NEIGHBOUR, east_m=20_000)
    world.beta.licences.update(municipality=neighbour)
    carriers = onward.carriers_on(TODAY, world.att.municipality_id)
    assert [(t.name, t.licence_number) for t in carriers] == [("Caçambas Alfa Ltda.", "TR-001")]
    assert [t.pk for t in onward.carriers_on(TODAY, neighbour.pk)] == [world.beta.pk]
    assert not onward.carriers_on(TODAY, None).exists()


# --- the admin: a municipality's Núcleo edits its own licences only ----------------------------


def admin_client(user) -> Client:
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    from django.contrib.auth.models import Permission

    user.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="ctr", codename__endswith="transporterlicence"
        ),
        *Permission.objects.filter(content_type__app_label="ctr", codename__endswith="transporter"),
    )
    client = Client()
    client.force_login(user)
    return client


def test_the_admin_shows_and_edits_only_the_users_municipalitys_licences(world):
    neighbour = municipality(*NEIGHBOUR, east_m=20_000)
    licence(world.alfa, neighbour, "AP-001")
    only_there = Transporter.objects.create(name="Só Aparecida", document="11222333000262")
    licence(only_there, neighbour, "AP-003")
    client = admin_client(world.nucleo)  # the town's Núcleo

    listing = client.get("/admin/ctr/transporter/").content.decode()
    assert "Caçambas Alfa Ltda." in listing and "TR-001" in listing
    assert "AP-001" not in listing  # the neighbour's licence of the same company
    assert "Só Aparecida" not in listing
    assert client.get(f"/admin/ctr/transporter/{only_there.pk}/change/").status_code == 302

    page = client.get(f"/admin/ctr/transporter/{world.alfa.pk}/change/")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'value="TR-001"' in html and "AP-001" not in html
    # The municipality of a new licence: the town only.
    assert f'<option value="{neighbour.pk}"' not in html
    assert f'<option value="{world.town.pk}"' in html


def test_an_auditor_reads_the_transporters_and_edits_no_licence(world):
    auditor = make_user("auditoria", Role.AUDITOR, world.town)
    client = admin_client(auditor)
    assert "Caçambas Alfa Ltda." in client.get("/admin/ctr/transporter/").content.decode()
    html = client.get(f"/admin/ctr/transporter/{world.alfa.pk}/change/").content.decode()
    assert 'value="TR-001"' not in html  # the inline holds the licences it edits: none
