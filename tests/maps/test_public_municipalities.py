"""The public pages serve every municipality of the platform. Two of them side
by side: the test town (Guaratinguetá's IBGE code, whose waste law the platform knows) and a
neighbour 20 km east (no law on record). Each page, by its own address (/m/<IBGE code>/…) and
by the location it is about: the municipality's name, its network on the map and not the
other's, a report going to the municipality where the point is, and the footer citing that
municipality's law and never the other's."""

from __future__ import annotations

import datetime
import re
from decimal import Decimal

import pytest
from django.test import override_settings

from ctr.models import CTR
from fiscalization.models import DumpingReport
from pev_network.models import FacilityKind, Municipality, MunicipalParameters
from tests import dumping_fixtures as fx
from tests.builders import ORIGIN, licensed_facility, municipality, offset, square
from tests.ctr_world import TODAY, build_world, issue_hours_ago

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("private_media", "fresh_rate_limits", "frozen_today"),
]

TOWN = "3518404"
NEIGHBOUR = "3502507"
NOT_SERVED = "3550308"  # São Paulo: a real code, no boundary loaded here


@pytest.fixture
def world():
    world = build_world()
    world.neighbour = municipality(NEIGHBOUR, "Aparecida (teste)", east_m=20_000)
    world.neighbour_pev = licensed_facility(
        FacilityKind.PEV,
        square(*offset(*ORIGIN, 20_000, 0), 30),
        "PEV Vizinho Norte",
        world.neighbour,
    )
    return world


def neighbour_point():
    """A point in the middle of the neighbour (20 km east of the town's centre)."""
    return fx.at(east_m=20_000, north_m=300)


def town_point():
    return fx.at(east_m=-800, north_m=-600)


def heading(html: str) -> str:
    match = re.search(r"<h1>(.*?)</h1>", html, re.S)
    assert match, "no <h1>"
    return re.sub(r"<[^>]+>", "", match.group(1))


def footer(html: str) -> str:
    match = re.search(r'<footer class="site-footer">(.*?)</footer>', html, re.S)
    assert match, "no footer"
    return " ".join(re.sub(r"<[^>]+>", " ", match.group(1)).split())


def page(client, path: str, **params) -> str:
    response = client.get(path, params)
    assert response.status_code == 200, (path, response.status_code)
    return response.content.decode()


# --- "Onde descartar?" ---------------------------------------------------------------------------


def test_each_municipalitys_map_page_at_its_own_address_shows_its_name_and_network(client, world):
    town = page(client, f"/m/{TOWN}/onde-descartar/")
    neighbour = page(client, f"/m/{NEIGHBOUR}/onde-descartar/")

    assert "em Guaratinguetá (teste)/SP" in heading(town)
    assert "em Aparecida (teste)/SP" in heading(neighbour)
    assert "Aparecida (teste)/SP — CTR</title>" in neighbour
    assert "Prefeitura Municipal de Aparecida (teste)/SP" in neighbour
    # Each its own network: the town's four facilities, the neighbour's PEV; not each other's.
    assert "PEV Vizinho Norte" in neighbour and "PEV Vizinho Norte" not in town
    for name in ("Aterro", "Reciclagem"):
        assert f'"{name}"' in town and f'"{name}"' not in neighbour
    assert "Aparecida (teste)/SP: 1 área licenciada no mapa" in " ".join(neighbour.split())


def test_the_map_page_states_the_small_volume_limit_in_force_today(client, world):
    # Lei 3.978/2007 art. 12 §1-2: a set that started yesterday holds, not tomorrow's.
    for days, limit in ((-1, "0.5"), (1, "2")):
        MunicipalParameters.objects.create(
            municipality=world.town,
            valid_from=TODAY + datetime.timedelta(days=days),
            small_volume_limit_m3=Decimal(limit),
        )
    html = page(client, f"/m/{TOWN}/onde-descartar/")
    assert "até 0,5 m³" in html and "até 1 m³" not in html


def test_the_map_page_without_an_address_is_the_default_municipalitys(client, world):
    html = page(client, "/onde-descartar/")
    assert "em Guaratinguetá (teste)/SP" in heading(html)
    assert "PEV Vizinho Norte" not in html
    # Its links stay the plain ones: the address named no municipality.
    assert 'href="/denunciar/"' in html and f"/m/{TOWN}/" not in html


def test_a_search_in_the_neighbour_makes_the_page_the_neighbours(client, world):
    point = neighbour_point()
    html = page(
        client,
        "/onde-descartar/",
        latitude=f"{point.y:.6f}",
        longitude=f"{point.x:.6f}",
        volume_m3="0,5",
    )
    assert "em Aparecida (teste)/SP" in heading(html)
    results = re.search(r'<section class="results".*?</section>', html, re.S).group(0)
    assert "PEV Vizinho Norte" in results
    assert "ainda não informada" in footer(html)


def test_a_result_across_the_border_names_its_municipality(client, world):
    """The nearest legal point may lie in the other municipality: the list says where."""
    point = fx.at(east_m=9_900)  # at the town's eastern border, 100 m from the neighbour
    html = page(
        client,
        "/onde-descartar/",
        latitude=f"{point.y:.6f}",
        longitude=f"{point.x:.6f}",
        volume_m3="0,5",
    )
    results = re.search(r'<section class="results".*?</section>', html, re.S).group(0)
    assert "<dt>Município</dt><dd>Aparecida (teste)/SP</dd>" in results
    assert "<dd>Guaratinguetá (teste)/SP</dd>" not in results  # the page's own: not repeated


@pytest.mark.parametrize(
    "path",
    [
        f"/m/{NOT_SERVED}/",
        f"/m/{NOT_SERVED}/onde-descartar/",
        f"/m/{NOT_SERVED}/denunciar/",
        f"/m/{NOT_SERVED}/verificar/",
        "/m/123/onde-descartar/",  # not an IBGE code
    ],
)
def test_a_municipality_the_platform_does_not_serve_is_not_found(client, world, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "Página não encontrada" in response.content.decode()


def test_a_boundary_loaded_later_makes_the_address_work(client, world):
    assert client.get(f"/m/{NOT_SERVED}/onde-descartar/").status_code == 404
    municipality(NOT_SERVED, "São Paulo (teste)", east_m=-20_000)
    assert "em São Paulo (teste)/SP" in heading(page(client, f"/m/{NOT_SERVED}/onde-descartar/"))


# --- the home page ---------------------------------------------------------------------------


def test_a_municipalitys_home_page_names_it_and_links_to_its_pages(client, world):
    html = page(client, f"/m/{NEIGHBOUR}/")
    assert "em Aparecida (teste)/SP" in heading(html)
    for target in ("onde-descartar/", "denunciar/", "verificar/"):
        assert f'href="/m/{NEIGHBOUR}/{target}"' in html, target
    assert 'href="/onde-descartar/"' not in html


def test_the_platforms_home_page_offers_each_municipality_with_a_network(client, world):
    html = page(client, "/")
    options = re.findall(r'<option value="(\d{7})">([^<]+)</option>', html)
    assert options == [(NEIGHBOUR, "Aparecida (teste)/SP"), (TOWN, "Guaratinguetá (teste)/SP")]
    response = client.get("/m/", {"municipio": NEIGHBOUR})
    assert response.status_code == 302 and response["Location"] == f"/m/{NEIGHBOUR}/"
    assert client.get("/m/", {"municipio": NOT_SERVED}).status_code == 404
    assert client.get("/m/", {"municipio": "abc"}).status_code == 404


def test_with_one_municipality_the_home_page_has_nothing_to_pick(client):
    build_world()
    assert "Seu município" not in page(client, "/")


# --- "Denunciar" and the follow-up --------------------------------------------------------------


def report_fields(point, **extra) -> dict:
    return {
        "longitude": f"{point.x:.6f}".replace(".", ","),
        "latitude": f"{point.y:.6f}",
        "category": "VIA_PUBLICA",
        "description": "Restos de obra na calçada",
        **extra,
    }


def test_the_report_form_at_each_address_names_its_municipality(client, world):
    town = page(client, f"/m/{TOWN}/denunciar/")
    neighbour = page(client, f"/m/{NEIGHBOUR}/denunciar/")
    assert "em Guaratinguetá (teste)/SP" in heading(town)
    assert "em Aparecida (teste)/SP" in heading(neighbour)
    # The form sends to its own address; the map is the neighbour's outline.
    assert f'action="/m/{NEIGHBOUR}/denunciar/"' in neighbour
    assert "Aparecida (teste)/SP. Clique no" in neighbour
    assert "em Guaratinguetá (teste)/SP" in heading(page(client, "/denunciar/"))


def test_a_report_at_a_point_of_the_neighbour_goes_to_the_neighbour(client, world):
    response = client.post("/denunciar/", report_fields(neighbour_point()), follow=True)
    report = DumpingReport.objects.get()
    assert report.municipality == world.neighbour
    html = response.content.decode()
    assert "encaminhada à Prefeitura Municipal de Aparecida (teste)/SP" in html
    # The follow-up shows the neighbour's name, never the town's law.
    follow = page(client, f"/denuncia/{report.protocol}/")
    assert "Prefeitura Municipal de Aparecida (teste)/SP" in follow
    assert "<dd>Aparecida (teste)/SP</dd>" in follow
    assert "Guaratinguetá" not in follow and "3.978" not in footer(follow)
    assert f'href="/m/{NEIGHBOUR}/denunciar/"' in follow


def test_the_point_decides_even_on_the_other_municipalitys_address(client, world):
    """Reported from the town's page, a dumping in the neighbour is the neighbour's (the
    municipality where the facts are, art. 2 §1)."""
    client.post(f"/m/{TOWN}/denunciar/", report_fields(neighbour_point()))
    client.post(f"/m/{NEIGHBOUR}/denunciar/", report_fields(town_point()))
    by_municipality = {
        report.municipality.ibge_code: report.location for report in DumpingReport.objects.all()
    }
    assert by_municipality[NEIGHBOUR].equals_exact(neighbour_point(), 1e-6)
    assert by_municipality[TOWN].equals_exact(town_point(), 1e-6)


def test_a_point_outside_every_municipality_served_is_refused_in_portuguese(client, world):
    response = client.post(f"/m/{NEIGHBOUR}/denunciar/", report_fields(fx.at(east_m=60_000)))
    assert response.status_code == 400
    html = response.content.decode()
    assert "não fica em nenhum município atendido" in html
    assert "em Aparecida (teste)/SP" in heading(html)  # the page stays the address's
    assert DumpingReport.objects.count() == 0


def test_a_form_sent_back_without_an_address_shows_the_points_municipality(client, world):
    response = client.post("/denunciar/", {**report_fields(neighbour_point()), "category": ""})
    assert response.status_code == 400
    assert "em Aparecida (teste)/SP" in heading(response.content.decode())


# --- verification ---------------------------------------------------------------------------


def test_the_verification_of_a_ctr_names_its_municipality(client, world):
    ctr = issue_hours_ago(world, 1)
    html = page(client, f"/verificar/{ctr.number}/")
    assert "Prefeitura Municipal de Guaratinguetá (teste)/SP" in html
    assert "Lei Municipal nº 3.978/2007, art. 3 VI e art. 13 p.ú." in html
    # The same CTR, had it been the neighbour's: its name, and no other municipality's law.
    CTR.objects.filter(pk=ctr.pk).update(municipality=world.neighbour)
    html = page(client, f"/verificar/{ctr.number}/")
    assert "Prefeitura Municipal de Aparecida (teste)/SP" in html
    assert "3.978" not in html and "Guaratinguetá" not in html


def test_the_verification_box_at_a_municipalitys_address(client, world):
    html = page(client, f"/m/{NEIGHBOUR}/verificar/")
    assert "de Aparecida (teste)/SP" in heading(html)
    plain = page(client, "/verificar/")
    assert "Prefeitura Municipal" not in plain  # a document of any municipality


# --- the footer and the rule catalogue: the law of the page's municipality, or generic ----------


def test_the_footer_cites_the_law_of_the_pages_municipality(client, world):
    assert "conforme a Lei Municipal nº 3.978/2007 de Guaratinguetá (teste)/SP" in footer(
        page(client, f"/m/{TOWN}/")
    )
    neighbour = footer(page(client, f"/m/{NEIGHBOUR}/"))
    assert "de Aparecida (teste)/SP (ainda não informada na plataforma)" in neighbour
    assert "3.978" not in neighbour
    Municipality.objects.filter(ibge_code=NEIGHBOUR).update(waste_law="Lei Municipal nº 1.234/2010")
    assert "conforme a Lei Municipal nº 1.234/2010 de Aparecida (teste)/SP" in footer(
        page(client, f"/m/{NEIGHBOUR}/")
    )


@pytest.mark.parametrize("path", ["/regras/", "/verificar/", "/entrar/", "/denuncia/"])
def test_a_page_of_no_municipality_says_it_generically(client, world, path):
    text = footer(page(client, path))
    assert "conforme a lei municipal de resíduos da construção civil e volumosos de cada " in text
    assert "Guaratinguetá" not in text


def test_the_rule_catalogue_names_the_model_law_as_such(client, world):
    html = page(client, "/regras/")
    lead = re.search(r'<p class="lead">(.*?)</p>', html, re.S).group(1)
    assert "Guaratinguetá" not in lead
    assert "o modelo deste catálogo; em cada município vale a sua própria lei" in html


@override_settings(DEFAULT_MUNICIPALITY_IBGE=NEIGHBOUR)
def test_the_default_municipality_is_a_setting(client, world):
    assert "em Aparecida (teste)/SP" in heading(page(client, "/onde-descartar/"))
