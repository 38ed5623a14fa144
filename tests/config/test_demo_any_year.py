"""`make run` loads the demo on whatever day it runs: in a year after the demo network file's
licenses end (2028-12-31), the network is still licensed and every demo loads."""

import datetime
import io
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command

from ctr.models import CTR, CTRStatus
from fiscalization.models import InfractionRecord, RecordStatus
from pev_network.models import ReceivingFacility, UfespRate
from tests.clock import frozen_clock

pytestmark = pytest.mark.django_db

AFTER_THE_FILE = datetime.datetime(2029, 6, 1, 10, tzinfo=ZoneInfo("America/Sao_Paulo"))


def test_the_demos_load_after_the_network_files_licenses_end(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    with frozen_clock(AFTER_THE_FILE):
        call_command("load_demo", stdout=io.StringIO())

        licensed = ReceivingFacility.objects.licensed_on(AFTER_THE_FILE.date())
        assert licensed.filter(code="ATT-01").exists()
        assert not licensed.filter(code="PEV-07").exists()  # expired in the file, stays so
        assert not licensed.filter(code="ATT-03").exists()  # suspended in the file
        assert set(CTR.objects.values_list("status", flat=True)) == set(CTRStatus.values)
        assert CTR.objects.filter(transport_date__year=2029).exists()
        out = io.StringIO()
        call_command("load_demo", stdout=out)

    # The UFESP of every year the demos use: the CTRs' fees, the payments.
    paid = InfractionRecord.objects.filter(status=RecordStatus.PAID)
    used = {d.year for d in CTR.objects.values_list("transport_date", flat=True)}
    used |= {d.year for d in paid.values_list("paid_on", flat=True)}
    assert used <= set(UfespRate.objects.values_list("year", flat=True))
    # The recidivist's first fine paid about 200 days ago, in its own year's UFESP: not moved
    # back to a year the migrations happened to carry.
    (paid_on,) = paid.values_list("paid_on", flat=True)
    assert paid_on == AFTER_THE_FILE.date() - datetime.timedelta(days=200)
    # Years after the last published value are said to be demonstration values.
    assert "UFESP de" not in out.getvalue()  # the second load registers nothing new


def test_a_second_load_renews_nothing_more(settings):
    with frozen_clock(AFTER_THE_FILE):
        call_command("load_demo", stdout=io.StringIO())
        first = dict(ReceivingFacility.objects.values_list("code", "licenses__valid_until"))
        call_command("load_demo", stdout=io.StringIO())
        second = dict(ReceivingFacility.objects.values_list("code", "licenses__valid_until"))

    assert first == second
    assert first["ATT-01"] == datetime.date(2031, 12, 31)
