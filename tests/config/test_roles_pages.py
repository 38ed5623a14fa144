"""What each role needs next, through Django's test client: operators find
a load by number or plate, citizens follow a report by protocol, inspectors open a case from a
report or a roadside check, lists sort by their columns, irreversible steps ask first, each
role lands in its area, and Onde descartar refuses swapped or far-away coordinates."""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
from decimal import Decimal

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from ctr import closing, rules, services
from ctr.models import CTRStatus, Generator, Vehicle, Worksite
from fiscalization import intake
from fiscalization.models import EnforcementCase
from tests import dumping_fixtures as fx
from tests.builders import ORIGIN
from tests.ctr_world import CPF_GENERATOR, TODAY, build_world
from tests.enforcement_world import open_case, transporter_offender

pytestmark = pytest.mark.django_db

RECEPTIONS = "/recebimentos/"
LIST = "/transportador/ctrs/"
NOON = datetime.datetime(2026, 11, 30, 12, 0, tzinfo=datetime.UTC)


@pytest.fixture
def world():
    with time_machine.travel(NOON, tick=False):
        yield build_world()


@pytest.fixture
def frozen():
    with time_machine.travel(NOON, tick=False) as traveller:
        yield traveller


def client_for(user) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(pk=user.pk))
    return client


def issue(world, plate="ABC1D23", transporter=None, volume="3", at=None, day=TODAY):
    request = services.IssueRequest(
        transport_date=day,
        vehicle_plate=plate,
        origin=world.origin,
        destination=world.inside(world.att),
        waste=[rules.WasteLine("A", Decimal(volume), "entulho")],
        generator=services.GeneratorData("Maria da Obra", CPF_GENERATOR),
    )
    return services.issue(transporter or world.alfa, world.alfa_user, request, at=at)


def pending_numbers(html: str) -> list[str]:
    """The CTR numbers of the pending rows, in page order."""
    return re.findall(r'<span class="rr-number">([^<]+)</span>', html)


def list_numbers(html: str) -> list[str]:
    return re.findall(r'<th scope="row"><a href="/transportador/ctrs/([^/]+)/">', html)


# --- operators: find a load ------------------------------------------------------------------


def test_pending_loads_are_compact_rows_newest_issued_first(world, frozen):
    first = issue(world)
    frozen.shift(datetime.timedelta(minutes=5))
    second = issue(world, volume="2")
    frozen.shift(datetime.timedelta(minutes=5))
    third = issue(world, volume="1,5".replace(",", "."))
    html = client_for(world.operator).get(RECEPTIONS).content.decode()
    assert pending_numbers(html) == [third.number, second.number, first.number]
    # Each row says number, plate, transporter, classes, m³ and when it was issued.
    row = html[html.index(f'id="{third.number}"') :]
    row = row[: row.index("</summary>")]
    for text in ("ABC-1D23", "Caçambas Alfa Ltda.", "Classe A", "1,5 m³", "30/11 09:10"):
        assert text in row, text


@pytest.mark.parametrize(
    "typed",
    [
        "{number}",
        "{lower}",
        "{bare}",
        "ctr {spaced}",
        "{sequence}",
        "{tail}",
    ],
)
def test_operator_finds_a_load_by_its_number_in_any_spelling(world, frozen, typed):
    wanted = issue(world)
    other = issue(world, volume="2")
    number = wanted.number  # CTR-3518404-2026-000001
    search = typed.format(
        number=number,
        lower=number.lower(),
        bare=number.removeprefix("CTR-").replace("-", ""),
        spaced=number.removeprefix("CTR-").replace("-", " "),
        sequence=str(wanted.sequence),
        tail=number[-11:],  # 2026-000001
    )
    response = client_for(world.operator).get(RECEPTIONS, {"busca": search})
    html = response.content.decode()
    assert response.status_code == 200
    assert pending_numbers(html) == [number]
    assert other.number not in pending_numbers(html)
    # The only match is opened, ready to confirm.
    assert f'<li id="{number}">\n      <details class="reception-row" open>' in html


@pytest.mark.parametrize("typed", ["ABC1D23", "abc-1d23", "DEF1234", "def-1234", "1d2"])
def test_operator_finds_a_load_by_plate_old_or_mercosul(world, frozen, typed):
    Vehicle.objects.create(transporter=world.alfa, plate="DEF1234")
    mercosul = issue(world, plate="ABC1D23")
    old = issue(world, plate="DEF1234")
    html = client_for(world.operator).get(RECEPTIONS, {"busca": typed}).content.decode()
    expected = old if "1234" in typed else mercosul
    assert pending_numbers(html) == [expected.number]


def test_a_search_that_matches_nothing_says_so(world, frozen):
    issue(world)
    response = client_for(world.operator).get(RECEPTIONS, {"busca": "CTR-9999999-2020-999999"})
    assert response.status_code == 200
    html = response.content.decode()
    # One answer for the whole page, not "nothing to receive" and "nothing closed yet".
    assert "Nenhum CTR encontrado para “CTR-9999999-2020-999999”" in html
    assert "Nenhum CTR encerrado ainda" not in html and "a receber com" not in html


def test_operator_search_never_shows_other_facilities_loads(world, frozen):
    mine = issue(world)
    html = client_for(world.pev_operator).get(RECEPTIONS, {"busca": mine.number}).content
    assert pending_numbers(html.decode()) == []
    assert f"{mine.number}</a>" not in html.decode()


def test_receptions_sort_by_column_and_keep_the_search(world, frozen):
    Vehicle.objects.create(transporter=world.alfa, plate="AAA1111")
    late = issue(world, plate="AAA1111", volume="4")
    frozen.shift(datetime.timedelta(minutes=5))
    early = issue(world, volume="1")
    client = client_for(world.operator)
    by_plate = client.get(RECEPTIONS, {"ordem": "placa"}).content.decode()
    assert pending_numbers(by_plate) == [late.number, early.number]  # AAA1111 < ABC1D23
    by_volume = client.get(RECEPTIONS, {"ordem": "volume"}).content.decode()
    assert pending_numbers(by_volume) == [early.number, late.number]
    # The header links carry the search along and flip the active column.
    html = client.get(RECEPTIONS, {"ordem": "placa", "busca": "A"}).content.decode()
    assert 'href="?ordem=-placa&amp;busca=A"' in html or 'href="?busca=A&amp;ordem=-placa"' in html


@pytest.mark.parametrize("bogus", ["created_at", "-pk; DROP TABLE ctr", "transporter__document"])
def test_an_unknown_order_falls_back_to_the_default(world, frozen, bogus):
    first = issue(world)
    frozen.shift(datetime.timedelta(minutes=5))
    second = issue(world)
    response = client_for(world.operator).get(RECEPTIONS, {"ordem": bogus})
    assert response.status_code == 200
    assert pending_numbers(response.content.decode()) == [second.number, first.number]


# --- transporters: the CTR list --------------------------------------------------------------


def test_ctr_list_is_in_number_order_within_a_day(world, frozen):
    # Issued with historical times out of order (an import): number 1 at 10:00, 2 at 09:00.
    one = issue(world, at=timezone.make_aware(datetime.datetime(2026, 11, 30, 10)))
    two = issue(world, at=timezone.make_aware(datetime.datetime(2026, 11, 30, 9)))
    older = issue(world, day=TODAY - datetime.timedelta(days=1))
    html = client_for(world.alfa_user).get(LIST).content.decode()
    # Newest day first; within the day, by number (the latest first).
    assert list_numbers(html) == [two.number, one.number, older.number]


def test_ctr_list_sorts_by_its_columns_and_pages_keep_the_order(world, frozen):
    small = issue(world, volume="1")
    big = issue(world, volume="4")
    client = client_for(world.alfa_user)
    assert list_numbers(client.get(LIST, {"ordem": "volume"}).content.decode()) == [
        small.number,
        big.number,
    ]
    assert list_numbers(client.get(LIST, {"ordem": "-volume"}).content.decode()) == [
        big.number,
        small.number,
    ]
    html = client.get(LIST, {"ordem": "-volume", "status": "ISSUED"}).content.decode()
    assert 'aria-sort="descending"' in html
    # The filter form keeps the order; the header keeps the filter.
    assert '<input type="hidden" name="ordem" value="-volume">' in html
    assert re.search(
        r'href="\?(ordem=volume&amp;status=ISSUED|status=ISSUED&amp;ordem=volume)"', html
    )
    # Sorting alone is not "filtered".
    assert "Limpar filtros" not in client.get(LIST, {"ordem": "volume"}).content.decode()


def test_ctr_list_pages_do_not_repeat_or_skip_rows_under_an_order(world, frozen):
    made = {issue(world, volume="2").number for _ in range(27)}  # equal volumes: ties
    client = client_for(world.alfa_user)
    first = list_numbers(client.get(LIST, {"ordem": "volume"}).content.decode())
    second = list_numbers(client.get(LIST, {"ordem": "volume", "pagina": 2}).content.decode())
    assert len(first) == 25 and len(second) == 2
    assert set(first) | set(second) == made


# --- confirm before irreversible steps -------------------------------------------------------


def test_receiving_from_the_page_asks_for_confirmation_first(world, frozen):
    ctr = issue(world)
    client = client_for(world.operator)
    url = f"/recebimentos/{ctr.number}/confirmar/"
    data = {f"r-{ctr.pk}-received_volume_m3": "2,5", f"r-{ctr.pk}-note": "ok", "etapa": "revisar"}
    response = client.post(url, data)
    html = response.content.decode()
    assert response.status_code == 200
    assert f"Confirmar o recebimento do {ctr.number}?" in html
    assert "não pode ser desfeito" in html and "2.5 m³" not in html and "2,5 m³" in html
    ctr.refresh_from_db()
    assert ctr.status == CTRStatus.ISSUED  # nothing happened yet
    # The confirmation page posts the same data again, without the review step.
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', html))
    assert "etapa" not in hidden and hidden[f"r-{ctr.pk}-received_volume_m3"] == "2,5"
    hidden.pop("csrfmiddlewaretoken", None)
    assert client.post(url, hidden).status_code == 302
    ctr.refresh_from_db()
    assert ctr.status == CTRStatus.RECEIVED and ctr.received_volume_m3 == Decimal("2.5")


def test_refusing_and_cancelling_ask_first_too(world, frozen):
    refused, cancelled = issue(world), issue(world)
    operator, transporter = client_for(world.operator), client_for(world.alfa_user)
    ask = operator.post(
        f"/recebimentos/{refused.number}/recusar/",
        {f"x-{refused.pk}-reason": "Carga com lixo doméstico", "etapa": "revisar"},
    )
    assert "Recusar a carga do" in ask.content.decode() and "Sim, recusar" in ask.content.decode()
    ask = transporter.post(
        f"/transportador/ctrs/{cancelled.number}/cancelar/",
        {"cancel-reason": "Obra adiada", "etapa": "revisar"},
    )
    assert "Sim, cancelar o CTR" in ask.content.decode()
    for ctr in (refused, cancelled):
        ctr.refresh_from_db()
        assert ctr.status == CTRStatus.ISSUED
    # An invalid form is not confirmed: its errors come back first.
    bad = transporter.post(
        f"/transportador/ctrs/{cancelled.number}/cancelar/", {"etapa": "revisar"}
    )
    assert bad.status_code == 400


def test_the_forms_carry_the_review_step_and_the_dialog_text(world, frozen):
    ctr = issue(world)
    html = client_for(world.operator).get(RECEPTIONS).content.decode()
    assert html.count('<input type="hidden" name="etapa" value="revisar">') == 2
    assert "data-confirm=" in html and "/static/maps/forms.js" in html
    detail = client_for(world.alfa_user).get(f"{LIST}{ctr.number}/").content.decode()
    assert 'name="etapa" value="revisar"' in detail and "data-confirm-danger" in detail


# --- CTR numbers are links -------------------------------------------------------------------


def test_ctr_numbers_link_to_a_page_each_role_may_open(world, frozen):
    ctr = issue(world)
    closing.receive(ctr, world.operator, Decimal("3"))
    operator_html = client_for(world.operator).get(RECEPTIONS).content.decode()
    assert f'href="/recebimentos/?busca={ctr.number}">{ctr.number}</a>' in operator_html
    other = issue(world)
    roadside = client_for(world.fiscal).get("/fiscalizacao/veiculo/", {"plate": "ABC1D23"})
    assert f'href="/verificar/{other.number}/"' in roadside.content.decode()
    from ctr.templatetags.ctr_links import ctr_url_for

    assert ctr_url_for(world.alfa_user, ctr) == f"/transportador/ctrs/{ctr.number}/"
    assert ctr_url_for(world.beta_user, ctr) == f"/verificar/{ctr.number}/"
    assert ctr_url_for(world.nucleo, ctr) == f"/verificar/{ctr.number}/"


# --- landing after sign-in, home page --------------------------------------------------------


def test_inspector_lands_on_the_fiscalizacao_and_nucleo_on_its_panel(world):
    expected = {"fiscal": "/fiscalizacao/", "nucleo": "/nucleo/", "operador": RECEPTIONS}
    for username, target in expected.items():
        client = Client()
        client.post("/entrar/", {"username": username, "password": "senha-teste"})
        assert client.get("/painel/")["Location"] == target, username


def test_home_page_offers_reporting_verifying_and_following_and_no_admin(client, world):
    html = client.get("/").content.decode()
    for href in ('href="/denunciar/"', 'href="/verificar/"', 'action="/denuncia/"'):
        assert href in html
    assert 'href="/entrar/"' in html and "/admin/" not in html
    signed_in = client_for(world.alfa_user).get("/").content.decode()
    assert 'href="/painel/">Minha área' in signed_in


def test_favicon_ico_goes_to_the_svg_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/maps/favicon.svg"


# --- citizens: follow a report by protocol ---------------------------------------------------


@pytest.fixture
def report(world):
    with time_machine.travel(NOON, tick=False):
        return intake.create_report(intake.NewReport(fx.at(east_m=-800), "LOTE_VAGO"))


@pytest.mark.parametrize("how", ["as-is", "lower", "no-dashes", "spaces"])
def test_protocol_box_accepts_the_protocol_with_or_without_dashes(client, report, how):
    typed = {
        "as-is": report.protocol,
        "lower": report.protocol.lower(),
        "no-dashes": report.protocol.replace("-", "").lower(),
        "spaces": report.protocol.replace("-", " "),
    }[how]
    response = client.get("/denuncia/", {"protocolo": typed})
    assert response.status_code == 302
    assert response["Location"] == f"/denuncia/{report.protocol}/"
    assert client.get(f"/denuncia/{report.protocol.replace('-', '')}/").status_code == 200


def test_protocol_box_explains_a_malformed_protocol(client, world):
    response = client.get("/denuncia/", {"protocolo": "ABC"})
    assert response.status_code == 400
    assert "não é um protocolo" in response.content.decode()
    missing = client.get("/denuncia/", {"protocolo": "2026-ZZZZ-ZZZZ"}, follow=True)
    assert missing.status_code == 404
    html = missing.content.decode()
    assert "Denúncia não encontrada" in html and 'name="protocolo"' in html


def test_protocol_box_is_on_the_report_page(client, world):
    assert 'action="/denuncia/"' in client.get("/denunciar/").content.decode()


# --- inspectors ------------------------------------------------------------------------------


def test_report_list_sorts_by_column_and_filters_categories_with_checkboxes(world):
    with time_machine.travel(NOON, tick=False) as clock:
        a = intake.create_report(intake.NewReport(fx.at(east_m=-800), "VIA_PUBLICA"))
        clock.shift(datetime.timedelta(hours=1))
        b = intake.create_report(intake.NewReport(fx.at(east_m=800), "LOTE_VAGO"))
        client = client_for(world.fiscal)
        default = client.get("/fiscalizacao/").content.decode()
        by_category = client.get("/fiscalizacao/", {"ordem": "categoria"}).content.decode()
    assert default.index(b.protocol) < default.index(a.protocol)  # newest first
    assert by_category.index(b.protocol) < by_category.index(a.protocol)  # LOTE < VIA
    assert 'type="checkbox" name="category" value="LOTE_VAGO"' in default
    assert '<select name="category"' not in default


def test_case_list_sorts_by_offender(world):
    first = open_case(world)
    other = dataclasses.replace(
        transporter_offender(world), name="Aaa Entulhos", document="11444777000161"
    )
    second = open_case(world, offender=other)
    html = client_for(world.fiscal).get("/fiscalizacao/processos/", {"ordem": "infrator"})
    html = html.content.decode()
    assert html.index(second.number) < html.index(first.number)


def test_case_opened_from_a_report_starts_filled_in(world, report):
    client = client_for(world.fiscal)
    page = client.get(f"/fiscalizacao/denuncias/{report.pk}/").content.decode()
    link = f"/fiscalizacao/processos/novo/?denuncia={report.protocol}"
    assert link in page
    form = client.get(link).content.decode()
    assert f'value="{report.protocol}"' in form
    assert f"protocolo {report.protocol}" in form
    assert f'value="{round(report.location.y, 6)}"' in form.replace(",", ".")


def test_case_opened_from_a_roadside_check_starts_filled_in(world):
    client = client_for(world.fiscal)
    roadside = client.get("/fiscalizacao/veiculo/", {"plate": "abc-1d23"}).content.decode()
    assert "/fiscalizacao/processos/novo/?placa=ABC1D23" in roadside
    form = client.get("/fiscalizacao/processos/novo/", {"placa": "ABC1D23"}).content.decode()
    assert "Abordagem do veículo de placa ABC-1D23" in form
    assert 'value="Caçambas Alfa Ltda."' in form and "11.222.333/0001-81" in form
    assert '<option value="DRIVER" selected>' in form


def test_generator_box_suggests_as_you_type_and_takes_the_suggestion(world):
    # Generators of the town: each with a worksite there (the suggestions are the
    # user's municipalities' generators).
    for name, document in (
        ("Maria da Silva Obras", CPF_GENERATOR),
        ("José Pereira", "11144477735"),
    ):
        generator = Generator.objects.create(name=name, document=document)
        Worksite.objects.create(
            generator=generator, address="Rua A, 1", location=world.origin, municipality=world.town
        )
    client = client_for(world.fiscal)
    form = client.get("/fiscalizacao/processos/novo/").content.decode()
    assert 'list="geradores-sugestoes"' in form and "José Pereira" not in form
    by_name = client.get("/fiscalizacao/processos/geradores/", {"q": "silva"}).json()
    assert by_name == {"results": [{"id": by_name["results"][0]["id"],
                                    "value": "529.982.247-25 — Maria da Silva Obras"}]}  # fmt: skip
    by_document = client.get("/fiscalizacao/processos/geradores/", {"q": "111.444"}).json()
    assert [r["value"] for r in by_document["results"]] == ["111.444.777-35 — José Pereira"]
    assert client_for(world.alfa_user).get("/fiscalizacao/processos/geradores/").status_code == 403

    data = {
        "municipality": world.town.pk,
        "opened_at": "2026-11-30T09:00",
        "description": "Entulho na calçada.",
        "offender_role": "PROPERTY",
        "offender_name": "Maria da Silva",
        "offender_document": "529.982.247-25",
        "generator": "529.982.247-25 — Maria da Silva Obras",
    }
    with time_machine.travel(NOON, tick=False):
        response = client.post("/fiscalizacao/processos/novo/", data)
        assert response.status_code == 302
        assert EnforcementCase.objects.get().offender.generator.name == "Maria da Silva Obras"
        wrong = client.post("/fiscalizacao/processos/novo/", {**data, "generator": "Fulano"})
    assert wrong.status_code == 400
    assert "Não há gerador “Fulano”" in wrong.content.decode()


# --- Onde descartar: swapped and far-away coordinates ----------------------------------------


def onde(client, lon, lat):
    return client.get(
        "/onde-descartar/",
        {"longitude": str(lon).replace(".", ","), "latitude": str(lat).replace(".", ","),
         "volume_m3": "1"},
    )  # fmt: skip


def test_swapped_coordinates_get_a_clear_message(client, world):
    lon, lat = ORIGIN
    response = onde(client, lat, lon)  # latitude in the longitude box and back
    html = response.content.decode()
    assert response.status_code == 400
    assert "A latitude e a longitude parecem trocadas" in html
    assert "Guaratinguetá (teste)/SP" in html
    assert 'class="od-result' not in html


def test_coordinates_far_from_the_municipality_get_a_clear_message(client, world):
    lisbon = onde(client, -9.14, 38.72)
    assert lisbon.status_code == 400 and "fica fora do Brasil" in lisbon.content.decode()
    manaus = onde(client, -60.02, -3.10)
    assert manaus.status_code == 400 and "fora da área atendida" in manaus.content.decode()
    assert "a mais de 50 km" in manaus.content.decode()


def test_a_point_in_a_neighbouring_town_still_gets_results(client, world):
    lon, lat = ORIGIN
    response = onde(client, lon + 0.15, lat)  # ~15 km east: outside the 20 km town
    assert response.status_code == 200


def test_nearest_api_refuses_swapped_coordinates_with_a_problem(client, world):
    lon, lat = ORIGIN
    url = "/api/v1/facilities/nearest/"
    response = client.get(url, {"lon": lat, "lat": lon, "volume_m3": "1"})
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert "parecem trocadas" in json.dumps(response.json(), ensure_ascii=False)
    assert client.get(url, {"lon": lon, "lat": lat, "volume_m3": "1"}).status_code == 200
