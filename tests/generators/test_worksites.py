"""A generator registers its worksites on the web (/gerador/obras/): by a point or a contour,
with its permit, size, kind of work and dates; each bad input is a 4xx in Portuguese that says
what and where, with nothing written and the input kept; a worksite a transporter's CTR
created at the same address is completed, not duplicated; the generator sees and edits only
its own worksites, the Núcleo every one (and registers on a generator's behalf)."""

from __future__ import annotations

import datetime
import html
import json
from decimal import Decimal

import pytest
from django.contrib.gis.geos import GEOSGeometry
from rest_framework.test import APIClient

from audit.models import AccessLog
from ctr.models import CTR, Generator, Worksite
from generators import worksites
from tests.builders import set_parameters
from tests.ctr_world import CNPJ_ALFA, CNPJ_GAMA, build_world, ctr_payload
from tests.generators.worksite_world import (
    A_LINE,
    ACROSS_THE_EDGE,
    ADDRESS,
    BOWTIE,
    FAR_AWAY,
    TWO_CORNERS,
    at,
    form_data,
    registered,
    square_m,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today")]

NEW = "/gerador/obras/nova/"


@pytest.fixture
def world():
    return build_world()


@pytest.fixture
def generator_client(client, world):
    client.force_login(world.generator_user)
    return client


def count() -> int:
    return Worksite.objects.count()


# --- registering -------------------------------------------------------------------------------


def test_generator_registers_a_worksite_by_its_point(generator_client, world):
    response = generator_client.post(NEW, form_data())
    site = Worksite.objects.get(address=ADDRESS)
    assert response.status_code == 302
    assert response["Location"] == f"/gerador/obras/{site.pk}/"
    assert site.generator == world.gama
    assert site.municipality == world.town
    assert site.area is None
    assert site.location.x == pytest.approx(at()[0], abs=1e-6)
    assert site.built_area_m2 == Decimal("350.50")
    assert site.registered_by == world.generator_user and site.registered_at is not None
    # A permit, and the default threshold (0 m²): a large generator by art. 9 caput.
    assert site.is_large_generator


def test_generator_registers_a_worksite_by_the_contour_drawn(generator_client):
    contour = square_m()
    response = generator_client.post(
        NEW, form_data(shape="polygon", area=json.dumps(contour), location_lat="", location_lon="")
    )
    assert response.status_code == 302
    site = Worksite.objects.get(address=ADDRESS)
    assert site.area.equals(GEOSGeometry(json.dumps(contour), srid=4326))
    # The location is a point of the contour, for the maps and the worksite list.
    assert site.area.covers(site.location)


def test_a_contour_sent_open_is_closed(generator_client):
    contour = square_m()
    contour["coordinates"][0].pop()  # the client left out the closing corner
    response = generator_client.post(
        NEW, form_data(shape="polygon", area=json.dumps(contour), location_lat="", location_lon="")
    )
    assert response.status_code == 302
    assert len(Worksite.objects.get().area.exterior_ring) == 5


BAD_WEB_INPUTS = [
    ("self-intersecting contour", {"shape": "polygon", "area": json.dumps(BOWTIE)}, 400,
     "auto-interseção em ("),
    ("two corners", {"shape": "polygon", "area": json.dumps(TWO_CORNERS)}, 400,
     "pelo menos 3 vértices; tem 2"),
    ("not a polygon", {"shape": "polygon", "area": json.dumps(A_LINE)}, 400,
     "não LineString"),
    ("contour not drawn", {"shape": "polygon", "area": ""}, 400, "Desenhe o contorno"),
    ("point outside every municipality",
     {"location_lon": "-60", "location_lat": "-10"}, 400,
     "fica fora dos municípios atendidos"),
    ("contour partly outside the town", {"shape": "polygon", "area": json.dumps(ACROSS_THE_EDGE)},
     400, "Parte da área desenhada fica fora de Guaratinguetá (teste)/SP"),
    ("contour wholly outside", {"shape": "polygon", "area": json.dumps(
        {"type": "Polygon", "coordinates": [[[-60, -10], [-59.99, -10], [-60, -9.99], [-60, -10]]]}
    )}, 400, "fora dos municípios atendidos"),
    ("built area zero", {"built_area_m2": "0"}, 400, "A área construída deve ser maior que zero"),
    ("built area negative", {"built_area_m2": "-20"}, 400, "maior que zero"),
    ("built area absurd", {"built_area_m2": "2000000"}, 400, "o limite é 1.000.000 m²"),
    ("built area not a number", {"built_area_m2": "muito"}, 400, "Informe um número"),
    ("end before start", {"start_date": "2026-09-01", "expected_end": "2026-08-31"}, 400,
     "O término previsto (31/08/2026) é anterior ao início (01/09/2026)"),
    ("work of 40 years", {"expected_end": "2066-09-01"}, 400, "mais de 30 anos"),
    ("start in 1900", {"start_date": "1900-01-01"}, 400, "Início em 01/01/1900"),
    ("no kind of work", {"work_kind": ""}, 400, "Este campo é obrigatório"),
    ("point missing", {"location_lat": "", "location_lon": ""}, 400,
     "Clique no mapa ou digite a latitude"),
    ("latitude out of range", {"location_lat": "-95"}, 400, "-90"),
]  # fmt: skip


@pytest.mark.parametrize(
    "changes,status,says", [c[1:] for c in BAD_WEB_INPUTS], ids=[c[0] for c in BAD_WEB_INPUTS]
)
def test_a_bad_registration_is_refused_on_its_field_and_writes_nothing(
    generator_client, changes, status, says
):
    before = count()
    response = generator_client.post(NEW, form_data(**changes))
    assert response.status_code == status
    page = response.content.decode()
    assert says in page
    assert "A obra não foi cadastrada" in page
    assert count() == before
    # The input stays: the address and the contour come back in the form.
    assert f'value="{ADDRESS}"' in page
    if changes.get("area"):
        assert html.escape(changes["area"]) in page


def test_a_permit_registered_in_the_municipality_is_refused_without_naming_its_worksite(
    generator_client, world
):
    other = Generator.objects.create(name="Outra Construtora", document=CNPJ_ALFA)
    registered(other, "Av. Central, 1", permit_number="ALV-2026-015", municipality=world.town)
    before = count()
    response = generator_client.post(NEW, form_data(permit_number=" alv-2026-015 "))
    assert response.status_code == 409
    page = response.content.decode()
    assert "O alvará nº ALV-2026-015 já está cadastrado em outra obra de Guaratinguetá" in page
    assert "Av. Central" not in page  # another generator's address is its own data
    assert count() == before


def test_the_same_permit_in_another_municipality_is_no_conflict(world):
    from tests.builders import municipality

    elsewhere = municipality("3550308", "Outro Município")
    other = Generator.objects.create(name="Outra Construtora", document=CNPJ_ALFA)
    registered(other, "Av. Central, 1", permit_number="ALV-2026-015", municipality=elsewhere)
    site = worksites.register(world.gama, registration(), world.generator_user)
    assert site.permit_number == "ALV-2026-015"


def test_the_same_address_registered_twice_is_refused(generator_client, world):
    registered(world.gama, ADDRESS, municipality=world.town)
    before = count()
    response = generator_client.post(NEW, form_data(address="  rua do canteiro,   200 "))
    assert response.status_code == 409
    assert "já tem uma obra cadastrada em “Rua do Canteiro, 200”" in response.content.decode()
    assert count() == before


def registration(**changes) -> worksites.Registration:
    values = {
        "address": ADDRESS,
        "geometry": GEOSGeometry(json.dumps(square_m()), srid=4326),
        "work_kind": "new_building",
        "built_area_m2": Decimal("350.5"),
        "start_date": datetime.date(2026, 9, 1),
        "expected_end": datetime.date(2027, 6, 30),
        "permit_number": "ALV-2026-015",
    }
    values.update(changes)
    return worksites.Registration(**values)


def test_two_registrations_of_one_permit_at_once_leave_one(world, monkeypatch):
    """Both pass the check before either is written: the constraint refuses the second."""
    other = Generator.objects.create(name="Outra Construtora", document=CNPJ_ALFA)
    registered(other, "Av. Central, 1", permit_number="ALV-2026-015", municipality=world.town)
    monkeypatch.setattr(worksites, "_permit_used", lambda *args: False)
    with pytest.raises(worksites.WorksiteError) as refused:
        worksites.register(world.gama, registration(), world.generator_user)
    assert refused.value.status == 409 and refused.value.field == "permit_number"
    assert not Worksite.objects.filter(generator=world.gama).exists()


def test_two_registrations_of_one_address_at_once_leave_one(world, monkeypatch):
    registered(world.gama, ADDRESS, municipality=world.town)
    monkeypatch.setattr(worksites, "find_worksite", lambda *args: None)
    with pytest.raises(worksites.WorksiteError) as refused:
        worksites.register(world.gama, registration(permit_number=""), world.generator_user)
    assert refused.value.status == 409 and refused.value.field == "address"
    assert Worksite.objects.filter(generator=world.gama).count() == 1


def test_every_problem_of_a_registration_is_told_at_once(world):
    with pytest.raises(worksites.WorksiteInvalid) as refused:
        worksites.register(
            world.gama,
            registration(address=" ", built_area_m2=Decimal("0"), work_kind="palace"),
            world.generator_user,
        )
    assert {field for field, _ in refused.value.problems} == {
        "address",
        "built_area_m2",
        "work_kind",
    }


# --- the worksite a transporter's CTR created -------------------------------------------------


def issue_for_gama(world, address: str = ADDRESS) -> CTR:
    client = APIClient()
    client.force_authenticate(world.alfa_user)
    # From 300 m north-east of the world's origin, where the worksite is registered.
    where = {"type": "Point", "coordinates": list(at(300, 300))}
    payload = ctr_payload(
        world,
        generator={"name": "Construtora Gama Ltda.", "document": CNPJ_GAMA},
        worksite={"address": address, "location": where},
        origin=where,
    )
    response = client.post("/api/v1/ctrs/", payload, format="json")
    assert response.status_code == 201, response.content
    return CTR.objects.get(number=response.json()["number"])


def test_registering_where_a_ctr_created_the_worksite_completes_that_worksite(
    generator_client, world
):
    ctr = issue_for_gama(world, "RUA DO CANTEIRO,  200")
    created = ctr.worksite
    assert created.registered_at is None
    response = generator_client.post(NEW, form_data())
    assert response.status_code == 302
    assert Worksite.objects.filter(generator=world.gama).count() == 1
    created.refresh_from_db()
    assert created.registered_at is not None and created.registered_by == world.generator_user
    # The generator's address and location replace the ones the CTR declared; its CTRs stay.
    assert created.address == ADDRESS
    assert created.location.x == pytest.approx(at()[0], abs=1e-6)
    assert list(created.ctrs.all()) == [ctr]


def test_the_generator_lists_the_worksites_its_ctrs_created_to_complete_them(
    generator_client, world
):
    site = issue_for_gama(world).worksite
    page = generator_client.get("/gerador/obras/").content.decode()
    assert ADDRESS in page
    assert f'href="/gerador/obras/{site.pk}/editar/">Completar cadastro' in page


def test_editing_a_worksite_a_ctr_created_registers_it(generator_client, world):
    site = issue_for_gama(world).worksite
    form = generator_client.get(f"/gerador/obras/{site.pk}/editar/")
    assert "completar o cadastro" in form.content.decode()
    response = generator_client.post(f"/gerador/obras/{site.pk}/editar/", form_data())
    assert response.status_code == 302
    site.refresh_from_db()
    assert site.registered_at is not None and site.work_kind == "new_building"


# --- who registers and edits -----------------------------------------------------------------


def test_the_generator_edits_its_worksite_from_a_point_to_a_contour(generator_client, world):
    site = registered(world.gama, municipality=world.town)
    contour = square_m(-100, -100, 200)
    response = generator_client.post(
        f"/gerador/obras/{site.pk}/editar/",
        form_data(shape="polygon", area=json.dumps(contour), built_area_m2="800"),
    )
    assert response.status_code == 302
    site.refresh_from_db()
    assert site.area is not None and site.built_area_m2 == Decimal("800")
    # And back to a point: the contour is gone.
    generator_client.post(f"/gerador/obras/{site.pk}/editar/", form_data())
    site.refresh_from_db()
    assert site.area is None


def test_an_edit_keeps_the_input_on_error_and_changes_nothing(generator_client, world):
    site = registered(world.gama, municipality=world.town)
    response = generator_client.post(
        f"/gerador/obras/{site.pk}/editar/",
        form_data(address="Rua Nova, 5", shape="polygon", area=json.dumps(BOWTIE)),
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "A obra não foi alterada" in page and 'value="Rua Nova, 5"' in page
    site.refresh_from_db()
    assert site.address == ADDRESS and site.area is None


@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize("page", ["", "editar/"])
def test_a_generator_is_told_another_generators_worksite_does_not_exist(
    generator_client, world, method, page
):
    other = Generator.objects.create(name="Outra Construtora", document=CNPJ_ALFA)
    site = registered(other, municipality=world.town)
    response = getattr(generator_client, method)(f"/gerador/obras/{site.pk}/{page}", form_data())
    assert response.status_code == 404
    site.refresh_from_db()
    assert site.built_area_m2 == 120


def test_the_service_refuses_another_generators_worksite(world):
    other = Generator.objects.create(name="Outra Construtora", document=CNPJ_ALFA)
    site = registered(other, municipality=world.town)
    with pytest.raises(worksites.WorksiteError) as refused:
        worksites.update(site, registration(), world.generator_user)
    assert refused.value.status == 403
    with pytest.raises(worksites.WorksiteError):
        worksites.register(other, registration(), world.generator_user)


@pytest.mark.parametrize("who", ["alfa_user", "operator", "outsider"])
def test_other_roles_are_kept_out_of_the_worksite_pages(client, world, who):
    client.force_login(getattr(world, who))
    assert client.get("/gerador/obras/").status_code == 403
    assert client.post(NEW, form_data()).status_code == 403
    assert count() == 0


def test_the_nucleo_registers_a_worksite_on_a_generators_behalf(client, world):
    client.force_login(world.nucleo)
    response = client.post(NEW, form_data(generator_document="33.644.555/0001-25"))
    assert response.status_code == 302
    site = Worksite.objects.get()
    assert site.generator == world.gama and site.registered_by == world.nucleo


def test_the_nucleo_names_a_new_generator_with_its_name(client, world):
    client.force_login(world.nucleo)
    refused = client.post(NEW, form_data(generator_document="529.982.247-25"))
    assert refused.status_code == 400
    assert "informe também o nome do gerador" in refused.content.decode()
    assert not Generator.objects.filter(document="52998224725").exists()
    response = client.post(
        NEW, form_data(generator_document="529.982.247-25", generator_name="Maria da Obra")
    )
    assert response.status_code == 302
    assert Worksite.objects.get().generator.name == "Maria da Obra"


def test_a_refused_registration_for_a_new_generator_leaves_no_generator(client, world):
    client.force_login(world.nucleo)
    response = client.post(
        NEW,
        form_data(
            generator_document="529.982.247-25", generator_name="Maria da Obra", built_area_m2="0"
        ),
    )
    assert response.status_code == 400
    assert not Generator.objects.filter(document="52998224725").exists()


def test_the_nucleo_lists_every_worksite_and_filters_by_generator(client, world):
    other = Generator.objects.create(name="Outra Construtora", document=CNPJ_ALFA)
    registered(other, "Av. Central, 1", municipality=world.town)
    registered(world.gama, municipality=world.town)
    client.force_login(world.nucleo)
    page = client.get("/gerador/obras/").content.decode()
    assert "Av. Central, 1" in page and ADDRESS in page
    filtered = client.get("/gerador/obras/?gerador=33.644.555/0001-25").content.decode()
    assert ADDRESS in filtered and "Av. Central, 1" not in filtered
    wrong = client.get("/gerador/obras/?gerador=123").content.decode()
    assert "Documento inválido" in wrong


def test_a_generator_lists_only_its_own_worksites(generator_client, world):
    other = Generator.objects.create(name="Outra Construtora", document=CNPJ_ALFA)
    registered(other, "Av. Central, 1", municipality=world.town)
    registered(world.gama, municipality=world.town)
    page = generator_client.get("/gerador/obras/").content.decode()
    assert ADDRESS in page and "Av. Central, 1" not in page


# --- large generator --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "permit,area,declared,large",
    [
        ("ALV-1", "600", False, True),  # permit and the threshold reached
        ("ALV-1", "499,99", False, False),  # below the threshold
        ("", "5000", False, False),  # no permit: not art. 9 caput's work
        ("", "80", True, True),  # declared by the generator
    ],
)
def test_a_large_generator_is_the_permit_and_the_municipal_threshold_or_the_declaration(
    generator_client, world, permit, area, declared, large
):
    set_parameters(world.town, large_generator_min_area_m2=Decimal("500"))
    data = form_data(permit_number=permit, built_area_m2=area)
    if declared:
        data["declared_large_generator"] = "on"
    assert generator_client.post(NEW, data).status_code == 302
    assert Worksite.objects.get().is_large_generator is large


def test_the_edit_form_does_not_declare_what_the_threshold_decided(generator_client, world):
    generator_client.post(NEW, form_data())
    site = Worksite.objects.get()
    assert site.is_large_generator
    form = generator_client.get(f"/gerador/obras/{site.pk}/editar/").content.decode()
    assert 'name="declared_large_generator"' in form
    assert 'name="declared_large_generator" id="id_declared_large_generator" checked' not in form
    # Without the permit it is no longer a large generator.
    generator_client.post(f"/gerador/obras/{site.pk}/editar/", form_data(permit_number=""))
    site.refresh_from_db()
    assert not site.is_large_generator


# --- the worksite's page -----------------------------------------------------------------------


def test_the_worksite_page_shows_its_map_its_ctrs_and_the_comparison(generator_client, world):
    ctr = issue_for_gama(world)
    site = ctr.worksite
    worksites.update(site, registration(permit_number=""), world.generator_user)
    response = generator_client.get(f"/gerador/obras/{site.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert ctr.number in page
    assert 'id="previsto-transportado"' in page  # generators/_comparison.html
    assert 'data-map-var="map_' in page
    assert AccessLog.objects.filter(object_id=str(site.pk)).exists()


def test_a_ctr_from_outside_the_worksite_is_marked_on_its_page(generator_client, world):
    site = registered(world.gama, municipality=world.town)
    ctr = issue_for_gama(world)
    assert ctr.worksite == site
    assert [f["code"] for f in ctr.findings] == ["ORIGIN_OUTSIDE_WORKSITE"]
    page = generator_client.get(f"/gerador/obras/{site.pk}/").content.decode()
    assert "Fora da obra" in page and "Origens fora da obra" in page


def test_a_point_outside_every_municipality_has_no_municipality():
    with pytest.raises(worksites.WorksiteInvalid):
        worksites.municipality_for(GEOSGeometry(json.dumps(FAR_AWAY), srid=4326), None)
