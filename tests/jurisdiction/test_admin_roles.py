"""The municipal roles in the admin: granted by the platform's administrator alone (docs/
municipios.md, "Demais papéis")."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from jurisdiction.models import Role, StaffRole
from jurisdiction.scope import jurisdiction_of
from tests.builders import municipality
from tests.ctr_world import make_user

pytestmark = pytest.mark.django_db

URL = "/admin/jurisdiction/staffrole/"


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_administrator_grants_a_role_in_one_municipality():
    admin = get_user_model().objects.create_superuser("admin", "admin@example.org", "x")
    town = municipality("3502507", "Aparecida")
    municipality("3518404", "Guaratinguetá", east_m=20_000)
    fiscal = make_user("fiscal_aparecida")
    response = client_of(admin).post(
        f"{URL}add/", {"user": fiscal.pk, "municipality": town.pk, "role": Role.FISCAL}
    )
    assert response.status_code == 302, response.content.decode()
    role = StaffRole.objects.get(user=fiscal)
    assert (role.municipality, role.role, role.granted_by) == (town, Role.FISCAL, admin)
    assert jurisdiction_of(fiscal).readable_ids == {town.pk}
    assert "fiscal_aparecida" in client_of(admin).get(URL).content.decode()


def test_no_other_admin_account_sees_or_grants_roles():
    """A staff account of the admin with every permission on the roles is still refused:
    granting a role is the platform administrator's act."""
    town = municipality("3502507", "Aparecida")
    reader = make_user("leitor", Role.NUCLEO, town)
    reader.is_staff = True
    reader.save()
    reader.user_permissions.add(*Permission.objects.filter(content_type__model="staffrole"))
    client = client_of(reader)
    assert client.get(URL).status_code == 403
    response = client.post(
        f"{URL}add/", {"user": reader.pk, "municipality": town.pk, "role": Role.AUTHORITY}
    )
    assert response.status_code == 403
    assert list(StaffRole.objects.filter(user=reader).values_list("role", flat=True)) == [
        Role.NUCLEO
    ]
    assert "staffrole" not in client.get("/admin/").content.decode()
