"""The payment after an upheld appeal within art. 36 (Lei 3.978/2007 art. 36: "no prazo máximo de 30
(trinta) dias, da lavratura do auto de infração"): where the framework's source gives no days of its
own after the appeal, the appeal that suspends collection holds the count back from its filing to
its decision, and only the rest of the law's days run after the decision — never more than the law's
30 in all."""

from __future__ import annotations

import pytest

from fiscalization import enforcement
from fiscalization.enforcement.terms import terms_of
from fiscalization.models.frameworks import PenaltyFramework
from tests.ctr_world import build_world
from tests.enforcement_world import GUARATINGUETA, D, ensure_frameworks, record_for

pytestmark = pytest.mark.django_db
READING = (
    "Lei 3.978/2007 art. 36 (“prazo máximo de 30 (trinta) dias, da lavratura”): a lei não dá "
    "prazo próprio após o recurso; os dias do recurso ao julgamento não contam"
)


@pytest.fixture
def world():
    world = build_world()
    ensure_frameworks()
    # The municipality's source gives no days after an appeal (none of its own law does).
    framework = PenaltyFramework.objects.get(ibge_code=GUARATINGUETA)
    citations = {**framework.citations, "post_appeal_payment_days": READING}
    PenaltyFramework.objects.filter(pk=framework.pk).update(
        post_appeal_payment_days=None, post_appeal_day_count="", citations=citations
    )
    return world


def test_the_days_of_the_appeal_do_not_count_and_the_rest_runs_after_the_decision(world):
    record = record_for(world)  # drawn up and the fine applied on 06/03/2025: day 1 is 07/03
    assert enforcement.payment_last_day(record) == D(2025, 4, 5)
    enforcement.file_appeal(record, D(2025, 3, 20), "Razões", by=world.fiscal)  # 13 days used
    enforcement.decide_appeal(
        record, D(2025, 5, 2), upheld=True, decision="Mantido.", by=world.authority
    )
    record.refresh_from_db()
    last = enforcement.payment_last_day(record)
    # 17 days left, from 03/05: the last is 19/05/2025.
    assert last == D(2025, 5, 19)
    used_before = (D(2025, 3, 20) - D(2025, 3, 7)).days
    run_after = (last - D(2025, 5, 2)).days
    assert used_before + run_after == record.case.framework.payment_days == 30


def test_an_appeal_filed_on_the_last_day_leaves_one_day_after_the_decision(world):
    record = record_for(world)
    enforcement.file_appeal(record, D(2025, 4, 5), "Razões", by=world.fiscal)  # day 30
    enforcement.decide_appeal(
        record, D(2025, 5, 2), upheld=True, decision="Mantido.", by=world.authority
    )
    record.refresh_from_db()
    # Filed on the last day: 29 days had run; one is left, the day after the decision.
    assert enforcement.payment_last_day(record) == D(2025, 5, 3)


def test_the_documents_state_the_reading_and_its_source(world):
    record = record_for(world)
    terms = terms_of(record.case.framework)
    assert "sem contar os dias do recurso ao julgamento" in terms["post_appeal"]
    assert terms["post_appeal_cite"] == READING
