"""The CTR's web pages through Django's test client: issuing with the form (findings beside
their fields), the list and its filters, scoping, the fleet, the operators' receptions, the
sign-in pages and the public rule catalogue."""

from __future__ import annotations

import datetime
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from ctr import closing, rules, services
from ctr.models import CTR, CTRStatus, Equipment, Vehicle
from tests.builders import offset, point
from tests.ctr_world import TODAY, build_world

pytestmark = pytest.mark.django_db

NEW = "/transportador/ctrs/novo/"
LIST = "/transportador/ctrs/"


@pytest.fixture
def world():
    return build_world()


def client_for(user) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(pk=user.pk))
    return client


def comma(value: float) -> str:
    return f"{value:.6f}".replace(".", ",")


def form_data(world, destination=None, waste=None, **overrides) -> dict:
    """A valid form submission: 2,5 m³ of class A from the town to the ATT."""
    target = destination or world.inside(world.att)
    data = {
        "transport_date": TODAY.isoformat(),
        "vehicle": str(Vehicle.objects.get(plate="ABC1D23").pk),
        "equipment": str(Equipment.objects.get(transporter=world.alfa, code="C-01").pk),
        "generator_name": "Maria da Obra",
        "generator_document": "529.982.247-25",
        "worksite_address": "Rua das Flores, 10",
        "worksite_neighbourhood": "Centro",
        "origin_lon": comma(world.origin.x),
        "origin_lat": comma(world.origin.y),
        "destination_lon": comma(target.x),
        "destination_lat": comma(target.y),
        "destination_facility": "",
        "waste-TOTAL_FORMS": "3",
        "waste-INITIAL_FORMS": "0",
        "waste-MIN_NUM_FORMS": "0",
        "waste-MAX_NUM_FORMS": "20",
    }
    lines = waste if waste is not None else [("A", "2,5", "entulho de alvenaria")]
    for index in range(3):
        waste_class, volume, description = lines[index] if index < len(lines) else ("", "", "")
        data[f"waste-{index}-waste_class"] = waste_class
        data[f"waste-{index}-volume_m3"] = volume
        data[f"waste-{index}-description"] = description
    data.update(overrides)
    return data


def issue_ctr(world, transporter=None, user=None, plate="ABC1D23", day=TODAY, volume="3"):
    """A CTR issued through the service (for the list, detail and reception tests)."""
    transporter = transporter or world.alfa
    request = services.IssueRequest(
        transport_date=day,
        vehicle_plate=plate,
        origin=world.origin,
        destination=world.inside(world.att),
        waste=[rules.WasteLine("A", Decimal(volume), "entulho")],
        generator=services.GeneratorData("Maria da Obra", "52998224725"),
    )
    return services.issue(transporter, user or world.alfa_user, request)


class _TextById(HTMLParser):
    """The text inside the element with a given id (stdlib only: no HTML library here)."""

    def __init__(self, wanted: str):
        super().__init__(convert_charrefs=True)
        self.wanted = wanted
        self.depth = 0
        self.found = False
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if self.depth:
            if tag not in {"br", "input", "img", "meta", "link", "hr"}:
                self.depth += 1
        elif dict(attrs).get("id") == self.wanted:
            self.depth, self.found = 1, True

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.parts.append(data)


def text_of(response, element_id: str) -> str:
    parser = _TextById(element_id)
    parser.feed(response.content.decode())
    assert parser.found, f"no element #{element_id}"
    return " ".join(" ".join(parser.parts).split())


def has_element(response, element_id: str) -> bool:
    parser = _TextById(element_id)
    parser.feed(response.content.decode())
    return parser.found


# --- issuing through the form ----------------------------------------------------------------


def test_form_page_serves_the_map_from_our_static_files(world):
    response = client_for(world.alfa_user).get(NEW)
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/leaflet/leaflet.js" in html
    assert "ctr/ctr-form.js" in html
    for cdn in ("cdn.jsdelivr", "unpkg.com", "cdnjs", "code.jquery", "bootstrapcdn"):
        assert cdn not in html
    # Only the transporter's own active vehicles are offered; today is the default date.
    assert ">ABC-1D23</option>" in html and "XYZ-9876" not in html
    assert f'value="{timezone.localdate().isoformat()}"' in html
    assert 'name="csrfmiddlewaretoken"' in html


def test_transporter_issues_a_ctr_through_the_form(world):
    client = client_for(world.alfa_user)
    response = client.post(NEW, form_data(world))
    ctr = CTR.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"{LIST}{ctr.number}/"
    assert ctr.number == f"CTR-3518404-{TODAY.year}-000001"
    assert ctr.total_volume_m3 == Decimal("2.5")  # the decimal comma was understood
    assert ctr.generator.document == "52998224725"
    assert ctr.worksite.address == "Rua das Flores, 10"
    assert ctr.worksite.location.equals_exact(ctr.origin, 1e-9)
    assert ctr.equipment.code == "C-01"
    assert ctr.destination_facility == world.att
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert ctr.number in text_of(page, "numero-ctr")
    assert f"{ctr.number} emitido." in page.content.decode()
    assert f'href="/ctrs/{ctr.number}/pdf/"' in page.content.decode()


def test_several_waste_lines_and_typed_coordinates_with_a_point(world):
    target = world.inside(world.att)
    data = form_data(
        world,
        waste=[("A", "2", "alvenaria"), ("", "", ""), ("B", "0.5", "madeira")],
        destination_lon=f"{target.x:.6f}",
        destination_lat=f"{target.y:.6f}",
    )
    response = client_for(world.alfa_user).post(NEW, data)
    assert response.status_code == 302
    ctr = CTR.objects.get()
    assert sorted((w.waste_class, w.volume_m3) for w in ctr.waste.all()) == [
        ("A", Decimal("2.000")),
        ("B", Decimal("0.500")),
    ]


def test_broken_rules_are_shown_beside_their_fields_and_nothing_is_stored(world):
    far_origin = (-60.0, -10.0)
    nowhere = point(*offset(*world.origin.coords, 50, 50))
    data = form_data(
        world,
        destination=nowhere,
        waste=[("DOMICILIAR", "1", "lixo da casa")],
        origin_lon=comma(far_origin[0]),
        origin_lat=comma(far_origin[1]),
    )
    response = client_for(world.alfa_user).post(NEW, data)
    assert response.status_code == 422
    assert CTR.objects.count() == 0
    assert "ORIGIN_OUTSIDE_MUNICIPALITY" in text_of(response, "origem_error")
    assert "DESTINATION_OUTSIDE_FACILITY" in text_of(response, "destino_error")
    assert "PROHIBITED_WASTE" in text_of(response, "id_waste-0-waste_class_error")
    # Each one beside its own field only, and all of them in the summary at the top.
    assert "ORIGIN_OUTSIDE_MUNICIPALITY" not in text_of(response, "destino_error")
    summary = text_of(response, "erros")
    assert "O CTR não foi emitido" in summary
    for code in (
        "ORIGIN_OUTSIDE_MUNICIPALITY",
        "DESTINATION_OUTSIDE_FACILITY",
        "PROHIBITED_WASTE",
    ):
        assert code in summary
    # The licence is the origin's municipality's: from the town, after alfa's
    # licence there ends, beside the transport date.
    late = client_for(world.alfa_user).post(NEW, form_data(world, transport_date="2028-01-05"))
    assert late.status_code == 422
    assert "TRANSPORTER_NOT_LICENSED" in text_of(late, "id_transport_date_error")
    assert "TRANSPORTER_NOT_LICENSED" in text_of(late, "erros")
    assert CTR.objects.count() == 0
    # What the user typed is kept.
    assert 'value="Maria da Obra"' in response.content.decode()


def test_volume_findings_go_to_the_waste_lines(world):
    # 6 m³ to a PEV, in a 5 m³ caçamba: two rules on the waste as a whole.
    data = form_data(world, destination=world.inside(world.pev), waste=[("A", "6", "")])
    response = client_for(world.alfa_user).post(NEW, data)
    assert response.status_code == 422
    waste_errors = text_of(response, "residuos_error")
    assert "LARGE_VOLUME_AT_PEV" in waste_errors
    assert "OVER_EQUIPMENT_CAPACITY" in waste_errors
    assert CTR.objects.count() == 0


def test_a_class_finding_lands_on_its_row_when_a_blank_row_precedes_it(world):
    # Rows 1 and 3 filled, row 2 left blank: the service's waste[1] is the form's third row.
    data = form_data(
        world,
        destination=world.inside(world.landfill),
        waste=[("A", "1", ""), ("", "", ""), ("B", "1", "")],
    )
    response = client_for(world.alfa_user).post(NEW, data)
    assert response.status_code == 422
    assert "CLASS_NOT_ACCEPTED" in text_of(response, "id_waste-2-waste_class_error")
    assert not has_element(response, "id_waste-0-waste_class_error")
    assert not has_element(response, "id_waste-1-waste_class_error")


def test_form_errors_are_in_portuguese_and_store_nothing(world):
    data = form_data(
        world,
        waste=[("A", "dois", "")],
        generator_document="123.456.789-00",
        origin_lat="abc",
        vehicle="",
    )
    response = client_for(world.alfa_user).post(NEW, data)
    assert response.status_code == 400
    assert CTR.objects.count() == 0
    assert "CPF inválido" in text_of(response, "id_generator_document_error")
    assert "Informe um número" in text_of(response, "id_origin_lat_error")
    assert "Este campo é obrigatório." in text_of(response, "id_vehicle_error")
    assert "Informe um número" in text_of(response, "id_waste-0-volume_m3_error")


def test_a_ctr_needs_at_least_one_waste_line(world):
    response = client_for(world.alfa_user).post(NEW, form_data(world, waste=[]))
    assert response.status_code == 400
    assert "ao menos um resíduo" in text_of(response, "residuos_error")
    assert CTR.objects.count() == 0


def test_garbage_post_never_gives_a_500(world):
    client = client_for(world.alfa_user)
    assert client.post(NEW, {}).status_code == 400
    broken = form_data(world, **{"waste-TOTAL_FORMS": "abc", "vehicle": "999999"})
    assert client.post(NEW, broken).status_code == 400
    huge = form_data(world, **{"waste-TOTAL_FORMS": "100000", "origin_lon": "1e400"})
    assert client.post(NEW, huge).status_code == 400
    unknown_facility = form_data(world, destination_facility="424242")
    assert client.post(NEW, unknown_facility).status_code == 400
    assert CTR.objects.count() == 0


def test_warnings_of_an_issued_ctr_are_shown_on_its_page(world):
    # Class A to a landfill while a licensed recycling area exists: a warning, not an error.
    data = form_data(world, destination=world.inside(world.landfill))
    client = client_for(world.alfa_user)
    response = client.post(NEW, data)
    assert response.status_code == 302
    page = client.get(response["Location"])
    findings = text_of(page, "secao-constatacoes")
    assert "CLASS_A_TO_LANDFILL" in findings
    assert "aviso" in findings


# --- list, filters, detail, cancel -----------------------------------------------------------


def test_list_filters_by_status_date_plate_and_number(world):
    Vehicle.objects.create(transporter=world.alfa, plate="DEF4G56")
    first = issue_ctr(world, day=TODAY - datetime.timedelta(days=10))
    second = issue_ctr(world, plate="DEF4G56")
    third = issue_ctr(world)
    closing.cancel(third, world.alfa_user, "carga desistida")
    client = client_for(world.alfa_user)

    def numbers(**params) -> set[str]:
        response = client.get(LIST, params)
        assert response.status_code == 200
        html = response.content.decode()
        return {c.number for c in (first, second, third) if c.number in html}

    assert numbers() == {first.number, second.number, third.number}
    assert numbers(status="cancelled") == {third.number}
    assert numbers(status="issued") == {first.number, second.number}
    assert numbers(date_from=TODAY.isoformat()) == {second.number, third.number}
    assert numbers(date_to=(TODAY - datetime.timedelta(days=1)).strftime("%d/%m/%Y")) == {
        first.number
    }
    assert numbers(plate="def-4g56") == {second.number}
    assert numbers(plate="4g") == {second.number}  # part of a plate
    assert numbers(number=first.number[-6:]) == {first.number}


def test_bad_filters_are_reported_not_a_500(world):
    issue_ctr(world)
    response = client_for(world.alfa_user).get(
        LIST, {"date_from": "31/02/2026", "plate": "ABC#1", "status": "x", "pagina": "zz"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "Placa inválida" in html
    assert "Informe uma data válida." in html


def test_list_paginates_and_keeps_the_filters(world, monkeypatch):
    monkeypatch.setattr("ctr.views.PAGE_SIZE", 2)
    created = [issue_ctr(world) for _ in range(5)]
    client = client_for(world.alfa_user)
    response = client.get(LIST, {"status": "issued"})
    html = response.content.decode()
    assert "Página 1 de 3" in html
    assert "status=issued&amp;pagina=2" in html
    last = client.get(LIST, {"status": "issued", "pagina": "3"}).content.decode()
    assert created[0].number in last  # the oldest issue is on the last page


def test_transporter_sees_only_its_own_ctrs(world):
    ctr = issue_ctr(world)
    beta = client_for(world.beta_user)
    assert beta.get(f"{LIST}{ctr.number}/").status_code == 404
    assert ctr.number not in beta.get(LIST).content.decode()
    own = client_for(world.alfa_user).get(f"{LIST}{ctr.number}/")
    assert own.status_code == 200 and ctr.number in own.content.decode()


@pytest.mark.parametrize("who", ["operator", "nucleo", "outsider"])
def test_non_transporters_get_a_portuguese_403(world, who):
    client = client_for(getattr(world, who))
    for url in (LIST, NEW, "/transportador/veiculos/", "/transportador/ctrs/importar/"):
        response = client.get(url)
        assert response.status_code == 403
        assert "Esta área é dos transportadores" in response.content.decode()


def test_anonymous_users_are_sent_to_sign_in(world):
    response = Client().get(LIST)
    assert response.status_code == 302
    assert response["Location"].startswith("/entrar/?next=")


def test_cancel_with_a_reason(world):
    ctr = issue_ctr(world)
    client = client_for(world.alfa_user)
    url = f"{LIST}{ctr.number}/cancelar/"
    empty = client.post(url, {"cancel-reason": "  "})
    assert empty.status_code == 400
    assert "Este campo é obrigatório." in text_of(empty, "id_cancel-reason_error")
    done = client.post(url, {"cancel-reason": "obra adiada"}, follow=True)
    ctr.refresh_from_db()
    assert ctr.status == CTRStatus.CANCELLED
    assert "cancelado" in done.content.decode()
    again = client.post(url, {"cancel-reason": "de novo"}, follow=True)
    assert again.status_code == 200
    assert "Não é possível cancelar" in again.content.decode()
    assert client_for(world.beta_user).post(url, {"cancel-reason": "x"}).status_code == 404


def test_detail_shows_waste_and_history(world):
    ctr = issue_ctr(world)
    response = client_for(world.alfa_user).get(f"{LIST}{ctr.number}/")
    history = text_of(response, "secao-historico")
    assert "Emissão" in history and "alfa" in history
    assert "Resíduos" in response.content.decode()


def test_detail_shows_origin_discharge_point_and_facility_on_a_map_with_the_distance(world):
    """A small map of the CTR (origin, discharge point, the destination
    facility's area) and the distance from the origin to the discharge point, on the earth's
    surface (PostGIS geography), as the page prints a number (decimal comma)."""
    from django.contrib.gis.db.models.functions import Distance

    ctr = issue_ctr(world)
    metres = (
        CTR.objects.filter(pk=ctr.pk)
        .annotate(d=Distance("origin", "destination"))
        .values_list("d", flat=True)
        .get()
        .m
    )
    response = client_for(world.alfa_user).get(f"{LIST}{ctr.number}/")
    section = text_of(response, "secao-mapa")
    assert f"{metres / 1000:.1f} km".replace(".", ",") in section
    assert world.att.name in section
    page = response.content.decode()
    assert 'id="mapa-ctr"' in page and "leaflet-pt.js" in page
    # The points on the map: the origin's and the discharge point's coordinates.
    for spot in (ctr.origin, ctr.destination):
        assert f"{spot.y}" in page and f"{spot.x}" in page


# --- fleet -----------------------------------------------------------------------------------


def test_register_a_vehicle_with_the_old_plate_format(world):
    client = client_for(world.alfa_user)
    response = client.post("/transportador/veiculos/", {"plate": "fgh-1234", "description": ""})
    assert response.status_code == 302
    vehicle = Vehicle.objects.get(plate="FGH1234")
    assert vehicle.transporter == world.alfa and vehicle.active


def test_bad_and_taken_plates_are_refused(world):
    client = client_for(world.alfa_user)
    bad = client.post("/transportador/veiculos/", {"plate": "12-ABCD"})
    assert bad.status_code == 400
    assert "Placa inválida" in text_of(bad, "id_plate_error")
    taken = client.post("/transportador/veiculos/", {"plate": "XYZ-9876"})  # beta's
    assert taken.status_code == 400
    assert "já está cadastrada" in text_of(taken, "id_plate_error")
    assert Vehicle.objects.count() == 2


def test_deactivated_vehicle_is_no_longer_offered(world):
    vehicle = Vehicle.objects.get(plate="ABC1D23")
    client = client_for(world.alfa_user)
    assert client.post(f"/transportador/veiculos/{vehicle.pk}/desativar/").status_code == 302
    vehicle.refresh_from_db()
    assert not vehicle.active
    assert ">ABC-1D23</option>" not in client.get(NEW).content.decode()
    # Another transporter's vehicle is not found; a GET changes nothing.
    other = Vehicle.objects.get(plate="XYZ9876")
    assert client.post(f"/transportador/veiculos/{other.pk}/desativar/").status_code == 404
    assert client.get(f"/transportador/veiculos/{vehicle.pk}/reativar/").status_code == 405
    client.post(f"/transportador/veiculos/{vehicle.pk}/reativar/")
    vehicle.refresh_from_db()
    assert vehicle.active


def test_register_equipment(world):
    client = client_for(world.alfa_user)
    url = "/transportador/equipamentos/"
    ok = client.post(url, {"code": " c-02 ", "kind": "CACAMBA", "nominal_capacity_m3": "7,5"})
    assert ok.status_code == 302
    item = Equipment.objects.get(transporter=world.alfa, code="C-02")
    assert item.nominal_capacity_m3 == Decimal("7.5")
    taken = client.post(url, {"code": "C-01", "kind": "CACAMBA", "nominal_capacity_m3": "5"})
    assert "já está cadastrado" in text_of(taken, "id_code_error")
    zero = client.post(url, {"code": "C-09", "kind": "CACAMBA", "nominal_capacity_m3": "0"})
    assert "maior que zero" in text_of(zero, "id_nominal_capacity_m3_error")
    text = client.post(url, {"code": "C-09", "kind": "CACAMBA", "nominal_capacity_m3": "muito"})
    assert "Informe um número" in text_of(text, "id_nominal_capacity_m3_error")
    # The code is unique per transporter: beta may have its own C-01.
    beta = client_for(world.beta_user).post(
        url, {"code": "C-01", "kind": "CACAMBA", "nominal_capacity_m3": "4"}
    )
    assert beta.status_code == 302


# --- operators ---------------------------------------------------------------------------------


def test_operator_sees_incoming_ctrs_and_confirms_one(world):
    ctr = issue_ctr(world)
    client = client_for(world.operator)
    page = client.get("/recebimentos/")
    assert page.status_code == 200
    assert ctr.number in text_of(page, "secao-abertos")
    response = client.post(
        f"/recebimentos/{ctr.number}/confirmar/",
        {f"r-{ctr.pk}-received_volume_m3": "3,0", f"r-{ctr.pk}-note": "ok"},
        follow=True,
    )
    assert response.status_code == 200
    ctr.refresh_from_db()
    assert ctr.status == CTRStatus.RECEIVED
    assert ctr.received_volume_m3 == Decimal("3")
    assert f"Recebimento do {ctr.number} confirmado." in response.content.decode()
    assert ctr.number in text_of(response, "secao-encerrados")


def test_volume_mismatch_at_reception_is_a_warning(world):
    ctr = issue_ctr(world)
    response = client_for(world.operator).post(
        f"/recebimentos/{ctr.number}/confirmar/",
        {f"r-{ctr.pk}-received_volume_m3": "1,5"},
        follow=True,
    )
    assert "Aviso:" in response.content.decode()
    ctr.refresh_from_db()
    assert ctr.status == CTRStatus.RECEIVED


def test_operator_refuses_with_a_reason(world):
    ctr = issue_ctr(world)
    client = client_for(world.operator)
    url = f"/recebimentos/{ctr.number}/recusar/"
    empty = client.post(url, {f"x-{ctr.pk}-reason": ""})
    assert empty.status_code == 400
    assert "Este campo é obrigatório." in text_of(empty, f"id_x-{ctr.pk}-reason_error")
    client.post(url, {f"x-{ctr.pk}-reason": "carga com lixo doméstico"})
    ctr.refresh_from_db()
    assert ctr.status == CTRStatus.REFUSED
    assert ctr.events.last().data["reason"] == "carga com lixo doméstico"


def test_a_ctr_already_received_by_a_colleague_is_a_clear_409(world):
    ctr = issue_ctr(world)
    client = client_for(world.operator)  # the page was open before the colleague acted
    closing.receive(ctr, world.operator, Decimal("3"))
    response = client.post(
        f"/recebimentos/{ctr.number}/recusar/", {f"x-{ctr.pk}-reason": "chegou vazio"}
    )
    assert response.status_code == 409
    alert = text_of(response, "aviso")
    assert f"Não é possível recusar o {ctr.number}" in alert
    assert "recebido" in alert
    ctr.refresh_from_db()
    assert ctr.status == CTRStatus.RECEIVED


def test_operators_act_only_on_their_own_facility(world):
    ctr = issue_ctr(world)
    pev = client_for(world.pev_operator)
    assert ctr.number not in pev.get("/recebimentos/").content.decode()
    response = pev.post(
        f"/recebimentos/{ctr.number}/confirmar/", {f"r-{ctr.pk}-received_volume_m3": "3"}
    )
    assert response.status_code == 404
    assert client_for(world.alfa_user).get("/recebimentos/").status_code == 403


def test_bad_received_volume_is_shown_on_the_row(world):
    ctr = issue_ctr(world)
    response = client_for(world.operator).post(
        f"/recebimentos/{ctr.number}/confirmar/", {f"r-{ctr.pk}-received_volume_m3": "-1"}
    )
    assert response.status_code == 400
    assert "maior que zero" in text_of(response, f"id_r-{ctr.pk}-received_volume_m3_error")


# --- sign in, dashboard, CSRF ------------------------------------------------------------------


def test_sign_in_leads_each_role_to_its_area(world):
    expected = {
        "alfa": LIST,
        "operador": "/recebimentos/",
        "nucleo": "/nucleo/",
    }
    for username, target in expected.items():
        client = Client()
        response = client.post("/entrar/", {"username": username, "password": "senha-teste"})
        assert response.status_code == 302 and response["Location"] == "/painel/"
        assert client.get("/painel/")["Location"] == target
    lost = Client()
    lost.force_login(world.outsider)
    assert lost.get("/painel/").status_code == 403


def test_wrong_password_is_explained_in_portuguese(world):
    response = Client().post("/entrar/", {"username": "alfa", "password": "errada"})
    assert response.status_code == 200
    assert "Usuário ou senha incorretos." in response.content.decode()


def test_sign_out_is_a_post(world):
    client = client_for(world.alfa_user)
    confirm = client.get("/sair/")  # a confirmation page, not a sign-out
    assert confirm.status_code == 200
    assert '<form method="post" action="/sair/">' in confirm.content.decode()
    assert client.get(LIST).status_code == 200
    response = client.post("/sair/")
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get(LIST).status_code == 302


def test_posts_need_the_csrf_token(world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.alfa_user)
    assert client.post(NEW, form_data(world)).status_code == 403
    assert CTR.objects.count() == 0


def test_nav_shows_the_sign_in_link_or_the_user_area(world):
    anonymous = Client().get("/regras/").content.decode()
    assert 'href="/entrar/"' in anonymous
    signed_in = client_for(world.alfa_user).get("/regras/").content.decode()
    assert 'href="/transportador/ctrs/"' in signed_in and 'action="/sair/"' in signed_in
    operator = client_for(world.operator).get("/regras/").content.decode()
    assert 'href="/recebimentos/"' in operator


# --- the rule catalogue ----------------------------------------------------------------------


def test_rule_catalogue_lists_every_rule_of_the_registry():
    response = Client().get("/regras/")
    assert response.status_code == 200
    html = response.content.decode()
    for rule in rules.REGISTRY.values():
        assert f'id="{rule.code}"' in html
        row = text_of(response, rule.code)
        assert rule.title in row
        assert rule.article in row
        assert rules.Severity.LABELS[rule.severity] in row
        assert " ".join(rule.description.split())[:60] in row
    for label in rules.Stage.LABELS.values():
        assert label in html
