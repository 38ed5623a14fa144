"""The CTR demo (demo/ctrs.py, a part of `manage.py load_demo`): loaded once for the module inside a
transaction that is rolled back at the end (CTR events cannot be deleted)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.db.models import Max
from django.utils import timezone

from ctr import alerts, roles
from ctr.custody import certificates
from ctr.custody.chain import Outcome
from ctr.documents import normalize_document, normalize_plate
from ctr.models import (
    CTR,
    CTREvent,
    CTRStatus,
    Equipment,
    Generator,
    Membership,
    OnSiteProcessing,
    Transporter,
    TransporterLicence,
    Vehicle,
    Worksite,
)
from demo import ctrs as demo
from demo import loading
from demo.ctr_history import SHOWCASE
from jurisdiction.models import StaffRole
from pev_network.models import FacilityKind, Municipality, ReceivingFacility
from pev_network.services import municipality_at
from tests.demo import held_for_the_module

# The marker makes pytest-django create the test database; each test then runs in a savepoint
# inside the module's transaction.
pytestmark = pytest.mark.django_db

PASSWORD = "demo12345"


def load() -> str:
    return loading.load_ctrs()


@pytest.fixture(scope="module")
def demo_output(django_db_setup, django_db_blocker):
    with held_for_the_module(django_db_blocker):
        loading.load_network()
        output = load()
        yield output


def snapshot() -> dict[str, int]:
    models = (CTR, CTREvent, Transporter, Vehicle, Equipment, Generator, Worksite, Membership)
    counts = {model.__name__: model.objects.count() for model in models}
    counts["User"] = get_user_model().objects.count()
    counts["NumberSequence"] = CTR.objects.aggregate(Max("sequence"))["sequence__max"]
    return counts


def test_every_status_and_a_few_hundred_ctrs(demo_output):
    statuses = set(CTR.objects.values_list("status", flat=True))
    assert statuses == set(CTRStatus.values)
    assert CTR.objects.count() >= 250
    assert "Rascunhos recusados" not in demo_output  # every draft passed the rules
    assert "CTRs de demonstração criados" in demo_output


def test_some_ctrs_are_overdue(demo_output):
    assert alerts.overdue(CTR.objects.all()).exists()


@pytest.mark.parametrize("code", ["RECEIVED_VOLUME_MISMATCH", "CLASS_A_TO_LANDFILL"])
def test_findings_present(demo_output, code):
    assert CTR.objects.filter(findings__contains=[{"code": code}]).exists()


def test_trips_take_a_plausible_time_but_one_detour(demo_output):
    """The demo's reception times follow the road (ctr/plausibility.py): none too fast, and
    only the one detour the Núcleo's map is meant to show is too slow."""
    codes = [f["code"] for findings in CTR.objects.values_list("findings", flat=True)
             for f in findings]  # fmt: skip
    assert "TRAVEL_TOO_FAST" not in codes
    assert codes.count("TRAVEL_TOO_SLOW") == 1


def test_no_error_findings_and_times_in_order(demo_output):
    now = timezone.now()
    for ctr in CTR.objects.all():
        assert all(f["severity"] != "error" for f in ctr.findings), ctr.number
        assert ctr.created_at <= now
        if ctr.status == CTRStatus.ISSUED:
            assert ctr.closed_at is None
        else:
            assert ctr.created_at < ctr.closed_at <= now
        assert timezone.localdate(ctr.created_at) == ctr.transport_date


def test_destinations_follow_the_network(demo_output):
    assert not CTR.objects.filter(destination_facility__code__in=["PEV-07", "ATT-03"]).exists()
    for ctr in CTR.objects.select_related("destination_facility").prefetch_related("waste"):
        facility = ctr.destination_facility
        assert facility.area.contains(ctr.destination), ctr.number
        classes = {line.waste_class for line in ctr.waste.all()}
        if facility.kind in (FacilityKind.RECYCLING, FacilityKind.LANDFILL):
            assert classes == {"A"}
        if facility.kind == FacilityKind.PEV:
            assert ctr.total_volume_m3 <= Decimal("1")
        else:
            assert ctr.total_volume_m3 > Decimal("1")
    used = set(CTR.objects.values_list("destination_facility__code", flat=True))
    assert {"ATT-01", "ATT-02", "REC-01", "ATR-01"} <= used
    assert len({code for code in used if code.startswith("PEV-")}) >= 4


def test_transport_dates_within_the_licence_of_the_ctrs_municipality(demo_output):
    for transporter in Transporter.objects.filter(ctrs__isnull=False).distinct():
        for day, place in transporter.ctrs.values_list("transport_date", "municipality_id"):
            licence = transporter.licence_in(place)
            assert licence is not None and licence.in_force_on(day)
    suspended = TransporterLicence.objects.get(status="SUSPENDED")
    assert suspended.status_since is not None
    assert suspended.restricted_on(timezone.localdate()) == "SUSPENDED"


def test_documents_plates_and_places_are_valid(demo_output):
    for document in [
        *Transporter.objects.values_list("document", flat=True),
        *Generator.objects.values_list("document", flat=True),
    ]:
        assert normalize_document(document) == document
    assert {len(d) for d in Generator.objects.values_list("document", flat=True)} == {11, 14}
    plates = list(Vehicle.objects.values_list("plate", flat=True))
    assert all(normalize_plate(plate) == plate for plate in plates)
    assert any(plate[4].isalpha() for plate in plates)  # Mercosul
    assert any(plate[4].isdigit() for plate in plates)  # old format
    # Each worksite lies in the municipality it names: the town's, or its neighbour's (Aparecida's
    # loads to the shared landfill).
    for worksite in Worksite.objects.select_related("municipality"):
        assert municipality_at(worksite.location).ibge_code == worksite.municipality.ibge_code
        assert worksite.municipality.ibge_code in {demo.IBGE_CODE, demo.NEIGHBOUR_IBGE}
    assert "fictíci" in Transporter.objects.get(members__user__username="transportador").name
    large = Worksite.objects.filter(is_large_generator=True)
    assert large.exists()
    for site in large:
        assert {t.members.first().user.username for t in site.plan_transporters.all()} == {
            "transportador"
        }
        assert {f.code for f in site.plan_facilities.all()} == {"ATT-01", "REC-01"}


def test_numbers_unique_and_gap_free(demo_output):
    numbers = list(CTR.objects.values_list("number", flat=True))
    assert len(numbers) == len(set(numbers))
    for municipality_id, year in set(CTR.objects.values_list("municipality_id", "year")):
        sequences = sorted(
            CTR.objects.filter(municipality_id=municipality_id, year=year).values_list(
                "sequence", flat=True
            )
        )
        assert sequences == list(range(1, len(sequences) + 1))


@pytest.mark.parametrize(
    "username",
    ["admin", "nucleo", "fiscal", "autoridade", "transportador", "transportador2", "operador"],
)
def test_demo_accounts_authenticate(demo_output, username):
    assert authenticate(username=username, password=PASSWORD) is not None
    assert authenticate(username=username, password="errada") is None


def test_demo_account_roles(demo_output):
    users = {u.username: u for u in get_user_model().objects.all()}
    assert users["admin"].is_superuser
    for name in ("nucleo", "fiscal", "autoridade"):
        user = users[name]
        assert roles.is_municipal(user) and user.is_staff and not user.is_superuser
        assert user.has_perm("ctr.view_ctr") and user.has_perm("pev_network.view_receivingfacility")
        assert not user.has_perm("ctr.change_ctr")
    town = Municipality.objects.get(ibge_code="3518404")
    held = {
        name: set(StaffRole.objects.filter(user=users[name]).values_list("municipality", "role"))
        for name in ("nucleo", "fiscal", "autoridade")
    }
    # Each holds its role in the town, and nowhere else; penalties and appeal
    # decisions are the authority's (art. 35), not the inspector's.
    assert held == {
        "nucleo": {(town.pk, roles.NUCLEO)},
        "fiscal": {(town.pk, roles.FISCAL)},
        "autoridade": {(town.pk, roles.AUTORIDADE)},
    }

    first = roles.transporter_of(users["transportador"])
    assert first.vehicles.count() == 3
    capacities = sorted(
        (e.kind, e.nominal_capacity_m3) for e in first.equipment.all() if e.kind == "CACAMBA"
    )
    assert [c for _, c in capacities] == [3, 4, 5]
    assert first.equipment.filter(kind="BASCULANTE").count() == 1
    assert first.ctrs.count() > 0
    second = roles.transporter_of(users["transportador2"])
    assert second != first
    assert (second.vehicles.count(), second.equipment.count()) == (2, 2)
    assert second.ctrs.count() > 0
    assert roles.facility_of(users["operador"]) == ReceivingFacility.objects.get(code="ATT-01")
    for name in ("transportador", "transportador2", "operador"):
        assert not roles.is_municipal(users[name])
    # Unlisted accounts (other operators, the suspended transporter) cannot log in.
    listed = {"admin", "nucleo", "fiscal", "autoridade", "transportador", "transportador2"}
    listed |= {"operador", "nucleo_aparecida", "auditoria"}
    for name, user in users.items():
        if name not in listed:
            assert not user.has_usable_password(), name


def test_the_neighbour_shares_the_landfill_with_its_own_nucleo(demo_output):
    """Aparecida beside Guaratinguetá, its CTRs at the landfill they share,
    transporter A licensed in both, a Núcleo for each and the consortium's auditor of both."""
    town = Municipality.objects.get(ibge_code=demo.IBGE_CODE)
    neighbour = Municipality.objects.get(ibge_code=demo.NEIGHBOUR_IBGE)
    assert list(neighbour.accepted_destinations.all()) == [town]
    carrier = Transporter.objects.get(members__user__username="transportador")
    assert {lic.municipality for lic in carrier.licences.all()} == {town, neighbour}
    theirs = CTR.objects.filter(municipality=neighbour)
    assert theirs.count() == demo.NEIGHBOUR_LOADS
    assert set(theirs.values_list("destination_facility__code", flat=True)) == {"ATR-01"}
    assert set(theirs.values_list("status", flat=True)) == {CTRStatus.RECEIVED}
    assert not any(ctr.findings for ctr in theirs)
    roles_of = {
        name: set(StaffRole.objects.filter(user__username=name).values_list("municipality", "role"))
        for name in ("nucleo", "nucleo_aparecida", "auditoria")
    }
    assert roles_of == {
        "nucleo": {(town.pk, roles.NUCLEO)},
        "nucleo_aparecida": {(neighbour.pk, roles.NUCLEO)},
        "auditoria": {(town.pk, roles.AUDITOR), (neighbour.pk, roles.AUDITOR)},
    }
    for name in ("nucleo_aparecida", "auditoria"):
        assert authenticate(username=name, password=demo.DEMO_PASSWORD) is not None
    # What each Núcleo sees of the other's: the loads arriving at its landfill, its own
    # leaving; nothing else.
    nucleo = get_user_model().objects.get(username="nucleo")
    assert set(CTR.objects.visible_to(nucleo).filter(municipality=neighbour)) == set(theirs)
    aparecida = get_user_model().objects.get(username="nucleo_aparecida")
    assert set(CTR.objects.visible_to(aparecida)) == set(theirs)


def test_second_load_changes_nothing(demo_output):
    before = snapshot()
    output = load()
    assert "já existiam" in output
    assert snapshot() == before
    assert demo.demo_ctrs().count() == before["CTR"]


# --- the ATTs ship onward; one certificate conclusive, one not ----------------------------------


def test_the_atts_ship_their_sorted_waste_onward(demo_output):
    onward = CTR.objects.filter(origin_facility__code__in=["ATT-01", "ATT-02"])
    assert onward.filter(origin_facility__code="ATT-01").exists()
    assert onward.filter(origin_facility__code="ATT-02").exists()
    assert set(onward.values_list("status", flat=True)) == {CTRStatus.RECEIVED}
    assert set(onward.values_list("destination_facility__code", flat=True)) == {"REC-01"}
    assert OnSiteProcessing.objects.filter(facility__code__in=["ATT-01", "ATT-02"]).exists()
    assert f"{onward.count()} CTRs de saída das ATTs" in demo_output


def showcase(key: str) -> Worksite:
    address = next(address for k, _doc, address, _loads in SHOWCASE if k == key)
    return Worksite.objects.select_related("generator").get(address=address)


def test_one_demo_certificate_is_conclusive_and_one_is_not(demo_output):
    done = certificates.build(certificates.Scope.of_worksite(showcase("conclusivo")))
    assert done.conclusive, done.statement
    assert {load.first_place.name for load in done.loads} == {
        "ATT Norte (fictícia)",
        "Usina de Reciclagem Vale (fictícia)",
    }
    pending = certificates.build(certificates.Scope.of_worksite(showcase("não conclusivo")))
    assert not pending.conclusive
    assert any(share.outcome == Outcome.DESTINED for load in pending.loads for share in load.shares)
    assert "3,5 m³ de classe A ainda em estoque na área “ATT Sul (fictícia)”" in pending.reasons
    for key in ("conclusivo", "não conclusivo"):
        assert f"{key} em /obras/{showcase(key).pk}/cdf/" in demo_output
