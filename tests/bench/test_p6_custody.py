"""P6 of `make bench` (bench/p6_custody.py) on a tiny dataset: every step runs and the section
renders, so that the benchmark does not rot between its runs at a million CTRs. Timings are a
benchmark's business, not asserted here; the pages go through the Django test client instead
of gunicorn (a server in another process would not see this test's transaction)."""

import pytest
from django.db import transaction
from django.test import Client

from bench import p6_custody as p6
from synthetic import generator as synthetic
from tests.synthetic_world import load_municipalities

pytestmark = pytest.mark.django_db

CTRS = 1500
SEED = 11
# The default municipality and two small towns.
CODES = {"3518404", "3500105", "3500204"}


@pytest.fixture(scope="module")
def dataset(django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock(), transaction.atomic():
        load_municipalities(CODES, tmp_path_factory.mktemp("p6"))
        synthetic.generate(ctrs=CTRS, reports=0, seed=SEED, onward_share=p6.ONWARD_SHARE)
        yield
        transaction.set_rollback(True)


class ClientFetch:
    """p6.HTTPFetch's interface over the Django test client: each user signed in once."""

    def __init__(self):
        self.clients = {}

    def __call__(self, url: str, user) -> tuple[int, int]:
        if user.pk not in self.clients:
            self.clients[user.pk] = Client()
            self.clients[user.pk].force_login(user)
        response = self.clients[user.pk].get(url, secure=True)
        return response.status_code, len(response.content)


def test_p6_runs_end_to_end_on_a_tiny_dataset(dataset):
    data = p6.prepare(CTRS, SEED, reuse=True)
    assert (data.ctrs, data.onward, data.seconds) == (CTRS, CTRS * p6.ONWARD_SHARE, 0)
    assert data.processing > 0
    assert data.allocation_rows > 0

    case = p6.choose_case()
    assert case.shipping > 0
    assert case.worksite_via_att > 0
    assert case.pieces > 0

    pages = p6.measure_pages(case, ClientFetch(), requests=2)
    assert pages.statuses == {"cdf": [200], "report": [200], "detail": [200]}
    assert len(pages.cdf) == len(pages.detail) == len(pages.walk) == 2
    assert "Recursive Union" in pages.plan

    allocation = p6.measure_allocation(case, runs=2)
    assert len(allocation.refresh) == len(allocation.rewrite) == len(allocation.sum_year) == 2
    assert allocation.pieces > 0
    assert "WindowAgg" in allocation.plan

    text = p6.render(
        p6.Figures(data, case, allocation, pages, {"CPU": "teste"}, "hoje", "python -m bench")
    )
    for part in ("### P6a", "### P6b", "**Meta P6a**", "**Meta P6b**", case.ctr_number):
        assert part in text
    assert f"/obras/{case.worksite_id}/cdf/" in text  # the certificate's own page
