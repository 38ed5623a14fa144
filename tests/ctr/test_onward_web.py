"""The facility operator's web side of onward transport and on-site processing, through Django's
test client: "Emitir CTR de saída" from the reception page, every finding beside its field with the
input kept and nothing written, the CTR's page, the stock page (balance of a period, stale stock in
words, onward CTRs) and its processing form."""

from __future__ import annotations

import datetime
import re
from decimal import Decimal

import pytest
from django.test import Client

from ctr import errors
from ctr.custody import processing as ctr_processing
from ctr.models import (
    CTR,
    CTRStatus,
    LicenceStatus,
    OnSiteProcessing,
    ProcessingKind,
    Transporter,
    Vehicle,
)
from tests.builders import licence, municipality, set_parameters
from tests.ctr.onward_world import (
    CNPJ_OPERATOR,
    inbound,
    onward,
    stocked_world,
    web_client,
    written,
)
from tests.ctr_world import TODAY, make_user

pytestmark = pytest.mark.django_db

D = datetime.date
NEW = "/recebimentos/saidas/nova/"
STOCK = "/recebimentos/estoque/"
PROCESS = "/recebimentos/estoque/beneficiamento/"


@pytest.fixture
def world(frozen_today):
    return stocked_world()


client_for = web_client


def form_data(world, waste=(("A", "6", "agregado triado"),), **overrides) -> dict:
    """A valid submission: 6 m³ of class A from the ATT to the recycling area, carried by Beta
    (its truck), the operator's company declared (the ATT's first onward CTR)."""
    data = {
        "transporter": str(world.beta.pk),
        "transport_date": TODAY.isoformat(),
        "vehicle": str(Vehicle.objects.get(plate="XYZ9876").pk),
        "equipment": "",
        "generator_name": "Triagem Vale Ltda.",
        "generator_document": "12.345.678/0001-95",
        "destination_facility": str(world.recycling.pk),
        "origin_lat": "",
        "origin_lon": "",
        "destination_lat": "",
        "destination_lon": "",
        "waste-TOTAL_FORMS": "3",
        "waste-INITIAL_FORMS": "0",
        "waste-MIN_NUM_FORMS": "0",
        "waste-MAX_NUM_FORMS": "20",
    }
    for index in range(3):
        line = waste[index] if index < len(waste) else ("", "", "")
        for name, value in zip(("waste_class", "volume_m3", "description"), line, strict=True):
            data[f"waste-{index}-{name}"] = value
    data.update(overrides)
    return data


def errors_of(html: str, field_id: str) -> str:
    """The error list the page shows under a field (its id plus "_error")."""
    pattern = rf'<ul class="field-errors[^"]*" id="{field_id}_error">(.*?)</ul>'
    found = re.search(pattern, html, re.S)
    return found.group(1) if found else ""


def options_of(html: str, select_id: str) -> list[str]:
    pattern = rf'<select name="[^"]*" [^>]*id="{select_id}"[^>]*>(.*?)</select>'
    select = re.search(pattern, html, re.S)
    assert select, select_id
    return re.findall(r"<option[^>]*>([^<]*)</option>", select.group(1))


# --- the entry from the reception page ---------------------------------------------------------


def test_the_reception_page_leads_to_the_onward_form_and_the_stock(world):
    html = client_for(world.operator).get("/recebimentos/").content.decode()
    assert f'href="{NEW}"' in html and "Emitir CTR de saída" in html
    assert f'href="{STOCK}"' in html


def test_only_operators_reach_the_onward_pages(world):
    for user in (world.alfa_user, world.nucleo, world.outsider):
        assert client_for(user).get(NEW).status_code == 403
        assert client_for(user).get(STOCK).status_code == 403
    assert Client().get(NEW).status_code == 302


# --- the form ------------------------------------------------------------------------------------


def test_the_form_offers_the_registered_active_transporters_only(world):
    suspended = Transporter.objects.create(name="Suspensa Ltda.", document="11222333000262")
    licence(
        suspended,
        world.town,
        "TR-003",
        D(2025, 1, 1),
        status=LicenceStatus.SUSPENDED,
        status_since=D(2026, 11, 1),
    )
    expired = Transporter.objects.create(name="Vencida Ltda.", document="11222333000343")
    licence(expired, world.town, "TR-004", D(2025, 1, 1), D(2026, 11, 29))
    # Licensed in another municipality only: not where the ATT is (art. 13).
    elsewhere = Transporter.objects.create(name="De Fora Ltda.", document="11222333000424")
    licence(elsewhere, municipality("3502507", "Aparecida (teste)", east_m=20_000), "AP-1")
    offered = options_of(client_for(world.operator).get(NEW).content.decode(), "id_transporter")
    assert offered == [
        "— escolha o transportador —",
        "Caçambas Alfa Ltda. (licença TR-001)",
        "Entulhos Beta ME (licença TR-002)",
    ]


def test_the_classes_in_stock_come_first_with_the_stock_beside(world):
    html = client_for(world.operator).get(NEW).content.decode()
    held = html.index('<optgroup label="Em estoque nesta área">')
    others = html.index('<optgroup label="Sem estoque nesta área">')
    assert held < html.index('value="A"', held) < others
    assert html.index('value="B"', held) > others
    stock = html[html.index('id="estoque-agora"') :]
    # 10 m³ received: all in stock, and 11 m³ may leave (the default 10 % of sorting tolerance).
    assert re.search(r"Classe A</th><td[^>]*>10</td><td[^>]*>11</td>", stock)


def test_the_vehicles_say_whose_they_are_and_the_origin_starts_inside_the_facility(world):
    html = client_for(world.operator).get(NEW).content.decode()
    beta_truck = Vehicle.objects.get(plate="XYZ9876")
    assert f'value="{beta_truck.pk}" data-transporter="{world.beta.pk}"' in html
    assert "XYZ-9876 — Entulhos Beta ME" in html
    inside = world.att.area.point_on_surface
    assert f'value="{inside.y:.6f}"'.replace(".", ",") in html
    # The map of the issue form, from our own static files.
    assert 'id="mapa"' in html and "/static/ctr/ctr-form.js" in html


def test_an_onward_ctr_is_issued_from_the_form_and_its_page_follows(world):
    response = client_for(world.operator).post(NEW, form_data(world))
    assert response.status_code == 302, response.content.decode()[:3000]
    ctr = CTR.objects.get(origin_facility=world.att)
    assert response["Location"] == f"/recebimentos/saidas/{ctr.number}/"
    assert (ctr.transporter, ctr.destination_facility, ctr.created_by) == (
        world.beta,
        world.recycling,
        world.operator,
    )
    assert world.att.area.covers(ctr.origin) and world.recycling.area.covers(ctr.destination)
    assert ctr.generator.document == CNPJ_OPERATOR
    page = client_for(world.operator).get(response["Location"])
    html = page.content.decode()
    assert page.status_code == 200
    assert ctr.number in html and "Área de origem" in html and "Reciclagem" in html
    assert f'action="/recebimentos/saidas/{ctr.number}/cancelar/"' in html


def test_every_finding_is_at_its_field_the_input_is_kept_and_nothing_is_written(world):
    before = written()
    data = form_data(
        world,
        # 12 m³ of A (11 may leave), B never received, in Alfa's truck.
        waste=(("A", "12", "agregado triado"), ("B", "1", "madeira")),
        vehicle=str(Vehicle.objects.get(plate="ABC1D23").pk),
    )
    response = client_for(world.operator).post(NEW, data)
    html = response.content.decode()
    assert response.status_code == 422
    assert "O CTR não foi emitido." in html
    assert "Saída de 12 m³ de Classe A" in errors_of(html, "residuos")
    assert "não recebeu Classe B" in errors_of(html, "id_waste-1-waste_class")
    assert "não está no cadastro deste transportador" in errors_of(html, "id_vehicle")
    # What was typed comes back.
    assert 'value="Triagem Vale Ltda."' in html and 'value="12"' in html
    assert f'<option value="{world.recycling.pk}" selected>' in html
    assert written() == before


def test_a_missing_transporter_or_half_a_point_is_shown_at_its_field(world):
    before = written()
    data = form_data(world, transporter="", destination_lat="-22,8", destination_lon="")
    response = client_for(world.operator).post(NEW, data)
    html = response.content.decode()
    assert response.status_code == 400
    assert "obrigatório" in errors_of(html, "id_transporter")
    assert "a latitude e a longitude" in errors_of(html, "id_destination_lon")
    assert 'value="-22,8"' in html
    assert written() == before


def test_the_next_onward_ctr_names_the_operator_without_asking(world):
    onward(world, {"A": "1"})
    html = client_for(world.operator).get(NEW).content.decode()
    assert 'name="generator_document"' not in html
    assert "Triagem Vale Ltda." in html
    data = form_data(world, waste=(("A", "2", ""),))
    del data["generator_name"], data["generator_document"]
    response = client_for(world.operator).post(NEW, data)
    assert response.status_code == 302
    assert CTR.objects.filter(origin_facility=world.att).count() == 2


# --- the onward CTR's page ---------------------------------------------------------------------


def test_who_issued_an_onward_ctr_cancels_it_from_its_page(world):
    ctr = onward(world, {"A": "2"})
    url = f"/recebimentos/saidas/{ctr.number}/"
    colleague = make_user("colega", facility=world.att)
    assert 'id="cancelar"' not in client_for(colleague).get(url).content.decode()
    assert client_for(world.pev_operator).get(url).status_code == 404
    response = client_for(world.operator).post(f"{url}cancelar/", {"cancel-reason": "desistência"})
    assert response.status_code == 302 and response["Location"] == url
    ctr.refresh_from_db()
    assert ctr.status == CTRStatus.CANCELLED


# --- the stock page ----------------------------------------------------------------------------


def balance_row(html: str, label: str) -> list[str]:
    table = html[html.index('id="tabela-balanco"') :]
    row = re.search(rf"<th scope=\"row\">{label}</th>(.*?)</tr>", table, re.S).group(1)
    return re.findall(r">([^<>]+)</(?:td|strong)>", row)


def test_the_stock_page_shows_the_balance_of_the_period_asked(world):
    # Class A: 10 m³ received on the 30th (the fixture), 5 on the 1st; 2 shipped today.
    inbound(world, {"A": "5"}, received="5", day=D(2026, 11, 1))
    onward(world, {"A": "2"})
    client = client_for(world.operator)
    html = client.get(STOCK, {"date_from": "2026-11-30", "date_to": "2026-11-30"}).content.decode()
    assert balance_row(html, "Classe A") == ["5", "10", "2", "0", "13"]
    # Without a period: the last 30 days.
    html = client.get(STOCK).content.decode()
    assert "de 01/11/2026 a 30/11/2026" in html
    assert balance_row(html, "Classe A") == ["0", "15", "2", "0", "13"]


def test_on_the_first_of_a_month_the_stock_page_still_shows_the_last_30_days(world, frozen_today):
    inbound(world, {"A": "5"}, received="5", day=D(2026, 11, 20))
    frozen_today.shift(datetime.timedelta(days=1))  # 1 December
    html = client_for(world.operator).get(STOCK).content.decode()
    assert "de 02/11/2026 a 01/12/2026" in html
    assert balance_row(html, "Classe A")[1] == "15"  # with the fixture's 10 m³ of the 30th


def test_a_period_that_ends_before_it_starts_is_a_400_in_portuguese(world):
    response = client_for(world.operator).get(
        STOCK, {"date_from": "2026-11-30", "date_to": "2026-11-01"}
    )
    assert response.status_code == 400
    assert "A data final é anterior à inicial." in response.content.decode()


def test_stale_stock_is_an_alert_in_words_with_the_municipality_s_days(world):
    set_parameters(world.town, stock_alert_days=10)
    inbound(world, {"B": "1"}, received="1", day=D(2026, 11, 1))
    html = client_for(world.operator).get(STOCK).content.decode()
    alerts = html[html.index('id="secao-alertas"') : html.index('id="secao-balanco"')]
    assert "por mais de 10 dias" in alerts
    assert re.search(
        r"Classe B</strong>: 1 m³ em estoque\s+sem interrupção desde 01/11/2026, há 29 dias", alerts
    )
    assert "Classe A" not in alerts  # received today: not stale


def test_the_onward_ctrs_of_the_period_are_listed_with_their_page(world):
    ctr = onward(world, {"A": "2"})
    html = client_for(world.operator).get(STOCK).content.decode()
    listed = html[html.index('id="secao-saidas"') :]
    assert f'href="/recebimentos/saidas/{ctr.number}/"' in listed
    assert "Entulhos Beta ME" in listed and "Reciclagem" in listed
    html = client_for(world.operator).get(STOCK, {"date_to": "2026-11-29"}).content.decode()
    assert ctr.number not in html[html.index('id="secao-saidas"') :]


# --- on-site processing ------------------------------------------------------------------------


def processing(**overrides) -> dict:
    data = {
        "b-waste_class": "A",
        "b-kind": ProcessingKind.RECYCLED,
        "b-volume_m3": "2,5",
        "b-day": TODAY.isoformat(),
        "b-note": "britagem",
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not None}


def test_the_operator_records_processing_from_the_stock_page(world):
    response = client_for(world.operator).post(PROCESS, processing(), follow=True)
    assert response.redirect_chain == [(STOCK, 302)]
    (record,) = OnSiteProcessing.objects.all()
    assert (record.waste_class, record.volume_m3, record.kind, record.recorded_by) == (
        "A",
        Decimal("2.5"),
        ProcessingKind.RECYCLED,
        world.operator,
    )
    html = response.content.decode()
    assert "Beneficiamento registrado: 2,5 m³ de Classe A em 30/11/2026" in html
    assert balance_row(html, "Classe A") == ["0", "10", "0", "2,5", "7,5"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("b-volume_m3", "12", "não tem 12 m³ de Classe A (agregados: concreto, tijolo, solo…)"),
        ("b-volume_m3", "0", "maior que zero"),
        ("b-volume_m3", "-1", "maior que zero"),
        ("b-volume_m3", "10000,001", "vai até 10000 m³"),
        ("b-volume_m3", "dois", "Informe um número"),
        ("b-day", "2026-12-01", "não pode ser posterior a hoje"),
        ("b-waste_class", "DOMICILIAR", "Faça uma escolha válida"),
        ("b-kind", "", "obrigatório"),
    ],
)
def test_bad_processing_is_refused_at_its_field_and_nothing_is_written(
    world, field, value, message
):
    before = written()
    response = client_for(world.operator).post(PROCESS, processing(**{field: value}))
    html = response.content.decode()
    assert response.status_code in (400, 422)
    assert "O beneficiamento não foi registrado." in html
    assert message in errors_of(html, f"id_{field}")
    assert 'value="britagem"' in html  # what was typed stays
    assert written() == before


def test_processing_a_class_never_received_names_the_class(world):
    with pytest.raises(errors.CTRError) as refused:
        ctr_processing.record_processing(
            world.operator, world.att, "B", Decimal("1"), TODAY, ProcessingKind.REUSED
        )
    assert "de Classe B (recicláveis" in refused.value.message
