"""The one mechanism (jurisdiction.scope): where a person acts, the municipality it works in
now, and what each model's `visible_to` gives it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from ctr import roles
from ctr.models import CTR
from fiscalization.models import DumpingReport
from jurisdiction.models import CurrentMunicipality, Role, StaffRole
from jurisdiction.scope import (
    OutsideJurisdiction,
    ReadOnlyRole,
    choose,
    forget,
    jurisdiction_of,
    require_acting,
)
from tests.builders import municipality
from tests.ctr_world import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def towns():
    # Named so that the first by name is not the first created: the default current
    # municipality is the first by name.
    return {
        "guara": municipality("3518404", "Guaratinguetá (teste)"),
        "apa": municipality("3502507", "Aparecida (teste)", east_m=20_000),
        "lorena": municipality("3527207", "Lorena (teste)", east_m=-20_000),
    }


def test_a_person_reads_and_acts_only_where_it_holds_a_role(towns):
    fiscal = make_user("fiscal", Role.FISCAL, towns["guara"])
    j = jurisdiction_of(fiscal)
    assert j.readable_ids == {towns["guara"].pk}
    assert j.acts(towns["guara"].pk) and not j.acts(towns["apa"].pk)
    assert not j.acts(towns["guara"].pk, [Role.AUTHORITY])
    assert j.current_id == towns["guara"].pk and not j.several


def test_the_auditor_reads_several_and_acts_on_none(towns):
    auditor = make_user("auditor", Role.AUDITOR, towns["guara"])
    StaffRole.objects.create(user=auditor, municipality=towns["apa"], role=Role.AUDITOR)
    j = jurisdiction_of(auditor)
    assert j.readable_ids == {towns["guara"].pk, towns["apa"].pk}
    assert not j.acts_anywhere and j.several
    with pytest.raises(ReadOnlyRole):
        require_acting(auditor, towns["guara"].pk)
    with pytest.raises(OutsideJurisdiction):
        require_acting(auditor, towns["lorena"].pk)


def test_the_current_municipality_is_the_first_by_name_until_one_is_chosen(towns):
    person = make_user("consorcio", Role.NUCLEO, towns["guara"])
    StaffRole.objects.create(user=person, municipality=towns["apa"], role=Role.NUCLEO)
    assert jurisdiction_of(person).current_id == towns["apa"].pk  # "Aparecida" < "Guará…"
    choose(person, towns["guara"].pk)
    # Remembered for the person, not the request: a new user object reads it back.
    again = get_user_model().objects.get(pk=person.pk)
    assert jurisdiction_of(again).current_id == towns["guara"].pk
    assert jurisdiction_of(again).current_name == "Guaratinguetá (teste)/SP"


def test_the_roles_and_the_choice_are_read_in_one_round_trip(towns, django_assert_num_queries):
    # Every signed-in request reads them: one statement, not one per table.
    person = make_user("consorcio", Role.NUCLEO, towns["guara"])
    StaffRole.objects.create(user=person, municipality=towns["apa"], role=Role.AUDITOR)
    choose(person, towns["guara"].pk)
    again = get_user_model().objects.get(pk=person.pk)
    with django_assert_num_queries(1):
        j = jurisdiction_of(again)
    assert j.roles == {
        towns["guara"].pk: frozenset({Role.NUCLEO}),
        towns["apa"].pk: frozenset({Role.AUDITOR}),
    }
    assert (j.current_id, j.current_name) == (towns["guara"].pk, "Guaratinguetá (teste)/SP")


def test_a_municipality_not_its_own_cannot_be_chosen(towns):
    person = make_user("fiscal", Role.FISCAL, towns["guara"])
    with pytest.raises(OutsideJurisdiction):
        choose(person, towns["apa"].pk)
    assert not CurrentMunicipality.objects.exists()


def test_a_role_taken_away_takes_the_remembered_choice_with_it(towns):
    person = make_user("consorcio", Role.NUCLEO, towns["guara"])
    StaffRole.objects.create(user=person, municipality=towns["apa"], role=Role.NUCLEO)
    choose(person, towns["apa"].pk)
    StaffRole.objects.filter(user=person, municipality=towns["apa"]).delete()
    forget(person)
    assert jurisdiction_of(person).current_id == towns["guara"].pk


def test_lists_are_the_current_municipalitys_and_lookups_every_one_of_its(towns):
    from fiscalization import intake, photos
    from tests import dumping_fixtures as fx

    person = make_user("consorcio", Role.FISCAL, towns["guara"])
    StaffRole.objects.create(user=person, municipality=towns["apa"], role=Role.FISCAL)
    here = intake.create_report(
        intake.NewReport(fx.at(), "LOTE_VAGO"),
        photos.check_photos([fx.upload("a.jpg", fx.jpeg_plain())]),
    )
    there = intake.create_report(
        intake.NewReport(fx.at(east_m=20_000), "LOTE_VAGO"),
        photos.check_photos([fx.upload("b.jpg", fx.jpeg_plain())]),
    )
    assert (here.municipality, there.municipality) == (towns["guara"], towns["apa"])
    choose(person, towns["guara"].pk)
    assert list(DumpingReport.objects.visible_to(person, current=True)) == [here]
    assert set(DumpingReport.objects.visible_to(person)) == {here, there}
    outsider = make_user("fiscal_lorena", Role.FISCAL, towns["lorena"])
    assert not DumpingReport.objects.visible_to(outsider).exists()


def test_the_superuser_reads_everything_and_works_in_the_default_municipality(towns, settings):
    settings.DEFAULT_MUNICIPALITY_IBGE = "3518404"
    admin = get_user_model().objects.create_superuser("admin", "a@example.org", "x")
    j = jurisdiction_of(admin)
    assert j.readable_ids is None and j.acts(towns["lorena"].pk)
    assert j.current_id == towns["guara"].pk


def test_nobody_signed_in_reads_nothing():
    from django.contrib.auth.models import AnonymousUser

    assert CTR.objects.visible_to(AnonymousUser()).query.is_empty()
    assert jurisdiction_of(AnonymousUser()).readable_ids == frozenset()


# --- the page where it is chosen, and the bar on every page ---------------------------------


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_choice_is_made_in_one_place_and_goes_back_to_the_page(towns):
    person = make_user("consorcio", Role.NUCLEO, towns["guara"])
    StaffRole.objects.create(user=person, municipality=towns["apa"], role=Role.NUCLEO)
    client = client_of(person)
    page = client.get("/municipio/?next=/nucleo/").content.decode()
    assert "Aparecida (teste)/SP" in page and "Guaratinguetá (teste)/SP" in page
    assert "Lorena" not in page
    response = client.post(
        "/municipio/", {"municipality": towns["guara"].pk, "next": "/nucleo/mapa/"}
    )
    assert (response.status_code, response["Location"]) == (302, "/nucleo/mapa/")
    html = client.get("/nucleo/").content.decode()
    assert "Município: <strong>Guaratinguetá (teste)/SP</strong>" in html
    assert "Trocar de município" in html


def test_the_page_never_sends_anywhere_else(towns):
    person = make_user("consorcio", Role.NUCLEO, towns["guara"])
    response = client_of(person).post(
        "/municipio/", {"municipality": towns["guara"].pk, "next": "https://example.com/"}
    )
    assert response["Location"] == "/painel/"


def test_another_municipality_is_refused_with_the_form_and_nothing_changes(towns):
    person = make_user("fiscal", Role.FISCAL, towns["guara"])
    response = client_of(person).post("/municipio/", {"municipality": towns["apa"].pk})
    assert response.status_code == 400
    assert "Faça uma escolha válida" in response.content.decode()
    assert not CurrentMunicipality.objects.exists()


def test_one_municipality_shows_its_name_and_no_choice(towns):
    html = client_of(make_user("fiscal", Role.FISCAL, towns["guara"])).get("/nucleo/").content
    assert "Município: <strong>Guaratinguetá (teste)/SP</strong>" in html.decode()
    assert "Trocar de município" not in html.decode()


def test_people_of_no_municipality_see_no_bar(towns):
    transporter = make_user("curioso")
    html = client_of(transporter).get("/").content.decode()
    assert "Município:" not in html
    assert client_of(transporter).get("/municipio/").status_code == 403


def test_the_inspectors_home_follows_its_role_in_the_current_municipality(towns):
    person = make_user("consorcio", Role.FISCAL, towns["guara"])
    StaffRole.objects.create(user=person, municipality=towns["apa"], role=Role.NUCLEO)
    choose(person, towns["guara"].pk)
    assert client_of(person).get("/painel/")["Location"] == "/fiscalizacao/"
    choose(person, towns["apa"].pk)
    assert client_of(person).get("/painel/")["Location"] == "/nucleo/"
    assert roles.is_nucleo(person, towns["apa"].pk) and not roles.is_nucleo(
        person, towns["guara"].pk
    )
