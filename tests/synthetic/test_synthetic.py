"""Synthetic data (synthetic/generator.py, `manage.py generate_synthetic`): plausible, consistent,
gap-free, and removable."""

import datetime
import io
import re
from pathlib import Path

import pytest
import time_machine
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.gis.geos import Point
from django.core.management import call_command
from django.db import connection, transaction
from django.db.models import Count, Exists, F, OuterRef
from django.utils import timezone

from audit.models import AccessLog
from ctr.alerts import overdue
from ctr.custody import stock
from ctr.documents import normalize_document, normalize_plate
from ctr.models import (
    CTR,
    CTREvent,
    CTRStatus,
    CTRWaste,
    CustodyAllocation,
    CustodyStale,
    Generator,
    NumberSequence,
    OnSiteProcessing,
    ProcessingKind,
    Transporter,
    TransporterLicence,
    Vehicle,
)
from ctr.services import next_number
from fiscalization.models import DumpingReport
from jurisdiction.models import Role, StaffRole
from jurisdiction.scope import jurisdiction_of
from pev_network.models import FacilityKind, Municipality, ReceivingFacility
from synthetic import generator as synthetic
from tests.builders import licence, licensed_facility, multi, square
from tests.synthetic_world import load_municipalities

pytestmark = pytest.mark.django_db

CTRS = 2000
REPORTS = 500
SEED = 7
ONWARD_SHARE = 0.2
# The default municipality, the capital (a big boundary), Osasco beside it (a member of the
# capital's consortium: a hub larger than itself on its border) and two small towns.
CODES = {"3518404", "3550308", "3534401", "3500105", "3500204"}
CAPITAL, OSASCO = "3550308", "3534401"


def generate(**options) -> str:
    out = io.StringIO()
    call_command(
        "generate_synthetic",
        ctrs=CTRS,
        reports=REPORTS,
        seed=SEED,
        municipality_limit=5,
        onward_share=ONWARD_SHARE,
        stdout=out,
        **options,
    )
    return out.getvalue()


@pytest.fixture(scope="module")
def dataset(django_db_setup, django_db_blocker, tmp_path_factory):
    """Five municipalities of SP, then 2,000 CTRs (a fifth of them onward) and 500 reports;
    rolled back at the end."""
    with django_db_blocker.unblock(), transaction.atomic():
        load_municipalities(CODES, tmp_path_factory.mktemp("syn"))
        GENERATED_AT.append(timezone.now())
        yield generate()
        transaction.set_rollback(True)


# When the dataset was generated. The data depend on that instant (a CTR is still open or
# already overdue by the hours since it left), and a test that generates them again to compare
# does so at the same instant: with pytest-xdist the module's tests may run minutes after
# their dataset was made.
GENERATED_AT: list[datetime.datetime] = []


def at_the_dataset_instant() -> time_machine.travel:
    return time_machine.travel(GENERATED_AT[-1], tick=True)


def scalar(sql: str, params=None):
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchone()[0]


def test_counts_and_summary(dataset):
    assert CTR.objects.count() == CTRS
    assert DumpingReport.objects.count() == REPORTS
    assert synthetic.counts()["CTRs"] == CTRS
    assert "Semente: 7; municípios: 5." in dataset
    assert "CTRs: 2.000" in dataset
    assert "Tempo total:" in dataset


def test_every_municipality_has_a_licensed_network(dataset):
    today = timezone.localdate()
    start = today - datetime.timedelta(days=synthetic.PERIOD_DAYS)
    for municipality in Municipality.objects.all():
        kinds = set(
            ReceivingFacility.objects.filter(municipality=municipality).values_list(
                "kind", flat=True
            )
        )
        assert {FacilityKind.PEV, FacilityKind.ATT} <= kinds, municipality
        assert kinds & {FacilityKind.RECYCLING, FacilityKind.LANDFILL}, municipality
    facilities = ReceivingFacility.objects.all()
    assert facilities.filter(code__startswith="SYN-").count() == facilities.count()
    for day in (start, today):
        assert facilities.licensed_on(day).count() == facilities.count()
    # Inside their municipality, and of plausible size (PEV ~900 m², landfill ~10 ha).
    assert scalar(
        "SELECT count(*) FROM pev_network_receivingfacility f "
        "JOIN pev_network_municipality m ON m.id = f.municipality_id "
        "WHERE NOT ST_Covers(m.boundary, f.area)"
    ) == 0  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT kind, avg(ST_Area(area::geography)) FROM pev_network_receivingfacility "
            "GROUP BY kind"
        )
        areas = dict(cursor.fetchall())
    assert 400 < areas["PEV"] < 2000
    assert 3000 < areas["ATT"] < 15000
    assert 50_000 < areas["LANDFILL"] < 250_000


def test_origins_inside_the_ctr_municipality(dataset):
    assert scalar(
        "SELECT count(*) FROM ctr_ctr c JOIN pev_network_municipality m "
        "ON m.id = c.municipality_id WHERE NOT ST_Covers(m.boundary, c.origin)"
    ) == 0  # fmt: skip
    # The worksite is where the load comes from.
    assert scalar(
        "SELECT count(*) FROM ctr_ctr c JOIN ctr_worksite w ON w.id = c.worksite_id "
        "WHERE NOT ST_Equals(w.location, c.origin) OR w.generator_id <> c.generator_id"
    ) == 0  # fmt: skip


def test_destinations_inside_their_facility_of_the_same_or_an_accepted_municipality(dataset):
    assert scalar(
        "SELECT count(*) FROM ctr_ctr c "
        "JOIN pev_network_receivingfacility f ON f.id = c.destination_facility_id "
        "WHERE NOT ST_Covers(f.area, c.destination)"
    ) == 0  # fmt: skip
    # Across the border only to a municipality the CTR's own accepts.
    assert scalar(
        "SELECT count(*) FROM ctr_ctr c "
        "JOIN pev_network_receivingfacility f ON f.id = c.destination_facility_id "
        "WHERE f.municipality_id <> c.municipality_id AND NOT EXISTS ("
        "  SELECT 1 FROM pev_network_municipality_accepted_destinations d "
        "  WHERE d.from_municipality_id = c.municipality_id "
        "  AND d.to_municipality_id = f.municipality_id)"
    ) == 0  # fmt: skip


def test_a_consortium_around_the_capital_shares_its_final_facility(dataset):
    """Osasco borders the capital, a hub larger than itself: it accepts the capital's facilities
    (the only agreement: the default municipality borders no hub among the five), and a share of
    its final loads goes to the capital's recycling area or landfill nearest to it."""
    capital = Municipality.objects.get(ibge_code=CAPITAL)
    osasco = Municipality.objects.get(ibge_code=OSASCO)
    agreements = Municipality.accepted_destinations.through.objects
    assert set(agreements.values_list("from_municipality", "to_municipality")) == {
        (osasco.pk, capital.pk)
    }
    crossing = CTR.objects.exclude(destination_facility__municipality=F("municipality"))
    assert crossing.count() == synthetic.counts()["CTRs para área de outro município"] > 0
    assert set(crossing.values_list("municipality", flat=True)) == {osasco.pk}
    shared = set(crossing.values_list("destination_facility", flat=True))
    assert len(shared) == 1
    facility = ReceivingFacility.objects.get(pk=shared.pop())
    assert facility.municipality == capital
    assert facility.kind in {FacilityKind.RECYCLING, FacilityKind.LANDFILL}
    nearest = scalar(
        "SELECT f.id FROM pev_network_receivingfacility f, pev_network_municipality o "
        "WHERE o.id = %s AND f.municipality_id = %s AND f.kind IN (%s, %s) "
        "ORDER BY f.area <-> ST_PointOnSurface(o.boundary), f.id LIMIT 1",
        [osasco.pk, capital.pk, FacilityKind.RECYCLING, FacilityKind.LANDFILL],
    )
    assert facility.pk == nearest
    # Most of Osasco's final loads stay home; the others cross.
    final = CTR.objects.filter(
        municipality=osasco,
        origin_facility__isnull=True,
        destination_facility__kind__in=[FacilityKind.RECYCLING, FacilityKind.LANDFILL],
    )
    assert 0 < crossing.count() < final.count()


def test_staff_per_municipality_each_in_its_own(dataset):
    """A Núcleo and a Fiscalização account in each municipality, with the role there only; the
    capital's Núcleo sees the loads arriving at its shared facility and nothing else of
    Osasco's."""
    users = get_user_model().objects.filter(username__startswith=synthetic.STAFF_PREFIX)
    assert users.count() == 2 * len(CODES)
    assert synthetic.counts()["papéis da equipe municipal"] == 2 * len(CODES)
    for municipality in Municipality.objects.all():
        for role in (Role.NUCLEO, Role.FISCAL):
            user = users.get(username=synthetic.staff_username(role, municipality.ibge_code))
            assert user.is_active and not user.has_usable_password()
            assert not user.is_superuser and not user.is_staff
            j = jurisdiction_of(user)
            assert j.roles == {municipality.pk: frozenset({role})}
            assert j.current_id == municipality.pk
    capital = Municipality.objects.get(ibge_code=CAPITAL)
    osasco = Municipality.objects.get(ibge_code=OSASCO)
    nucleo = users.get(username=synthetic.staff_username(Role.NUCLEO, CAPITAL))
    seen = CTR.objects.visible_to(nucleo, current=True)
    arriving = CTR.objects.filter(municipality=osasco, destination_facility__municipality=capital)
    assert arriving.exists()
    assert set(seen.filter(municipality=osasco)) == set(arriving)
    assert seen.count() == CTR.objects.filter(municipality=capital).count() + arriving.count()


def test_some_transporters_of_a_member_are_licensed_in_the_hub_too(dataset):
    """One company, one fleet, a licence in each municipality that licensed it: the first of
    Osasco's transporters holds one in the capital too, with the dates of its first, and carries
    there as well."""
    capital = Municipality.objects.get(ibge_code=CAPITAL)
    osasco = Municipality.objects.get(ibge_code=OSASCO)
    own = TransporterLicence.objects.filter(municipality=osasco).order_by("pk")
    first = own.first()
    second = TransporterLicence.objects.get(transporter=first.transporter, municipality=capital)
    assert second.number == f"{first.number}-{CAPITAL}"
    assert (second.valid_from, second.valid_until, second.status) == (
        first.valid_from,
        first.valid_until,
        first.status,
    )
    hub_licences = TransporterLicence.objects.filter(number__regex=r"^SYN-T-\d+-\d{7}$")
    counted = synthetic.counts()["licenças de transportadores no polo do consórcio"]
    assert hub_licences.count() == counted
    # Only a member's, only in its hub.
    assert set(hub_licences.values_list("municipality", flat=True)) == {capital.pk}
    assert synthetic.counts()["transportadores"] == Transporter.objects.count()
    assert CTR.objects.filter(municipality=capital, transporter=first.transporter).exists()


def test_ids_and_table_order_follow_the_time_of_issue(dataset):
    """As in a live system, where each CTR is appended when issued: a later CTR has a higher
    id (and is inserted after, so that the table's order follows the time of issue, what every
    "newest first" read relies on)."""
    assert scalar(
        "SELECT count(*) FROM (SELECT created_at, "
        "lag(created_at) OVER (ORDER BY id) AS before FROM ctr_ctr) t "
        "WHERE created_at < before"
    ) == 0  # fmt: skip


def test_numbers_gap_free_per_municipality_and_year(dataset):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.municipality_id, c.year, count(*), count(DISTINCT c.sequence), "
            "min(c.sequence), max(c.sequence), max(ns.last_value) FROM ctr_ctr c "
            "LEFT JOIN ctr_numbersequence ns "
            "ON ns.municipality_id = c.municipality_id AND ns.year = c.year "
            "GROUP BY 1, 2"
        )
        groups = cursor.fetchall()
    assert len(groups) >= 10  # five municipalities, two or three years each
    for _, _, n, distinct, low, high, last_value in groups:
        assert (distinct, low, high, last_value) == (n, 1, n, n)
    assert NumberSequence.objects.count() == len(groups)
    for number, ibge, year, sequence, transport_date in CTR.objects.values_list(
        "number", "municipality__ibge_code", "year", "sequence", "transport_date"
    ):
        assert number == f"CTR-{ibge}-{year}-{sequence:06d}"
        assert year == transport_date.year


def test_volumes_fees_and_waste_lines(dataset):
    assert scalar(
        "SELECT count(*) FROM ctr_ctr c WHERE c.total_volume_m3 IS DISTINCT FROM "
        "(SELECT sum(w.volume_m3) FROM ctr_ctrwaste w WHERE w.ctr_id = c.id)"
    ) == 0  # fmt: skip
    assert scalar(
        "SELECT count(*) FROM ctr_ctr WHERE fee_ufesp <> "
        "CASE WHEN total_volume_m3 > 1 THEN 1 ELSE 0 END"
    ) == 0  # fmt: skip
    # Every line is a class the destination accepts; PEVs get at most 1 m³, no equipment.
    assert scalar(
        "SELECT count(*) FROM ctr_ctrwaste w JOIN ctr_ctr c ON c.id = w.ctr_id "
        "JOIN pev_network_receivingfacility f ON f.id = c.destination_facility_id "
        "WHERE NOT w.waste_class = ANY(f.accepted_classes) OR w.volume_m3 <= 0"
    ) == 0  # fmt: skip
    pev = CTR.objects.filter(destination_facility__kind=FacilityKind.PEV)
    assert pev.exists()
    assert not pev.filter(total_volume_m3__gt=1).exists()
    assert not pev.filter(equipment__isnull=False).exists()
    others = CTR.objects.exclude(destination_facility__kind=FacilityKind.PEV)
    assert not others.filter(equipment__isnull=True).exists()
    # The equipment and vehicle belong to the CTR's transporter.
    assert not others.exclude(equipment__transporter=F("transporter")).exists()
    assert not CTR.objects.exclude(vehicle__transporter=F("transporter")).exists()
    # Each CTR's transporter is licensed in the CTR's municipality (art. 13).
    licensed_there = TransporterLicence.objects.filter(
        transporter=OuterRef("transporter"), municipality=OuterRef("municipality")
    )
    assert not CTR.objects.exclude(Exists(licensed_there)).exists()


def test_dates_statuses_and_events(dataset):
    now = timezone.now()
    today = timezone.localdate()
    start = today - datetime.timedelta(days=synthetic.PERIOD_DAYS)
    assert not CTR.objects.exclude(transport_date__range=(start, today)).exists()
    assert not CTR.objects.filter(created_at__gt=now).exists()
    for created_at, transport_date in CTR.objects.values_list("created_at", "transport_date"):
        lead = (transport_date - timezone.localdate(created_at)).days
        assert 0 <= lead <= 2
    statuses = dict(
        CTR.objects.order_by()
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    assert set(statuses) == set(CTRStatus.values)
    assert statuses[CTRStatus.RECEIVED] > 0.8 * CTRS
    # Some are open past the alert: the overdue layer has something to show.
    assert overdue(CTR.objects.all()).exists()
    # One issue event per CTR at its creation; one closing event per closed CTR, after it.
    assert CTREvent.objects.filter(action="issue").count() == CTRS
    closed = CTR.objects.exclude(status=CTRStatus.ISSUED).count()
    assert CTREvent.objects.count() == CTRS + closed
    assert scalar(
        "SELECT count(*) FROM ctr_ctrevent e JOIN ctr_ctr c ON c.id = e.ctr_id "
        "WHERE (e.action = 'issue' AND e.at <> c.created_at) "
        "OR (e.action <> 'issue' AND (e.at <> c.closed_at OR e.to_status <> c.status "
        "    OR c.closed_at < c.created_at))"
    ) == 0  # fmt: skip
    assert not CTR.objects.filter(
        status=CTRStatus.RECEIVED, received_volume_m3__isnull=True
    ).exists()


def test_onward_ctrs_leave_pevs_and_atts_for_where_their_class_goes(dataset):
    """A fifth of the CTRs leave a PEV or an ATT with what it received (Lei 3.978/2007 art. 3
    III and V), issued by its operator: class A to a final facility, the rest from PEVs to an
    ATT; from inside the facility, in its municipality; most received, some on their way."""
    onward = CTR.objects.filter(origin_facility__isnull=False)
    assert onward.count() == round(CTRS * ONWARD_SHARE)
    assert synthetic.counts()["CTRs de saída"] == onward.count()
    assert not onward.filter(worksite__isnull=False).exists()
    assert set(onward.values_list("origin_facility__kind", flat=True)) == {
        FacilityKind.PEV,
        FacilityKind.ATT,
    }
    assert scalar(
        "SELECT count(*) FROM ctr_ctr c "
        "JOIN pev_network_receivingfacility f ON f.id = c.origin_facility_id "
        "LEFT JOIN ctr_facilityoperator o ON o.facility_id = f.id "
        "WHERE NOT ST_Covers(f.area, c.origin) OR f.municipality_id <> c.municipality_id "
        "OR o.generator_id IS DISTINCT FROM c.generator_id"
    ) == 0  # fmt: skip
    routes = set(
        CTRWaste.objects.filter(ctr__in=onward).values_list(
            "ctr__origin_facility__kind", "waste_class", "ctr__destination_facility__kind"
        )
    )
    final = {FacilityKind.RECYCLING, FacilityKind.LANDFILL}
    assert {kind for origin, cls, kind in routes if cls == "A"} <= final
    assert {kind for origin, cls, kind in routes if cls != "A"} == {FacilityKind.ATT}
    assert {origin for origin, cls, kind in routes if cls != "A"} == {FacilityKind.PEV}
    assert not CTRWaste.objects.filter(ctr__in=onward).exclude(volume_m3=F("ctr__total_volume_m3"))
    # Each load fits the largest equipment the transporter sends.
    assert not onward.filter(total_volume_m3__gt=F("equipment__nominal_capacity_m3")).exists()
    statuses = set(onward.values_list("status", flat=True))
    assert {CTRStatus.RECEIVED, CTRStatus.ISSUED} <= statuses
    assert statuses & {CTRStatus.REFUSED, CTRStatus.CANCELLED}


def test_no_facility_ships_or_processes_more_than_it_holds(dataset):
    """The stock of every facility and class (ctr/custody/stock.py) at the end of every day with a
    movement is never below zero: onward CTRs and processing only take what arrived."""
    facilities = set(
        CTR.objects.filter(origin_facility__isnull=False).values_list("origin_facility", flat=True)
    ) | set(OnSiteProcessing.objects.values_list("facility", flat=True))
    assert facilities
    lowest = []
    with connection.cursor() as cursor:
        for facility in facilities:
            cursor.execute(
                "SELECT min(balance) FROM (SELECT sum(sum(received - shipped - processed)) "
                "OVER (PARTITION BY waste_class ORDER BY day) AS balance "
                f"FROM ({stock.MOVES_SQL}) moves GROUP BY waste_class, day) running",
                {"facility": facility, "shipped_statuses": stock.SHIPPED_STATUSES},
            )
            lowest.append(cursor.fetchone()[0])
    assert min(lowest) >= 0


def test_processing_recorded_at_the_atts(dataset):
    rows = OnSiteProcessing.objects.all()
    assert synthetic.counts()["beneficiamentos nas áreas"] == rows.count() > 0
    assert set(rows.values_list("facility__kind", flat=True)) == {FacilityKind.ATT}
    kinds = set(rows.values_list("waste_class", "kind"))
    assert kinds <= {
        ("A", ProcessingKind.RECYCLED),
        ("B", ProcessingKind.REUSED),
        ("VOLUMOSO", ProcessingKind.REUSED),
    }
    assert ("A", ProcessingKind.RECYCLED) in kinds
    today = timezone.localdate()
    assert not rows.exclude(day__range=(today - datetime.timedelta(synthetic.PERIOD_DAYS), today))


def test_the_chain_of_custody_is_built_and_never_ships_before_arrival(dataset):
    """The allocation is built (nothing left stale), no facility shipped past what it received,
    and no piece of a load leaves its facility before it arrived (first in, first out)."""
    assert not CustodyStale.objects.exists()
    pieces = CustodyAllocation.objects.all()
    assert pieces.filter(outbound__isnull=False).exists()
    assert pieces.filter(processing__isnull=False).exists()
    assert not pieces.filter(inbound__isnull=True).exists()
    assert not pieces.filter(
        outbound__ctr__transport_date__lt=F("inbound__ctr__transport_date")
    ).exists()
    assert not pieces.filter(processing__day__lt=F("inbound__ctr__transport_date")).exists()


def test_reports_inside_their_municipality(dataset):
    assert scalar(
        "SELECT count(*) FROM fiscalization_dumpingreport r JOIN pev_network_municipality m "
        "ON m.id = r.municipality_id WHERE NOT ST_Covers(m.boundary, r.location)"
    ) == 0  # fmt: skip
    protocols = list(DumpingReport.objects.values_list("protocol", flat=True))
    assert len(set(protocols)) == REPORTS
    assert all(re.fullmatch(r"SYN-20\d\d-\d{7}", p) for p in protocols)
    oldest = timezone.now() - datetime.timedelta(days=synthetic.PERIOD_DAYS, hours=1)
    assert not DumpingReport.objects.filter(created_at__lt=oldest).exists()
    assert DumpingReport.objects.values("category").distinct().count() >= 5
    assert DumpingReport.objects.values("status").distinct().count() >= 5
    # Weighted like the CTRs: the capital has the most.
    busiest = (
        DumpingReport.objects.values("municipality__ibge_code")
        .order_by()
        .annotate(n=Count("id"))
        .order_by("-n")
        .first()
    )
    assert busiest["municipality__ibge_code"] == "3550308"


def test_documents_and_plates_are_valid(dataset):
    for document in Transporter.objects.values_list("document", flat=True):
        assert normalize_document(document) == document
    for document in Generator.objects.values_list("document", flat=True)[:300]:
        assert normalize_document(document) == document
    for plate in Vehicle.objects.values_list("plate", flat=True):
        assert normalize_plate(plate) == plate


def real_ctr() -> CTR:
    """A CTR that is not synthetic: its own transporter, facility, generator and user."""
    town = Municipality.objects.get(ibge_code="3518404")
    centre = town.boundary.point_on_surface
    facility = licensed_facility(
        FacilityKind.ATT, multi(square(centre.x, centre.y, 80)), "ATT real", town, code="ATT-R"
    )
    transporter = Transporter.objects.create(name="Caçambas Reais Ltda.", document="11222333000181")
    licence(transporter, town, "TR-REAL-1", datetime.date(2020, 1, 1))
    vehicle = Vehicle.objects.create(transporter=transporter, plate="REA1L23")
    generator = Generator.objects.create(name="Gerador real", document="52998224725")
    user = get_user_model().objects.create_user("real-emissor")
    day = timezone.localdate()
    sequence, number = next_number(town, day.year)
    ctr = CTR.objects.create(
        number=number,
        municipality=town,
        year=day.year,
        sequence=sequence,
        transporter=transporter,
        vehicle=vehicle,
        generator=generator,
        origin=Point(centre.x + 0.001, centre.y, srid=4326),
        destination=facility.area.point_on_surface,
        destination_facility=facility,
        transport_date=day,
        total_volume_m3=3,
        created_by=user,
    )
    CTRWaste.objects.create(ctr=ctr, waste_class="A", volume_m3=3)
    CTREvent.objects.create(ctr=ctr, actor=user, action="issue", to_status="issued")
    return ctr


def synthetic_digest() -> str:
    """What the seed decides (not ids, numbers or times relative to now)."""
    return scalar(
        "SELECT md5(string_agg(x, ',' ORDER BY x)) FROM (SELECT ST_AsText(c.origin) || "
        "ST_AsText(c.destination) || c.total_volume_m3 || c.transport_date AS x "
        "FROM ctr_ctr c JOIN ctr_transporterlicence t ON t.transporter_id = c.transporter_id "
        "WHERE t.number LIKE 'SYN-T-%%') s"
    )


def test_reset_removes_only_synthetic_rows_and_the_seed_gives_the_same_data(dataset):
    before = synthetic_digest()
    real = real_ctr()
    # A real agreement (the town has a real facility now) stays; a synthetic account the
    # access log names (append-only) stays too, inactive and without its role.
    town = real.municipality
    capital = Municipality.objects.get(ibge_code=CAPITAL)
    town.accepted_destinations.add(capital)
    read = get_user_model().objects.get(username=synthetic.staff_username(Role.NUCLEO, CAPITAL))
    AccessLog.objects.create(user=read, username=read.username, purpose="teste")
    out = io.StringIO()
    call_command("generate_synthetic", reset=True, stdout=out)
    assert "Dados sintéticos removidos." in out.getvalue()
    assert set(synthetic.counts().values()) == {0}
    agreements = Municipality.accepted_destinations.through.objects
    assert list(agreements.values_list("from_municipality", "to_municipality")) == [
        (town.pk, capital.pk)
    ]
    staff = get_user_model().objects.filter(username__startswith=synthetic.STAFF_PREFIX)
    assert list(staff.values_list("username", "is_active")) == [(read.username, False)]
    assert not StaffRole.objects.exists()
    assert list(CTR.objects.values_list("number", flat=True)) == [real.number]
    assert CTREvent.objects.get().ctr_id == real.pk
    assert CTRWaste.objects.get().ctr_id == real.pk
    assert ReceivingFacility.objects.get().code == "ATT-R"
    assert not get_user_model().objects.filter(username=synthetic.SYN_USERNAME).exists()
    # Numbering continues after the CTR that remains.
    assert list(NumberSequence.objects.values_list("municipality__ibge_code", "last_value")) == [
        ("3518404", real.sequence)
    ]

    with at_the_dataset_instant():
        generate()
    assert synthetic_digest() == before
    assert CTR.objects.count() == CTRS + 1
    assert CTR.objects.filter(pk=real.pk).exists()
    # The kept account is active again, with its role.
    read.refresh_from_db()
    assert read.is_active
    assert StaffRole.objects.filter(user=read, municipality=capital, role=Role.NUCLEO).exists()
    assert staff.count() == 2 * len(CODES)


def test_municipalities_option_loads_the_645_and_keeps_loaded_boundaries(dataset):
    capital = Municipality.objects.get(ibge_code="3550308")
    out = io.StringIO()
    call_command("generate_synthetic", municipalities=True, stdout=out)
    assert Municipality.objects.filter(uf="SP").count() == synthetic.SP_MUNICIPALITIES
    assert "Municípios criados: 640." in out.getvalue()
    assert Municipality.objects.get(pk=capital.pk).boundary.equals_exact(capital.boundary)
    # Loaded once: a second call creates none.
    assert synthetic.ensure_municipalities() == 0


def stored_choice_values() -> set[str]:
    """Every value a model field with choices stores (an array's elements too)."""
    values = set()
    for model in apps.get_models():
        for model_field in model._meta.fields:
            for f in (model_field, getattr(model_field, "base_field", None)):
                if f is not None and f.choices:
                    values |= {str(value) for value, _label in f.flatchoices if value != ""}
    return values


def test_the_sql_spells_no_stored_value_of_a_choice():
    """'issued', 'PEV', 'A'… come from the models' choices (synthetic.SQL_VALUES), never typed
    into a statement: renaming a choice cannot leave the generator writing the old value."""
    source = Path(synthetic.__file__).read_text()
    literals = set(re.findall(r"'([^'\n]*)'", source))
    assert {"issued", "PEV", "A", "ACTIVE", "NEW"} <= stored_choice_values()
    assert not literals & stored_choice_values()
    # What the statements use instead: values of the choices, and nothing else.
    passed = synthetic.SQL_VALUES.values()
    assert {v for value in passed for v in (value if isinstance(value, list) else [value])} <= (
        stored_choice_values()
    )


# Plans the statistics of a full run chose for some statements: with memoize, a LATERAL
# subquery that draws random() was run once per cache key, not once per row.
OTHER_PLANS = [("enable_seqscan", "enable_hashjoin"), ("enable_memoize",)]


@pytest.mark.parametrize("switched_off", OTHER_PLANS, ids=["_".join(p) for p in OTHER_PLANS])
def test_the_seed_gives_the_same_data_whatever_the_plans(dataset, switched_off):
    """random() is drawn in the order rows leave a plan, and plans change with the tables'
    statistics (after reset() they hold dead rows): the generator draws over rows in an order
    of its own, so that other plans give the same data."""
    before = synthetic_digest()
    call_command("generate_synthetic", reset=True, stdout=io.StringIO())
    with connection.cursor() as cursor, at_the_dataset_instant():
        for setting in switched_off:
            cursor.execute(f"SET {setting} = off")
        try:
            generate()
        finally:
            for setting in switched_off:
                cursor.execute(f"RESET {setting}")
    assert synthetic_digest() == before
