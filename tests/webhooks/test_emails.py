"""E-mail for people without a system, through the outbox, against the real
SMTP fixture: a refused load to the transporter's users, a correction to decide to the
counterpart, a citizen's report changing status to the e-mail they left."""

from __future__ import annotations

import pytest

from ctr import closing
from ctr.models import CTRAction, CTRStatus
from fiscalization import intake, photos
from fiscalization.models import DumpingReport
from tests import dumping_fixtures as fx
from tests.ctr_world import build_world, issue_hours_ago
from webhooks import delivery
from webhooks.models import Delivery, DeliveryStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(frozen_today):
    return build_world()


def deliver(smtp_server):
    with smtp_server.commit():
        return delivery.deliver_due()


def test_a_refused_load_is_mailed_to_the_transporters_users(world, smtp_server):
    ctr = issue_hours_ago(world, 1)
    closing.refuse(ctr, world.operator, "Carga misturada com resíduo classe D")
    assert Delivery.objects.get().kind == "email"
    assert deliver(smtp_server) == {"delivered": 1}
    (message,) = smtp_server.to(world.alfa_user.email)
    assert message["Subject"].strip() == f"{ctr.number} recusado na área de destino"
    body = smtp_server.body(message)
    assert "Carga misturada" in body and f"/transportador/ctrs/{ctr.number}/" in body
    assert world.operator.email not in message["X-Envelope-To"]


def _propose(world, ctr, actor, **data):
    closing.record_event(
        ctr, actor, CTRAction.CORRECTION_PROPOSED, CTRStatus.RECEIVED, data or None
    )


def test_a_correction_by_the_transporter_goes_to_the_facility(world, smtp_server):
    ctr = issue_hours_ago(world, 1)
    _propose(world, ctr, world.alfa_user, reason="Volume medido na balança")
    deliver(smtp_server)
    (message,) = smtp_server.messages
    assert world.operator.email in message["X-Envelope-To"]
    assert "aguarda a sua decisão" in message["Subject"]
    assert "Volume medido" in smtp_server.body(message)


def test_a_correction_by_the_facility_goes_to_the_transporter(world, smtp_server):
    ctr = issue_hours_ago(world, 1)
    _propose(world, ctr, world.operator)
    deliver(smtp_server)
    (message,) = smtp_server.messages
    assert world.alfa_user.email in message["X-Envelope-To"]


def test_the_event_data_may_name_who_decides(world, smtp_server):
    ctr = issue_hours_ago(world, 1)
    _propose(world, ctr, world.alfa_user, decider="transporter")
    deliver(smtp_server)
    assert world.alfa_user.email in smtp_server.messages[0]["X-Envelope-To"]


def _citizen_report(contact: str) -> DumpingReport:
    report = intake.create_report(
        intake.NewReport(fx.at(east_m=-800, north_m=-600), "LOTE_VAGO", contact=contact),
        photos.check_photos([fx.upload("a.jpg", fx.jpeg_plain())]),
    )
    return report


def test_a_citizen_who_left_an_email_hears_the_status_change(world, smtp_server, private_media):
    report = _citizen_report("maria@example.org")
    intake.change_status(report, "CONFIRMED", world.fiscal)
    deliver(smtp_server)
    (message,) = smtp_server.to("maria@example.org")
    # No protocol nor name in the subject: it is what a locked phone shows.
    assert report.protocol not in message["Subject"]
    body = smtp_server.body(message)
    assert (
        report.protocol in body and "Confirmada" in body and f"/denuncia/{report.protocol}/" in body
    )


def test_a_citizen_who_left_a_phone_gets_nothing(world, smtp_server, private_media):
    report = _citizen_report("(12) 99999-0000")
    intake.change_status(report, "CONFIRMED", world.fiscal)
    assert not Delivery.objects.exists()


def test_a_mail_server_down_is_retried(world, smtp_server, settings):
    ctr = issue_hours_ago(world, 1)
    closing.refuse(ctr, world.operator, "Carga misturada")
    settings.EMAIL_PORT = 9  # nothing listens there
    with smtp_server.commit():
        assert delivery.deliver_due() == {"retry": 1}
    row = Delivery.objects.get()
    assert row.status == DeliveryStatus.PENDING and "e-mail" in row.attempt_log.get().error
