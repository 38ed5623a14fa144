"""The UFESP by year: one home, read by fees and fines; the admin and the Núcleo's dashboard warn
from December when next year's value is missing."""

from __future__ import annotations

import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from ctr import roles
from pev_network.models import FiscalUnit, UfespRate
from tests.builders import municipality
from tests.clock import frozen_clock
from tests.ctr_world import build_world, make_user

pytestmark = pytest.mark.django_db

SP = ZoneInfo("America/Sao_Paulo")
WARNING = "O valor da UFESP de 2027 não está cadastrado"


def at(month: int, day: int):
    return frozen_clock(datetime.datetime(2026, month, day, 10, tzinfo=SP))


@pytest.fixture
def clients():
    world = build_world()
    UfespRate.objects.filter(year__gte=2026).delete()
    UfespRate.objects.create(year=2026, value_brl=Decimal("38.42"))
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("gestor", "g@example.org", "x"))
    nucleo = Client()
    nucleo.force_login(get_user_model().objects.get(pk=world.nucleo.pk))
    return admin, nucleo


def pages(admin: Client, nucleo: Client) -> dict[str, str]:
    return {
        "index": admin.get("/admin/").content.decode(),
        "changelist": admin.get("/admin/pev_network/ufesprate/").content.decode(),
        "dashboard": nucleo.get("/nucleo/").content.decode(),
    }


def test_from_december_the_admin_and_the_nucleo_are_warned_of_next_years_ufesp(clients):
    with at(12, 1):
        seen = pages(*clients)
    for name, page in seen.items():
        assert WARNING in page, name
        assert "a partir de 01/01/2027" in page, name
    assert "Cadastre-o em “Valores das unidades fiscais”." in seen["index"]
    assert "Peça ao administrador da plataforma que o cadastre." in seen["dashboard"]


def test_no_warning_in_november_nor_once_the_value_is_registered(clients):
    with at(11, 30):
        assert not any(WARNING in page for page in pages(*clients).values())
    UfespRate.objects.create(year=2027, value_brl=Decimal("40.00"))
    with at(12, 20):
        assert not any("UFESP de 2027 não" in page for page in pages(*clients).values())


def test_a_current_year_without_its_ufesp_is_warned_all_year(clients):
    UfespRate.objects.filter(year=2026).delete()
    with at(6, 15):
        page = pages(*clients)["index"]
    assert "O valor da UFESP de 2026 não está cadastrado: desde 1º de janeiro" in page


# --- two municipalities -----------------------------------------------------------------------
#
# The UFESP is São Paulo's (pev_network.UfespRate: no scope, one value a year for every
# municipality), and every CTR's fee is in it (Lei 3.978/2007 art. 12 §3): a missing year
# concerns every Núcleo. The fines are in the unit of the municipality's own framework: the
# UFESP (Guaratinguetá), reais (Ferraz), the UFIR-RJ (Rio de Janeiro). Each Núcleo is told
# what a missing year means for its own municipality.

FINES_UFESP = "as multas não podem ser pagas (art. 36)"


def test_each_nucleo_is_warned_of_what_the_missing_year_means_for_its_municipality():
    from tests.enforcement_world import FERRAZ, RIO, ensure_frameworks, own_framework
    from tests.neighbour_world import build_neighbours, web

    ensure_frameworks()
    towns = build_neighbours()
    own_framework(towns.b, like=RIO)
    ferraz = municipality("3515707", "Ferraz (teste)", east_m=-20_000)
    own_framework(ferraz, like=FERRAZ)
    ferraz_nucleo = make_user("nucleo_ferraz", roles.NUCLEO, ferraz)
    UfespRate.objects.filter(year__gte=2026).delete()
    with at(12, 1):
        seen = {
            name: web(user).get("/nucleo/").content.decode()
            for name, user in (
                ("a", towns.world.nucleo),
                ("rio", towns.b_nucleo),
                ("ferraz", ferraz_nucleo),
            )
        }
    for name, page in seen.items():
        # The fee is in UFESP everywhere.
        assert "O valor da UFESP de 2026 não está cadastrado" in page, name
        assert "taxas de descarga" in page, name
    assert FINES_UFESP in seen["a"]
    assert "UFIR" not in seen["a"]
    assert FINES_UFESP not in seen["ferraz"] and "UFIR" not in seen["ferraz"]
    assert FINES_UFESP not in seen["rio"]
    assert "O valor da UFIR-RJ de 2027 não está cadastrado" in seen["rio"]
    UfespRate.objects.create(unit=FiscalUnit.UFIR_RIO, year=2027, value_brl=Decimal("4.50"))
    UfespRate.objects.create(unit=FiscalUnit.UFIR_RIO, year=2026, value_brl=Decimal("4.40"))
    with at(12, 1):
        assert "UFIR" not in web(towns.b_nucleo).get("/nucleo/").content.decode()
