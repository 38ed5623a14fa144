"""The municipality's parameter sets in the admin, over HTTP: a Núcleo adds a set from today or
later, starting from the figures in force; a set that has started is shown read-only and kept
(it judged the CTRs of its days); nothing starts before today; another municipality's staff
see none of it. The rules live in MunicipalParameters.clean, so every path meets them."""

from __future__ import annotations

import datetime
import re
import threading
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.test import Client

from ctr import roles
from pev_network.models import FIRST_SET_FROM, MunicipalParameters
from tests.builders import municipality
from tests.ctr_world import TODAY, make_user
from tests.races import wait_until_blocked

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]

ADD = "/admin/pev_network/municipalparameters/add/"
DAY = datetime.timedelta(days=1)


def change_url(row: MunicipalParameters) -> str:
    return f"/admin/pev_network/municipalparameters/{row.pk}/change/"


def staff_client(town, username="nucleo") -> Client:
    """A Núcleo of `town` signed in to the admin with the permissions on the parameter sets."""
    user = make_user(username, roles.NUCLEO, town)
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.user_permissions.add(
        *Permission.objects.filter(
            codename__in=[
                f"{verb}_municipalparameters" for verb in ("add", "change", "delete", "view")
            ]
        )
    )
    client = Client()
    client.force_login(user)
    return client


def form_data(page) -> dict:
    """What the admin page would post back as it shows it."""
    form = page.context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        value = form[name].value()  # prepared: a JSON field's dict as JSON
        if isinstance(value, bool):
            if value:
                data[name] = "on"
            continue
        shown = field.widget.format_value(value) if value is not None else None
        data[name] = "" if shown is None else shown
    return data


@pytest.fixture
def town():
    return municipality()


def first_set(town) -> MunicipalParameters:
    return MunicipalParameters.objects.get(municipality=town, valid_from=FIRST_SET_FROM)


def test_a_new_set_from_today_starts_from_the_figures_in_force(town):
    client = staff_client(town)
    page = client.get(f"{ADD}?municipality={town.pk}")
    assert page.status_code == 200
    data = form_data(page)
    assert (data["gps_tolerance_m"], data["valid_from"]) == ("15", "30/11/2026")
    data.update(gps_tolerance_m="25,5", act="Decreto 1/2026 (exemplo de teste)")
    posted = client.post(ADD, data)
    assert posted.status_code == 302, posted.content.decode()[:2000]
    assert town.parameters_on(TODAY).gps_tolerance_m == Decimal("25.5")
    # The days before keep their figures, and the other figures were carried over.
    assert town.parameters_on(TODAY - DAY).gps_tolerance_m == Decimal("15.0")
    assert town.parameters_on(TODAY).open_ctr_alert_hours == first_set(town).open_ctr_alert_hours


def test_a_set_cannot_start_before_today(town):
    client = staff_client(town)
    data = form_data(client.get(f"{ADD}?municipality={town.pk}"))
    data.update(valid_from="29/11/2026", gps_tolerance_m="25")
    refused = client.post(ADD, data)
    assert refused.status_code == 200
    assert refused.context["adminform"].form.errors["valid_from"] == [
        "Os parâmetros não mudam para trás: “vigente desde” é hoje (30/11/2026) ou depois; os "
        "CTRs de antes seguem os parâmetros do seu dia."
    ]
    assert MunicipalParameters.objects.filter(municipality=town).count() == 1


def test_a_set_in_force_is_shown_read_only_and_kept(town):
    client = staff_client(town)
    started = first_set(town)
    page = client.get(change_url(started))
    html = page.content.decode()
    assert page.status_code == 200
    assert not re.search(r'<input[^>]+name="gps_tolerance_m"', html)
    assert "Para mudar um valor, cadastre novos parâmetros a partir de hoje" in html
    assert 'name="_save"' not in html
    data = form_data(client.get(f"{ADD}?municipality={town.pk}"))
    data.update(valid_from="01/01/2000", gps_tolerance_m="99")
    assert client.post(change_url(started), data).status_code == 403
    delete = change_url(started).replace("change", "delete")
    assert client.post(delete, {"post": "yes"}).status_code == 403
    started.refresh_from_db()
    assert started.gps_tolerance_m == Decimal("15.0")


def test_a_set_that_has_not_started_is_changed_or_deleted_but_not_moved_backwards(town):
    client = staff_client(town)
    later = MunicipalParameters.objects.create(
        municipality=town, valid_from=TODAY + DAY, gps_tolerance_m=Decimal("20")
    )
    data = form_data(client.get(change_url(later)))
    assert data["valid_from"] == "01/12/2026"
    changed = client.post(change_url(later), {**data, "gps_tolerance_m": "30"})
    assert changed.status_code == 302, changed.content.decode()[:2000]
    later.refresh_from_db()
    assert later.gps_tolerance_m == Decimal("30")
    backwards = client.post(change_url(later), {**data, "valid_from": "29/11/2026"})
    assert backwards.status_code == 200
    assert "Os parâmetros não mudam para trás" in backwards.content.decode()
    deleted = client.post(change_url(later).replace("change", "delete"), {"post": "yes"})
    assert deleted.status_code == 302
    assert not MunicipalParameters.objects.filter(pk=later.pk).exists()


def test_another_municipalitys_staff_see_none_of_its_sets(town):
    neighbour = municipality("3502507", "Aparecida (teste)", east_m=20_000)
    client = staff_client(neighbour, "nucleo-vizinho")
    listing = client.get("/admin/pev_network/municipalparameters/").content.decode()
    assert "Aparecida (teste)" in listing and "Guaratinguetá" not in listing
    assert client.get(change_url(first_set(town))).status_code == 302
    # Nor may they add one to it: the municipality is not among the choices.
    data = form_data(client.get(f"{ADD}?municipality={town.pk}"))
    data["municipality"] = str(town.pk)
    refused = client.post(ADD, data)
    assert refused.status_code == 200
    assert "municipality" in refused.context["adminform"].form.errors
    assert MunicipalParameters.objects.filter(municipality=town).count() == 1


def test_the_municipality_page_lists_its_sets_and_links_to_a_new_one(town):
    MunicipalParameters.objects.create(
        municipality=town, valid_from=TODAY + DAY, act="Decreto 2/2026 (exemplo de teste)"
    )
    user = make_user("gestor-plataforma", roles.NUCLEO, town)
    user.is_staff = user.is_superuser = True
    user.save(update_fields=["is_staff", "is_superuser"])
    client = Client()
    client.force_login(user)
    html = client.get(f"/admin/pev_network/municipality/{town.pk}/change/").content.decode()
    assert "Decreto 2/2026 (exemplo de teste)" in html and "01/01/2000" in html
    assert f"{ADD}?municipality={town.pk}" in html


# --- the rules in the model: every path, not only the admin's


def test_the_model_refuses_to_change_or_delete_a_set_in_force(town):
    started = first_set(town)
    started.gps_tolerance_m = Decimal("40")
    with pytest.raises(ValidationError, match="não mudam .*tolerância do GPS"):
        started.full_clean()
    with pytest.raises(ValidationError, match="não podem ser excluídos"):
        MunicipalParameters.objects.get(pk=started.pk).delete()
    assert MunicipalParameters.objects.filter(pk=started.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_a_set_another_user_saved_meanwhile_is_an_error_on_the_form_not_a_500(town):
    """Two Núcleo staff add a set from the same day at once: both forms pass validation, and
    the second insert meets the first's row at the unique index. The other user's insert is
    held uncommitted until this one's waits on it, so the race happens on any machine."""
    client = staff_client(town)
    data = form_data(client.get(f"{ADD}?municipality={town.pk}"))
    data.update(valid_from="07/12/2026", gps_tolerance_m="30", act="Decreto 3/2026 (teste)")
    outcome: list = []

    def post():
        try:
            outcome.append(client.post(ADD, data))
        except Exception as error:  # what the user would get as a 500
            outcome.append(error)
        finally:
            connection.close()

    other = threading.Thread(target=post)
    with transaction.atomic():
        meanwhile = MunicipalParameters(municipality=town, valid_from=TODAY + 7 * DAY)
        meanwhile.take_values_of(first_set(town))
        meanwhile.gps_tolerance_m = Decimal("40")
        meanwhile.save()
        other.start()
        wait_until_blocked([other])
    other.join(timeout=120)

    (page,) = outcome
    assert not isinstance(page, Exception), page
    assert page.status_code == 200
    errors = page.context["adminform"].form.non_field_errors()
    assert any("com este Município e Vigente desde já existe" in error for error in errors), errors
    # The user's figures stay on the form; the other user's set is the one stored.
    assert page.context["adminform"].form["gps_tolerance_m"].value() == "30"
    stored = MunicipalParameters.objects.get(municipality=town, valid_from=TODAY + 7 * DAY)
    assert stored.gps_tolerance_m == Decimal("40")
