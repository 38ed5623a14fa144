"""The admin is scoped like every page: a municipality's staff list, open and
choose only their municipalities' rows; what has no municipality is the administrator's."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.test import Client

from ctr import roles
from jurisdiction.admin_site import AdministratorOnly, ScopedAdmin, ScopedChoices
from jurisdiction.scope import ScopedQuerySet
from pev_network.models import FacilityKind
from tests.builders import ORIGIN, licensed_facility, municipality, offset, square
from tests.ctr_world import make_user

pytestmark = pytest.mark.django_db


def test_every_model_of_the_admin_is_scoped_or_the_administrators():
    loose = sorted(
        f"{model._meta.label}: {type(model_admin).__mro__[1].__name__}"
        for model, model_admin in admin.site._registry.items()
        if not isinstance(model_admin, ScopedAdmin | AdministratorOnly)
    )
    assert loose == []


def test_every_inline_of_the_admin_is_scoped_too():
    # An inline is a form of its own: its rows and its foreign keys' choices follow the same
    # scope as the admin it hangs from, whatever model it shows (seen in review:
    # the inlines only had the blank choices).
    loose = sorted(
        f"{model._meta.label} → {inline.model._meta.label}"
        for model, model_admin in admin.site._registry.items()
        for inline in model_admin.inlines
        if not issubclass(inline, ScopedChoices)
        or (isinstance(inline.model._default_manager.all(), ScopedQuerySet))
        != issubclass(inline, ScopedAdmin)
    )
    assert loose == []


@pytest.fixture
def towns():
    town = municipality("3518404", "Guaratinguetá (teste)")
    neighbour = municipality("3502507", "Aparecida (teste)", east_m=20_000)
    ours = licensed_facility(FacilityKind.ATT, square(*ORIGIN, 100), "ATT Nossa", town)
    theirs = licensed_facility(
        FacilityKind.LANDFILL,
        square(*offset(*ORIGIN, 20_000, 0), 200),
        "Aterro Vizinho",
        neighbour,
    )
    staff = make_user("nucleo", roles.NUCLEO, town)
    staff.is_staff = True
    staff.save(update_fields=["is_staff"])
    staff.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label__in=["pev_network", "jurisdiction"],
            codename__startswith="view_",
        )
    )
    client = Client()
    client.force_login(staff)
    return {"ours": ours, "theirs": theirs, "client": client, "town": town}


def test_the_staff_list_their_municipalitys_facilities_only(towns):
    html = towns["client"].get("/admin/pev_network/receivingfacility/").content.decode()
    assert "ATT Nossa" in html
    assert "Aterro Vizinho" not in html


def test_another_municipalitys_facility_is_not_found_in_the_admin(towns):
    client = towns["client"]
    mine = client.get(f"/admin/pev_network/receivingfacility/{towns['ours'].pk}/change/")
    assert mine.status_code == 200
    other = client.get(f"/admin/pev_network/receivingfacility/{towns['theirs'].pk}/change/")
    # The admin answers an object outside the queryset as missing: back to its index.
    assert other.status_code == 302
    assert "Aterro Vizinho" not in client.get(other["Location"], follow=True).content.decode()


def test_the_municipalities_list_is_theirs(towns):
    html = towns["client"].get("/admin/pev_network/municipality/").content.decode()
    assert "Guaratinguetá (teste)" in html
    assert "Aparecida (teste)" not in html


def test_roles_are_the_administrators_to_grant(towns):
    """Even with the permission to view it, a municipality's staff never see the roles (the
    admin's own refusal of a model it does not offer them; a 404 here hid, once, that the
    roles' admin was not registered at all)."""
    response = towns["client"].get("/admin/jurisdiction/staffrole/")
    assert response.status_code == 403
