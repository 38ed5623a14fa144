"""The one command of the demonstration (`manage.py load_demo`, demo/loading.py): it loads every
part in order, so that every account the README lists signs in and what each part makes is
there; a second run changes nothing. Loaded once for the module inside a transaction rolled
back at the end (CTR events cannot be deleted)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import override_settings

from ctr.models import CTR, CTRStatus
from fiscalization.models import DumpingReport, EnforcementCase, PenaltyTableEntry
from generators.models import GeneratorRegistration, HabiteSeDeclaration, WastePlan
from pev_network.models import CatchmentBasin, Municipality, ReceivingFacility
from tests.demo import FAST_HASHER, held_for_the_module

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
# The apps the demonstration writes to, and the accounts' table.
WRITTEN = ("auth", "jurisdiction", "pev_network", "ctr", "generators", "fiscalization")


def readme_accounts() -> list[tuple[str, str]]:
    """(user, password) of the README's table "Contas de demonstração"."""
    section = (ROOT / "README.md").read_text().split("## Contas de demonstração", 1)[1]
    section = section.split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", section, re.MULTILINE)


def load() -> str:
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    return out.getvalue()


def snapshot() -> dict[str, int]:
    return {
        model._meta.label: model.objects.count()
        for label in WRITTEN
        for model in apps.get_app_config(label).get_models()
    }


@pytest.fixture(scope="module")
def loaded(django_db_setup, django_db_blocker):
    with held_for_the_module(django_db_blocker):
        yield load()


def test_the_readme_lists_the_accounts():
    names = [name for name, _password in readme_accounts()]
    assert {"admin", "nucleo", "transportador", "operador", "gerador"} <= set(names)


@pytest.mark.parametrize("username,password", readme_accounts())
def test_every_readme_account_signs_in(loaded, client, username, password):
    response = client.post("/entrar/", {"username": username, "password": password})
    assert response.status_code == 302, username
    assert client.session["_auth_user_id"] == str(
        get_user_model().objects.get(username=username).pk
    )


def test_every_part_is_loaded(loaded):
    # The network: the three boundaries, the facilities, the bacias, the consortium.
    assert set(Municipality.objects.values_list("ibge_code", flat=True)) >= {
        "3518404",
        "3550308",
        "3502507",
    }
    assert ReceivingFacility.objects.filter(code="ATT-01").exists()
    assert CatchmentBasin.objects.count() == 6
    assert Municipality.objects.get(ibge_code="3502507").accepted_destinations.exists()
    # The CTRs: a few hundred, in every status.
    assert CTR.objects.count() >= 250
    assert set(CTR.objects.values_list("status", flat=True)) == set(CTRStatus.values)
    # The generator's side: an approved plan, a Habite-se request, a registration waiting.
    assert WastePlan.objects.exists() and HabiteSeDeclaration.objects.exists()
    assert GeneratorRegistration.objects.filter(user__username="reformas-exemplo").exists()
    # The fiscalization: reports, cases and the demo's table of art. 23.
    assert DumpingReport.objects.count() >= 50
    assert EnforcementCase.objects.exists() and PenaltyTableEntry.objects.exists()
    # Each part says what it loaded, in order.
    heads = ("Demonstração carregada", "CTRs de demonstração", "Conta de demonstração do gerador")
    positions = [loaded.index(head) for head in (*heads, "Fiscalização de demonstração")]
    assert positions == sorted(positions)


def test_a_second_run_changes_nothing(loaded):
    users = get_user_model().objects
    users.filter(username="gerador").update(password="!")  # the demo password comes back
    before = snapshot()
    with override_settings(PASSWORD_HASHERS=FAST_HASHER):
        output = load()

    assert snapshot() == before
    assert "CTRs de demonstração já existiam (nada duplicado)" in output
    assert "Fiscalização de demonstração já existia (nada duplicado)" in output
    assert users.get(username="gerador").check_password("demo12345")
