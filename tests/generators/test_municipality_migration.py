"""Migration generators 0006: the worksites a CTR created get the municipality of
their location, the self-registrations and invitations the municipality they belong to; back,
the registrations and invitations lose it again (0005 drops the column)."""

from __future__ import annotations

import datetime

import pytest
from django.db import connection
from django.utils import timezone

from ctr.models import Worksite
from generators import accounts
from generators.models import GeneratorInvitation, GeneratorRegistration
from tests.builders import point
from tests.ctr_world import build_world, issue_hours_ago
from tests.generators.account_world import pending_registration
from tests.migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("generators", "0005_registration_invitation_municipality")]
AFTER = [("generators", "0006_fill_municipalities")]


@pytest.fixture(autouse=True)
def latest_schema_afterwards():
    yield
    migrate()


def column(table: str, pk: int):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT municipality_id FROM {table} WHERE id = %s", [pk])
        return cursor.fetchone()[0]


def test_forward_places_each_row_and_backward_unplaces_the_accounts_rows(frozen_today):
    world = build_world()
    ctr = issue_hours_ago(world)  # Alfa carried for Maria da Obra, in the town
    site = Worksite.objects.create(
        generator=ctr.generator, address="Rua Sem Município, 1", location=world.origin
    )
    far = Worksite.objects.create(
        generator=ctr.generator, address="Longe, 2", location=point(-60.0, -3.0)
    )
    registration = pending_registration("cadastro-antigo", municipality=world.town)
    by_nucleo = accounts.invite(world.nucleo, "gama@exemplo.com.br", world.gama.document)
    by_alfa = GeneratorInvitation.objects.create(
        generator=ctr.generator,
        email="maria@exemplo.com.br",
        token_hash="a" * 64,
        invited_by=world.alfa_user,
        transporter=world.alfa,
        expires_at=timezone.now() + datetime.timedelta(days=7),
    )

    migrate(BEFORE)
    assert column("generators_generatorregistration", registration.pk) is None
    assert column("generators_generatorinvitation", by_nucleo.pk) is None
    with connection.cursor() as cursor:
        cursor.execute("UPDATE ctr_worksite SET municipality_id = NULL WHERE id = %s", [site.pk])
    migrate(AFTER)
    migrate()

    assert Worksite.objects.get(pk=site.pk).municipality == world.town
    assert Worksite.objects.get(pk=far.pk).municipality is None  # outside every municipality
    assert GeneratorRegistration.objects.get(pk=registration.pk).municipality == world.town
    assert GeneratorInvitation.objects.get(pk=by_nucleo.pk).municipality == world.town
    assert GeneratorInvitation.objects.get(pk=by_alfa.pk).municipality == ctr.municipality
