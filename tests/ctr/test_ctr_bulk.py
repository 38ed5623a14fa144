"""The set-based import (ctr.bulk) against the per-CTR path (ctr.services): on 1,000 mixed rows,
the same findings (code, severity, field, message, article) row by row, and the same CTRs
issued, with gap-free numbers."""

from __future__ import annotations

import csv
import datetime
import io
import random
import re
import string
import threading
from decimal import Decimal

import pytest
from django.contrib.gis.geos import MultiPolygon, Point, Polygon
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from ctr import closing, rules, services
from ctr.bulk import csv_format, csv_import
from ctr.bulk import importer as bulk
from ctr.bulk import sql as bulk_sql
from ctr.custody import processing
from ctr.errors import CTRError
from ctr.models import (
    CTR,
    CTRWasteClass,
    Equipment,
    FacilityOperator,
    Generator,
    NumberSequence,
    Transporter,
    Vehicle,
    Worksite,
)
from pev_network.models import (
    FacilityKind,
    FacilityLicense,
    MunicipalParameters,
    ReceivingFacility,
)
from pev_network.services import save_municipality
from tests.builders import ORIGIN, licence, licensed_facility, offset, set_parameters, square
from tests.ctr.onward_world import inbound
from tests.ctr_world import CPF_GENERATOR, TODAY, build_world, make_user

pytestmark = pytest.mark.django_db

D = datetime.date


# --- documents with valid check digits -----------------------------------------------------------


def _dv(body: str, weights: list[int]) -> str:
    total = sum(int(d) * w for d, w in zip(body, weights, strict=True)) % 11
    return "0" if total < 2 else str(11 - total)


def cpf(n: int) -> str:
    body = f"{n:09d}"
    body += _dv(body, list(range(10, 1, -1)))
    return body + _dv(body, list(range(11, 1, -1)))


def cnpj(n: int) -> str:
    body = f"{n:08d}0001"
    body += _dv(body, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])
    return body + _dv(body, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])


def fmt6(x: float, decimal: str = ",") -> str:
    return repr(x).replace(".", decimal)


# --- the world: the town of tests.ctr_world, a neighbour, odd facilities and transporters --------


def m_at(east: float, north: float) -> tuple[float, float]:
    """A position `east`/`north` metres from ORIGIN."""
    return offset(*ORIGIN, east, north)


def build_mixed_world():
    world = build_world()
    town = world.town
    lon0, lat0, lon1, lat1 = town.boundary.extent
    # A neighbour sharing the town's east edge exactly: a point on it is in both (the lowest
    # id wins, as in municipality_id_at). Tighter GPS tolerance, smaller PEV limit.
    east = Polygon.from_bbox((lon1, lat0, lon1 + (lon1 - lon0), lat1))
    neighbour, _ = save_municipality(
        "3550308", "Vizinho (teste)", "SP", MultiPolygon(east, srid=4326)
    )
    set_parameters(
        neighbour, gps_tolerance_m=Decimal("5.0"), small_volume_limit_m3=Decimal("0.500")
    )

    f = {"town": town, "neighbour": neighbour, "lon1": lon1, "lat0": lat0, "lat1": lat1}
    f["pev"], f["att"], f["landfill"], f["recycling"] = (
        world.pev,
        world.att,
        world.landfill,
        world.recycling,
    )
    # "Licensed first, then the nearest": U (no license) 10 m west of L (licensed), L2
    # (licensed) 10 m east of L.
    f["unlicensed"] = ReceivingFacility.objects.create(
        kind=FacilityKind.ATT, name="ATT sem licença", area=_area(5000, 0, 50), municipality=town
    )
    f["licensed"] = licensed_facility(FacilityKind.ATT, _square(5060, 0, 50), "ATT L", town)
    f["licensed2"] = licensed_facility(FacilityKind.ATT, _square(5120, 0, 50), "ATT L2", town)
    f["expired"] = licensed_facility(
        FacilityKind.ATT,
        _square(7000, 0, 60),
        "ATT vencida",
        town,
        valid_until=D(2026, 6, 30),
    )
    f["suspended"] = licensed_facility(
        FacilityKind.RECYCLING,
        _square(7000, 2000, 60),
        "Reciclagem suspensa",
        town,
        status=FacilityLicense.Status.SUSPENDED,
        status_since=D(2026, 9, 1),
    )
    f["pev_nowhere"] = licensed_facility(
        FacilityKind.PEV, _square(0, -3000, 30), "PEV sem município"
    )
    f["att_ab"] = licensed_facility(
        FacilityKind.ATT,
        _square(-3000, -3000, 80),
        "ATT só A e B",
        town,
        accepted_classes=["B", "A", "A"],
    )
    f["att_none"] = licensed_facility(
        FacilityKind.ATT, _square(-5000, -3000, 80), "ATT fechada", town
    )
    ReceivingFacility.objects.filter(pk=f["att_none"].pk).update(accepted_classes=[])
    f["att_none"].refresh_from_db()
    # In the neighbour, near the shared edge: a small-limit PEV and a landfill without a
    # recycling area in that municipality.
    f["pev_n"] = licensed_facility(
        FacilityKind.PEV, _square(10_300, 0, 30), "PEV vizinho", neighbour
    )
    f["landfill_n"] = licensed_facility(
        FacilityKind.LANDFILL, _square(10_600, 2000, 150), "Aterro vizinho", neighbour
    )

    # Transporters, each with a plate and equipment of its own.
    f["alfa"] = world.alfa
    Vehicle.objects.create(transporter=world.alfa, plate="INA1234", active=False)
    Equipment.objects.create(
        transporter=world.alfa, code="C-02", nominal_capacity_m3=Decimal("2.5")
    )
    Equipment.objects.create(
        transporter=world.alfa, code="C-09", nominal_capacity_m3=Decimal("9"), active=False
    )
    # Each transporter's licences (art. 13), per municipality: (the town's, the neighbour's),
    # None where it has none. A suspension in the town does not stop its CTRs from the neighbour.
    specs = {
        "suspended_t": (
            dict(status="SUSPENDED", status_since=D(2026, 6, 1), suspended_until=D(2026, 6, 30)),
            dict(),
        ),
        "suspended_open": (dict(status="SUSPENDED", status_since=D(2026, 1, 1)), None),
        "revoked": (
            dict(status="REVOKED", status_since=D(2026, 3, 1)),
            dict(valid_from=D(2024, 1, 1), valid_until=D(2025, 12, 31)),
        ),
        "expired_t": (dict(valid_from=D(2025, 1, 1), valid_until=D(2025, 12, 31)), None),
        "late_t": (dict(valid_from=D(2026, 5, 1), valid_until=None), None),
        "self_gen": (None, None),  # art. 12 §4: no licence needed
    }
    for i, (key, (here, there)) in enumerate(specs.items(), start=1):
        transporter = Transporter.objects.create(
            name=f"Transportador {key}",
            document=CPF_GENERATOR if key == "self_gen" else cnpj(50_000 + i),
            is_self_generator=key == "self_gen",
        )
        for place, extra in ((town, here), (neighbour, there)):
            if extra is not None:
                fields = {"valid_from": D(2025, 1, 1), "valid_until": D(2027, 12, 31), **extra}
                licence(transporter, place, f"TR-9{i:02d}", **fields)
        Vehicle.objects.create(transporter=transporter, plate=f"TRA{i}B{i:02d}")
        Equipment.objects.create(
            transporter=transporter, code="C-01", nominal_capacity_m3=Decimal("5")
        )
        f[key] = transporter
    # Alfa is licensed in the neighbour too; the neighbour sends its waste to the town's areas
    # (a consortium's shared landfill), not the reverse.
    licence(world.alfa, neighbour, "VZ-001", D(2025, 1, 1), D(2027, 12, 31))
    neighbour.accepted_destinations.add(town)
    # Numbering continues from what is there: the town's 2026 sequence is at 41.
    NumberSequence.objects.create(municipality=town, year=2026, last_value=41)
    plan_worksites(f)
    registered_worksites(town, neighbour)
    return world, f


# The PGRCC in force of a large generator's worksite (art. 9 p.ú. I, NOT_IN_GENERATOR_PLAN):
# four of the rows' companies have a worksite at each of the rows' addresses (stored with
# other spacing and case, as a person types it), by the address: a small generator's, a large
# one's without a plan, with a plan naming alfa and the ATT, with a wider plan.
PLANNED = ("Construtora Planejada S.A.", cnpj(6_999), "Av. do Plano, 500")


def plan_worksites(f: dict) -> None:
    wide = ([f["alfa"], f["self_gen"], f["late_t"]],
            [f["att"], f["landfill"], f["recycling"], f["pev"]])  # fmt: skip
    plans = [None, ([], []), ([f["alfa"]], [f["att"]]), wide]
    for i in range(4):
        generator = Generator.objects.create(
            name=f"Construtora {i} Ltda.", document=cnpj(7_000 + i)
        )
        for n in range(12):
            plan = plans[n % 4]
            site = Worksite.objects.create(
                generator=generator,
                address=f"  RUA {n},   {10 * n} " if n % 3 else f"Rua {n}, {10 * n}",
                location=Point(*m_at(0, 0), srid=4326),
                is_large_generator=plan is not None,
            )
            if plan:
                site.plan_transporters.set(plan[0])
                site.plan_facilities.set(plan[1])
    planned = Generator.objects.create(name=PLANNED[0], document=PLANNED[1])
    site = Worksite.objects.create(
        generator=planned,
        address=PLANNED[2],
        location=Point(*m_at(-500, -500), srid=4326),
        is_large_generator=True,
    )
    site.plan_transporters.set([f["alfa"]])
    site.plan_facilities.set([f["att"]])


def registered_worksites(town, neighbour) -> None:
    """Maria da Obra's worksites at the rows' addresses (ORIGIN_OUTSIDE_WORKSITE): "Rua 0, 0"
    to "Rua 5, 50" drawn as a 200 m square around m_at(-500, -500), "Rua 6, 60" to
    "Rua 10, 100" a point there, "Rua 11, 110" a point in the neighbour (5 m of GPS
    tolerance); "Rua 12, 120" created by a CTR, without a registration."""
    maria = Generator.objects.create(name="Maria da Obra", document=CPF_GENERATOR)
    drawn = _square(-600, -600, 200)
    for i in range(13):
        place = neighbour if i == 11 else town
        area = drawn if i < 6 else None
        location = Point(*m_at(10_500 if i == 11 else -500, 0 if i == 11 else -500), srid=4326)
        Worksite.objects.create(
            generator=maria,
            address=f"Rua {i}, {10 * i}",
            location=drawn.point_on_surface if area else location,
            area=area,
            municipality=None if i == 12 else place,
            registered_at=None if i == 12 else datetime.datetime(2026, 1, 5, tzinfo=datetime.UTC),
        )


def _square(east: float, north: float, size: float) -> Polygon:
    return square(*m_at(east, north), size)


def _area(east: float, north: float, size: float) -> MultiPolygon:
    return MultiPolygon(_square(east, north, size), srid=4326)


# --- 1,000 mixed rows ----------------------------------------------------------------------------

DATES = [
    "2026-11-30", "2026-06-15", "2026-07-15", "2025-12-31", "2027-01-02", "2026-02-28",
    "30/11/2026", "2026-04-30", "2026-09-02",
]  # fmt: skip
WASTE = [
    "A=3", "A=2,5; B=0,5", "A=0,5", "A=0,999;B=0,001", "A=1,001", "B=1", "D=0,2",
    "VOLUMOSO=0,8", "DOMICILIAR=1", "A=2; INDUSTRIAL=1; D=1", "SAÚDE=0,1", "A=6",
    "A=2,55; C=2,45", "A=100", "C=0,3 | A=0,2", "A=0,45", "B=0,6",
]  # fmt: skip


CODES = ["C-01", "c-01", "C-02", "C-09", "X-77", ""]
# The rules only an onward CTR (a row with origin_facility) can break.
ONWARD_RULES = {
    "ORIGIN_FACILITY_KIND",
    "ORIGIN_FACILITY_NOT_LICENSED",
    "ORIGIN_OUTSIDE_ORIGIN_FACILITY",
    "CLASS_NOT_RECEIVED_AT_ORIGIN",
    "OVER_FACILITY_STOCK",
}


def _destination(rng: random.Random, f: dict) -> tuple[tuple[float, float], str]:
    """A discharge point and the destination_facility column."""
    kind = rng.randrange(14)
    if kind < 6:
        facility = f[rng.choice(["pev", "att", "landfill", "recycling", "att_ab", "att_none"])]
        p = facility.area.point_on_surface
        return (p.x, p.y), ""
    if kind == 6:  # near the ATT's east edge (1600 m): inside, 10 m and 20 m out
        return m_at(1600 + rng.choice([-1, 10, 20]), 50), ""
    if kind == 7:  # between U and L, inside U, between L and L2
        return m_at(rng.choice([5052, 5048, 5114, 5035]), 25), ""
    if kind == 8:
        facility = f[rng.choice(["expired", "suspended", "pev_nowhere", "pev_n", "landfill_n"])]
        p = facility.area.point_on_surface
        return (p.x, p.y), ""
    if kind == 9:  # 10 m east of the neighbour's PEV: within the town's 15 m, not its 5 m
        return m_at(10_330 + rng.choice([3, 10]), 15), ""
    if kind == 10:  # far from everything
        return m_at(rng.uniform(-9000, -8000), rng.uniform(8000, 9000)), ""
    if kind == 11:  # naming the facility it is in, another one, an unknown one, U
        p = f["att"].area.point_on_surface
        named = rng.choice([f["att"].pk, f["landfill"].pk, 999_999, f["unlicensed"].pk])
        return (p.x, p.y), str(named)
    if kind == 12:
        return m_at(5048, 25), str(rng.choice([f["unlicensed"].pk, f["licensed"].pk]))
    p = f["att"].area.point_on_surface
    return (p.x, p.y), ""


def _origin(rng: random.Random, f: dict) -> tuple[float, float]:
    kind = rng.randrange(10)
    if kind == 0:
        return (-60.0, -10.0)  # outside every municipality
    if kind == 1:  # exactly on the shared edge: in both, the town (lowest id) wins
        return (f["lon1"], rng.uniform(f["lat0"], f["lat1"]))
    if kind == 2:  # in the neighbour
        return m_at(rng.uniform(10_100, 12_000), rng.uniform(-2000, 2000))
    return m_at(rng.uniform(-9000, 9000), rng.uniform(-9000, 9000))


def mixed_rows(f: dict, seed: int = 7) -> dict[str, list[dict]]:
    """Rows per transporter key: 1,000 in all, most of alfa's; every rule broken somewhere,
    several at once, warnings, bad references, odd places, a few rows that do not parse."""
    rng = random.Random(seed)
    plan = {
        "alfa": 520,
        "suspended_t": 80,
        "suspended_open": 60,
        "revoked": 70,
        "expired_t": 70,
        "late_t": 80,
        "self_gen": 120,
    }
    generators = [(f"Gerador {i}", cpf(100_000 + i)) for i in range(25)]
    generators += [(f"Construtora {i} Ltda.", cnpj(7_000 + i)) for i in range(10)]
    generators += [("Maria da Obra", CPF_GENERATOR), ("Maria D. Obra (outro nome)", CPF_GENERATOR)]
    addresses = [f"Rua {i}, {10 * i}" for i in range(12)]
    result: dict[str, list[dict]] = {}
    for key, count in plan.items():
        transporter = f[key]
        own_plate = transporter.vehicles.get().plate if key != "alfa" else "ABC1D23"
        rows = []
        for _ in range(count):
            name, document = rng.choice(generators)
            origin = _origin(rng, f)
            destination, facility_column = _destination(rng, f)
            decimal = rng.choice([",", "."])
            plate = rng.choices(
                [own_plate, "INA-1234", "ZZZ9Z99", "XYZ9876", own_plate[:3] + "-" + own_plate[3:]],
                [8, 1, 1, 1, 1],
            )[0]
            row = {
                "transport_date": rng.choice(DATES),
                "vehicle_plate": plate,
                "equipment_code": rng.choices(CODES, [6, 1, 2, 1, 1, 3])[0],
                "generator_name": name,
                "generator_document": document,
                "worksite_address": rng.choice(addresses),
                "worksite_neighbourhood": rng.choice(["Centro", "", "Vila Nova"]),
                "origin_lon": fmt6(origin[0], decimal),
                "origin_lat": fmt6(origin[1], decimal),
                "destination_lon": fmt6(destination[0], decimal),
                "destination_lat": fmt6(destination[1], decimal),
                "destination_facility": facility_column,
                "waste": rng.choice(WASTE).replace(",", decimal),
                "description": rng.choice(["entulho", "", "madeira; gesso"]),
            }  # fmt: skip
            if rng.random() < 0.02:  # rows that do not parse
                row[rng.choice(["transport_date", "waste", "origin_lat"])] = "???"
            rows.append(row)
        result[key] = rows
    return result


def csv_text(rows: list[dict], delimiter: str = ";") -> str:
    out = io.StringIO()
    writer = csv.DictWriter(
        out, fieldnames=csv_import.COLUMNS, delimiter=delimiter, lineterminator="\n"
    )
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def parsed_rows(text: str) -> list[tuple[int, dict[str, str]]]:
    return csv_import.read_rows(text)[1]


def as_tuples(findings: list[rules.Finding]) -> list[tuple]:
    return [(f.code, f.severity, f.field, f.message, f.article) for f in findings]


def bulk_results(rows, transporter, user, dry_run: bool, chunk_rows: int = 97):
    results: list[csv_import.RowResult] = []
    bulk.import_rows(
        rows, transporter, user, results.extend, dry_run=dry_run, chunk_rows=chunk_rows
    )
    return results


# --- the checks: row by row, the same findings as ctr.services.check -----------------------------


@pytest.fixture
def mixed():
    world, f = build_mixed_world()
    return world, f, mixed_rows(f)


def test_every_issue_rule_has_a_set_based_counterpart():
    bulk.check_catalogue()
    issue_rules = {c for c, r in rules.REGISTRY.items() if r.stage == rules.Stage.ISSUE}
    assert issue_rules == bulk_sql.IMPLEMENTED_RULES | bulk_sql.NOT_APPLICABLE_RULES
    for code in issue_rules:
        item = rules.REGISTRY[code]
        assert item.not_in_bulk or item.sql or all(m.sql for m in item.messages.values()), code
    # Every rule checked at issue runs in bulk: the onward CTR's and the PGRCC's, on the worksite
    # a row names by its generator and address. A CSV row has no provisional number
    # (ctr.field.offline), so the late sync of a provisional CTR is the one rule the import cannot
    # meet.
    assert {"PROVISIONAL_SYNC_LATE"} == bulk_sql.NOT_APPLICABLE_RULES
    assert set(bulk_sql.RULE_SQL) == bulk_sql.IMPLEMENTED_RULES


def test_the_catalogue_lists_the_rules_stage_by_stage():
    """The catalogue's order (/regras/, the API, the findings of evaluate and of the import) is
    the order in which ctr.rules imports its modules; a module sorted elsewhere would shuffle it."""
    modules = [rule.check.__module__.rsplit(".", 1)[-1] for rule in rules.REGISTRY.values()]
    in_order = [name for i, name in enumerate(modules) if i == 0 or modules[i - 1] != name]
    assert in_order == ["issue", "onward", "provisional", "reception"]
    assert next(iter(rules.REGISTRY)) == "TRANSPORTER_NOT_LICENSED"


def test_an_issue_rule_without_its_sql_part_is_refused_where_it_is_declared():
    args = ("SEM_SQL", rules.Severity.ERROR, "art. 0", "Regra sem SQL")
    with pytest.raises(ValueError, match="SQL"):
        rules.rule(*args, message=rules.Message("Falta a SQL."))
    with pytest.raises(ValueError, match="SQL"):
        rules.rule(
            *args,
            messages={
                "a": rules.Message("Com SQL.", sql="SELECT r.line, 0 AS sub, NULL AS field"),
                "b": rules.Message("Sem SQL."),
            },
        )
    assert "SEM_SQL" not in rules.REGISTRY


def test_the_bulk_import_refuses_an_issue_rule_it_cannot_check(mixed, monkeypatch):
    world, f, _ = mixed
    # A rule put in the registry by hand, past rule(): ctr.bulk would silently miss it.
    unchecked = rules.Rule(
        "SEM_SQL",
        rules.Severity.ERROR,
        "art. 0",
        "Regra sem SQL",
        rules.Stage.ISSUE,
        lambda ctr: (),
        {rules.MAIN: rules.Message("Falta a SQL.")},
    )
    monkeypatch.setitem(rules.REGISTRY, "SEM_SQL", unchecked)
    with pytest.raises(bulk.CatalogueMismatch, match="SEM_SQL"):
        bulk.import_rows([], f["alfa"], world.alfa_user, lambda results: None)


def _template_re(template: str) -> re.Pattern:
    parts = [
        re.escape(literal) + ("(.+?)" if name is not None else "")
        for literal, name, _, _ in string.Formatter().parse(template)
    ]
    return re.compile("".join(parts), re.DOTALL)


def message_variant(finding: rules.Finding) -> tuple[str, str]:
    """(code, variant) of the rule's message that words `finding`; the most specific one
    when two templates match (a longer literal text)."""
    rule = rules.REGISTRY[finding.code]
    matching = [
        (len(_template_re(m.template).pattern), variant)
        for variant, m in rule.messages.items()
        if _template_re(m.template).fullmatch(finding.message)
    ]
    assert matching, (finding.code, finding.message)
    return finding.code, max(matching)[1]


def checked_alike(world, f, per_transporter) -> list[rules.Finding]:
    """Check every row in bulk (a dry run) and one by one (ctr.services.check), require the
    same findings and problems; returns the findings of the rows checked."""
    found = []
    for key, rows in per_transporter.items():
        transporter = f[key]
        lines = parsed_rows(csv_text(rows))
        got = {r.line: r for r in bulk_results(lines, transporter, world.alfa_user, True)}
        assert sorted(got) == [line for line, _ in lines]
        for line, row in lines:
            request, problems = csv_import.parse_row(row)
            result = got[line]
            if request is None:
                assert result.problems == problems and result.findings == []
                continue
            try:
                _, expected = services.check(transporter, request)
            except CTRError as error:
                assert result.findings == []
                assert result.problems == [csv_import.error_problem(error)]
                continue
            assert as_tuples(result.findings) == as_tuples(expected), (key, line, row)
            errors = [p for p in expected if p.severity == rules.Severity.ERROR]
            assert result.checked == (not errors)
            found.append(expected)
    return found


def test_bulk_findings_equal_the_per_ctr_checks_on_1000_mixed_rows(mixed):
    world, f, per_transporter = mixed
    assert sum(len(rows) for rows in per_transporter.values()) == 1000
    seen_codes: set[str] = set()
    seen_messages: set[tuple[str, str]] = set()
    several = 0
    for expected in checked_alike(world, f, per_transporter):
        errors = [p for p in expected if p.severity == rules.Severity.ERROR]
        seen_codes |= {x.code for x in expected}
        seen_messages |= {message_variant(x) for x in expected}
        several += len({x.code for x in errors}) > 1
    # The mix exercises every rule that can apply to a CSV row from a worksite, often several
    # at once, and every message of each (so the SQL of each message met its Python check);
    # the onward rows' rules are the onward files' below.
    assert seen_codes == bulk_sql.IMPLEMENTED_RULES - ONWARD_RULES
    assert seen_messages == {
        (code, variant)
        for code in bulk_sql.IMPLEMENTED_RULES - ONWARD_RULES
        for variant in rules.REGISTRY[code].messages
    }
    assert several > 50


def test_both_paths_judge_each_row_by_the_parameters_of_its_transport_date(mixed):
    """Both municipalities adopt new figures from 1/7/2026 (a tighter GPS tolerance and a
    larger PEV limit in the town, the reverse in the neighbour): the rows dated before are
    judged by the first sets and the rows after by the later ones, alike in bulk and one by
    one; the fee of each CTR issued follows its own day's limit (art. 12 §3)."""
    world, f, per_transporter = mixed
    later = D(2026, 7, 1)
    MunicipalParameters.objects.create(
        municipality=f["town"],
        valid_from=later,
        gps_tolerance_m=Decimal("5"),
        small_volume_limit_m3=Decimal("3"),
        sorting_tolerance_pct={"A": "0"},
    )
    MunicipalParameters.objects.create(
        municipality=f["neighbour"],
        valid_from=later,
        gps_tolerance_m=Decimal("25"),
        small_volume_limit_m3=Decimal("2"),
    )
    rows = {"alfa": per_transporter["alfa"]}
    found = [x for expected in checked_alike(world, f, rows) for x in expected]
    pev_limits = {
        re.search(r"recebe até ([\d,]+) m³", x.message).group(1)
        for x in found
        if x.code == "LARGE_VOLUME_AT_PEV"
    }
    assert {"1", "3"} <= pev_limits  # the town's PEV before and after 1/7

    same_by_bulk_and_one_by_one(
        parsed_rows(csv_text(rows["alfa"])), f["alfa"], world.alfa_user, chunk_rows=97
    )
    fees = {
        (ctr.transport_date >= later, ctr.fee_ufesp)
        for ctr in CTR.objects.filter(
            total_volume_m3=3, destination_facility__municipality=f["town"]
        )
    }
    assert fees == {(False, Decimal("1")), (True, Decimal("0"))}


def test_coordinates_are_printed_as_python_prints_them():
    values = [0.0, -0.0, -4e-7, 5e-7, -5e-7, 179.9999995, -45.1234565, 22.8000005]
    rng = random.Random(3)
    values += [rng.uniform(-180, 180) for _ in range(2000)]
    values += [round(rng.uniform(-50, 50), 7) for _ in range(2000)]
    with connection.cursor() as cursor:
        cursor.execute(
            # As text, like COPY: a float8[] parameter would turn -0.0 into 0.
            f"SELECT {rules.COORD.format('x::float8')} "
            "FROM unnest(%s::text[]) WITH ORDINALITY u(x, i) ORDER BY i",
            [[repr(x) for x in values]],
        )
        printed = [r[0] for r in cursor.fetchall()]
    assert printed == [f"{x:.6f}" for x in values]


def of_each_decimal(expression: str, values: list[str]) -> list:
    """The SQL `expression` of x, in PostgreSQL, for each of `values` (numeric)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {expression} FROM unnest(%s::numeric[]) WITH ORDINALITY u(x, i) ORDER BY i",
            [[Decimal(v) for v in values]],
        )
        return [r[0] for r in cursor.fetchall()]


def test_volumes_are_printed_as_rules_fmt_prints_them():
    values = ["1.000", "0.500", "100", "2.550", "10.10", "0.001", "1000.000", "5.00"]
    printed = of_each_decimal(rules.FMT.format("x"), values)
    assert printed == [rules.fmt(Decimal(v)) for v in values]


# --- a table of cases: each rule, each of its messages, the values hardest to print alike ------

ODD_NAME = "Área “100%” d'Ávila {0} %s"


def case_row(f: dict, key: str, **overrides) -> dict:
    """A row that breaks nothing for transporter `key` (from the town to the ATT), changed by
    `overrides`; `origin` and `destination` are (lon, lat), `destination` may name a facility."""
    transporter = f[key]
    origin = overrides.pop("origin", m_at(-500, -500))
    destination = overrides.pop("destination", "att")
    if isinstance(destination, str):
        p = f[destination].area.point_on_surface
        destination = (p.x, p.y)
    row = {
        "transport_date": "2026-11-30",
        "vehicle_plate": "ABC1D23" if key == "alfa" else transporter.vehicles.get().plate,
        "equipment_code": "C-01",
        "generator_name": "Maria da Obra",
        "generator_document": CPF_GENERATOR,
        "worksite_address": "Rua das Flores, 10",
        "worksite_neighbourhood": "Centro",
        "origin_lon": f"{origin[0]:.10f}",
        "origin_lat": f"{origin[1]:.10f}",
        "destination_lon": f"{destination[0]:.10f}",
        "destination_lat": f"{destination[1]:.10f}",
        "destination_facility": "",
        "waste": "A=2",
        "description": "entulho",
    }
    row.update(overrides)
    return row


# (situation, transporter, the row's changes, the rules it must break at least)
CASES = [
    ("nothing broken", "alfa", {}, set()),
    ("registration expired", "expired_t", {}, {"TRANSPORTER_NOT_LICENSED"}),
    ("registration not yet valid", "late_t", {"transport_date": "30/04/2026"},
     {"TRANSPORTER_NOT_LICENSED"}),
    ("registration open-ended, valid", "late_t", {}, set()),
    ("own waste of another generator", "self_gen", {"generator_document": cpf(100_001)},
     {"TRANSPORTER_NOT_LICENSED"}),
    ("own waste", "self_gen", {}, set()),
    ("suspended until a day, within it", "suspended_t", {"transport_date": "2026-06-30"},
     {"TRANSPORTER_SUSPENDED"}),
    ("suspended until a day, after it", "suspended_t", {"transport_date": "2026-07-01"}, set()),
    ("suspended with no end", "suspended_open", {}, {"TRANSPORTER_SUSPENDED"}),
    ("revoked, the day before", "revoked", {"transport_date": "2026-02-28"}, set()),
    ("revoked", "revoked", {"transport_date": "2026-03-01"}, {"TRANSPORTER_SUSPENDED"}),
    ("origin in no municipality", "alfa", {"origin": (-4e-7, 5e-7)},
     {"ORIGIN_OUTSIDE_MUNICIPALITY"}),
    # On the edge (as printed, 10 decimals, the neighbour's side): to the town's ATT, which
    # both may use.
    ("origin on the shared edge", "alfa", {"origin": "edge"}, set()),
    ("discharge far from every area", "alfa", {"destination": m_at(-8500, 8500)},
     {"DESTINATION_OUTSIDE_FACILITY"}),
    ("discharge outside the area named", "alfa", {"destination_facility": "landfill"},
     {"DESTINATION_OUTSIDE_FACILITY"}),
    ("discharge just outside, within the GPS tolerance", "alfa",
     {"destination": m_at(1610, 50)}, set()),
    ("area with its license expired", "alfa", {"destination": "expired"},
     {"FACILITY_NOT_LICENSED"}),
    ("area with its license suspended", "alfa", {"destination": "suspended"},
     {"FACILITY_NOT_LICENSED"}),
    ("class the area does not take, odd name", "alfa",
     {"destination": "att_ab", "waste": "A=1; C=0,5; D=0,5"}, {"CLASS_NOT_ACCEPTED"}),
    ("area that takes nothing", "alfa", {"destination": "att_none", "waste": "B=1; A=1"},
     {"CLASS_NOT_ACCEPTED"}),
    ("prohibited waste", "alfa", {"waste": "DOMICILIAR=1; A=0,5; SAÚDE=0,1; INDUSTRIAL=0,2"},
     {"PROHIBITED_WASTE"}),
    ("large volume at a PEV", "alfa", {"destination": "pev", "waste": "A=0,999; B=0,002"},
     {"LARGE_VOLUME_AT_PEV"}),
    ("at a PEV, the limit exactly", "alfa", {"destination": "pev", "waste": "A=0,5; B=0,500"},
     set()),
    ("large volume at the neighbour's PEV", "alfa", {"destination": "pev_n", "waste": "A=0,6"},
     {"LARGE_VOLUME_AT_PEV"}),
    ("over the equipment's capacity", "alfa", {"equipment_code": "C-02", "waste": "A=2,510"},
     {"OVER_EQUIPMENT_CAPACITY"}),
    ("vehicle of another transporter", "alfa", {"vehicle_plate": "XYZ9876"},
     {"VEHICLE_NOT_REGISTERED"}),
    ("vehicle inactive, equipment inactive", "alfa",
     {"vehicle_plate": "INA-1234", "equipment_code": "C-09"},
     {"VEHICLE_NOT_REGISTERED", "EQUIPMENT_NOT_REGISTERED"}),
    # A plate and a caçamba each answer for themselves.
    ("caçamba not in the fleet, the plate of the fleet", "alfa", {"equipment_code": "X-77"},
     {"EQUIPMENT_NOT_REGISTERED"}),
    ("plate known to nobody, the caçamba of the fleet", "alfa", {"vehicle_plate": "ZZZ9Z99"},
     {"VEHICLE_NOT_REGISTERED"}),
    ("no equipment named", "alfa", {"equipment_code": ""}, set()),
    ("class A to the landfill, a recycling area licensed", "alfa",
     {"destination": "landfill", "waste": "A=3"}, {"CLASS_A_TO_LANDFILL"}),
    ("class A to the neighbour's landfill, no recycling area there", "alfa",
     {"destination": "landfill_n", "waste": "A=3", "origin": m_at(11_000, 0)}, set()),
    ("large generator: its PGRCC names the transporter and the destination", "alfa",
     {"generator_name": PLANNED[0], "generator_document": PLANNED[1],
      "worksite_address": " av. do PLANO,  500"}, set()),
    ("large generator: its PGRCC names neither", "late_t",
     {"generator_name": PLANNED[0], "generator_document": PLANNED[1],
      "worksite_address": PLANNED[2], "destination": "pev", "waste": "A=0,5"},
     {"NOT_IN_GENERATOR_PLAN"}),
    ("origin inside the worksite drawn", "alfa", {"worksite_address": "Rua 0, 0"}, set()),
    ("origin 10 m off the worksite drawn, within the GPS tolerance", "alfa",
     {"worksite_address": "Rua 1, 10", "origin": m_at(-390, -500)}, set()),
    ("origin 20 m off the worksite drawn", "alfa",
     {"worksite_address": "Rua 2, 20", "origin": m_at(-380, -500)}, {"ORIGIN_OUTSIDE_WORKSITE"}),
    ("origin far from the worksite drawn, its address spelled otherwise", "alfa",
     {"worksite_address": "  RUA 3,   30 ", "origin": m_at(2000, 3000)},
     {"ORIGIN_OUTSIDE_WORKSITE"}),
    ("origin 10 m from the worksite's point", "alfa",
     {"worksite_address": "Rua 6, 60", "origin": m_at(-490, -500)}, set()),
    ("origin 20 m from the worksite's point", "alfa",
     {"worksite_address": "Rua 7, 70", "origin": m_at(-480, -500)}, {"ORIGIN_OUTSIDE_WORKSITE"}),
    ("origin 10 m from a worksite of the neighbour, whose tolerance is 5 m", "alfa",
     {"worksite_address": "Rua 11, 110", "origin": m_at(10_510, 0)},
     {"ORIGIN_OUTSIDE_WORKSITE"}),
    ("origin far from a worksite a CTR created, without a registration", "alfa",
     {"worksite_address": "Rua 12, 120", "origin": m_at(3000, 3000)}, set()),
    ("origin far from a worksite of another generator at that address", "alfa",
     {"worksite_address": "Rua 0, 0", "generator_document": cpf(100_001),
      "origin": m_at(3000, 3000)}, set()),
    # The licence of the CTR's municipality, the origin's.
    ("licensed in the town, not in the neighbour", "late_t",
     {"origin": m_at(11_000, 0), "destination": "landfill_n", "waste": "A=3"},
     {"TRANSPORTER_NOT_LICENSED"}),
    ("suspended in the town, issuing in the neighbour", "suspended_t",
     {"transport_date": "2026-06-30", "origin": m_at(11_000, 0), "destination": "landfill_n",
      "waste": "A=3"}, set()),
    ("revoked in the town, its licence in the neighbour expired", "revoked",
     {"origin": m_at(11_000, 0), "destination": "landfill_n", "waste": "A=3"},
     {"TRANSPORTER_NOT_LICENSED"}),
    # The areas of the CTR's municipality and of those it lists.
    ("from the neighbour to the town's ATT, under the neighbour's agreement", "alfa",
     {"origin": m_at(11_000, 0)}, set()),
    ("from the town to the neighbour's landfill, outside any agreement", "alfa",
     {"destination": "landfill_n", "waste": "A=3"}, {"DESTINATION_OUTSIDE_AGREEMENT"}),
    ("from the neighbour to a PEV in no municipality", "alfa",
     {"origin": m_at(11_000, 0), "destination": "pev_nowhere", "waste": "A=0,4"}, set()),
    ("several at once", "expired_t",
     {"vehicle_plate": "ZZZ9Z99", "equipment_code": "X-77", "destination": "pev",
      "waste": "A=2; INDUSTRIAL=1"},
     {"TRANSPORTER_NOT_LICENSED", "VEHICLE_NOT_REGISTERED", "EQUIPMENT_NOT_REGISTERED",
      "PROHIBITED_WASTE", "LARGE_VOLUME_AT_PEV"}),
]  # fmt: skip


def test_bulk_and_per_ctr_paths_word_every_case_alike(mixed):
    world, f, _ = mixed
    ReceivingFacility.objects.filter(pk=f["att_ab"].pk).update(name=ODD_NAME)
    names = {"landfill": f["landfill"].pk}
    by_key: dict[str, list[tuple[str, dict, set]]] = {}
    for situation, key, changes, breaks in CASES:
        changes = dict(changes)
        if changes.get("origin") == "edge":
            changes["origin"] = (f["lon1"], (f["lat0"] + f["lat1"]) / 2)
        if "destination_facility" in changes:
            changes["destination_facility"] = str(names[changes["destination_facility"]])
        by_key.setdefault(key, []).append((situation, case_row(f, key, **changes), breaks))
    seen_messages = set()
    messages = []
    for key, cases in by_key.items():
        lines = parsed_rows(csv_text([row for _, row, _ in cases]))
        got = bulk_results(lines, f[key], world.alfa_user, dry_run=True, chunk_rows=7)
        for (situation, _, breaks), (_, row), result in zip(cases, lines, got, strict=True):
            request, problems = csv_import.parse_row(row)
            assert request is not None, (situation, problems)
            _, expected = services.check(f[key], request)
            assert as_tuples(result.findings) == as_tuples(expected), situation
            codes = {x.code for x in expected}
            assert breaks <= codes and (breaks or not codes), (situation, codes)
            seen_messages |= {message_variant(x) for x in expected}
            messages += [x.message for x in expected]
    assert any(ODD_NAME in message for message in messages)
    every_message = {
        (code, variant)
        for code in bulk_sql.IMPLEMENTED_RULES - ONWARD_RULES
        for variant in rules.REGISTRY[code].messages
    }
    assert seen_messages == every_message


def test_a_wrong_plate_and_a_wrong_cacamba_are_told_apart_in_both_paths(mixed):
    # A plate outside the fleet is a plate problem (VEHICLE_NOT_REGISTERED,
    # in the plate's column), never EQUIPMENT_NOT_REGISTERED; a caçamba outside it on the
    # fleet's own truck is EQUIPMENT_NOT_REGISTERED alone.
    world, f, _ = mixed
    lines = parsed_rows(
        csv_text(
            [
                case_row(f, "alfa", vehicle_plate="XYZ9876"),
                case_row(f, "alfa", equipment_code="X-77"),
            ]
        )
    )
    got = bulk_results(lines, f["alfa"], world.alfa_user, dry_run=True)
    assert [[(x.code, x.field) for x in r.findings] for r in got] == [
        [("VEHICLE_NOT_REGISTERED", "vehicle_plate")],
        [("EQUIPMENT_NOT_REGISTERED", "equipment_code")],
    ]
    assert "XYZ9876" in got[0].findings[0].message
    for (_, row), result in zip(lines, got, strict=True):
        request, _ = csv_import.parse_row(row)
        assert as_tuples(services.check(f["alfa"], request)[1]) == as_tuples(result.findings)


# Values that print differently by a hair: a date and none, decimals with trailing zeros, a
# point near zero, every class and kind, a list unsorted, repeated or empty.
FORMAT_CASES = [
    ("", "text", ["texto", ODD_NAME]),
    ("date", "date", [D(2026, 1, 5), None]),
    ("decimal", "numeric", [Decimal("1.000"), Decimal("0.500"), Decimal("2.55"), Decimal("100")]),
    ("point", "geometry", [Point(-45.1234565, -22.8000005, srid=4326),
                           Point(-4e-7, 5e-7, srid=4326)]),
    ("class", "text", [c.value for c in CTRWasteClass]),
    ("kind", "text", [k.value for k in FacilityKind]),
    ("classes", "text[]", [["B", "A", "A"], [], ["VOLUMOSO", "A", "D"]]),
]  # fmt: skip


def test_a_message_prints_the_same_in_sql_as_in_python():
    assert set(rules.FORMATS) == {kind for kind, _, _ in FORMAT_CASES}
    with connection.cursor() as cursor:
        for kind, sql_type, values in FORMAT_CASES:
            field = "{value:" + kind + "}" if kind else "{value}"
            # Quotes, percent signs and braces in the text itself, around the value.
            message = rules.Message(field + " — 100% d'Ávila, {{literal}}: %s")
            for value in values:
                param = value.hexewkb.decode() if isinstance(value, Point) else value
                cursor.execute(
                    f"SELECT {message.sql_text('x')} "
                    f"FROM (SELECT %(value)s::{sql_type} AS value) x",
                    {**rules.FORMAT_PARAMS, "value": param},
                )
                assert cursor.fetchone()[0] == message.format({"value": value}), (kind, value)


# --- the issue: the same CTRs, the same numbers, no gaps ------------------------------------------


def snapshot() -> list[dict]:
    """Every CTR as data (ids and issue times aside), by number."""
    rows = []
    for ctr in (
        CTR.objects.select_related(
            "municipality", "transporter", "vehicle", "equipment", "generator", "worksite"
        )
        .prefetch_related("waste", "events")
        .order_by("number")
    ):
        events = list(ctr.events.all())
        # Issued at one instant (a CTR received before the import has its reception after).
        assert events[0].action == "issue" and events[0].at == ctr.created_at
        rows.append(
            {
                "number": ctr.number,
                "municipality": ctr.municipality.ibge_code,
                "year": ctr.year,
                "sequence": ctr.sequence,
                "transporter": ctr.transporter.document,
                "vehicle": ctr.vehicle.plate,
                "equipment": ctr.equipment.code if ctr.equipment else None,
                "generator": (ctr.generator.document, ctr.generator.name),
                "generator_name": ctr.generator_name,
                "worksite": (
                    ctr.worksite.address,
                    ctr.worksite.neighbourhood,
                    ctr.worksite.location.coords,
                    ctr.worksite.generator.document,
                    ctr.worksite.is_large_generator,
                    ctr.worksite.permit_number,
                )
                if ctr.worksite
                else None,
                "origin": ctr.origin.coords,
                "destination": ctr.destination.coords,
                "origin_facility": ctr.origin_facility_id,
                "facility": ctr.destination_facility_id,
                "crossing_into": ctr.crossing_into_id,
                "transport_date": ctr.transport_date,
                "total": ctr.total_volume_m3,
                "status": ctr.status,
                "findings": ctr.findings,
                "fee": ctr.fee_ufesp,
                "received": ctr.received_volume_m3,
                "closed_at": ctr.closed_at,
                "created_by": ctr.created_by_id,
                # CTRWaste has no order of its own: compare the lines as a set.
                "waste": sorted(
                    (w.waste_class, w.volume_m3, w.description) for w in ctr.waste.all()
                ),
                "events": [
                    (e.action, e.from_status, e.to_status, e.data, e.actor_id) for e in events
                ],
            }
        )
    return rows


def registries() -> tuple:
    return (
        sorted(Generator.objects.values_list("document", "name")),
        sorted(
            (w.generator.document, w.address, w.neighbourhood, w.location.coords)
            for w in Worksite.objects.select_related("generator")
        ),
        sorted(NumberSequence.objects.values_list("municipality__ibge_code", "year", "last_value")),
        sorted(FacilityOperator.objects.values_list("facility_id", "generator__document")),
    )


def report_of(results: list[csv_import.RowResult]) -> list[tuple]:
    return [(r.line, r.number, r.problems, r.warnings, r.checked) for r in results]


def test_bulk_issues_the_same_ctrs_as_the_per_row_path(mixed):
    world, f, per_transporter = mixed
    user = world.alfa_user
    files = {key: csv_text(rows) for key, rows in per_transporter.items()}

    point = transaction.savepoint()
    expected_reports = {
        key: csv_import.import_ctrs(text.encode(), f[key], user, per_row=True).rows
        for key, text in files.items()
    }
    expected, expected_registries = snapshot(), registries()
    transaction.savepoint_rollback(point)
    assert not CTR.objects.exists()

    got_reports = {
        key: bulk_results(parsed_rows(text), f[key], user, dry_run=False)
        for key, text in files.items()
    }
    got = snapshot()
    for key in files:
        assert report_of(got_reports[key]) == report_of(expected_reports[key]), key
    assert len(got) == len(expected) > 100
    for mine, reference in zip(got, expected, strict=True):
        assert mine == reference
    assert registries() == expected_registries
    assert any(c["findings"] for c in got)  # warnings kept on issued CTRs

    # Gap-free numbers per municipality and year, continuing the existing sequence.
    for municipality, year, last in NumberSequence.objects.values_list(
        "municipality_id", "year", "last_value"
    ):
        sequences = sorted(
            CTR.objects.filter(municipality_id=municipality, year=year).values_list(
                "sequence", flat=True
            )
        )
        first = 42 if (municipality, year) == (f["town"].pk, 2026) else 1
        assert sequences == list(range(first, last + 1))


def test_the_import_page_and_command_use_the_bulk_path_with_the_same_report(mixed, tmp_path):
    world, f, per_transporter = mixed
    data = csv_text(per_transporter["alfa"][:150]).encode()
    point = transaction.savepoint()
    expected = csv_import.import_ctrs(data, f["alfa"], world.alfa_user, per_row=True)
    transaction.savepoint_rollback(point)
    got = csv_import.import_ctrs(data, f["alfa"], world.alfa_user)
    assert report_of(got.rows) == report_of(expected.rows)
    assert CTR.objects.count() == len(expected.issued) > 0


def test_a_bulk_import_counts_its_ctrs_and_findings_for_the_metrics(
    mixed, django_capture_on_commit_callbacks
):
    """ctr.metrics hears the set-based import too: the counters move by what was issued, per
    municipality, and by the findings kept on the issued CTRs, once the import commits."""
    from prometheus_client import REGISTRY

    world, f, per_transporter = mixed
    data = csv_text(per_transporter["alfa"][:150]).encode()

    def counted() -> dict:
        return {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in REGISTRY.collect()
            if family.name in ("ctr_ctrs", "ctr_findings")
            for sample in family.samples
            if sample.name.endswith("_total")
        }

    before = counted()
    with django_capture_on_commit_callbacks(execute=True):
        csv_import.import_ctrs(data, f["alfa"], world.alfa_user)
    after = counted()
    moved = {key: n - before.get(key, 0) for key, n in after.items() if n != before.get(key, 0)}
    expected: dict = {}
    for ibge, findings in CTR.objects.values_list("municipality__ibge_code", "findings"):
        key = ("ctr_ctrs_total", (("event", "issued"), ("municipality", ibge)))
        expected[key] = expected.get(key, 0) + 1
        for finding in findings:
            key = ("ctr_findings_total", (("rule", finding["code"]),))
            expected[key] = expected.get(key, 0) + 1
    assert moved == expected
    assert any(name == "ctr_findings_total" for name, _ in expected)


def test_streamed_file_reads_like_the_whole_text(tmp_path):
    text = "\ufeff" + csv_text(
        [
            {"transport_date": "2026-11-30", "waste": "A=1", "generator_name": "José"},
            {},
            {"transport_date": "30/11/2026", "waste": "A=2,5", "generator_name": "Ação"},
        ]
    )
    for encoding in ("utf-8", "latin-1"):
        path = tmp_path / f"f-{encoding}.csv"
        data = text.encode("utf-8") if encoding == "utf-8" else text[1:].encode("latin-1")
        path.write_bytes(data)
        whole_text, whole_encoding = csv_import.decode(data)
        columns, rows, delimiter, ignored = csv_import.read_rows(whole_text)
        with csv_import.open_stream(path) as stream:
            assert (stream.encoding, stream.delimiter) == (whole_encoding, delimiter)
            assert (stream.columns, stream.ignored) == (columns, ignored)
            assert list(stream.rows()) == rows


def test_command_prints_the_same_report_per_row_and_in_bulk(mixed, tmp_path):
    world, f, per_transporter = mixed
    path = tmp_path / "ctrs.csv"
    path.write_text(csv_text(per_transporter["alfa"][:120]), encoding="utf-8")
    outputs = []
    for options in ({"per_row": True}, {"chunk_rows": 7}):
        point = transaction.savepoint()
        out = io.StringIO()
        with pytest.raises(CommandError) as raised:  # some rows are refused: exit status 2
            call_command("import_ctrs", str(path), user="alfa", stdout=out, **options)
        assert raised.value.returncode == 2
        outputs.append((out.getvalue(), str(raised.value)))
        transaction.savepoint_rollback(point)
    assert outputs[0] == outputs[1]
    assert "emitido CTR-" in outputs[0][0] and "recusada" in outputs[0][0]


def test_a_file_with_only_a_header_is_refused_by_the_streaming_command(mixed, tmp_path):
    path = tmp_path / "vazio.csv"
    path.write_text(";".join(csv_import.COLUMNS) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match="nenhuma linha de CTR. Nenhum CTR foi emitido."):
        call_command("import_ctrs", str(path), user="alfa", stdout=io.StringIO())


# --- the reader thread: chunks parsed ahead, in order ------------------------------------------


def reader_threads() -> list:
    return [t for t in threading.enumerate() if t.name == "ctr-bulk-reader"]


def test_growing_chunks_issue_the_same_ctrs_as_one_chunk(mixed, monkeypatch):
    world, f, per_transporter = mixed
    rows = parsed_rows(csv_text(per_transporter["alfa"][:300]))
    point = transaction.savepoint()
    whole = bulk_results(rows, f["alfa"], world.alfa_user, dry_run=False, chunk_rows=10_000)
    expected = snapshot()
    transaction.savepoint_rollback(point)

    monkeypatch.setattr(bulk, "FIRST_CHUNK_ROWS", 10)
    sizes: list[int] = []
    results: list[csv_import.RowResult] = []

    def on_results(chunk: list[csv_import.RowResult]) -> None:
        sizes.append(len(chunk))
        results.extend(chunk)

    bulk.import_rows(rows, f["alfa"], world.alfa_user, on_results, chunk_rows=50)
    assert sizes[:4] == [10, 20, 40, 50] and set(sizes[3:-1]) == {50}
    assert report_of(results) == report_of(whole)
    assert snapshot() == expected
    assert not reader_threads()


def test_a_broken_file_further_down_stops_after_the_chunks_before_it(mixed, monkeypatch):
    world, f, per_transporter = mixed
    rows = parsed_rows(csv_text(per_transporter["alfa"][:45]))
    monkeypatch.setattr(bulk, "FIRST_CHUNK_ROWS", 10)

    def broken():
        yield from rows[:35]
        raise csv_import.CSVFileError("O arquivo não pôde ser lido como CSV: quebrado.")

    results: list[csv_import.RowResult] = []
    importer = bulk.BulkImporter(f["alfa"], world.alfa_user, chunk_rows=10)
    with pytest.raises(csv_import.CSVFileError, match="quebrado"):
        importer.run(broken(), results.extend)
    # The three whole chunks were issued (one transaction each); the five rows of the broken
    # chunk were not.
    assert importer.totals.read == len(results) == 30
    assert CTR.objects.count() == importer.totals.issued == len([r for r in results if r.number])
    assert not reader_threads()


def test_an_error_while_reporting_stops_the_reader(mixed, monkeypatch):
    world, f, per_transporter = mixed
    rows = parsed_rows(csv_text(per_transporter["alfa"][:100]))
    monkeypatch.setattr(bulk, "FIRST_CHUNK_ROWS", 10)

    def on_results(chunk: list[csv_import.RowResult]) -> None:
        raise RuntimeError("relatório")

    with pytest.raises(RuntimeError, match="relatório"):
        bulk.import_rows(rows, f["alfa"], world.alfa_user, on_results, chunk_rows=10)
    assert not reader_threads()


# --- onward CTRs: rows that ship sorted waste out of an ATT or a PEV ---------------------------

OPERATOR = ("Triagem Vale Ltda.", "12.345.678/0001-95")
D1, D2 = D(2026, 11, 20), D(2026, 11, 25)


def onward_row(
    world,
    waste: str,
    day=TODAY,
    facility=None,
    destination=None,
    origin=None,
    generator=OPERATOR,
    **overrides,
) -> dict:
    """A row of sorted waste leaving the ATT (or `facility`) for the recycling area (or
    `destination`), carried by Beta; its origin left to the facility unless given (lon, lat)."""
    target = world.inside(destination or world.recycling)
    row = {
        "transport_date": day.isoformat(),
        "vehicle_plate": "XYZ9876",
        "equipment_code": "",
        "generator_name": generator[0] if generator else "",
        "generator_document": generator[1] if generator else "",
        "worksite_address": "",
        "worksite_neighbourhood": "",
        "origin_facility": str((facility or world.att).pk),
        "origin_lon": f"{origin[0]:.10f}" if origin else "",
        "origin_lat": f"{origin[1]:.10f}" if origin else "",
        "destination_lon": f"{target.x:.10f}",
        "destination_lat": f"{target.y:.10f}",
        "destination_facility": "",
        "waste": waste,
        "description": "triado",
    }  # fmt: skip
    row.update(overrides)
    return row


def worksite_row(world, waste: str = "A=3", day=TODAY, **overrides) -> dict:
    """An ordinary row of Beta's: from a worksite of the town to the ATT."""
    target = world.inside(world.att)
    row = {
        "transport_date": day.isoformat(),
        "vehicle_plate": "XYZ-9876",
        "equipment_code": "B-01",
        "generator_name": "Maria da Obra",
        "generator_document": CPF_GENERATOR,
        "worksite_address": "Rua das Flores, 10",
        "worksite_neighbourhood": "Centro",
        "origin_facility": "",
        "origin_lon": f"{world.origin.x:.10f}",
        "origin_lat": f"{world.origin.y:.10f}",
        "destination_lon": f"{target.x:.10f}",
        "destination_lat": f"{target.y:.10f}",
        "destination_facility": "",
        "waste": waste,
        "description": "entulho",
    }  # fmt: skip
    row.update(overrides)
    return row


def one_by_one(lines, transporter, user, dry_run=False) -> list[csv_import.RowResult]:
    """The per-row path, row after row (import_ctrs' own loop, without its check of the whole
    file's origins first: a row the user may not ship from is refused on its line)."""
    if not dry_run:
        return [csv_import.import_row(n, row, transporter, user, False) for n, row in lines]
    with transaction.atomic():
        results = [csv_import.import_row(n, row, transporter, user, True) for n, row in lines]
        transaction.set_rollback(True)
    return results


def same_by_bulk_and_one_by_one(lines, transporter, user, chunk_rows=4) -> list:
    """Import `lines` one by one, then in bulk (chunks of `chunk_rows`: the file's sequence
    crosses them), and require the same report, the same CTRs and the same registries; and
    the same of a dry run, which writes nothing. Returns the bulk results."""
    point = transaction.savepoint()
    expected = one_by_one(lines, transporter, user)
    expected_ctrs, expected_registries = snapshot(), registries()
    transaction.savepoint_rollback(point)
    before = snapshot(), registries()

    dry = bulk_results(lines, transporter, user, dry_run=True, chunk_rows=chunk_rows)
    assert (snapshot(), registries()) == before
    assert report_of(dry) == report_of(one_by_one(lines, transporter, user, dry_run=True))
    assert (snapshot(), registries()) == before
    assert [r.line for r in dry if r.checked] == [r.line for r in expected if r.number]

    got = bulk_results(lines, transporter, user, dry_run=False, chunk_rows=chunk_rows)
    assert report_of(got) == report_of(expected)
    for mine, reference in zip(got, expected, strict=True):
        assert as_tuples(mine.findings) == as_tuples(reference.findings), mine.line
    assert snapshot() == expected_ctrs
    assert registries() == expected_registries
    return got


@pytest.fixture
def onward_world(frozen_today):
    """The ATT with stock of A (10 m³ on D1; 3,6 of a 4,5 m³ reception shared with B on D2; 1 m³
    recycled there on D2) and of B (0,9), a class C on its way (not received), its license
    lapsed on 27/11; the PEV with 0,8 m³ of A; Beta's ordinary rows carried to the ATT."""
    world = build_world()
    inbound(world, {"A": "10"}, received="10", day=D1)
    inbound(world, {"A": "4", "B": "1"}, received="4.5", day=D2)
    inbound(world, {"C": "1"})
    processing.record_processing(world.operator, world.att, "A", Decimal("1"), D2, "recycled")
    inbound(world, {"A": "0.8"}, received="0.8", facility=world.pev)
    lapsed = FacilityLicense.objects.get(facility=world.att)
    lapsed.valid_until = D(2026, 11, 26)
    lapsed.save()
    FacilityLicense.objects.create(
        facility=world.att, number="LO-ATT-2", issuer="CETESB", valid_from=D(2026, 11, 28)
    )
    return world


def codes_of(result) -> list[str]:
    return [f.code for f in result.findings]


def test_a_file_of_ordinary_and_onward_rows_issues_the_same_by_bulk_as_one_by_one(onward_world):
    world = onward_world
    other = ("Outra Empresa Ltda.", "11.444.777/0001-61")
    rows = [
        worksite_row(world),  # 2: an ordinary row of the same file
        onward_row(world, "A=2", generator=None),  # 3: the ATT's first: no operator named
        onward_row(world, "A=0,5; C=0,5", destination=world.pev),  # 4: C not received yet
        onward_row(world, "A=6"),  # 5: names the operator, issued: 12,6 − 1 − 6 left
        onward_row(world, "A=2", generator=other),  # 6: another generator than the operator
        onward_row(world, "A=4", generator=None),  # 7: 5,6 left + 1,36 of tolerance: issued
        onward_row(world, "A=4"),  # 8: past the stock only because of 5 and 7
        onward_row(world, "A=0,5; B=0,5", generator=None, destination=world.pev),  # 9
        onward_row(world, "A=1", origin=(world.origin.x, world.origin.y)),  # 10: origin out
        onward_row(world, "A=1", day=D(2026, 11, 27)),  # 11: license lapsed that day
        onward_row(world, "A=50"),  # 12: far past the stock
        onward_row(world, "A=1", vehicle_plate="ZZZ9Z99"),  # 13: refused by another rule
        onward_row(world, "A=1", destination_facility="999999"),  # 14: unknown destination
        onward_row(world, "A=1,5", destination=world.landfill),  # 15: a warning, issued
        onward_row(world, "A=2", day=D2),  # 16: an earlier day: what left on 30/11 is later
        onward_row(world, "B=0,5", destination=world.pev),  # 17: B past stock after 9
        worksite_row(world, "A=1", generator_name="Maria D. Obra"),  # 18: ordinary again
        onward_row(world, "A=0,001"),  # 19: 16 (on 25/11) left the ATT below zero on 30/11
    ]
    lines = parsed_rows(csv_text(rows))
    # Alone, against the stock stored, row 8 would be issued.
    request, _ = csv_import.parse_row(dict(lines)[8])
    request.origin = services.default_onward_origin(world.att)
    assert not services.check(world.beta, request)[1]

    got = {r.line: r for r in same_by_bulk_and_one_by_one(lines, world.beta, world.operator)}
    assert [line for line, r in got.items() if r.number] == [2, 5, 7, 9, 15, 16, 18]
    assert got[3].problems[0].code == "" and "é o primeiro CTR de saída" in (
        got[3].problems[0].message
    )
    assert codes_of(got[4]) == ["CLASS_NOT_RECEIVED_AT_ORIGIN"]
    assert got[6].problems[0].column == "generator_document"
    assert "Triagem Vale Ltda." in got[6].problems[0].message
    assert codes_of(got[8]) == ["OVER_FACILITY_STOCK"]
    assert codes_of(got[10]) == ["ORIGIN_OUTSIDE_ORIGIN_FACILITY"]
    assert codes_of(got[11]) == ["ORIGIN_FACILITY_NOT_LICENSED"]
    assert codes_of(got[12]) == ["OVER_FACILITY_STOCK"]
    assert codes_of(got[15]) == ["CLASS_A_TO_LANDFILL"]
    assert codes_of(got[17]) == ["OVER_FACILITY_STOCK"]
    assert got[17].problems[0].message.endswith("estoque de 0,4 m³ mais 10% do recebido (0,49 m³).")
    assert codes_of(got[19]) == ["OVER_FACILITY_STOCK"]
    assert got[14].problems[0].column == "destination_facility"
    onward = CTR.objects.filter(origin_facility=world.att)
    assert onward.count() == 5
    assert {c.generator.document for c in onward} == {"12345678000195"}
    assert all(world.att.area.covers(c.origin) and c.worksite is None for c in onward)


PREFEITURA = ("Prefeitura de Guaratinguetá (teste)", cnpj(46_000))


def test_the_municipality_ships_from_its_pev_in_a_file_and_not_from_the_att(onward_world):
    world = onward_world
    rows = [
        onward_row(world, "A=0,5", facility=world.pev, generator=PREFEITURA),  # 2: issued
        worksite_row(world),  # 3
        onward_row(world, "A=0,5", facility=world.pev, generator=None),  # 4: 0,3 + 0,08 left
        onward_row(world, "A=1"),  # 5: the ATT is not the municipality's
        onward_row(world, "A=1", facility=world.pev, origin_facility="999999"),  # 6: no such
        onward_row(world, "A=1", origin_facility="ATT"),  # 7: not a number
        onward_row(world, "A=0,3", facility=world.pev, generator=None),  # 8: within
    ]
    lines = parsed_rows(csv_text(rows))
    got = {r.line: r for r in same_by_bulk_and_one_by_one(lines, world.beta, world.nucleo, 3)}
    assert [line for line, r in got.items() if r.number] == [2, 3, 8]
    assert codes_of(got[4]) == ["OVER_FACILITY_STOCK"]
    assert got[5].problems == [
        csv_format.Problem(
            "origin_facility",
            "Só um operador da área “ATT” emite CTR de saída dela (o município, dos seus PEVs).",
        )
    ]
    assert got[6].problems == [
        csv_format.Problem("origin_facility", "A área de origem 999999 não existe.")
    ]
    assert got[7].problems == [
        csv_format.Problem("origin_facility", "Área de origem inválida: “ATT”; informe o número.")
    ]
    assert FacilityOperator.objects.get(facility=world.pev).generator.name == PREFEITURA[0]


def test_a_file_naming_an_origin_the_user_may_not_ship_from_is_refused_whole(onward_world):
    world = onward_world
    rows = [
        worksite_row(world),
        onward_row(world, "A=1", facility=world.pev),
        onward_row(world, "A=1"),  # line 4: the ATT, not the municipality's
        onward_row(world, "A=1", origin_facility="999999"),
        onward_row(world, "A=1", origin_facility="7x"),
    ]
    data = csv_text(rows).encode()
    for per_row in (False, True):
        with pytest.raises(csv_import.OriginRefused) as refused:
            csv_import.import_ctrs(data, world.beta, world.nucleo, per_row=per_row)
        assert refused.value.status == 403
        assert [(r.line, r.problems[0].column) for r in refused.value.rows] == [
            (4, "origin_facility"),
            (5, "origin_facility"),
            (6, "origin_facility"),
        ]
        assert "3 linhas do arquivo indicam" in refused.value.message
    assert not CTR.objects.filter(transporter=world.beta).exists()
    # Without a facility of another's, an unknown or a malformed one is a 400.
    with pytest.raises(csv_import.OriginRefused) as refused:
        csv_import.import_ctrs(csv_text(rows[:2] + rows[3:]).encode(), world.beta, world.nucleo)
    assert refused.value.status == 400


def test_only_an_att_or_a_pev_ships_onward_in_a_file_too(onward_world):
    world = onward_world
    operator = make_user("operador_reciclagem", facility=world.recycling)
    received = inbound(world, {"A": "5"}, facility=world.recycling, day=D1)
    closing.receive(received, operator, Decimal("5"))
    rows = [
        onward_row(world, "A=1", facility=world.recycling, destination=world.landfill),
        onward_row(world, "A=1", facility=world.recycling, destination=world.landfill,
                   day=D(2019, 6, 1)),
    ]  # fmt: skip
    got = same_by_bulk_and_one_by_one(parsed_rows(csv_text(rows)), world.beta, operator)
    assert "ORIGIN_FACILITY_KIND" in codes_of(got[0])
    assert {"ORIGIN_FACILITY_KIND", "ORIGIN_FACILITY_NOT_LICENSED", "CLASS_NOT_RECEIVED_AT_ORIGIN",
            "TRANSPORTER_NOT_LICENSED"} <= set(codes_of(got[1]))  # fmt: skip
    assert not any(r.number for r in got)


def test_onward_rows_word_every_message_of_the_onward_rules_alike(onward_world):
    world = onward_world
    ReceivingFacility.objects.filter(pk=world.att.pk).update(name=ODD_NAME)
    # 12,6 m³ of A in stock and 13,6 received: 12,6 + 1,6405 m³ may leave, 14,24 to the
    # thousandth half to even (PostgreSQL's round() would give 14,241).
    set_parameters(world.town, sorting_tolerance_pct={"A": "12.0625", "B": 0})
    rows = [
        onward_row(world, "A=13,26; A=1,1; B=0,001; C=1; B=0,9", origin=(world.origin.x, 0.0)),
        onward_row(world, "A=1", day=D(2026, 11, 27)),
    ]
    lines = parsed_rows(csv_text(rows))
    got = bulk_results(lines, world.beta, world.operator, dry_run=True)
    expected = one_by_one(lines, world.beta, world.operator, dry_run=True)
    assert [as_tuples(r.findings) for r in got] == [as_tuples(r.findings) for r in expected]
    seen = {message_variant(f) for r in got for f in r.findings}
    assert {(code, rules.MAIN) for code in ONWARD_RULES - {"ORIGIN_FACILITY_KIND"}} <= seen
    messages = [f.message for r in got for f in r.findings]
    assert any(ODD_NAME in m and "12,0625% do recebido (14,24 m³)" in m for m in messages)


def test_the_allowed_volume_is_rounded_half_to_even_as_python_quantizes_it():
    values = ["1.0005", "1.0015", "-2.0005", "-2.0015", "0.0005", "2.55", "7", "1.00049999"]
    got = of_each_decimal(rules.QUANTIZE_SQL.format("x"), values)
    assert got == [Decimal(v).quantize(Decimal("0.001")) for v in values]
