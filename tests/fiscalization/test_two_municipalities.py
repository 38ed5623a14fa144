"""A municipality's data is its own in the fiscalização, with two municipalities
(tests.neighbour_world): the dumping reports, hotspots, suspects, roadside checks and enforcement
cases of A are A's. B's staff get a 404 on each of A's objects and lists without them; A's staff see
theirs; A's auditor reads and gets a 403 on every act; a consortium's inspector sees each
municipality's lists after choosing it. A case is the municipality's where the facts
happened (the report's, the location's), under its framework, opened only by its own staff."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from fiscalization import enforcement, intake, photos, suspects
from fiscalization.enforcement import OffenderData
from fiscalization.models import DumpingReport, ReportStatus
from fiscalization.models.enforcement import DeliveryMethod, EnforcementCase, OffenderRole
from jurisdiction.scope import OutsideJurisdiction, ReadOnlyRole, jurisdiction_of
from pev_network.models import FacilityKind
from tests import dumping_fixtures as fx
from tests.builders import licensed_facility, square
from tests.ctr_world import CPF_GENERATOR, issue_hours_ago
from tests.enforcement_world import (
    at,
    ensure_frameworks,
    own_framework,
    record_for,
    transporter_offender,
)
from tests.neighbour_world import api, build_neighbours, choose, web

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("private_media", "fresh_rate_limits")]


def new_report(point, **fields) -> DumpingReport:
    return intake.create_report(
        intake.NewReport(point, "LOTE_VAGO"),
        photos.check_photos([fx.upload("a.jpg", fx.jpeg_plain())]),
        confirm_new=True,
        **fields,
    )


@pytest.fixture
def towns(frozen_today):
    towns = build_neighbours()
    towns.report_a = new_report(fx.at(east_m=-800, north_m=-600))
    towns.report_b = new_report(towns.in_b())
    return towns


def listed_reports(client) -> set[int]:
    response = client.get("/fiscalizacao/")
    assert response.status_code == 200
    return {r.pk for r in response.context["page"]}


# --- dumping reports --------------------------------------------------------------------------


def test_b_staff_do_not_see_or_act_on_a_report_of_a(towns):
    a, photo = towns.report_a.pk, towns.report_a.photos.get().pk
    page = web(towns.b_fiscal)
    assert listed_reports(page) == {towns.report_b.pk}
    for path in (f"/fiscalizacao/denuncias/{a}/", f"/fiscalizacao/denuncias/{a}/suspeitos/"):
        assert page.get(path).status_code == 404, path
    assert page.get(f"/fiscalizacao/fotos/{photo}/").status_code == 404
    for action, data in (
        ("situacao", {"status": "CONFIRMED"}),
        ("categoria", {"category": "ENCOSTA"}),
        ("mesclar", {"into": towns.report_b.protocol}),
    ):
        assert page.post(f"/fiscalizacao/denuncias/{a}/{action}/", data).status_code == 404
    client = api(towns.b_fiscal)
    found = client.get("/api/v1/dumping-reports/").json()["features"]
    assert [f["id"] for f in found] == [towns.report_b.pk]
    assert client.get("/api/v1/dumping-reports/?municipality=3518404").json()["features"] == []
    assert client.get(f"/api/v1/dumping-reports/{a}/").status_code == 404
    assert client.get(f"/api/v1/dumping-reports/{a}/suspects/").status_code == 404
    moved = client.post(
        f"/api/v1/dumping-reports/{a}/status/", {"status": "CONFIRMED"}, format="json"
    )
    assert moved.status_code == 404
    towns.report_a.refresh_from_db()
    assert towns.report_a.status == ReportStatus.NEW


def test_a_staff_see_a_report_and_the_auditor_changes_nothing(towns):
    a = towns.report_a.pk
    assert listed_reports(web(towns.world.fiscal)) == {a}
    auditor = web(towns.a_auditor)
    assert auditor.get(f"/fiscalizacao/denuncias/{a}/").status_code == 200
    assert auditor.get(f"/fiscalizacao/fotos/{towns.report_a.photos.get().pk}/").status_code == 200
    data = {"status": "CONFIRMED", "note": ""}
    assert auditor.post(f"/fiscalizacao/denuncias/{a}/situacao/", data).status_code == 403
    assert (
        api(towns.a_auditor)
        .post(f"/api/v1/dumping-reports/{a}/status/", data, format="json")
        .status_code
        == 403
    )
    with pytest.raises(ReadOnlyRole):
        intake.change_status(towns.report_a, "CONFIRMED", towns.a_auditor)
    with pytest.raises(OutsideJurisdiction):
        intake.change_status(towns.report_a, "CONFIRMED", towns.b_fiscal)
    towns.report_a.refresh_from_db()
    assert towns.report_a.status == ReportStatus.NEW
    done = api(towns.world.fiscal).post(f"/api/v1/dumping-reports/{a}/status/", data, format="json")
    assert done.status_code == 200


def test_a_report_is_never_merged_into_another_municipality_s(towns):
    a, b = towns.report_a, towns.report_b
    # The consortium's inspector sees both: the service refuses the merge across the line.
    merged = api(towns.consortium).post(
        f"/api/v1/dumping-reports/{a.pk}/merge/", {"into": b.pk}, format="json"
    )
    assert merged.status_code == 400 and "outro município" in merged.json()["detail"]
    # A's inspector does not see B's report at all.
    page = web(towns.world.fiscal).post(
        f"/fiscalizacao/denuncias/{a.pk}/mesclar/", {"into": b.protocol}
    )
    assert page.status_code == 400 and "Nenhuma denúncia" in page.content.decode()
    a.refresh_from_db()
    assert a.status == ReportStatus.NEW and a.duplicate_of is None


def test_a_report_filed_by_staff_where_they_do_not_act_is_a_citizen_s(towns):
    by_a = new_report(towns.in_b(east_m=500), by=towns.world.fiscal)
    assert by_a.municipality == towns.b and by_a.reporter_kind == "CITIZEN"
    by_b = new_report(towns.in_b(east_m=-500), by=towns.b_fiscal)
    assert by_b.reporter_kind == "INSPECTOR" and by_b.reporter == towns.b_fiscal


def test_the_consortium_inspector_sees_each_list_after_choosing(towns):
    record = record_for(towns.world)
    client = web(towns.consortium)
    choose(client, towns.a)
    assert listed_reports(client) == {towns.report_a.pk}
    cases = client.get("/fiscalizacao/processos/").context["page"]
    assert [c.pk for c in cases] == [record.case_id]
    choose(client, towns.b)
    assert listed_reports(client) == {towns.report_b.pk}
    assert list(client.get("/fiscalizacao/processos/").context["page"]) == []


# --- hotspots, suspects, roadside -------------------------------------------------------------


def test_hotspots_are_the_current_municipality_s(towns):
    for east in (0, 10, 20):
        new_report(fx.at(east_m=3000 + east, north_m=3000))
    a_page = web(towns.world.fiscal).get("/fiscalizacao/pontos-criticos/")
    assert len(a_page.context["hotspots"]) == 1
    b_page = web(towns.b_fiscal).get("/fiscalizacao/pontos-criticos/")
    assert b_page.context["hotspots"] == []
    url = "/api/v1/dumping-reports/hotspots/"
    assert len(api(towns.world.fiscal).get(url).json()["features"]) == 1
    assert api(towns.b_fiscal).get(url).json()["features"] == []
    assert api(towns.b_fiscal).get(url + "?municipality=3518404").json()["features"] == []


def test_suspects_are_among_the_ctrs_and_worksites_the_user_sees(towns):
    world = towns.world
    issue_hours_ago(world, hours_ago=60)  # open past the 48 alert hours, from near report A
    spot = suspects.Spot.of_report(towns.report_a)
    assert suspects.find_suspects(spot, municipality_ids={towns.a.pk}).total == 1
    assert suspects.find_suspects(spot, municipality_ids={towns.b.pk}).total == 0
    page = web(world.fiscal).get(f"/fiscalizacao/denuncias/{towns.report_a.pk}/suspeitos/")
    assert page.status_code == 200 and page.context["found"].total == 1


def test_the_roadside_check_lists_the_ctrs_the_inspector_sees(towns):
    ctr = issue_hours_ago(towns.world)
    a_answer = web(towns.world.fiscal).get("/fiscalizacao/veiculo/?plate=ABC1D23").context["answer"]
    assert [c.number for c in a_answer.open_ctrs] == [ctr.number] and a_answer.open_elsewhere == 0
    b_page = web(towns.b_fiscal).get("/fiscalizacao/veiculo/?plate=ABC1D23")
    assert b_page.context["answer"].open_ctrs == [] and b_page.context["answer"].open_elsewhere == 1
    assert ctr.number not in b_page.content.decode()
    assert 'id="open-elsewhere"' in b_page.content.decode()
    body = api(towns.b_fiscal).get("/api/v1/roadside/?plate=ABC1D23").json()
    assert body["open_ctrs"] == [] and body["open_ctrs_elsewhere"] == 1


def test_generator_suggestions_are_the_user_s_municipalities(towns):
    issue_hours_ago(towns.world)  # Maria da Obra's CTR, in A
    url = f"/fiscalizacao/processos/geradores/?q={CPF_GENERATOR[:5]}"
    assert len(web(towns.world.fiscal).get(url).json()["results"]) == 1
    assert web(towns.b_fiscal).get(url).json()["results"] == []


# --- enforcement cases ------------------------------------------------------------------------


def test_b_staff_do_not_see_or_act_on_a_case_of_a(towns):
    record = record_for(towns.world)
    case, notice = record.case, record.case.notices.first()
    page = web(towns.b_fiscal)
    assert list(page.get("/fiscalizacao/processos/").context["page"]) == []
    paths = [f"/fiscalizacao/processos/{case.pk}/", f"/fiscalizacao/autos/{record.pk}/pdf/"]
    paths += [f"/fiscalizacao/processos/{case.pk}/notificar/"]
    paths += [f"/fiscalizacao/autos/{record.pk}/pagamento/"]
    if notice is not None:
        paths.append(f"/fiscalizacao/notificacoes/{notice.pk}/pdf/")
    for path in paths:
        assert page.get(path).status_code == 404, path
    paid = page.post(f"/fiscalizacao/autos/{record.pk}/pagamento/", {"paid_on": "2025-04-01"})
    assert paid.status_code == 404
    with pytest.raises(OutsideJurisdiction):
        enforcement.issue_notice(case, "Limpar.", DeliveryMethod.HAND, by=towns.b_fiscal)


def test_a_auditor_reads_a_case_and_takes_no_step(towns):
    record = record_for(towns.world)
    auditor = web(towns.a_auditor)
    assert auditor.get(f"/fiscalizacao/processos/{record.case_id}/").status_code == 200
    assert auditor.get(f"/fiscalizacao/autos/{record.pk}/pdf/").status_code == 200
    paid = auditor.post(f"/fiscalizacao/autos/{record.pk}/pagamento/", {"paid_on": "2025-04-01"})
    assert paid.status_code == 403
    with pytest.raises(ReadOnlyRole):
        enforcement.register_payment(record, datetime.date(2025, 4, 1), by=towns.a_auditor)


CASE_FORM = {
    "opened_at": "2026-11-30T09:00",
    "description": "Entulho na calçada.",
    "offender_role": "TRANSPORT_DIRECTOR",
    "offender_name": "João Dirigente",
    "offender_document": "11.222.333/0001-81",
}


def test_a_case_is_the_municipality_s_where_the_facts_happened(towns):
    ensure_frameworks()
    own_framework(towns.b)
    client = web(towns.consortium)
    choose(client, towns.a)
    lon, lat = towns.in_b().coords
    # Chosen A, but the place is in B: the case is B's (Lei 3.978/2007 art. 35).
    by_place = client.post(
        "/fiscalizacao/processos/novo/",
        {**CASE_FORM, "municipality": towns.a.pk, "latitude": lat, "longitude": lon},
    )
    assert by_place.status_code == 302, by_place.content.decode()[:2000]
    case = EnforcementCase.objects.get()
    assert case.municipality == towns.b
    assert case.framework == enforcement.framework_in_force(towns.b, datetime.date(2026, 11, 30))
    assert case.number.startswith("FISC-3502507-")
    # From a report of B: B's, whatever the choice.
    from_report = client.post(
        "/fiscalizacao/processos/novo/",
        {**CASE_FORM, "municipality": towns.a.pk, "dumping_report": towns.report_b.protocol},
    )
    assert from_report.status_code == 302
    assert EnforcementCase.objects.latest("pk").municipality == towns.b


def test_an_inspector_opens_no_case_where_he_does_not_act(towns):
    ensure_frameworks()
    client = web(towns.world.fiscal)
    lon, lat = towns.in_b().coords
    refused = client.post(
        "/fiscalizacao/processos/novo/", {**CASE_FORM, "latitude": lat, "longitude": lon}
    )
    assert refused.status_code == 400
    assert "Os fatos aconteceram em Aparecida (teste)/SP" in refused.content.decode()
    report = client.post(
        "/fiscalizacao/processos/novo/", {**CASE_FORM, "dumping_report": towns.report_b.protocol}
    )
    assert report.status_code == 400 and "Não há denúncia" in report.content.decode()
    chosen = client.post("/fiscalizacao/processos/novo/", {**CASE_FORM, "municipality": towns.b.pk})
    assert chosen.status_code == 400  # not among the municipalities where he acts
    assert not EnforcementCase.objects.exists()
    with pytest.raises(ReadOnlyRole):
        enforcement.open_case(
            inspector=towns.a_auditor,
            offender=transporter_offender(towns.world),
            description="x",
            location=towns.report_a.location,
            opened_at=at(2026, 11, 30, 9),
        )


def test_a_case_of_a_is_never_against_a_facility_of_b(towns):
    """The consortium's inspector sees both networks; a case in A against B's area would
    suspend or revoke the license of B's network (art. 25 IV-V) from A."""
    ensure_frameworks()
    own_framework(towns.b)
    area_b = licensed_facility(
        FacilityKind.ATT, square(*towns.in_b().coords, 100), "ATT de Aparecida", towns.b
    )

    def open_in(municipality):
        return enforcement.open_case(
            municipality=municipality,
            inspector=towns.consortium,
            offender=OffenderData(
                "Operadora B Ltda.", "11222333000181", OffenderRole.FACILITY, facility=area_b
            ),
            description="Recebeu resíduos sem CTR.",
            opened_at=timezone.localtime().replace(hour=9),
        )

    with pytest.raises(enforcement.EnforcementError, match="fica em Aparecida") as refused:
        open_in(towns.a)
    assert refused.value.field == "facility"
    assert not EnforcementCase.objects.exists()
    assert open_in(towns.b).municipality == towns.b  # in B, where the area is


def test_without_a_place_the_case_is_the_inspector_s_current_municipality_s(towns):
    ensure_frameworks()
    own_framework(towns.b)
    current = jurisdiction_of(towns.consortium).current_id
    case = enforcement.open_case(
        inspector=towns.consortium,
        offender=OffenderData("João Dirigente", "11222333000181", OffenderRole.TRANSPORT_DIRECTOR),
        description="Caçamba sem CTR.",
        opened_at=timezone.localtime().replace(hour=9),
    )
    assert case.municipality_id == current
    other = towns.b if current == towns.a.pk else towns.a
    with pytest.raises(enforcement.EnforcementError, match="fatos aconteceram"):
        enforcement.open_case(
            municipality=other,
            inspector=towns.consortium,
            offender=transporter_offender(towns.world),
            description="x",
            dumping_report=towns.report_a if other == towns.b else towns.report_b,
            opened_at=timezone.localtime().replace(hour=9),
        )


def test_a_municipality_without_its_own_framework_opens_no_case(towns):
    # Guaratinguetá's Lei 3.978/2007 governs Guaratinguetá only; B, with no
    # framework of its own, gets none and the case is refused with a message, not a 500.
    ensure_frameworks()
    page = web(towns.b_fiscal)
    form = page.get("/fiscalizacao/processos/novo/")
    assert form.status_code == 200
    notice = "Aparecida (teste) não tem regime de penalidades cadastrado"
    assert notice in form.content.decode()
    lon, lat = towns.in_b().coords
    refused = page.post(
        "/fiscalizacao/processos/novo/",
        {**CASE_FORM, "municipality": towns.b.pk, "latitude": lat, "longitude": lon},
    )
    assert refused.status_code == 400
    assert notice in refused.content.decode()
    assert not EnforcementCase.objects.exists()
    with pytest.raises(enforcement.EnforcementError) as error:
        enforcement.framework_in_force(towns.b, datetime.date(2026, 11, 30))
    assert error.value.code == "no_framework"
    # Once B has its own, B's cases open under it, and A's under A's.
    own = own_framework(towns.b)
    opened = page.post(
        "/fiscalizacao/processos/novo/",
        {**CASE_FORM, "municipality": towns.b.pk, "latitude": lat, "longitude": lon},
    )
    assert opened.status_code == 302, opened.content.decode()[:2000]
    assert EnforcementCase.objects.get().framework == own
    assert notice not in page.get("/fiscalizacao/processos/novo/").content.decode()
