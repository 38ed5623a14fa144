"""The generator's demo (demo/generators.py, a part of `manage.py load_demo`, after the CTR
demo): the README's account "gerador" signs in with the demo password and acts for
the owner of the conclusive certificate's worksite; a second load duplicates nothing."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

from ctr import roles
from ctr.models import Membership, Worksite
from demo import ctrs as ctr_demo
from demo import loading
from generators import declarations, suspects
from generators.models import (
    DeclarationStatus,
    GeneratorRegistration,
    HabiteSeDeclaration,
    PlanStatus,
    RegistrationStatus,
    WastePlan,
)
from tests.clock import FROZEN_NOW, frozen_clock
from tests.demo import FAST_HASHER, held_for_the_module

pytestmark = pytest.mark.django_db


def load() -> str:
    return loading.load_generators()


# First in the module: the demo below is loaded once, for the tests after this one.
def test_it_needs_the_ctr_demo_first():
    with pytest.raises(ValueError, match="load_demo"):
        load()


@pytest.fixture(scope="module")
def demo_output(django_db_setup, django_db_blocker):
    with held_for_the_module(django_db_blocker):
        loading.load_network()
        loading.load_ctrs()
        yield load()


def test_the_generator_account_acts_for_the_certificate_worksites_owner(demo_output, client):
    user = get_user_model().objects.get(username="gerador")
    generator = roles.membership(user).generator
    assert Worksite.objects.filter(
        generator=generator, address="Rua Fictícia do Certificado, 100"
    ).exists()
    assert client.login(username="gerador", password=ctr_demo.DEMO_PASSWORD)
    assert "gerador" in demo_output and ctr_demo.DEMO_PASSWORD in demo_output


def test_a_registration_waits_in_the_nucleo_queue(demo_output):
    registration = GeneratorRegistration.objects.get(user__username="reformas-exemplo")
    assert registration.status == RegistrationStatus.PENDING
    assert not registration.user.has_usable_password()
    assert roles.membership(registration.user) is None
    # In the queue of the demo town's Núcleo, whose worksites it is about.
    nucleo = get_user_model().objects.get(username="nucleo")
    assert (
        GeneratorRegistration.objects.visible_to(nucleo, current=True)
        .filter(pk=registration.pk)
        .exists()
    )


def test_the_certificate_worksite_has_an_approved_plan_and_a_declaration_to_issue(demo_output):
    worksite = Worksite.objects.get(address="Rua Fictícia do Certificado, 100")
    assert worksite.registered_at is not None and worksite.built_area_m2 > 0
    plan = WastePlan.objects.get(worksite=worksite)
    assert plan.status == PlanStatus.APPROVED
    assert plan.transporters.exists() and plan.facilities.exists()
    assert worksite.plan_facilities.count() == plan.facilities.count()
    declaration = HabiteSeDeclaration.objects.get(worksite=worksite)
    assert declaration.status == DeclarationStatus.REQUESTED
    with frozen_clock():
        assert declarations.review(worksite).can_issue
    assert f"/nucleo/obras/{worksite.pk}/" in demo_output


def test_the_large_worksite_of_the_generator_is_a_suspect(demo_output):
    generator = roles.membership(get_user_model().objects.get(username="gerador")).generator
    suspect = (
        Worksite.objects.filter(generator=generator, is_large_generator=True)
        .exclude(address="Rua Fictícia do Certificado, 100")
        .get()
    )
    assert WastePlan.objects.get(worksite=suspect).status == PlanStatus.APPROVED
    figures = suspects.of_worksite(suspect, FROZEN_NOW.date())
    assert suspects.Reason.OVERDUE in figures.reasons
    assert suspects.Reason.LOW_VOLUME in figures.reasons
    assert f"Obra suspeita: /nucleo/obras/{suspect.pk}/" in demo_output


def test_a_second_load_duplicates_nothing_and_restores_the_password(demo_output):
    user = get_user_model().objects.get(username="gerador")
    user.set_password("outra-senha-qualquer")
    user.save()

    def counts():
        return (
            get_user_model().objects.count(),
            Membership.objects.count(),
            WastePlan.objects.count(),
            HabiteSeDeclaration.objects.count(),
        )

    before = counts()
    with override_settings(PASSWORD_HASHERS=FAST_HASHER):
        load()

    assert counts() == before
    user.refresh_from_db()
    assert user.check_password(ctr_demo.DEMO_PASSWORD)
    assert GeneratorRegistration.objects.count() == 1
