"""The generator's confirmation of a CTR's departure: optional per municipality and off by default
(Lei 3.978/2007 does not require it); once, only its own CTRs, never a cancelled or onward one; when
on, a CTR left unconfirmed past the municipality's hours goes to the Núcleo's list and is e-mailed,
once, to the Núcleo and the generator."""

from __future__ import annotations

import datetime
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from ctr import closing
from ctr.models import CTR, CTRAction
from generators import confirmation
from generators.models import UnconfirmedDepartureNotice
from pev_network.models import MunicipalParameters
from tests.builders import set_parameters
from tests.ctr.onward_world import onward
from tests.ctr_world import build_world, make_user
from tests.generators.portal_world import MARIA, api_client, issue

pytestmark = pytest.mark.django_db

HOURS = datetime.timedelta(hours=1)


@pytest.fixture
def world(frozen_today):
    world = build_world()
    set_parameters(
        world.town,
        generator_confirmation_required=True,
        generator_confirmation_hours=24,
    )
    world.clock = frozen_today
    return world


def web(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def confirm(user, ctr: CTR):
    return api_client(user).post(f"/api/v1/ctrs/{ctr.number}/confirm-departure/")


def test_off_by_default_because_the_law_does_not_require_it(db):
    field = MunicipalParameters._meta.get_field("generator_confirmation_required")
    assert field.default is False
    assert "não exige" in field.help_text and "art. 3 VI" in field.help_text


def test_a_municipality_that_does_not_ask_refuses_the_confirmation(world):
    set_parameters(world.town, generator_confirmation_required=False)
    ctr = issue(world)
    response = confirm(world.generator_user, ctr)
    assert response.status_code == 409
    assert "não exige a confirmação do gerador" in response.json()["detail"]
    ctr.refresh_from_db()
    assert ctr.generator_confirmed_at is None and ctr.events.count() == 1
    page = web(world.generator_user).get(f"/gerador/ctrs/{ctr.number}/").content.decode()
    assert "Confirmar a saída da carga" not in page


def test_the_generator_confirms_once_and_the_history_keeps_it(world):
    ctr = issue(world)
    response = confirm(world.generator_user, ctr)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["number"] == ctr.number and body["generator_confirmed_by"] == "gerador"
    ctr.refresh_from_db()
    assert ctr.generator_confirmed_by == world.generator_user
    event = ctr.events.get(action=CTRAction.CONFIRM_DEPARTURE)
    assert event.from_status == event.to_status == "issued"
    again = confirm(world.generator_user, ctr)
    assert again.status_code == 409
    assert "já foi confirmada em 30/11/2026" in again.json()["detail"]
    assert ctr.events.filter(action=CTRAction.CONFIRM_DEPARTURE).count() == 1
    detail = api_client(world.generator_user).get(f"/api/v1/ctrs/{ctr.number}/").json()
    assert detail["generator_confirmed_at"] is not None
    assert "confirm_departure" in [e["action"] for e in detail["events"]]


def test_a_received_load_may_still_be_confirmed_but_not_a_cancelled_one(world):
    received = issue(world)
    closing.receive(received, world.operator, Decimal("3"))
    assert confirm(world.generator_user, received).status_code == 200
    cancelled = issue(world)
    closing.cancel(cancelled, world.alfa_user, "obra adiada")
    response = confirm(world.generator_user, cancelled)
    assert response.status_code == 409
    assert "foi cancelado" in response.json()["detail"]


def test_an_onward_ctr_has_no_worksite_departure_to_confirm(world):
    closing.receive(issue(world), world.operator, Decimal("3"))
    shipped = onward(world, {"A": "2"})
    company = make_user("triagem", generator=shipped.generator)
    response = confirm(company, shipped)
    assert response.status_code == 409
    assert "CTR de saída" in response.json()["detail"]


def test_only_its_generator_confirms(world):
    ctr = issue(world)
    for user in (world.alfa_user, world.operator, world.nucleo):
        response = confirm(user, ctr)  # they see the CTR
        assert response.status_code == 403, user
        assert response.json()["detail"] == "Só o gerador do CTR confirma a saída da carga."
    assert confirm(world.beta_user, ctr).status_code == 404
    others = issue(world, generator=MARIA, address="Rua das Flores, 10")
    response = confirm(world.generator_user, others)
    assert response.status_code == 404
    assert "entre os que você pode consultar" in response.json()["detail"]
    ctr.refresh_from_db()
    assert ctr.generator_confirmed_at is None


def test_confirming_on_the_ctr_page(world):
    ctr = issue(world)
    client = web(world.generator_user)
    page = client.get(f"/gerador/ctrs/{ctr.number}/").content.decode()
    assert "Confirmar a saída da carga" in page
    # Without JavaScript the form first asks on a page, and writes nothing.
    asked = client.post(f"/gerador/ctrs/{ctr.number}/confirmar-saida/", {"etapa": "revisar"})
    assert "Sim, confirmar a saída" in asked.content.decode()
    ctr.refresh_from_db()
    assert ctr.generator_confirmed_at is None
    response = client.post(f"/gerador/ctrs/{ctr.number}/confirmar-saida/", follow=True)
    page = response.content.decode()
    assert f"Saída do {ctr.number} confirmada." in page
    assert "Saída da carga confirmada em 30/11/2026" in page
    again = client.post(f"/gerador/ctrs/{ctr.number}/confirmar-saida/", follow=True)
    assert "já foi confirmada" in again.content.decode()
    # The transporter's page shows it too.
    transporter_page = web(world.alfa_user).get(f"/transportador/ctrs/{ctr.number}/")
    assert "Saída confirmada pelo gerador" in transporter_page.content.decode()


def test_unconfirmed_only_after_the_municipalitys_hours(world):
    ctr = issue(world)
    world.clock.shift(23 * HOURS)
    assert not confirmation.unconfirmed().exists()
    world.clock.shift(2 * HOURS)
    assert list(confirmation.unconfirmed()) == [ctr]
    confirmation.confirm_departure(ctr, world.generator_user)
    assert not confirmation.unconfirmed().exists()


def test_a_ctr_issued_ahead_counts_from_its_transport_day(world):
    """Issued today for the day after tomorrow: its load has not left yet."""
    ctr = issue(world, day=datetime.date(2026, 12, 2))
    world.clock.shift(30 * HOURS)
    assert not confirmation.unconfirmed().exists()
    world.clock.shift(40 * HOURS)  # 2026-12-03 8h: 32 h into its transport day
    assert list(confirmation.unconfirmed()) == [ctr]


def test_a_ctr_is_asked_for_by_the_set_of_its_transport_date(world):
    """From 01/12 the municipality stops asking: today's CTR still awaits its generator and
    goes to the Núcleo after its day's 24 h; the CTR for 01/12 asks nothing."""
    MunicipalParameters.objects.create(
        municipality=world.town,
        valid_from=datetime.date(2026, 12, 1),
        generator_confirmation_required=False,
    )
    todays = issue(world)
    ahead = issue(world, day=datetime.date(2026, 12, 1))
    world.clock.shift(25 * HOURS)  # 01/12, 11h: the new set is in force
    assert confirmation.needs_confirmation(todays)
    assert not confirmation.needs_confirmation(ahead)
    assert list(confirmation.unconfirmed()) == [todays]
    assert confirm(world.generator_user, ahead).status_code == 409
    dashboard = web(world.nucleo).get("/nucleo/").content.decode()
    assert "CTRs sem confirmação do gerador (1)" in dashboard
    assert confirm(world.generator_user, todays).status_code == 200


def test_the_hours_are_those_of_the_ctr_s_transport_date(world):
    """From 01/12 the municipality allows 72 h: today's CTR keeps its day's 24 h."""
    MunicipalParameters.objects.create(
        municipality=world.town,
        valid_from=datetime.date(2026, 12, 1),
        generator_confirmation_required=True,
        generator_confirmation_hours=72,
    )
    todays = issue(world)
    issue(world, day=datetime.date(2026, 12, 1))
    world.clock.shift(73 * HOURS)  # 03/12, 11h: 59 h into the transport day of 01/12
    assert list(confirmation.unconfirmed()) == [todays]
    assert [c.confirmation_hours for c in confirmation.unconfirmed()] == [24]


def test_the_nucleo_sees_the_unconfirmed_ctrs_from_its_dashboard(world):
    ctr = issue(world)
    world.clock.shift(25 * HOURS)
    client = web(world.nucleo)
    dashboard = client.get("/nucleo/").content.decode()
    assert "CTRs sem confirmação do gerador (1)" in dashboard
    page = client.get("/nucleo/geradores/ctrs-sem-confirmacao/").content.decode()
    assert ctr.number in page and "Construtora Gama Ltda." in page
    refused = web(world.generator_user).get("/nucleo/geradores/ctrs-sem-confirmacao/")
    assert refused.status_code == 403


def test_the_command_mails_the_nucleo_and_the_generator_once(world, smtp_server):
    ctr = issue(world)
    issue(world, "beta")  # confirmed in time: never mailed
    confirmation.confirm_departure(CTR.objects.exclude(pk=ctr.pk).get(), world.generator_user)
    colleague = make_user("gerador2", generator=world.gama)
    world.clock.shift(25 * HOURS)
    out = StringIO()
    with smtp_server.commit():
        call_command("unconfirmed_ctrs", stdout=out)
    assert "1 CTR(s) sem confirmação avisados: 2 e-mail(s)" in out.getvalue()
    assert len(smtp_server.messages) == 2
    (to_nucleo,) = smtp_server.to("nucleo@example.org")
    assert to_nucleo["Subject"] == "1 CTR(s) sem confirmação do gerador"
    assert ctr.number in smtp_server.body(to_nucleo)
    assert "/nucleo/geradores/ctrs-sem-confirmacao/" in smtp_server.body(to_nucleo)
    (to_generator,) = smtp_server.to("gerador@example.org")
    assert colleague.email in to_generator["X-Envelope-To"]
    assert f"/gerador/ctrs/{ctr.number}/" in smtp_server.body(to_generator)
    for message in smtp_server.messages:
        # No personal data in the subject line: no name, no CNPJ, no address.
        subject = message["Subject"]
        assert "Gama" not in subject and world.gama.document not in subject
        assert "Av. da Gama" not in subject
    notice = UnconfirmedDepartureNotice.objects.get()
    assert notice.ctr == ctr and notice.recipients == 3

    world.clock.shift(24 * HOURS)
    with smtp_server.commit():
        call_command("unconfirmed_ctrs", stdout=StringIO())
    assert len(smtp_server.messages) == 2, "a CTR is mailed once"


def test_the_dry_run_mails_and_records_nothing(world, smtp_server):
    ctr = issue(world)
    world.clock.shift(25 * HOURS)
    out = StringIO()
    with smtp_server.commit():
        call_command("unconfirmed_ctrs", "--dry-run", stdout=out)
    assert ctr.number in out.getvalue() and "(simulação)" in out.getvalue()
    assert smtp_server.messages == []
    assert not UnconfirmedDepartureNotice.objects.exists()
