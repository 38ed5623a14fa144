"""The public map pages: /onde-descartar/ and the home page (Django test client, real PostGIS)."""

from __future__ import annotations

import datetime
import json
import re
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from django.conf import settings
from django.contrib.gis.geos import MultiPolygon, Polygon
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from config.br import br_number
from maps.formats import format_distance
from maps.network import facility_popup_html
from pev_network import public_layers
from pev_network.models import (
    CatchmentBasin,
    FacilityKind,
    FacilityLicense,
    LicenseStatus,
    Municipality,
    ReceivingFacility,
)

pytestmark = pytest.mark.django_db

URL = "/onde-descartar/"
# Guaratinguetá's centre, in WGS 84 (lon, lat).
LON, LAT = -45.19, -22.81
# ~500 m east at this latitude.
ATT_LON = -45.185


def square(lon: float, lat: float, half: float = 0.00015) -> MultiPolygon:
    """A ~30 m square centred on (lon, lat), WGS 84."""
    ring = (
        (lon - half, lat - half),
        (lon + half, lat - half),
        (lon + half, lat + half),
        (lon - half, lat + half),
        (lon - half, lat - half),
    )
    return MultiPolygon(Polygon(ring), srid=4326)


def facility(kind: str, name: str, lon: float, lat: float, **fields) -> ReceivingFacility:
    return ReceivingFacility.objects.create(kind=kind, name=name, area=square(lon, lat), **fields)


_license_seq = iter(range(1, 10_000))


def license_for(f: ReceivingFacility, **fields) -> FacilityLicense:
    today = timezone.localdate()
    values = {
        "number": f"LIC-{next(_license_seq)}/2025",
        "issuer": "CETESB",
        "valid_from": today - datetime.timedelta(days=365),
        "valid_until": today + datetime.timedelta(days=365),
    }
    values.update(fields)
    return FacilityLicense.objects.create(facility=f, **values)


@pytest.fixture
def network():
    """A licensed PEV at the centre and a licensed ATT ~500 m east."""
    pev = facility(FacilityKind.PEV, "PEV Jardim do Vale", LON, LAT, address="Rua das Flores, 100")
    license_for(pev, number="PEV-001/2025")
    att = facility(FacilityKind.ATT, "ATT Vale do Paraíba", ATT_LON, LAT, operator="Recicla Ltda")
    license_for(att, number="ATT-002/2025")
    return pev, att


def search(client, **params):
    query = {"longitude": "-45.1902", "latitude": "-22.8102", "volume_m3": "0.5", **params}
    return client.get(URL, query)


def in_map(text: str) -> str:
    """`text` as the map's script embeds it (JSON, non-ASCII as \\u escapes)."""
    return json.dumps(text)[1:-1]


def results_section(html: str) -> str:
    match = re.search(r'<section class="results".*?</section>', html, re.S)
    assert match, "no results section"
    return match.group(0)


# --- the page and its map ----------------------------------------------------------------


def test_page_shows_licensed_facilities_on_the_map(client, network):
    response = client.get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert "PEV Jardim do Vale" in html
    assert "ATT Vale do Paraíba" in html
    assert 'lang="pt-BR"' in html
    assert "Onde descartar entulho e volumosos" in html
    # one layer per kind, named in Portuguese, and the layer control
    assert in_map("Pontos de Entrega Voluntária (PEV)") in html
    assert in_map("Áreas de Transbordo e Triagem (ATT)") in html
    assert in_map("ATT Vale do Paraíba") in html  # in the map's data, not only in the list
    assert "L.control.layers" in html


@pytest.mark.parametrize(
    "situation",
    ["no license", "expired yesterday", "starts tomorrow", "suspended", "revoked"],
)
def test_facility_without_license_in_force_is_not_on_the_map(client, network, situation):
    today = timezone.localdate()
    illegal = facility(FacilityKind.PEV, "PEV Clandestino", LON + 0.002, LAT)
    day = datetime.timedelta(days=1)
    if situation == "expired yesterday":
        license_for(illegal, valid_until=today - day)
    elif situation == "starts tomorrow":
        license_for(illegal, valid_from=today + day)
    elif situation == "suspended":
        license_for(illegal, status=LicenseStatus.SUSPENDED, status_since=today)
    elif situation == "revoked":
        license_for(illegal, status=LicenseStatus.REVOKED, status_since=today - day)

    html = client.get(URL).content.decode()

    assert "PEV Jardim do Vale" in html
    assert "PEV Clandestino" not in html


def test_public_layer_applies_the_same_validity_as_the_orm():
    """The SQL of the public layer and LicenseQuerySet.valid_on agree on the edge days
    (Lei 3.978/2007 art. 14 §1): both ends inclusive, suspension from its day on."""
    day = datetime.date(2025, 6, 15)
    one = datetime.timedelta(days=1)
    cases = {
        "ends on the day": {"valid_from": day - 10 * one, "valid_until": day},
        "starts on the day": {"valid_from": day, "valid_until": None},
        "ended the day before": {"valid_from": day - 10 * one, "valid_until": day - one},
        "starts the day after": {"valid_from": day + one},
        "suspended on the day": {
            "valid_from": day - 10 * one,
            "status": LicenseStatus.SUSPENDED,
            "status_since": day,
        },
        "suspended the day after": {
            "valid_from": day - 10 * one,
            "status": LicenseStatus.SUSPENDED,
            "status_since": day + one,
        },
    }
    for i, (name, fields) in enumerate(cases.items()):
        f = facility(FacilityKind.ATT, name, LON + i * 0.001, LAT)
        license_for(f, **{"valid_until": None, **fields})

    layer = public_layers.licensed_facilities_geojson(day)

    on_map = {feat["properties"]["name"] for feat in layer["features"]}
    by_orm = set(ReceivingFacility.objects.licensed_on(day).values_list("name", flat=True))
    assert on_map == by_orm == {"ends on the day", "starts on the day", "suspended the day after"}


def test_facility_popup_carries_license_and_classes_in_portuguese(network):
    layer = public_layers.licensed_facilities_geojson()
    pev = next(f for f in layer["features"] if f["properties"]["kind"] == "PEV")
    props = pev["properties"]
    assert props["kind_label"] == "Ponto de Entrega Voluntária (PEV)"
    assert props["license_number"] == "PEV-001/2025"
    assert props["accepted_classes"] == ["A", "B", "C", "VOLUMOSO"]
    assert props["accepted_class_labels"][0].startswith("Classe A")
    html = str(facility_popup_html(props))
    assert "PEV-001/2025" in html
    assert "válida até" in html
    assert "Classe A" in html
    assert "Ponto de Entrega Voluntária (PEV)" in html


def test_facility_name_is_escaped_in_the_page(client):
    f = facility(FacilityKind.PEV, "PEV <script>alert(1)</script>", LON, LAT)
    license_for(f)
    html = client.get(URL).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the text list
    # the popup is HTML that Leaflet inserts as such: escaped before it is embedded
    props = public_layers.licensed_facilities_geojson()["features"][0]["properties"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in facility_popup_html(props)


def test_basins_layer_names_the_pev_that_serves_it(client, network):
    pev, _att = network
    municipality = Municipality.objects.create(
        ibge_code="3599999", name="Vila Teste", uf="SP", boundary=square(LON, LAT, 0.05)
    )
    CatchmentBasin.objects.create(
        municipality=municipality, name="Bacia Centro", area=square(LON, LAT, 0.01), served_by=pev
    )
    layer = public_layers.catchment_basins_geojson()
    (basin,) = layer["features"]
    assert basin["properties"]["served_by"] == "PEV Jardim do Vale"
    assert basin["properties"]["served_by_licensed"] is True

    html = client.get(URL).content.decode()
    assert "Bacia Centro" in html
    assert in_map("Bacias de captação") in html


def test_map_opens_on_the_default_municipality_and_draws_its_outline(client, network):
    Municipality.objects.create(
        ibge_code="3599999", name="Vila Teste", uf="SP", boundary=square(LON, LAT, 0.05)
    )
    far = facility(FacilityKind.LANDFILL, "Aterro Distante", LON + 3, LAT)
    license_for(far)
    with override_settings(DEFAULT_MUNICIPALITY_IBGE="3599999"):
        html = client.get(URL).content.decode()
    assert "Vila Teste/SP" in html
    # fitted to the boundary's extent: [[lat min, lon min], [lat max, lon max]]
    bounds = json.loads(re.search(r"fitBounds\(\s*(\[\[.*?\]\])", html).group(1))
    assert bounds == [
        [pytest.approx(LAT - 0.05), pytest.approx(LON - 0.05)],
        [pytest.approx(LAT + 0.05), pytest.approx(LON + 0.05)],
    ]
    # facilities far outside the municipality's window are not drawn
    assert "Aterro Distante" not in html


def test_without_the_municipality_the_map_opens_near_guaratingueta(client):
    with override_settings(DEFAULT_MUNICIPALITY_IBGE="0000000"):
        response = client.get(URL)
    assert response.status_code == 200
    assert "[-22.81, -45.19]" in response.content.decode()


def test_page_loads_no_asset_from_a_cdn(client, network):
    """Leaflet and every folium asset from our static files; only the tiles are external."""
    html = search(client).content.decode()

    urls: list[str] = []

    class Links(HTMLParser):
        def handle_starttag(self, tag, attrs):
            urls.extend(value for name, value in attrs if name in {"src", "href"} and value)

    Links().feed(html)
    assert urls, "no links at all?"
    external = [u for u in urls if re.match(r"^(https?:)?//", u)]
    assert external == []
    # Leaflet's script is named in the map's code, which loads it (maps/map-loader.js).
    assert f'"{settings.STATIC_URL}leaflet/leaflet.js"' in html
    assert f'href="{settings.STATIC_URL}leaflet/leaflet.css"' in html
    # Anywhere in the page, scripts included: the tile template and the attribution link only.
    everywhere = set(re.findall(r"https?://[^\s\"'<>\\]+", html))
    assert everywhere <= {settings.MAP_TILE_URL, "https://www.openstreetmap.org/copyright"}
    assert settings.MAP_TILE_URL in everywhere
    for cdn in ("cdn.jsdelivr", "cdnjs", "code.jquery", "bootstrapcdn", "fontawesome"):
        assert cdn not in html


@override_settings(
    MAP_TILE_URL="https://tiles.prefeitura.example/{z}/{x}/{y}.png",
    MAP_TILE_ATTRIBUTION="Prefeitura",
)
def test_tile_url_comes_from_settings(client):
    html = client.get(URL).content.decode()
    assert "https://tiles.prefeitura.example/{z}/{x}/{y}.png" in html
    assert "tile.openstreetmap.org" not in html


# --- the search ---------------------------------------------------------------------------


def test_small_load_lists_the_nearby_pev_first(client, network):
    response = search(client, volume_m3="0.5")
    assert response.status_code == 200
    results = results_section(response.content.decode())
    assert "PEV Jardim do Vale" in results
    assert "ATT Vale do Paraíba" in results
    assert results.index("PEV Jardim do Vale") < results.index("ATT Vale do Paraíba")
    assert "Rua das Flores, 100" in results
    # the user's point and the ranked rings are drawn on the map
    assert "Resultado da busca" in response.content.decode()


def test_three_cubic_metres_skip_the_pev_and_list_the_att(client, network):
    """Art. 12 §1-2: more than 1 m³ per discharge does not go to a PEV."""
    response = search(client, volume_m3="3")
    assert response.status_code == 200
    results = results_section(response.content.decode())
    assert "PEV Jardim do Vale" not in results
    assert "ATT Vale do Paraíba" in results
    assert "não pode ir a um" in results


def test_volume_exactly_at_the_limit_still_goes_to_the_pev(client, network):
    results = results_section(search(client, volume_m3="1").content.decode())
    assert "PEV Jardim do Vale" in results


def test_decimal_comma_is_accepted(client, network):
    response = search(client, longitude="-45,1902", latitude="-22,8102", volume_m3="0,5")
    assert response.status_code == 200
    assert "PEV Jardim do Vale" in results_section(response.content.decode())


def test_distance_is_written_in_portuguese(client, network):
    results = results_section(search(client).content.decode())
    # the ATT is ~500 m away: metres, no decimals
    assert re.search(r"a \d{3} m<", results)


def test_waste_class_filters_the_destinations(client, network):
    pev, att = network
    att.accepted_classes = ["A"]
    att.save()
    results = results_section(search(client, waste_class="B").content.decode())
    assert "PEV Jardim do Vale" in results
    assert "ATT Vale do Paraíba" not in results


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"longitude": "abc"}, "Informe um número: só algarismos"),
        ({"latitude": "-95"}, "maior ou igual a -90"),
        ({"longitude": "200"}, "menor ou igual a 180"),
        ({"volume_m3": "-1"}, "Informe um volume maior que zero."),
        ({"volume_m3": "0"}, "Informe um volume maior que zero."),
        ({"volume_m3": "5000"}, "menor ou igual a 1000"),
        ({"volume_m3": ""}, "Este campo é obrigatório."),
        ({"waste_class": "Z"}, "Faça uma escolha válida."),
    ],
)
def test_bad_input_is_a_portuguese_form_error(client, network, params, message):
    response = search(client, **params)
    assert response.status_code == 400
    html = response.content.decode()
    assert "Não foi possível buscar." in html
    assert message in html
    assert 'aria-invalid="true"' in html
    # the map still renders
    assert "PEV Jardim do Vale" in html


def test_unrelated_query_parameters_do_not_make_an_error(client, network):
    response = client.get(URL, {"utm_source": "panfleto"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "PEV Jardim do Vale" in html  # the page with its map, as without the parameter
    assert "Não foi possível buscar." not in html and 'aria-invalid="true"' not in html


def test_post_is_not_allowed(client):
    assert client.post(URL).status_code == 405


def test_no_legal_destination_says_so(client, network):
    response = search(client, waste_class="D")  # no facility takes hazardous waste here
    assert response.status_code == 200
    assert "Nenhuma área licenciada pode receber" in results_section(response.content.decode())


# --- home page and formatting -------------------------------------------------------------


def test_home_page_links_to_the_public_pages(client):
    response = client.get(reverse("maps:home"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "CTR — Controle de Transporte de Resíduos" in html
    for href in (
        'href="/onde-descartar/"',
        'href="/denunciar/"',
        'href="/verificar/"',
        'href="/api/v1/docs/"',
        'href="/entrar/"',
    ):
        assert href in html
    # A transporter or a citizen has nothing to do in the admin.
    assert 'href="/admin/"' not in html


@pytest.mark.parametrize(
    ("metres", "text"),
    [
        (0, "0 m"),
        (350.4, "350 m"),
        (999.4, "999 m"),
        (999.6, "1,0 km"),
        (1540, "1,5 km"),
        (12_345, "12,3 km"),
        (1_234_567, "1.235 km"),
    ],
)
def test_format_distance(metres, text):
    assert format_distance(metres) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(Decimal("1.000"), "1"), (Decimal("0.5"), "0,5"), (Decimal("1234.75"), "1.234,75")],
)
def test_format_decimal(value, text):
    assert br_number(value) == text
