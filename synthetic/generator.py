"""Synthetic, plausible data at state scale: the 645 municipalities of São Paulo, a receiving
network, transporters, generators, CTRs with their waste lines and events, dumping reports.

Everything is set-based SQL (INSERT … SELECT over generate_series, ST_GeneratePoints and
random()), never a Python loop over rows, so that a million CTRs take minutes. The random
stream is seeded (setseed, and the seed argument of ST_GeneratePoints), so the same seed on the
same database gives the same data (ids apart).

Every synthetic row carries a marker, so that `reset()` removes exactly those rows:

| table | marker |
|---|---|
| receiving facilities | code ``SYN-<IBGE>-<kind>-<n>`` |
| facility licenses | number ``SYN-LIC-<n>`` |
| transporters (and their licences, vehicles and equipment) | licence number ``SYN-T-<n>`` |
| generators | name ``SYN-G<n> …`` |
| worksites | permit number ``SYN-<IBGE>-<n>`` |
| CTRs (and their waste lines and events) | issued by a synthetic transporter |
| dumping reports | protocol ``SYN-<year>-<n>`` |
| the user who issues and closes them | username ``syn-ctr`` |
| municipal staff (and their roles) | username ``syn-staff-<role>-<IBGE>`` |
| destination agreements | between two municipalities whose networks are all synthetic |

Shape of the data:
- each municipality gets a weight: the largest (and Guaratinguetá) their share of the state's
  population (São Paulo about a quarter), the others a log-normal share of the rest (from the
  IBGE code, so the same on every run); facilities, transporters, worksites, CTRs and reports
  follow it;
- facilities: PEVs, ATTs, a recycling area or RCC landfill, as rotated rectangles of plausible
  size (about 900 m², 6,000 m², 2 ha, 10 ha) inside the boundary, each with a license in force
  over the whole period;
- worksites (the CTRs' origins) inside the boundary, most within a few km of a PEV or ATT;
- a CTR goes from a worksite to a facility of the same municipality (most to the nearest of
  the chosen kind), its discharge point inside the facility's polygon; PEVs get small loads
  without equipment (at most 1 m³), the others a skip's load; transport dates over the last two
  years; most received, some refused, cancelled, or still open (overdue after 48 h);
- CTR numbers gap-free per municipality and year (row_number), continuing the NumberSequence
  rows, which end at the last number given;
- many municipalities on one platform: a Núcleo and a Fiscalização account per
  municipality, each with its role there only; consortia around the largest municipalities
  (`LARGEST_MUNICIPALITIES`, the regional hubs): a municipality bordering one or more hubs
  larger than itself accepts the facilities of the largest of them as destinations
  (Municipality.accepted_destinations), sends `CROSS_SHARE` of its loads for final disposal to
  that hub's recycling area or landfill nearest to it (the consortium's shared facility), and
  one in `MULTI_LICENCE_EVERY` of its transporters is licensed in the hub too, where it also
  carries.
"""

from __future__ import annotations

import json
import math
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from config.br import br_number
from ctr.custody import chain as custody
from ctr.models import (
    CROSSING_INTO_SQL,
    WORKSITE_CONFLICT_SQL,
    CTRAction,
    CTRStatus,
    CTRWasteClass,
    EquipmentKind,
    LicenceStatus,
    ProcessingKind,
)
from fiscalization.models import DumpingCategory, ReporterKind, ReportStatus
from jurisdiction.models import Role
from pev_network.models import (
    DEFAULT_ACCEPTED_CLASSES,
    FacilityKind,
    LicenseStatus,
    Municipality,
    parameters_sql,
)

SP_FIXTURE = (
    Path(__file__).resolve().parent.parent / "fixtures" / "sp_estado_municipios_645_tbrugz.geojson"
)
SP_MUNICIPALITIES = 645
SYN_USERNAME = "syn-ctr"
PERIOD_DAYS = 730  # two years of transport dates and reports
CTRS_PER_WORKSITE = 12
MAX_CTRS = 20_000_000  # worksite permits and generator documents have room for this
MAX_REPORTS = 9_999_999  # protocol SYN-<year>-<7 digits> fits in 16 characters

Progress = Callable[[str], None]
TEMP_TABLE_RE = re.compile(r"^\s*CREATE TEMP TABLE (\w+)", re.IGNORECASE)


def _sql_values() -> dict[str, str | list[str]]:
    """The stored values the SQL writes and compares, from the models' choices: a parameter of
    every statement (psycopg2 writes a value into it as a quoted literal, a list as ARRAY[...]),
    so that no statement spells one. A list is a draw: a random index picks an entry, and
    repeats are weights."""
    w, c = CTRWasteClass, DumpingCategory
    values = {
        **{f"kind_{kind.name.lower()}": kind for kind in FacilityKind},
        "license_active": LicenseStatus.ACTIVE,
        "licence_active": LicenceStatus.ACTIVE,
        "equipment_skip": EquipmentKind.STATIONARY_SKIP,
        "equipment_tipper": EquipmentKind.TIPPER,
        "equipment_flatbed": EquipmentKind.FLATBED,
        **{f"ctr_{status.value}": status for status in CTRStatus},
        **{f"action_{action.value}": action for action in CTRAction},
        "class_a": w.A,
        "class_b": w.B,
        "class_c": w.C,
        "class_volumoso": w.VOLUMOSO,
        "processing_recycled": ProcessingKind.RECYCLED,
        "processing_reused": ProcessingKind.REUSED,
        # The line of a one-line load to a PEV; the second line of a two-line load; the lines
        # of a three-line load.
        "pev_load_classes": [w.A, w.A, w.A, w.VOLUMOSO, w.VOLUMOSO, w.VOLUMOSO, w.B, w.A, w.C, w.A],
        "second_line_classes": [w.VOLUMOSO, w.B, w.B, w.C],
        "three_line_classes": [w.A, w.B, w.VOLUMOSO],
        "report_categories": [
            c.BOTA_FORA, c.SLOPE, c.WATER_BODY, c.VACANT_LOT, c.VACANT_LOT, c.VACANT_LOT,
            c.PUBLIC_AREA, c.PUBLIC_AREA, c.PUBLIC_AREA, c.UNLICENSED_AREA, c.PROTECTED_AREA,
        ],
        **{f"report_{status.name.lower()}": status for status in ReportStatus},
        "reporter_citizen": ReporterKind.CITIZEN,
        "reporter_inspector": ReporterKind.INSPECTOR,
        "role_nucleo": Role.NUCLEO,
        "role_fiscal": Role.FISCAL,
    }  # fmt: skip
    # Plain str, not the enum members, for psycopg2.
    return {
        name: [str(v) for v in value] if isinstance(value, list) else str(value)
        for name, value in values.items()
    }


SQL_VALUES = _sql_values()


class SyntheticError(Exception):
    pass


@dataclass
class Step:
    name: str
    rows: int
    seconds: float


@dataclass
class Summary:
    seed: int
    municipalities: int = 0
    steps: list[Step] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.steps)

    def table(self) -> str:
        width = max((len(s.name) for s in self.steps), default=10)
        lines = [f"{'etapa'.ljust(width)}  {'linhas':>10}  {'segundos':>8}"]
        lines += [
            f"{s.name.ljust(width)}  {br_number(s.rows):>10}  {s.seconds:>8.1f}" for s in self.steps
        ]
        lines.append(f"{'total'.ljust(width)}  {'':>10}  {self.seconds:>8.1f}")
        return "\n".join(lines)


class _Runner:
    """Runs SQL steps, timing each and reporting progress."""

    def __init__(self, cursor, summary: Summary, progress: Progress | None):
        self.cursor = cursor
        self.summary = summary
        self.progress = progress or (lambda message: None)

    def run(self, name: str, sql: str | list[str], params: dict | None = None) -> int:
        self.progress(f"{name}…")
        started = time.perf_counter()
        rows = 0
        for statement in [sql] if isinstance(sql, str) else sql:
            self.cursor.execute(statement, params or {})
            rows = max(self.cursor.rowcount, 0) or rows
            created = TEMP_TABLE_RE.search(statement)
            if created:  # the planner needs their statistics for the joins that follow
                self.cursor.execute(f"ANALYZE {created.group(1)}")
        elapsed = time.perf_counter() - started
        self.summary.steps.append(Step(name, rows, elapsed))
        self.progress(f"{name}: {br_number(rows)} linhas em {elapsed:.1f} s")
        return rows

    def call(self, name: str, step: Callable[[], int]) -> int:
        """A step done by the application's own code; `step` returns its rows."""
        self.progress(f"{name}…")
        started = time.perf_counter()
        rows = step()
        elapsed = time.perf_counter() - started
        self.summary.steps.append(Step(name, rows, elapsed))
        self.progress(f"{name}: {br_number(rows)} linhas em {elapsed:.1f} s")
        return rows

    def value(self, sql: str, params: dict | None = None):
        self.cursor.execute(sql, params or {})
        return self.cursor.fetchone()[0]


# --- helpers in SQL (session-local functions) -----------------------------------------------

HELPERS = [
    # Check digit of a CPF (cnpj false) or CNPJ (cnpj true) body: modulus 11.
    """
    CREATE OR REPLACE FUNCTION pg_temp.syn_dv(body text, cnpj boolean) RETURNS int
    LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE WHEN s % 11 < 2 THEN 0 ELSE 11 - s % 11 END FROM (
            SELECT sum(substr(body, length(body) - k + 1, 1)::int
                       * CASE WHEN cnpj THEN 2 + (k - 1) % 8 ELSE k + 1 END) AS s
            FROM generate_series(1, length(body)) k
        ) x
    $$
    """,
    """
    CREATE OR REPLACE FUNCTION pg_temp.syn_document(body text) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
        SELECT b || pg_temp.syn_dv(b, length(body) = 12)
        FROM (SELECT body || pg_temp.syn_dv(body, length(body) = 12) AS b) x
    $$
    """,
    # A uniform number in (0, 1) from a text, the same on every run.
    """
    CREATE OR REPLACE FUNCTION pg_temp.syn_hash01(t text) RETURNS double precision
    LANGUAGE sql IMMUTABLE AS $$
        SELECT (('x' || substr(md5(t), 1, 8))::bit(32)::bigint + 0.5) / 4294967296.0
    $$
    """,
    # CTR numbers have at least six digits (ctr.services.next_number).
    """
    CREATE OR REPLACE FUNCTION pg_temp.syn_seq6(n bigint) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE WHEN n < 1000000 THEN lpad(n::text, 6, '0') ELSE n::text END
    $$
    """,
]


def _drop_temp(cursor) -> None:
    cursor.execute(
        "DROP TABLE IF EXISTS syn_muni, syn_slot, syn_cand, syn_fac, syn_zone, syn_pts, "
        "syn_need, syn_arr, syn_tarr, syn_ws, syn_facpool, syn_c, syn_c2, syn_base, syn_gen, "
        "syn_fk, syn_fleet, syn_daily, syn_plan, syn_w, syn_proc, syn_hub, syn_cross"
    )


# --- municipalities ---------------------------------------------------------------------------


def ensure_municipalities(progress: Progress | None = None) -> int:
    """Load the 645 municipalities of São Paulo state when they are not all there; keep the
    boundaries already loaded (the demo's detailed ones). Returns how many were created."""
    from pev_network.boundaries import import_municipalities

    if Municipality.objects.filter(uf="SP").count() >= SP_MUNICIPALITIES:
        return 0
    if progress:
        progress(f"Carregando os municípios de SP de {SP_FIXTURE.name}…")
    report = import_municipalities(SP_FIXTURE, uf="SP", keep_existing=True)
    return report.created


def _chosen_municipalities(cursor, limit: int | None) -> list[int]:
    """The synthetic network's municipalities when it exists; else all (or the first `limit`,
    the default municipality first, then by IBGE code)."""
    cursor.execute(
        "SELECT DISTINCT municipality_id FROM pev_network_receivingfacility "
        "WHERE code LIKE 'SYN-%%' AND municipality_id IS NOT NULL ORDER BY 1"
    )
    existing = [r[0] for r in cursor.fetchall()]
    if existing:
        return existing
    cursor.execute(
        "SELECT id FROM pev_network_municipality ORDER BY ibge_code = %s DESC, ibge_code LIMIT %s",
        [settings.DEFAULT_MUNICIPALITY_IBGE, limit],
    )
    return [r[0] for r in cursor.fetchall()]


# The largest municipalities of the state and their population (IBGE, Censo 2022, thousands,
# rounded): their weight is their share of the state's population; the others share the rest
# with a log-normal spread.
STATE_POPULATION = 44_411
LARGEST_MUNICIPALITIES = {
    "3550308": 11_451,  # São Paulo
    "3518800": 1_291,  # Guarulhos
    "3509502": 1_139,  # Campinas
    "3548708": 810,  # São Bernardo do Campo
    "3547809": 748,  # Santo André
    "3534401": 728,  # Osasco
    "3552205": 723,  # Sorocaba
    "3543402": 698,  # Ribeirão Preto
    "3549904": 697,  # São José dos Campos
    "3549805": 480,  # São José do Rio Preto
    "3530607": 451,  # Mogi das Cruzes
    "3525904": 443,  # Jundiaí
    "3538709": 423,  # Piracicaba
    "3548500": 418,  # Santos
    "3529401": 418,  # Mauá
    "3510609": 387,  # Carapicuíba
    "3506003": 379,  # Bauru
    "3518404": 118,  # Guaratinguetá (the default municipality)
}
LOGNORMAL_SIGMA = 0.9

# The alert hours and the small-volume limit are those of the set in force today for every
# synthetic CTR (a municipality that changed them within the period would see its older CTRs
# drawn by today's figures: a load test's world, not a record to judge). Scalar subqueries, not
# a join: the municipalities are scanned as before, in the order the seed's draws follow.
MUNI_SQL = f"""
CREATE TEMP TABLE syn_muni AS
WITH base AS (
    SELECT m.id, m.ibge_code, m.name,
           (SELECT mp.open_ctr_alert_hours FROM {parameters_sql("m.id", "%(today)s::date")} mp)
               AS alert_hours,
           (SELECT mp.small_volume_limit_m3 FROM {parameters_sql("m.id", "%(today)s::date")} mp)
               AS small_limit,
           coalesce((%(largest)s::jsonb ->> m.ibge_code)::float8,
                    -- the others: the rest of the population, log-normal around its mean
                    %(rest_mean)s * exp(%(sigma)s
                        * sqrt(-2 * ln(pg_temp.syn_hash01(m.ibge_code || ':u1')))
                        * cos(2 * pi() * pg_temp.syn_hash01(m.ibge_code || ':u2'))
                        - %(sigma)s * %(sigma)s / 2)) AS w,
           (pg_temp.syn_hash01(m.ibge_code || ':k') < 0.5)::int AS parity
    FROM pev_network_municipality m WHERE m.id = ANY(%(ids)s)
)
SELECT b.id, b.ibge_code, b.name, b.alert_hours, b.small_limit, b.parity,
       b.w / sum(b.w) OVER () AS share, count(*) OVER () AS n_muni
FROM base b
"""


# --- many municipalities on one platform ----------------------------------------------------

# Of the final loads (recycling area or landfill) of a consortium's member, the share that goes
# to the hub's shared facility; of its transporters, one in this many is licensed in the hub too.
CROSS_SHARE = 0.4
MULTI_LICENCE_EVERY = 3
STAFF_PREFIX = "syn-staff-"

# Each municipality bordering one or more hubs (the largest municipalities) larger than itself,
# with the largest of them: the consortium it belongs to.
HUB_SQL = """
CREATE TEMP TABLE syn_hub AS
SELECT DISTINCT ON (m.id) m.id AS municipality_id, h.id AS hub_id
FROM syn_muni h
JOIN pev_network_municipality hb ON hb.id = h.id
-- intersects: neighbours share a stretch of border (the boundaries touch)
JOIN pev_network_municipality mb ON ST_Intersects(mb.boundary, hb.boundary)
JOIN syn_muni m ON m.id = mb.id AND m.id <> h.id AND m.share < h.share
WHERE %(largest)s::jsonb ? h.ibge_code
ORDER BY m.id, h.share DESC, h.id
"""

# A synthetic agreement is made, and removed by reset(), only between two municipalities whose
# networks are all synthetic, and never for a municipality that already lists destinations of
# its own: a real configuration is never touched.
ONLY_SYNTHETIC_NETWORK = """(
    EXISTS (SELECT 1 FROM pev_network_receivingfacility f
            WHERE f.municipality_id = {m} AND f.code LIKE 'SYN-%%')
    AND NOT EXISTS (SELECT 1 FROM pev_network_receivingfacility f
                    WHERE f.municipality_id = {m} AND f.code NOT LIKE 'SYN-%%'))"""

AGREEMENT_SQL = (
    """
INSERT INTO pev_network_municipality_accepted_destinations
    (from_municipality_id, to_municipality_id)
SELECT h.municipality_id, h.hub_id
FROM syn_hub h
WHERE NOT EXISTS (SELECT 1 FROM pev_network_municipality_accepted_destinations d
                  WHERE d.from_municipality_id = h.municipality_id)
  AND """
    + ONLY_SYNTHETIC_NETWORK.format(m="h.municipality_id")
    + " AND "
    + ONLY_SYNTHETIC_NETWORK.format(m="h.hub_id")
    + """
ORDER BY h.municipality_id
ON CONFLICT DO NOTHING
"""
)

# Where a member's loads cross the border to: the hub's recycling area or landfill nearest to
# it, when it accepts the hub's facilities (whoever recorded the agreement).
CROSS_SQL = """
CREATE TEMP TABLE syn_cross AS
SELECT h.municipality_id,
       (SELECT f.id FROM pev_network_receivingfacility f
        WHERE f.municipality_id = h.hub_id AND f.code LIKE 'SYN-%%'
          AND f.kind IN (%(kind_recycling)s, %(kind_landfill)s)
        ORDER BY f.area <-> ST_PointOnSurface(b.boundary), f.id LIMIT 1) AS facility_id
FROM syn_hub h
JOIN pev_network_municipality_accepted_destinations d
  ON d.from_municipality_id = h.municipality_id AND d.to_municipality_id = h.hub_id
JOIN pev_network_municipality b ON b.id = h.municipality_id
"""

# A Núcleo and a Fiscalização account per municipality, each with its role there only
# (jurisdiction.StaffRole); an unusable password ('!…', as Django's set_unusable_password).
# Kept by reset() when the access log names them (it is append-only): made active again here.
STAFF_SQL = [
    f"""
    INSERT INTO auth_user
        (password, last_login, is_superuser, username, first_name, last_name, email, is_staff,
         is_active, date_joined)
    SELECT '!' || md5('{STAFF_PREFIX}' || r.role || m.ibge_code || %(seed)s), NULL, false,
           '{STAFF_PREFIX}' || r.role || '-' || m.ibge_code, r.label, m.name, '', false, true,
           %(now)s
    FROM syn_muni m
    CROSS JOIN (VALUES (%(role_nucleo)s, 'Núcleo'), (%(role_fiscal)s, 'Fiscalização'))
        AS r(role, label)
    ORDER BY m.id, r.role
    ON CONFLICT (username) DO UPDATE SET is_active = true
    """,
    f"""
    INSERT INTO jurisdiction_staffrole (role, granted_at, granted_by_id, municipality_id, user_id)
    SELECT r.role, %(now)s, NULL, m.id, u.id
    FROM syn_muni m
    CROSS JOIN (VALUES (%(role_nucleo)s), (%(role_fiscal)s)) AS r(role)
    JOIN auth_user u ON u.username = '{STAFF_PREFIX}' || r.role || '-' || m.ibge_code
    ORDER BY m.id, r.role
    ON CONFLICT (user_id, municipality_id, role) DO NOTHING
    """,
]


def staff_username(role: str, ibge_code: str) -> str:
    """The synthetic account of `role` (jurisdiction.models.Role) in the municipality."""
    return f"{STAFF_PREFIX}{role}-{ibge_code}"


# --- the receiving network ------------------------------------------------------------------

# Half sides of the facility rectangles, in metres: (min, spread) per kind.
FACILITY_SQL = [
    """
    CREATE TEMP TABLE syn_slot AS
    SELECT m.id AS municipality_id, m.ibge_code, m.name AS mname, g AS slot,
           CASE WHEN g <= n.pev THEN %(kind_pev)s WHEN g <= n.pev + n.att THEN %(kind_att)s
                WHEN (g - n.pev - n.att + m.parity) %% 2 = 0 THEN %(kind_recycling)s
                ELSE %(kind_landfill)s END AS kind,
           CASE WHEN g <= n.pev THEN g WHEN g <= n.pev + n.att THEN g - n.pev
                ELSE g - n.pev - n.att END AS kind_n
    FROM syn_muni m
    CROSS JOIN LATERAL (SELECT
        least(1 + floor(m.share * m.n_muni * 2), 150)::int AS pev,
        least(1 + floor(m.share * m.n_muni * 0.4), 40)::int AS att,
        least(1 + floor(m.share * m.n_muni * 0.04), 6)::int AS final) n
    CROSS JOIN generate_series(1, n.pev + n.att + n.final) g
    """,
    # Four candidate centres per facility, inside the boundary.
    """
    CREATE TEMP TABLE syn_cand AS
    SELECT m.id AS municipality_id, (d.path[1] - 1) / 4 + 1 AS slot, (d.path[1] - 1) %% 4 AS try,
           d.geom AS pt
    FROM syn_muni m
    JOIN pev_network_municipality b ON b.id = m.id
    CROSS JOIN LATERAL ST_Dump(ST_GeneratePoints(
        b.boundary, 4 * (SELECT count(*) FROM syn_slot s WHERE s.municipality_id = m.id)::int,
        (%(seed)s + m.id)::int)) d
    """,
    # A rotated rectangle around each candidate; the first one inside the boundary wins.
    """
    CREATE TEMP TABLE syn_fac AS
    SELECT DISTINCT ON (r.municipality_id, r.slot) r.*
    FROM (
        SELECT q.*, ST_Covers(b.boundary, q.poly) AS covered
        FROM (
            SELECT c.municipality_id, c.slot, c.try, c.kind, c.kind_n, c.ibge_code, c.mname,
                   ST_Multi(ST_SetSRID(ST_Translate(ST_Scale(ST_Rotate(
                       ST_MakeEnvelope(-d.hw, -d.hh, d.hw, d.hh), c.u_turn * pi()),
                       1 / (111320 * cos(radians(ST_Y(c.pt)))), 1 / 110574.0),
                       ST_X(c.pt), ST_Y(c.pt)), 4326)) AS poly
            FROM (
                -- The draws are made in this ordered list, never in a LATERAL subquery: a plan
                -- may memoize one (on kind and slot) and hand a later row the same rectangle.
                SELECT c.municipality_id, c.slot, c.try, c.pt, s.kind, s.kind_n, s.ibge_code,
                       s.mname, random() AS u_w, random() AS u_h, random() AS u_turn
                FROM syn_cand c
                JOIN syn_slot s USING (municipality_id, slot)
                ORDER BY c.municipality_id, c.slot, c.try
            ) c
            CROSS JOIN LATERAL (SELECT
                CASE c.kind WHEN %(kind_pev)s THEN 13 + 9 * c.u_w
                     WHEN %(kind_att)s THEN 35 + 30 * c.u_w
                     WHEN %(kind_recycling)s THEN 60 + 40 * c.u_w ELSE 140 + 100 * c.u_w END AS hw,
                CASE c.kind WHEN %(kind_pev)s THEN 11 + 7 * c.u_h
                     WHEN %(kind_att)s THEN 30 + 20 * c.u_h
                     WHEN %(kind_recycling)s THEN 50 + 30 * c.u_h ELSE 110 + 80 * c.u_h END AS hh) d
        ) q
        JOIN pev_network_municipality b ON b.id = q.municipality_id
    ) r
    ORDER BY r.municipality_id, r.slot, r.covered DESC, r.try
    """,
    """
    INSERT INTO pev_network_receivingfacility
        (code, kind, name, operator, address, municipality_id, area, accepted_classes,
         capacity_m3_per_day)
    SELECT 'SYN-' || f.ibge_code || '-' || left(f.kind, 3) || '-' || lpad(f.kind_n::text, 3, '0'),
           f.kind,
           CASE f.kind WHEN %(kind_pev)s THEN 'Ecoponto ' || f.mname || ' ' || f.kind_n
                WHEN %(kind_att)s THEN 'ATT ' || f.mname || ' ' || f.kind_n
                WHEN %(kind_recycling)s THEN 'Usina de reciclagem de RCC ' || f.mname
                     || CASE WHEN f.kind_n > 1 THEN ' ' || f.kind_n ELSE '' END
                ELSE 'Aterro de RCC ' || f.mname
                     || CASE WHEN f.kind_n > 1 THEN ' ' || f.kind_n ELSE '' END END,
           CASE f.kind WHEN %(kind_pev)s THEN 'Prefeitura Municipal de ' || f.mname
                ELSE 'Operadora RCC ' || f.mname || ' Ltda.' END,
           '', f.municipality_id, f.poly,
           CASE f.kind WHEN %(kind_pev)s THEN %(classes_pev)s WHEN %(kind_att)s THEN %(classes_att)s
                WHEN %(kind_recycling)s THEN %(classes_recycling)s ELSE %(classes_landfill)s END,
           round((CASE f.kind WHEN %(kind_pev)s THEN 15 + 25 * random()
                       WHEN %(kind_att)s THEN 80 + 220 * random()
                       WHEN %(kind_recycling)s THEN 150 + 450 * random()
                       ELSE 300 + 900 * random() END)::numeric)
    FROM syn_fac f ORDER BY f.municipality_id, f.slot
    """,
    # A license in force over the whole period (and a while after).
    """
    INSERT INTO pev_network_facilitylicense
        (facility_id, number, issuer, valid_from, valid_until, status, status_since)
    SELECT f.id, 'SYN-LIC-' || lpad(f.id::text, 7, '0'),
           CASE f.kind WHEN %(kind_pev)s THEN 'Prefeitura Municipal' ELSE 'CETESB' END,
           %(today)s::date - (%(period)s + 60 + floor(random() * 900))::int,
           %(today)s::date + (180 + floor(random() * 1200))::int, %(license_active)s, NULL
    FROM pev_network_receivingfacility f
    WHERE f.code LIKE 'SYN-%%'
      AND NOT EXISTS (SELECT 1 FROM pev_network_facilitylicense l WHERE l.facility_id = f.id)
    ORDER BY f.id
    """,
]

# The synthetic transporters: those holding a licence numbered SYN-T-<n> in the municipality
# that licensed it first (art. 13), and SYN-T-<n>-<IBGE> in the hub of its consortium.
SYN_TRANSPORTER_IDS = (
    "SELECT DISTINCT transporter_id FROM ctr_transporterlicence WHERE number LIKE 'SYN-T-%%'"
)
# random() is drawn in the order the rows come out of the plan, and a plan changes with the
# tables' statistics (generate() analyzes them; after reset() they hold dead rows): a query
# draws over the rows of an ordered subquery (never flattened: sorted before the draws) for
# the same seed to give the same data whatever the plan.
SYN_TRANSPORTERS_IN_ORDER = (
    f"SELECT t.id FROM ctr_transporter t WHERE t.id IN ({SYN_TRANSPORTER_IDS}) ORDER BY t.id"
)
# The n-th synthetic transporter of each municipality, as numbered in the state.
SYN_TRANSPORTER_ROWS = """
    SELECT m.id, m.name, g, row_number() OVER (ORDER BY m.id, g) AS n
    FROM syn_muni m
    CROSS JOIN generate_series(1, least(1 + floor(m.share * m.n_muni * 3), 250)::int) g
"""

TRANSPORTER_SQL = [
    f"""
    INSERT INTO ctr_transporter (name, document, is_self_generator)
    SELECT (ARRAY['Caçambas', 'Transportes', 'Entulho', 'Remoções', 'Disk Caçamba'])
               [1 + (t.n %% 5)::int] || ' ' || t.name || ' ' || t.g || ' Ltda.',
           pg_temp.syn_document('98' || lpad(t.n::text, 6, '0') || '0001'), false
    FROM ({SYN_TRANSPORTER_ROWS}) t ORDER BY t.n
    """,
    # Each one's licence in its municipality, valid over the whole period.
    f"""
    INSERT INTO ctr_transporterlicence
        (transporter_id, municipality_id, number, valid_from, valid_until, status,
         status_since, suspended_until)
    SELECT o.transporter_id, o.municipality_id, 'SYN-T-' || lpad(o.n::text, 6, '0'),
           %(today)s::date - (%(period)s + 30 + floor(random() * 1500))::int,
           %(today)s::date + (90 + floor(random() * 700))::int,
           %(licence_active)s, NULL, NULL
    FROM (
        SELECT tr.id AS transporter_id, t.id AS municipality_id, t.n
        FROM ({SYN_TRANSPORTER_ROWS}) t
        JOIN ctr_transporter tr
          ON tr.document = pg_temp.syn_document('98' || lpad(t.n::text, 6, '0') || '0001')
        ORDER BY t.n
    ) o
    """,
    # A consortium member's transporters, one in MULTI_LICENCE_EVERY of them (its first one
    # among them) licensed in the hub too (one company, one fleet, a licence in each
    # municipality), with the dates of the first licence; no random(): the rest of
    # the data keeps its draws.
    """
    INSERT INTO ctr_transporterlicence
        (transporter_id, municipality_id, number, valid_from, valid_until, status,
         status_since, suspended_until)
    SELECT l.transporter_id, h.hub_id, l.number || '-' || hub.ibge_code, l.valid_from,
           l.valid_until, l.status, NULL, NULL
    FROM (
        SELECT l.*, row_number() OVER (PARTITION BY l.municipality_id ORDER BY l.id) AS k
        FROM ctr_transporterlicence l
        WHERE l.number LIKE 'SYN-T-%%' AND l.number NOT LIKE 'SYN-T-%%-%%'
    ) l
    JOIN syn_hub h ON h.municipality_id = l.municipality_id
    JOIN syn_muni hub ON hub.id = h.hub_id
    WHERE (l.k - 1) %% %(multi_licence_every)s = 0
    ORDER BY l.id
    ON CONFLICT DO NOTHING
    """,
    # 1 to 4 vehicles each; plates SY?9?99, unique by construction (Mercosul format).
    f"""
    INSERT INTO ctr_vehicle (transporter_id, plate, description, active)
    SELECT v.transporter_id,
           'SY' || chr(65 + (v.n / 26000) %% 26) || ((v.n / 2600) %% 10)::text
                || chr(65 + (v.n / 100) %% 26) || lpad((v.n %% 100)::text, 2, '0'),
           (ARRAY['Caminhão poliguindaste', 'Caminhão basculante', 'Caminhão carroceria',
                  'Caminhonete'])[1 + (v.n %% 4)::int], true
    FROM (
        SELECT t.transporter_id, row_number() OVER (ORDER BY t.transporter_id, g)::int AS n
        FROM (
            SELECT o.id AS transporter_id, 1 + floor(random() * 4)::int AS vehicles
            FROM ({SYN_TRANSPORTERS_IN_ORDER}) o
        ) t
        CROSS JOIN LATERAL generate_series(1, t.vehicles) g
    ) v ORDER BY v.n
    """,
    # 2 to 9 pieces of equipment each: mostly skips of 3-5 m³.
    f"""
    INSERT INTO ctr_equipment (transporter_id, code, kind, nominal_capacity_m3, active)
    SELECT e.transporter_id, 'SYN-' || lpad(e.g::text, 3, '0'),
           CASE WHEN e.u < 0.72 THEN %(equipment_skip)s WHEN e.u < 0.92 THEN %(equipment_tipper)s
                ELSE %(equipment_flatbed)s END,
           CASE WHEN e.u < 0.72 THEN (ARRAY[3, 4, 4, 5, 5])[1 + floor(e.u2 * 5)::int]
                WHEN e.u < 0.92 THEN (ARRAY[6, 8, 10, 12])[1 + floor(e.u2 * 4)::int]
                ELSE 2 END,
           true
    FROM (
        SELECT o.transporter_id, o.g, random() AS u, random() AS u2
        FROM (
            SELECT t.transporter_id, g
            FROM (
                SELECT o.id AS transporter_id, 2 + floor(random() * 8)::int AS pieces
                FROM ({SYN_TRANSPORTERS_IN_ORDER}) o
            ) t
            CROSS JOIN LATERAL generate_series(1, t.pieces) g
            ORDER BY t.transporter_id, g
        ) o
    ) e
    """,
]


# --- points inside the municipalities, weighted toward the facilities ----------------------

ZONE_SQL = """
CREATE TEMP TABLE syn_zone AS
SELECT row_number() OVER (ORDER BY z.municipality_id, z.fid) AS zid, z.municipality_id, z.geom,
       z.near
FROM (
    -- disks of 2.5 km around PEVs and 5 km around ATTs, clipped to the boundary
    SELECT f.municipality_id, f.id AS fid, true AS near,
           ST_CollectionExtract(ST_Intersection(b.boundary, ST_Buffer(
               ST_PointOnSurface(f.area)::geography,
               CASE f.kind WHEN %(kind_pev)s THEN 2500 ELSE 5000 END, 'quad_segs=4')::geometry), 3)
               AS geom
    FROM pev_network_receivingfacility f
    JOIN syn_muni m ON m.id = f.municipality_id
    JOIN pev_network_municipality b ON b.id = f.municipality_id
    WHERE f.code LIKE 'SYN-%%' AND f.kind IN (%(kind_pev)s, %(kind_att)s)
    UNION ALL
    SELECT m.id, 0, false, b.boundary
    FROM syn_muni m JOIN pev_network_municipality b ON b.id = m.id
) z
WHERE NOT ST_IsEmpty(z.geom)
"""


def _split_sql(total: str, weight: str, order: str, partition: str = "") -> str:
    """SQL for an exact split of `total` by `weight` (cumulative floors, so the parts add up
    to the total whatever the rounding): a window expression over the current FROM."""
    over = f"{partition} ORDER BY {order}"
    whole = f"sum({weight}) OVER ({partition})"
    cum = f"(sum({weight}) OVER ({over}) / {whole})"
    before = f"({cum} - {weight} / {whole})"
    return f"(floor({total} * {cum} + 1e-6) - floor({total} * {before} + 1e-6))::int"


def _points_sql(total_param: str, near_share: float, salt: int, minimum: int = 0) -> list[str]:
    """SQL that fills syn_pts(municipality_id, pt, k) with %(total_param)s points (exactly,
    unless `minimum` raises a municipality's part): spread over the municipalities by share,
    inside each a `near_share` part within the disks around its facilities, the rest anywhere
    in it; k numbers them 1..n per municipality."""
    return [
        "DROP TABLE IF EXISTS syn_need, syn_pts",
        f"""
        CREATE TEMP TABLE syn_need AS
        WITH per_muni AS (
            SELECT m.id AS municipality_id,
                   greatest({_split_sql(f"%({total_param})s", "m.share", "m.id")}, {minimum})
                       AS n
            FROM syn_muni m
        ), zones AS (
            SELECT z.zid, z.municipality_id, z.geom,
                   CASE WHEN z.near THEN {near_share} / NULLIF(count(*) FILTER (WHERE z.near)
                                         OVER (PARTITION BY z.municipality_id), 0)
                        ELSE 1 - {near_share} END AS w
            FROM syn_zone z
        )
        SELECT z.zid, z.municipality_id, z.geom, p.n AS muni_n,
               {_split_sql("p.n", "z.w", "z.zid", "PARTITION BY z.municipality_id")} AS n
        FROM zones z JOIN per_muni p USING (municipality_id)
        WHERE z.w IS NOT NULL
        """,
        # A few more points than needed, in case one falls on the edge; then exactly n per
        # municipality, dropping extras at random.
        f"""
        CREATE TEMP TABLE syn_pts AS
        SELECT r.municipality_id, r.pt, r.k
        FROM (
            SELECT p.municipality_id, p.pt, p.muni_n,
                   row_number() OVER (PARTITION BY p.municipality_id ORDER BY p.u) AS k
            FROM (
                SELECT q.municipality_id, q.pt, q.muni_n, random() AS u
                FROM (
                    SELECT n.municipality_id, n.muni_n, n.zid, d.path[1] AS i, d.geom AS pt
                    FROM syn_need n
                    CROSS JOIN LATERAL ST_Dump(ST_GeneratePoints(
                        n.geom, n.n + ceil(n.n * 0.02)::int + 2,
                        ((%(seed)s * 7 + {salt} * 100003 + n.zid) %% 2000000000)::int)) d
                    WHERE n.n > 0
                ) q
                JOIN pev_network_municipality b ON b.id = q.municipality_id
                WHERE ST_Covers(b.boundary, q.pt)
                ORDER BY q.municipality_id, q.zid, q.i
            ) p
        ) r
        WHERE r.k <= r.muni_n
        """,
    ]


# --- generators and worksites (the CTRs' origins) ------------------------------------------

WORKSITE_SQL = [
    # 0.7 generator per worksite: builders with CNPJ (several sites), people with CPF.
    """
    CREATE TEMP TABLE syn_gen AS
    SELECT g.n, g.cnpj, row_number() OVER (ORDER BY g.n) AS k,
           CASE WHEN g.cnpj THEN pg_temp.syn_document('97' || lpad(g.n::text, 6, '0') || '0001')
                ELSE pg_temp.syn_document('97' || lpad(g.n::text, 7, '0')) END AS document
    FROM (
        SELECT %(gen_offset)s + i AS n, random() < 0.45 AS cnpj
        FROM generate_series(1, %(generators)s) i
    ) g
    """,
    """
    INSERT INTO ctr_generator (name, document)
    SELECT 'SYN-G' || lpad(g.n::text, 7, '0') || ' '
           || CASE WHEN g.cnpj THEN (ARRAY['Construtora', 'Incorporadora', 'Reformas',
                                           'Engenharia'])[1 + (g.n %% 4)::int] || ' Ltda.'
                   ELSE (ARRAY['Maria', 'José', 'Ana', 'João', 'Francisca', 'Antônio',
                               'Adriana', 'Carlos'])[1 + (g.n %% 8)::int] || ' (pessoa física)' END,
           g.document
    FROM syn_gen g ORDER BY g.n
    """,
    """
    INSERT INTO ctr_worksite
        (generator_id, address, neighbourhood, location, permit_number, is_large_generator,
         work_kind, municipality_id)
    SELECT gen.id,
           (ARRAY['Rua das Flores', 'Rua São João', 'Avenida Brasil', 'Rua XV de Novembro',
                  'Rua Tiradentes', 'Rua Sete de Setembro', 'Avenida Rui Barbosa',
                  'Rua Marechal Deodoro', 'Rua Santos Dumont', 'Rua Dom Pedro II',
                  'Rua José Bonifácio', 'Avenida Independência'])[1 + floor(w.u1 * 12)::int]
               || ', ' || (10 + floor(w.u2 * 2400))::int || ' – ' || m.name,
           (ARRAY['Centro', 'Vila Nova', 'Jardim América', 'Jardim das Palmeiras',
                  'Vila São José', 'Parque Industrial', 'Jardim Primavera', 'Bela Vista'])
               [1 + floor(w.u3 * 8)::int],
           w.pt,
           'SYN-' || m.ibge_code || '-' || lpad((%(ws_offset)s + w.n)::text, 8, '0'),
           sg.cnpj AND w.u4 < 0.4,
           '',
           -- The municipality its point was drawn in (issue 24: a worksite is always one's).
           w.municipality_id
    FROM (
        SELECT p.municipality_id, p.pt, row_number() OVER (ORDER BY p.municipality_id, p.k) AS n,
               random() AS u1, random() AS u2, random() AS u3, random() AS u4, random() AS ug
        FROM syn_pts p
        ORDER BY p.municipality_id, p.k
    ) w
    JOIN syn_muni m ON m.id = w.municipality_id
    JOIN syn_gen sg ON sg.k = 1 + floor(w.ug * %(generators)s)::int
    JOIN ctr_generator gen ON gen.document = sg.document
    ORDER BY w.n
    ON CONFLICT """
    + WORKSITE_CONFLICT_SQL
    + """ DO NOTHING
    """,
]


# --- CTRs ----------------------------------------------------------------------------------

CTR_SETUP_SQL = [
    # Every synthetic worksite of the chosen municipalities with its nearest facility of each
    # kind group (PEV, ATT, final = recycling or landfill) in the same municipality.
    """
    CREATE TEMP TABLE syn_ws AS
    SELECT w.id, m.id AS municipality_id, w.location, w.generator_id,
           row_number() OVER (PARTITION BY m.id ORDER BY w.id)::int AS k,
           (SELECT f.id FROM pev_network_receivingfacility f
            WHERE f.municipality_id = m.id AND f.code LIKE 'SYN-%%' AND f.kind = %(kind_pev)s
            ORDER BY f.area <-> w.location, f.id LIMIT 1) AS near_pev,
           (SELECT f.id FROM pev_network_receivingfacility f
            WHERE f.municipality_id = m.id AND f.code LIKE 'SYN-%%' AND f.kind = %(kind_att)s
            ORDER BY f.area <-> w.location, f.id LIMIT 1) AS near_att,
           (SELECT f.id FROM pev_network_receivingfacility f
            WHERE f.municipality_id = m.id AND f.code LIKE 'SYN-%%'
              AND f.kind IN (%(kind_recycling)s, %(kind_landfill)s)
            ORDER BY f.area <-> w.location, f.id LIMIT 1) AS near_final
    FROM ctr_worksite w
    JOIN syn_muni m ON m.ibge_code = substr(w.permit_number, 5, 7)
    WHERE w.permit_number LIKE 'SYN-%%'
    """,
    "CREATE INDEX ON syn_ws (municipality_id, k)",
    # Per municipality: what a CTR picks from.
    """
    CREATE TEMP TABLE syn_arr AS
    SELECT m.id AS municipality_id,
           (SELECT count(*) FROM syn_ws w WHERE w.municipality_id = m.id)::int AS n_ws,
           -- The synthetic transporters licensed in the municipality (art. 13).
           (SELECT array_agg(l.transporter_id ORDER BY l.transporter_id)
            FROM ctr_transporterlicence l
            WHERE l.municipality_id = m.id AND l.number LIKE 'SYN-T-%%') AS tr,
           (SELECT array_agg(f.id ORDER BY f.id) FROM pev_network_receivingfacility f
            WHERE f.municipality_id = m.id AND f.code LIKE 'SYN-%%'
              AND f.kind = %(kind_pev)s) AS pev,
           (SELECT array_agg(f.id ORDER BY f.id) FROM pev_network_receivingfacility f
            WHERE f.municipality_id = m.id AND f.code LIKE 'SYN-%%'
              AND f.kind = %(kind_att)s) AS att,
           (SELECT array_agg(f.id ORDER BY f.id) FROM pev_network_receivingfacility f
            WHERE f.municipality_id = m.id AND f.code LIKE 'SYN-%%'
              AND f.kind IN (%(kind_recycling)s, %(kind_landfill)s)) AS final,
           -- The consortium's shared facility in the hub, when it has one (issue 24).
           (SELECT x.facility_id FROM syn_cross x WHERE x.municipality_id = m.id)
               AS shared_final
    FROM syn_muni m
    """,
    # Per transporter: its vehicles and equipment.
    """
    CREATE TEMP TABLE syn_tarr AS
    SELECT t.id AS transporter_id,
           (SELECT array_agg(v.id ORDER BY v.id) FROM ctr_vehicle v
            WHERE v.transporter_id = t.id) AS vehicles,
           (SELECT array_agg(e.id ORDER BY e.id) FROM ctr_equipment e
            WHERE e.transporter_id = t.id) AS eq_ids,
           (SELECT array_agg(e.nominal_capacity_m3 ORDER BY e.id) FROM ctr_equipment e
            WHERE e.transporter_id = t.id) AS eq_caps
    FROM ctr_transporter t
    WHERE EXISTS (
        SELECT 1 FROM ctr_transporterlicence l JOIN syn_muni m ON m.id = l.municipality_id
        WHERE l.transporter_id = t.id AND l.number LIKE 'SYN-T-%%')
    """,
    # 32 discharge points inside each facility's polygon.
    """
    CREATE TEMP TABLE syn_facpool AS
    SELECT f.id AS facility_id, f.kind,
           ARRAY(SELECT d.geom
                 FROM ST_Dump(ST_GeneratePoints(
                     f.area, 32,
                     (%(seed)s + floor(pg_temp.syn_hash01(f.code) * 1e6))::int)) d
                 ORDER BY d.path) AS pool
    FROM pev_network_receivingfacility f
    JOIN syn_muni m ON m.id = f.municipality_id
    WHERE f.code LIKE 'SYN-%%'
    """,
]

# Stage A: the municipality, worksite, transporter, date and the raw random numbers.
CTR_STAGE_A_SQL = """
CREATE TEMP TABLE syn_c AS
SELECT nextval(pg_get_serial_sequence('ctr_ctr', 'id')) AS id, a.municipality_id,
       1 + floor(random() * a.n_ws)::int AS ws_k,
       a.tr[1 + floor(random() * cardinality(a.tr))::int] AS transporter_id,
       %(today)s::date - floor(%(period)s * power(random(), 1.15))::int AS transport_date,
       random() AS u_kind, random() AS u_near, random() AS u_fac, random() AS u_pt,
       random() AS u_lead, random() AS u_time, random() AS u_status, random() AS u_close,
       random() AS u_veh, random() AS u_eq, random() AS u_vol, random() AS u_lines,
       random() AS u_split, random() AS u_cls, random() AS u_recv
FROM (
    SELECT m.id AS municipality_id, {split} AS n
    FROM syn_muni m
) al
JOIN syn_arr a ON a.municipality_id = al.municipality_id
CROSS JOIN LATERAL generate_series(1, al.n) g
ORDER BY al.municipality_id, g
""".replace("{split}", _split_sql("%(first_leg)s", "m.share", "m.id"))

# When a CTR of the row `s` was closed: received or refused some hours after it was open,
# cancelled minutes after it was issued; NULL while it is open.
CLOSED_AT_SQL = """CASE s.status
           WHEN %(ctr_received)s
               THEN least(s.open_since + (0.5 + 9.5 * s.u_close) * interval '1 hour',
                          %(now)s::timestamptz)
           WHEN %(ctr_refused)s
               THEN least(s.open_since + (0.5 + 5.5 * s.u_close) * interval '1 hour',
                          %(now)s::timestamptz)
           WHEN %(ctr_cancelled)s
               THEN least(s.created_at + (5 + 175 * s.u_close) * interval '1 minute',
                          %(now)s::timestamptz)
       END"""

# Stage B: everything else, by plain arithmetic on stage A's numbers.
CTR_STAGE_B_SQL = """
CREATE TEMP TABLE syn_c2 AS
WITH k AS (
    SELECT c.*, w.id AS worksite_id, w.location AS origin, w.generator_id,
           CASE WHEN c.u_kind < 0.30 THEN 'pev' WHEN c.u_kind < 0.80 THEN 'att'
                ELSE 'final' END AS kind_group,
           CASE WHEN c.u_kind < 0.30 THEN
                    CASE WHEN c.u_near < 0.75 THEN w.near_pev
                         ELSE a.pev[1 + floor(c.u_fac * cardinality(a.pev))::int] END
                WHEN c.u_kind < 0.80 THEN
                    CASE WHEN c.u_near < 0.75 THEN w.near_att
                         ELSE a.att[1 + floor(c.u_fac * cardinality(a.att))::int] END
                -- A consortium's member: a share of its final loads to the hub's shared
                -- facility, across the border (Municipality.accepted_destinations).
                ELSE CASE WHEN a.shared_final IS NOT NULL
                               AND c.u_near >= 1 - %(cross_share)s THEN a.shared_final
                          WHEN c.u_near < 0.75 THEN w.near_final
                          ELSE a.final[1 + floor(c.u_fac * cardinality(a.final))::int] END
           END AS facility_id,
           t.vehicles[1 + floor(c.u_veh * cardinality(t.vehicles))::int] AS vehicle_id,
           1 + floor(c.u_eq * cardinality(t.eq_ids))::int AS k_eq,
           t.eq_ids, t.eq_caps,
           ((c.transport_date - CASE WHEN c.u_lead < 0.75 THEN 0 WHEN c.u_lead < 0.95 THEN 1
                                     ELSE 2 END)::timestamp
             + interval '6 hours' + c.u_time * interval '11 hours') AT TIME ZONE %(tz)s
             AS created_raw,
           m.alert_hours, m.small_limit, m.ibge_code
    FROM syn_c c
    JOIN syn_ws w ON w.municipality_id = c.municipality_id AND w.k = c.ws_k
    JOIN syn_arr a ON a.municipality_id = c.municipality_id
    JOIN syn_tarr t ON t.transporter_id = c.transporter_id
    JOIN syn_muni m ON m.id = c.municipality_id
), v AS (
    SELECT k.*,
           CASE WHEN k.kind_group = 'pev' THEN NULL ELSE k.eq_ids[k.k_eq] END AS equipment_id,
           -- PEV: at most 1 m³ without equipment; else a load of 55-100%% of the skip.
           CASE WHEN k.kind_group = 'pev' THEN round((0.2 + 0.8 * k.u_vol)::numeric, 2)
                ELSE round(k.eq_caps[k.k_eq] * (0.55 + 0.45 * k.u_vol)::numeric, 1) END AS total,
           CASE WHEN k.kind_group = 'final' THEN 1
                WHEN k.kind_group = 'pev' THEN CASE WHEN k.u_lines < 0.7 THEN 1 ELSE 2 END
                ELSE CASE WHEN k.u_lines < 0.5 THEN 1 WHEN k.u_lines < 0.85 THEN 2 ELSE 3 END
           END AS n_lines,
           least(k.created_raw, %(now)s::timestamptz - interval '10 minutes') AS created_at,
           greatest(least(k.created_raw, %(now)s::timestamptz - interval '10 minutes'),
                    k.transport_date::timestamp AT TIME ZONE %(tz)s) AS open_since
    FROM k
), s AS (
    SELECT v.*,
           CASE WHEN v.open_since + make_interval(hours => v.alert_hours) >= %(now)s THEN
                     CASE WHEN v.u_status < 0.55 THEN %(ctr_issued)s WHEN v.u_status < 0.95
                          THEN %(ctr_received)s ELSE %(ctr_cancelled)s END
                ELSE CASE WHEN v.u_status < 0.905 THEN %(ctr_received)s
                          WHEN v.u_status < 0.93 THEN %(ctr_refused)s
                          WHEN v.u_status < 0.965 THEN %(ctr_cancelled)s ELSE %(ctr_issued)s END
           END AS status,
           -- class A first; the others share the rest
           round(v.total * CASE v.n_lines WHEN 1 THEN 1
                 ELSE 0.5 + 0.45 * v.u_split END::numeric, 3) AS vol_a
    FROM v
)
SELECT s.id, s.municipality_id, s.ibge_code, extract(year FROM s.transport_date)::int AS year,
       s.transporter_id, s.vehicle_id, s.equipment_id, s.generator_id,
       s.worksite_id, s.origin, s.facility_id, NULL::bigint AS origin_facility_id,
       p.pool[1 + floor(s.u_pt * cardinality(p.pool))::int] AS destination,
       s.transport_date, s.total, s.status,
       CASE WHEN s.total > s.small_limit THEN 1 ELSE 0 END AS fee,
       CASE WHEN s.status = %(ctr_received)s
            THEN round(s.total * (0.93 + 0.12 * s.u_recv)::numeric, 3) END AS received,
       s.created_at,
       {closed_at} AS closed_at,
       -- waste lines: parallel arrays (class, volume, description)
       CASE WHEN s.n_lines = 1 THEN
                ARRAY[CASE WHEN s.kind_group = 'pev' THEN
                          (%(pev_load_classes)s)[1 + floor(s.u_cls * 10)::int]
                      ELSE %(class_a)s END]
            WHEN s.n_lines = 2 THEN
                ARRAY[%(class_a)s, (%(second_line_classes)s)[1 + floor(s.u_cls * 4)::int]]
            ELSE %(three_line_classes)s END AS classes,
       CASE WHEN s.n_lines = 1 THEN ARRAY[s.total]
            WHEN s.n_lines = 2 THEN ARRAY[s.vol_a, s.total - s.vol_a]
            ELSE ARRAY[s.vol_a, round((s.total - s.vol_a) / 2, 3),
                       s.total - s.vol_a - round((s.total - s.vol_a) / 2, 3)] END AS vols
FROM s
JOIN syn_facpool p ON p.facility_id = s.facility_id
ORDER BY s.id
""".replace("{closed_at}", CLOSED_AT_SQL)

# --- onward CTRs: sorted waste leaving the PEVs and ATTs -------------------------------------
#
# A share of the CTRs leaves a PEV or an ATT with what it received (Lei 3.978/2007 art. 3 III
# and V): a PEV's class A goes to the municipality's recycling area (or its landfill when it
# has none, art. 18 sole §), its other classes to the nearest ATT; an ATT's class A goes on
# to a final facility, its class B and volumosos leave by reuse recorded on site, and some ATTs
# crush a third of their class A into recycled aggregate. Class C has nowhere to go in the
# synthetic network: it stays in stock, as gesso does at a real ATT.
#
# Consistent with the stock and FIFO-plausible: per facility and class, the outbound movements
# (onward CTRs and processing) are withdrawals from the cumulative curve of what the facility
# received (the share received of each line, ctr/custody/stock.py). The facility keeps a buffer
# of some days of its own inflow; withdrawal k of n, at progress q = k / n, happens on the first day
# the received volume reaches buffer + q × (all received − buffer), or up to a few days later.
# So at the end of every day what left is at most what arrived minus the buffer, and each load
# leaves about buffer-days after it arrived. Two passes: the PEVs first, then the ATTs, whose
# inflow includes the PEVs' onward CTRs received there.

# Loads a PEV's contents leave in (m³): the municipality's truck, never past the largest
# equipment of the municipality's fleet. An ATT's class A fills the count left over (about
# 6-8 m³ a load at 20 % onward), also within the fleet.
PEV_LOAD_A_M3 = 4
PEV_LOAD_OTHER_M3 = 3
MAX_ONWARD_SHARE = 0.5

ONWARD_SETUP_SQL = [
    # The operators: the municipality runs its PEVs, one company per municipality its ATTs
    # (the facilities' `operator`); each is the generator of its onward CTRs.
    """
    INSERT INTO ctr_generator (name, document)
    SELECT o.name, o.document
    FROM (
        SELECT DISTINCT 'SYN-OP-' || m.ibge_code || ' ' || f.operator AS name,
               pg_temp.syn_document('96' || m.ibge_code
                                    || CASE WHEN f.kind = %(kind_pev)s THEN '001' ELSE '002' END)
                   AS document
        FROM pev_network_receivingfacility f
        JOIN syn_muni m ON m.id = f.municipality_id
        WHERE f.code LIKE 'SYN-%%' AND f.kind IN (%(kind_pev)s, %(kind_att)s)
    ) o
    ORDER BY o.document
    ON CONFLICT (document) DO NOTHING
    """,
    """
    INSERT INTO ctr_facilityoperator (facility_id, generator_id)
    SELECT f.id, g.id
    FROM pev_network_receivingfacility f
    JOIN syn_muni m ON m.id = f.municipality_id
    JOIN ctr_generator g ON g.document = pg_temp.syn_document(
        '96' || m.ibge_code || CASE WHEN f.kind = %(kind_pev)s THEN '001' ELSE '002' END)
    WHERE f.code LIKE 'SYN-%%' AND f.kind IN (%(kind_pev)s, %(kind_att)s)
    ORDER BY f.id
    ON CONFLICT (facility_id) DO NOTHING
    """,
    # Each facility with its operator and where its waste goes on: the nearest final facility
    # of the municipality (a recycling area before a landfill) and the nearest other ATT.
    """
    CREATE TEMP TABLE syn_fk AS
    SELECT f.id AS facility_id, f.kind, f.municipality_id, f.code, o.generator_id,
           (SELECT d.id FROM pev_network_receivingfacility d
            WHERE d.municipality_id = f.municipality_id AND d.code LIKE 'SYN-%%'
              AND d.kind IN (%(kind_recycling)s, %(kind_landfill)s)
            ORDER BY d.kind <> %(kind_recycling)s, d.area <-> f.area, d.id LIMIT 1) AS to_final,
           (SELECT d.id FROM pev_network_receivingfacility d
            WHERE d.municipality_id = f.municipality_id AND d.code LIKE 'SYN-%%'
              AND d.kind = %(kind_att)s AND d.id <> f.id
            ORDER BY d.area <-> f.area, d.id LIMIT 1) AS to_att
    FROM pev_network_receivingfacility f
    JOIN syn_muni m ON m.id = f.municipality_id
    LEFT JOIN ctr_facilityoperator o ON o.facility_id = f.id
    WHERE f.code LIKE 'SYN-%%'
    """,
    # Per municipality and load (whole m³, 1-12): the transporters whose largest equipment
    # takes it, with that equipment.
    """
    CREATE TEMP TABLE syn_fleet AS
    WITH best AS (
        SELECT t.transporter_id, tr.municipality_id, e.id AS equipment_id, e.cap
        FROM syn_tarr t
        -- Each municipality where it is licensed (art. 13).
        JOIN ctr_transporterlicence tr
          ON tr.transporter_id = t.transporter_id AND tr.number LIKE 'SYN-T-%%'
        CROSS JOIN LATERAL (
            SELECT u.id, u.cap FROM unnest(t.eq_ids, t.eq_caps) AS u(id, cap)
            ORDER BY u.cap DESC, u.id LIMIT 1
        ) e
    )
    SELECT b.municipality_id, need,
           array_agg(b.transporter_id ORDER BY b.transporter_id) AS tr,
           array_agg(b.equipment_id ORDER BY b.transporter_id) AS eq
    FROM best b
    CROSS JOIN generate_series(1, 12) need
    WHERE b.cap >= need
    GROUP BY b.municipality_id, need
    """,
    "CREATE INDEX ON syn_fleet (municipality_id, need)",
    """
    CREATE TEMP TABLE syn_proc
        (facility_id bigint, cls text, vol numeric, day date, k int)
    """,
]

# One pass for the facilities of kind %(phase_kind)s: their received inflow per class and day
# (cumulative), then the plan per facility and class (buffer, what leaves how), then the
# withdrawals, dated on the cumulative curve.
ONWARD_CURVE_SQL = [
    "DROP TABLE IF EXISTS syn_daily, syn_plan, syn_w",
    """
    CREATE TEMP TABLE syn_daily AS
    SELECT i.facility_id, i.cls, i.day,
           sum(sum(i.volume)) OVER (PARTITION BY i.facility_id, i.cls ORDER BY i.day) AS cum
    FROM (
        SELECT c.facility_id, l.cls, c.transport_date AS day,
               l.vol * c.received / c.total AS volume
        FROM syn_c2 c
        JOIN syn_fk k ON k.facility_id = c.facility_id AND k.kind = %(phase_kind)s
        CROSS JOIN LATERAL unnest(c.classes, c.vols) AS l(cls, vol)
        WHERE c.status = %(ctr_received)s
    ) i
    GROUP BY i.facility_id, i.cls, i.day
    """,
    "CREATE INDEX ON syn_daily (facility_id, cls, cum)",
    """
    CREATE TEMP TABLE syn_plan AS
    WITH v AS (
        SELECT d.facility_id, d.cls, max(d.cum) AS total, min(d.day) AS first_day
        FROM syn_daily d GROUP BY d.facility_id, d.cls
    ), p AS (
        SELECT v.*, k.kind, k.municipality_id, k.generator_id,
               CASE WHEN v.cls = %(class_a)s THEN k.to_final ELSE k.to_att END AS dest,
               -- the stock kept: 3-14 days of the PEV's own average inflow, 10-30 at an ATT
               (v.total * (CASE WHEN k.kind = %(kind_pev)s THEN 3 + 11 * h.h1
                                ELSE 10 + 20 * h.h1 END)
                / greatest(%(today)s::date - v.first_day + 1, 30))::numeric AS buffer,
               CASE WHEN k.kind = %(kind_att)s AND v.cls = %(class_a)s AND h.h2 < 0.3 THEN 0.35
                    WHEN k.kind = %(kind_att)s AND v.cls IN (%(class_b)s, %(class_volumoso)s)
                        THEN 1
                    ELSE 0 END AS proc_share,
               (k.kind = %(kind_pev)s OR v.cls = %(class_a)s) AS ships,
               CASE WHEN v.cls = %(class_a)s THEN %(pev_load_a)s ELSE %(pev_load_other)s END
                   AS pev_load,
               (SELECT max(f.need) FROM syn_fleet f
                WHERE f.municipality_id = k.municipality_id) AS maxcap
        FROM v
        JOIN syn_fk k ON k.facility_id = v.facility_id
        CROSS JOIN LATERAL (
            SELECT pg_temp.syn_hash01(k.code || ':' || v.cls) AS h1,
                   pg_temp.syn_hash01(k.code || ':crusher') AS h2
        ) h
    ), w AS (
        SELECT p.*, greatest(p.total - p.buffer, 0) AS w FROM p
    )
    SELECT w.*,
           CASE WHEN w.ships THEN (1 - w.proc_share) * w.w ELSE 0 END AS w_on,
           w.proc_share * w.w AS w_proc,
           -- processing recorded monthly
           CASE WHEN w.proc_share > 0 AND w.w > 0
                THEN greatest(1, round((%(today)s::date - w.first_day) / 30.0))::int
                ELSE 0 END AS m,
           0 AS n
    FROM w
    ORDER BY w.facility_id, w.cls
    """,
]

# How many onward CTRs each facility and class sends. PEVs: a load of PEV_LOAD_M3 (within
# the fleet), at most half of the onward CTRs. ATTs: the rest, split by volume, at least
# enough loads for the largest equipment of the municipality.
ONWARD_COUNT_SQL = {
    FacilityKind.PEV: f"""
    UPDATE syn_plan p SET n = x.n
    FROM (
        SELECT q.facility_id, q.cls,
               CASE WHEN sum(q.n) OVER () <= %(pev_cap)s THEN q.n
                    ELSE {_split_sql("%(pev_cap)s", "q.n", "q.facility_id, q.cls")} END AS n
        FROM (
            SELECT p.facility_id, p.cls,
                   CASE WHEN NOT p.ships OR p.w_on < p.pev_load THEN 0
                        ELSE greatest(floor(p.w_on / p.pev_load), ceil(p.w_on / p.maxcap))
                   END::int AS n
            FROM syn_plan p
        ) q
    ) x
    WHERE x.facility_id = p.facility_id AND x.cls = p.cls
    """,
    FacilityKind.ATT: f"""
    UPDATE syn_plan p SET n = x.n
    FROM (
        SELECT q.facility_id, q.cls,
               CASE WHEN q.target >= sum(q.least_n) OVER ()
                    THEN q.least_n + {
        _split_sql("(q.target - sum(q.least_n) OVER ())", "q.w_on", "q.facility_id, q.cls")
    }
                    ELSE {_split_sql("q.target", "q.w_on", "q.facility_id, q.cls")} END AS n
        FROM (
            SELECT p.facility_id, p.cls, p.w_on,
                   CASE WHEN p.w_on > 0 THEN ceil(p.w_on / p.maxcap) ELSE 0 END AS least_n,
                   greatest(%(onward)s - (SELECT count(*) FROM syn_c2
                                          WHERE origin_facility_id IS NOT NULL), 0) AS target
            FROM syn_plan p
            WHERE p.w_on > 0
        ) q
    ) x
    WHERE x.facility_id = p.facility_id AND x.cls = p.cls
    """,
}

ONWARD_WITHDRAWAL_SQL = [
    """
    CREATE TEMP TABLE syn_w AS
    SELECT x.*,
           least(coalesce(
               (SELECT d.day FROM syn_daily d
                WHERE d.facility_id = x.facility_id AND d.cls = x.cls AND d.cum >= x.pos
                ORDER BY d.cum LIMIT 1),
               x.last_day) + x.lag, %(today)s::date) AS day
    FROM (
        SELECT y.*, floor(random() * CASE WHEN y.kind = %(kind_pev)s THEN 5 ELSE 3 END)::int
                        AS lag
        FROM (
            -- is_proc 0: an onward CTR; 1: processing recorded on site
            SELECT p.facility_id, p.cls, p.kind, p.municipality_id, p.generator_id, p.dest,
                   p.maxcap, 0 AS is_proc, k, floor(p.w_on / p.n * 1000) / 1000 AS vol,
                   p.buffer + p.w * k / p.n AS pos,
                   (SELECT max(d.day) FROM syn_daily d
                    WHERE d.facility_id = p.facility_id AND d.cls = p.cls) AS last_day
            FROM syn_plan p CROSS JOIN LATERAL generate_series(1, p.n) k
            WHERE p.n > 0
            UNION ALL
            SELECT p.facility_id, p.cls, p.kind, p.municipality_id, p.generator_id, NULL,
                   p.maxcap, 1, j, floor(p.w_proc / p.m * 1000) / 1000,
                   p.buffer + p.w * j / p.m,
                   (SELECT max(d.day) FROM syn_daily d
                    WHERE d.facility_id = p.facility_id AND d.cls = p.cls)
            FROM syn_plan p CROSS JOIN LATERAL generate_series(1, p.m) j
            WHERE p.m > 0
        ) y
        WHERE y.vol > 0
        ORDER BY y.facility_id, y.cls, y.is_proc, y.k
    ) x
    """,
    """
    INSERT INTO syn_proc (facility_id, cls, vol, day, k)
    SELECT w.facility_id, w.cls, w.vol, w.day, w.k FROM syn_w w WHERE w.is_proc = 1
    """,
    # The onward CTRs, in the layout of the first-leg ones (CTR_STAGE_B_SQL): issued on the
    # day of transport; mostly received, the recent ones still on their way, a few refused
    # or cancelled (their volume back in stock).
    """
    INSERT INTO syn_c2
        (id, municipality_id, ibge_code, year, transporter_id, vehicle_id, equipment_id,
         generator_id, worksite_id, origin, facility_id, origin_facility_id, destination,
         transport_date, total, status, fee, received, created_at, closed_at, classes, vols)
    SELECT nextval(pg_get_serial_sequence('ctr_ctr', 'id')), s.municipality_id, s.ibge_code,
           extract(year FROM s.day)::int, s.transporter_id,
           t.vehicles[1 + floor(s.u_veh * cardinality(t.vehicles))::int], s.equipment_id,
           s.generator_id, NULL, po.pool[1 + floor(s.u_o * cardinality(po.pool))::int],
           s.dest, s.facility_id, pd.pool[1 + floor(s.u_d * cardinality(pd.pool))::int],
           s.day, s.vol, s.status, CASE WHEN s.vol > s.small_limit THEN 1 ELSE 0 END,
           CASE WHEN s.status = %(ctr_received)s
                THEN round(s.vol * (0.97 + 0.06 * s.u_recv)::numeric, 3) END,
           s.created_at,
           {closed_at},
           ARRAY[s.cls], ARRAY[s.vol]
    FROM (
        SELECT r.*,
               CASE WHEN r.open_since + make_interval(hours => r.alert_hours) >= %(now)s THEN
                         CASE WHEN r.u_status < 0.6 THEN %(ctr_issued)s
                              WHEN r.u_status < 0.97 THEN %(ctr_received)s
                              ELSE %(ctr_cancelled)s END
                    ELSE CASE WHEN r.u_status < 0.93 THEN %(ctr_received)s
                              WHEN r.u_status < 0.945 THEN %(ctr_refused)s
                              WHEN r.u_status < 0.97 THEN %(ctr_cancelled)s
                              ELSE %(ctr_issued)s END
               END AS status
        FROM (
            SELECT w.*, m.ibge_code, m.small_limit, m.alert_hours, c.created_at,
                   greatest(c.created_at, w.day::timestamp AT TIME ZONE %(tz)s) AS open_since,
                   f.tr[1 + floor(w.u_tr * cardinality(f.tr))::int] AS transporter_id,
                   f.eq[1 + floor(w.u_tr * cardinality(f.eq))::int] AS equipment_id
            FROM (
                SELECT w.*, random() AS u_tr, random() AS u_veh, random() AS u_o,
                       random() AS u_d, random() AS u_time, random() AS u_status,
                       random() AS u_close, random() AS u_recv
                FROM syn_w w
                WHERE w.is_proc = 0
                ORDER BY w.facility_id, w.cls, w.k
            ) w
            JOIN syn_muni m ON m.id = w.municipality_id
            JOIN syn_fleet f ON f.municipality_id = w.municipality_id
             AND f.need = least(greatest(ceil(w.vol), 1), w.maxcap)
            CROSS JOIN LATERAL (
                SELECT least((w.day::timestamp + interval '6 hours'
                              + w.u_time * interval '11 hours') AT TIME ZONE %(tz)s,
                             %(now)s::timestamptz - interval '10 minutes') AS created_at
            ) c
        ) r
    ) s
    JOIN syn_tarr t ON t.transporter_id = s.transporter_id
    JOIN syn_facpool po ON po.facility_id = s.facility_id
    JOIN syn_facpool pd ON pd.facility_id = s.dest
    """.replace("{closed_at}", CLOSED_AT_SQL),
]


def _onward(run: _Runner, params: dict) -> None:
    """The onward CTRs, into syn_c2 beside the first-leg ones (numbered, inserted and given
    their lines and events with them), and the processing to record (syn_proc)."""
    run.run("CTRs de saída: operadores e frota", ONWARD_SETUP_SQL, params)
    for kind, label in ((FacilityKind.PEV, "PEVs"), (FacilityKind.ATT, "ATTs")):
        phase = {**params, "phase_kind": str(kind), "pev_cap": params["onward"] // 2}
        run.run(f"CTRs de saída dos {label}: entradas e plano", ONWARD_CURVE_SQL, phase)
        run.run(f"CTRs de saída dos {label}: quantos", ONWARD_COUNT_SQL[kind], phase)
        run.run(f"CTRs de saída dos {label}", ONWARD_WITHDRAWAL_SQL, phase)


def _rebuild_custody() -> int:
    custody.refresh()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {custody.ALLOCATION_TABLE}")
        return cursor.fetchone()[0]


# What the operators recorded on site, once the CTRs are in: at the end of the day of each
# withdrawal, class A crushed into aggregate, class B and volumosos passed on for reuse.
ONWARD_PROCESSING_SQL = """
INSERT INTO ctr_onsiteprocessing
    (facility_id, waste_class, kind, volume_m3, day, note, recorded_by_id, recorded_at)
SELECT p.facility_id, p.cls,
       CASE WHEN p.cls = %(class_a)s THEN %(processing_recycled)s ELSE %(processing_reused)s END,
       p.vol, p.day, '', %(actor)s,
       least((p.day::timestamp + interval '18 hours') AT TIME ZONE %(tz)s, %(now)s::timestamptz)
FROM syn_proc p
ORDER BY p.day, p.facility_id, p.cls, p.k
"""

# A live system appends each CTR as it is issued: ids, and so the table's physical order,
# follow the time of issue. Drawn per municipality, the CTRs would lie in the table in an order
# unrelated to time, and every "newest first" read would hop across the whole heap (the CTR
# list walked ~6,000 uncached pages per page of 100). The ids drawn are handed out again, the
# k-th smallest to the k-th CTR issued.
CTR_ISSUE_ORDER_SQL = """
WITH by_id AS (SELECT id, row_number() OVER (ORDER BY id) AS k FROM syn_c2),
     by_time AS (SELECT id, row_number() OVER (ORDER BY created_at, id) AS k FROM syn_c2)
UPDATE syn_c2 c SET id = i.id
FROM by_time t JOIN by_id i ON i.k = t.k
WHERE c.id = t.id
"""

CTR_INSERT_SQL = [
    "LOCK TABLE ctr_numbersequence IN SHARE ROW EXCLUSIVE MODE",
    # Where each municipality and year's numbering continues.
    """
    CREATE TEMP TABLE syn_base AS
    SELECT k.municipality_id, k.year,
           greatest(coalesce(ns.last_value, 0),
                    coalesce((SELECT max(c.sequence) FROM ctr_ctr c
                              WHERE c.municipality_id = k.municipality_id
                                AND c.year = k.year), 0)) AS base,
           k.n
    FROM (SELECT municipality_id, year, count(*) AS n FROM syn_c2 GROUP BY 1, 2) k
    LEFT JOIN ctr_numbersequence ns
      ON ns.municipality_id = k.municipality_id AND ns.year = k.year
    """,
    """
    INSERT INTO ctr_ctr
        (id, number, municipality_id, year, sequence, transporter_id, vehicle_id, equipment_id,
         generator_id, generator_name, worksite_id, origin, destination,
         destination_facility_id, crossing_into_id, origin_facility_id, transport_date,
         total_volume_m3, status, findings, fee_ufesp, received_volume_m3, closed_at,
         created_at, created_by_id)
    SELECT x.id, 'CTR-' || x.ibge_code || '-' || x.year || '-' || pg_temp.syn_seq6(x.seq),
           x.municipality_id, x.year, x.seq, x.transporter_id, x.vehicle_id, x.equipment_id,
           x.generator_id, g.name, x.worksite_id, x.origin, x.destination, x.facility_id,
           {crossing_into}, x.origin_facility_id, x.transport_date, x.total, x.status,
           '[]'::jsonb, x.fee, x.received, x.closed_at, x.created_at, %(actor)s
    FROM (
        SELECT c.*, b.base + row_number() OVER (
                   PARTITION BY c.municipality_id, c.year ORDER BY c.created_at, c.id) AS seq
        FROM syn_c2 c
        JOIN syn_base b ON b.municipality_id = c.municipality_id AND b.year = c.year
    ) x
    JOIN ctr_generator g ON g.id = x.generator_id  -- the declared name is the registered one
    JOIN pev_network_receivingfacility f ON f.id = x.facility_id
    ORDER BY x.id
    """.replace(
        "{crossing_into}", CROSSING_INTO_SQL.format("x.municipality_id", "f.municipality_id")
    ),
    """
    INSERT INTO ctr_numbersequence (municipality_id, year, last_value)
    SELECT b.municipality_id, b.year, b.base + b.n FROM syn_base b
    ON CONFLICT (municipality_id, year) DO UPDATE SET last_value = EXCLUDED.last_value
    """,
]

WASTE_SQL = """
INSERT INTO ctr_ctrwaste (ctr_id, waste_class, volume_m3, description)
SELECT c.id, l.cls, l.vol,
       CASE l.cls WHEN %(class_a)s THEN 'Entulho: concreto, tijolo, argamassa e solo'
                  WHEN %(class_b)s THEN 'Madeira, plástico, papelão e metal'
                  WHEN %(class_c)s THEN 'Gesso e outros sem reciclagem viável'
                  ELSE 'Móveis velhos, podas e grandes embalagens' END
FROM syn_c2 c
CROSS JOIN LATERAL unnest(c.classes, c.vols) AS l(cls, vol)
ORDER BY c.id
"""

EVENT_SQL = """
INSERT INTO ctr_ctrevent (ctr_id, at, actor_id, action, from_status, to_status, data)
SELECT e.ctr_id, e.at, %(actor)s, e.action, e.from_status, e.to_status, e.data
FROM (
    SELECT c.id AS ctr_id, c.created_at AS at, %(action_issue)s AS action, '' AS from_status,
           %(ctr_issued)s AS to_status, '{"findings": []}'::jsonb AS data, 0 AS o
    FROM syn_c2 c
    UNION ALL
    SELECT c.id, c.closed_at,
           CASE c.status WHEN %(ctr_received)s THEN %(action_receive)s
                WHEN %(ctr_refused)s THEN %(action_refuse)s ELSE %(action_cancel)s END,
           %(ctr_issued)s, c.status,
           CASE c.status
               WHEN %(ctr_received)s THEN jsonb_build_object(
                   'received_volume_m3', c.received::text, 'location', NULL, 'note', '',
                   'findings', '[]'::jsonb)
               WHEN %(ctr_refused)s
                   THEN '{"reason": "Carga com resíduo não aceito pela área."}'::jsonb
               ELSE '{"reason": "Transporte não realizado."}'::jsonb END,
           1
    FROM syn_c2 c WHERE c.status <> %(ctr_issued)s
) e
ORDER BY e.ctr_id, e.o
"""


# --- dumping reports -----------------------------------------------------------------------

REPORT_SQL = """
INSERT INTO fiscalization_dumpingreport
    (protocol, municipality_id, location, description, category, estimated_volume_m3, status,
     reporter_kind, reporter_id, contact_name, contact, duplicate_of_id, created_at, updated_at,
     cleaned_at)
SELECT 'SYN-' || extract(year FROM r.created_at AT TIME ZONE %(tz)s)::int || '-'
           || lpad((%(report_offset)s + r.n)::text, 7, '0'),
       r.municipality_id, r.pt,
       (ARRAY['Entulho jogado na calçada.', 'Caçamba despejada em terreno baldio.',
              'Restos de obra e móveis velhos à beira do córrego.',
              'Descarte de resíduos na encosta.', 'Podas e entulho na via pública.'])
           [1 + floor(r.u1 * 5)::int],
       (%(report_categories)s)[1 + floor(r.u2 * 11)::int],
       round((0.5 * exp(4 * r.u3))::numeric, 2),
       r.status,
       CASE WHEN r.u5 < 0.8 THEN %(reporter_citizen)s ELSE %(reporter_inspector)s END,
       NULL, '', '', NULL, r.created_at,
       CASE WHEN r.status = %(report_new)s THEN r.created_at ELSE r.closed END,
       CASE WHEN r.status = %(report_cleaned)s THEN r.closed END
FROM (
    SELECT q.*,
           CASE WHEN q.age_days < 7 THEN
                    CASE WHEN q.u4 < 0.7 THEN %(report_new)s
                         WHEN q.u4 < 0.9 THEN %(report_confirmed)s
                         ELSE %(report_duplicate)s END
                WHEN q.u4 < 0.05 THEN %(report_new)s
                WHEN q.u4 < 0.17 THEN %(report_confirmed)s
                WHEN q.u4 < 0.27 THEN %(report_cleanup_scheduled)s
                WHEN q.u4 < 0.85 THEN %(report_cleaned)s
                WHEN q.u4 < 0.93 THEN %(report_duplicate)s
                ELSE %(report_unfounded)s END AS status,
           least(q.created_at + (1 + 29 * q.u6) * interval '1 day', %(now)s::timestamptz)
               AS closed
    FROM (
        SELECT d.*, %(now)s::timestamptz - d.age_days * interval '1 day' AS created_at
        FROM (
            -- Drawn in this ordered list, not in a LATERAL subquery a plan may memoize.
            SELECT p.municipality_id, p.pt,
                   row_number() OVER (ORDER BY p.municipality_id, p.k) AS n,
                   %(period)s * random() AS age_days,
                   random() AS u1, random() AS u2, random() AS u3, random() AS u4,
                   random() AS u5, random() AS u6
            FROM syn_pts p
            ORDER BY p.municipality_id, p.k
        ) d
    ) q
) r
ORDER BY r.n
"""

ANALYZE_SQL = [
    "ANALYZE pev_network_receivingfacility",
    "ANALYZE pev_network_facilitylicense",
    "ANALYZE ctr_transporter",
    "ANALYZE ctr_vehicle",
    "ANALYZE ctr_equipment",
    "ANALYZE ctr_generator",
    "ANALYZE ctr_worksite",
    "ANALYZE ctr_ctr",
    "ANALYZE ctr_ctrwaste",
    "ANALYZE ctr_ctrevent",
    "ANALYZE ctr_onsiteprocessing",
    "ANALYZE ctr_custodyallocation",
    "ANALYZE ctr_numbersequence",
    "ANALYZE fiscalization_dumpingreport",
]


def _synthetic_user():
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(
        username=SYN_USERNAME,
        defaults={"first_name": "Dados", "last_name": "sintéticos", "is_active": False},
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def generate(
    ctrs: int,
    reports: int,
    seed: int | None = None,
    municipality_limit: int | None = None,
    progress: Progress | None = None,
    analyze: bool = True,
    onward_share: float = 0.0,
) -> Summary:
    """Add `ctrs` CTRs and `reports` dumping reports, creating the synthetic network
    (facilities, licenses, transporters, vehicles, equipment) first when there is none; of
    the CTRs, `onward_share` are onward CTRs leaving the PEVs and ATTs with what they
    received (with the processing recorded on site), and the chain of custody is built.
    One transaction: all or nothing. Without onward CTRs the same seed gives the same data
    as before they existed."""
    if ctrs < 0 or reports < 0:
        raise SyntheticError("As quantidades não podem ser negativas.")
    if not 0 <= onward_share <= MAX_ONWARD_SHARE:
        raise SyntheticError(
            f"A fração de CTRs de saída deve estar entre 0 e {br_number(MAX_ONWARD_SHARE, 1)}."
        )
    if ctrs > MAX_CTRS or reports > MAX_REPORTS:
        raise SyntheticError(
            f"No máximo {br_number(MAX_CTRS)} CTRs e {br_number(MAX_REPORTS)} denúncias por vez."
        )
    if municipality_limit is not None and municipality_limit < 1:
        raise SyntheticError("--municipality-limit deve ser ao menos 1.")
    seed = seed if seed is not None else random.randint(1, 2**20)
    if seed < 1 or seed > 2**20:
        raise SyntheticError("A semente deve estar entre 1 e 1048576.")
    summary = Summary(seed=seed)
    now = timezone.now()
    today = timezone.localdate(now)
    params = {
        "seed": seed,
        "now": now,
        "today": today,
        "tz": timezone.get_current_timezone_name(),
        "period": PERIOD_DAYS,
        "largest": json.dumps(
            {code: pop / STATE_POPULATION for code, pop in LARGEST_MUNICIPALITIES.items()}
        ),
        "rest_mean": (STATE_POPULATION - sum(LARGEST_MUNICIPALITIES.values()))
        / STATE_POPULATION
        / (SP_MUNICIPALITIES - len(LARGEST_MUNICIPALITIES)),
        "sigma": LOGNORMAL_SIGMA,
        "ctrs": ctrs,
        "onward": round(ctrs * onward_share),
        "first_leg": ctrs - round(ctrs * onward_share),
        "pev_load_a": PEV_LOAD_A_M3,
        "pev_load_other": PEV_LOAD_OTHER_M3,
        "reports": reports,
        "cross_share": CROSS_SHARE,
        "multi_licence_every": MULTI_LICENCE_EVERY,
        **SQL_VALUES,
        **{
            f"classes_{kind.lower()}": [str(c) for c in classes]
            for kind, classes in DEFAULT_ACCEPTED_CLASSES.items()
        },
    }
    with transaction.atomic(), connection.cursor() as cursor:
        run = _Runner(cursor, summary, progress)
        cursor.execute("SET LOCAL work_mem = '256MB'")
        cursor.execute("SET LOCAL max_parallel_workers_per_gather = 0")  # same order every run
        cursor.execute("SELECT setseed(%s)", [(seed % 1_000_003) / 1_000_003])
        for sql in HELPERS:
            cursor.execute(sql)
        _drop_temp(cursor)

        ids = _chosen_municipalities(cursor, municipality_limit)
        if not ids:
            raise SyntheticError(
                "Não há municípios no banco; use --municipalities para carregar os 645 de SP."
            )
        summary.municipalities = len(ids)
        run.run("municípios escolhidos", MUNI_SQL, {**params, "ids": ids})
        run.run("consórcios (vizinhos dos polos)", HUB_SQL, params)
        params["actor"] = _synthetic_user().pk

        has_network = run.value(
            "SELECT count(*) FROM pev_network_receivingfacility WHERE code LIKE 'SYN-%%'"
        )
        if not has_network:
            for name, sql in zip(
                ("vagas de áreas", "candidatos", "polígonos", "áreas de recebimento", "licenças"),
                FACILITY_SQL,
                strict=True,
            ):
                run.run(name, sql, params)
        has_transporters = run.value(
            "SELECT count(*) FROM ctr_transporterlicence WHERE number LIKE 'SYN-T-%%'"
        )
        if not has_transporters:
            for name, sql in zip(
                ("transportadores", "licenças de transportadores",
                 "licenças de transportadores no polo do consórcio", "veículos", "equipamentos"),
                TRANSPORTER_SQL,
                strict=True,
            ):  # fmt: skip
                run.run(name, sql, params)
        run.run("acordos de destino com o polo do consórcio", AGREEMENT_SQL, params)
        run.run("áreas compartilhadas dos consórcios", CROSS_SQL, params)
        run.run("equipe municipal (Núcleo e fiscalização)", STAFF_SQL, params)
        run.run("zonas de origem", ZONE_SQL, params)

        if ctrs:
            worksites = max(math.ceil(params["first_leg"] / CTRS_PER_WORKSITE), 2 * len(ids))
            params["worksites"] = worksites
            params["generators"] = max(1, math.ceil(worksites * 0.7))
            params["gen_offset"] = run.value(
                "SELECT count(*) FROM ctr_generator WHERE name LIKE 'SYN-G%%'"
            )
            params["ws_offset"] = run.value(
                "SELECT count(*) FROM ctr_worksite WHERE permit_number LIKE 'SYN-%%'"
            )
            run.run("pontos das obras", _points_sql("worksites", 0.7, salt=1, minimum=1), params)
            run.run("geradores", WORKSITE_SQL[:2], params)
            run.run("obras", WORKSITE_SQL[2], params)
            for name, sql in zip(
                ("obras e áreas mais próximas", "índice", "listas por município",
                 "listas por transportador", "pontos de descarga"),
                CTR_SETUP_SQL,
                strict=True,
            ):  # fmt: skip
                run.run(name, sql, params)
            run.run("CTRs (sorteio)", CTR_STAGE_A_SQL, params)
            run.run("CTRs (cálculo)", CTR_STAGE_B_SQL, params)
            if params["onward"]:
                _onward(run, params)
            run.run("CTRs (ordem de emissão)", CTR_ISSUE_ORDER_SQL, params)
            run.run("CTRs (numeração)", CTR_INSERT_SQL[:2], params)
            run.run("CTRs", CTR_INSERT_SQL[2], params)
            run.run("sequências de numeração", CTR_INSERT_SQL[3], params)
            run.run("resíduos dos CTRs", WASTE_SQL, params)
            run.run("eventos dos CTRs", EVENT_SQL, params)
            if params["onward"]:
                run.run("beneficiamentos nas áreas", ONWARD_PROCESSING_SQL, params)

        if reports:
            params["report_offset"] = run.value(
                "SELECT count(*) FROM fiscalization_dumpingreport WHERE protocol LIKE 'SYN-%%'"
            )
            run.run("pontos das denúncias", _points_sql("reports", 0.5, salt=2), params)
            run.run("denúncias", REPORT_SQL, params)
        # The foreign keys are checked at commit (deferred); here, so that it shows and is timed.
        run.run("chaves estrangeiras (verificação)", "SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")  # Django's foreign keys, as before
        # The triggers marked every facility the CTRs moved stock at: its allocation is rebuilt
        # now, as a reader would, so the data is in the state of a database in use.
        run.call("cadeia de custódia (alocação FIFO)", _rebuild_custody)
        _drop_temp(cursor)
    if analyze:
        with connection.cursor() as cursor:
            run = _Runner(cursor, summary, progress)
            run.run("estatísticas (ANALYZE)", ANALYZE_SQL)
    summary.counts = counts()
    return summary


# --- counting and removing -------------------------------------------------------------------

SYNTHETIC_CTRS = f"SELECT c.id FROM ctr_ctr c WHERE c.transporter_id IN ({SYN_TRANSPORTER_IDS})"
SYN_AGREEMENTS = (
    "SELECT d.id FROM pev_network_municipality_accepted_destinations d WHERE "
    + ONLY_SYNTHETIC_NETWORK.format(m="d.from_municipality_id")
    + " AND "
    + ONLY_SYNTHETIC_NETWORK.format(m="d.to_municipality_id")
)

COUNT_SQL = {
    "áreas de recebimento": (
        "SELECT count(*) FROM pev_network_receivingfacility WHERE code LIKE 'SYN-%%'"
    ),
    "transportadores": f"SELECT count(*) FROM ({SYN_TRANSPORTER_IDS}) s",
    "veículos": (
        f"SELECT count(*) FROM ctr_vehicle v WHERE v.transporter_id IN ({SYN_TRANSPORTER_IDS})"
    ),
    "equipamentos": (
        f"SELECT count(*) FROM ctr_equipment e WHERE e.transporter_id IN ({SYN_TRANSPORTER_IDS})"
    ),
    "geradores": "SELECT count(*) FROM ctr_generator WHERE name LIKE 'SYN-%%'",
    "obras": "SELECT count(*) FROM ctr_worksite WHERE permit_number LIKE 'SYN-%%'",
    "CTRs": f"SELECT count(*) FROM ({SYNTHETIC_CTRS}) s",
    "CTRs de saída": (
        f"SELECT count(*) FROM ctr_ctr WHERE origin_facility_id IS NOT NULL "
        f"AND id IN ({SYNTHETIC_CTRS})"
    ),
    "resíduos dos CTRs": (
        f"SELECT count(*) FROM ctr_ctrwaste WHERE ctr_id IN ({SYNTHETIC_CTRS})"
    ),
    "eventos dos CTRs": f"SELECT count(*) FROM ctr_ctrevent WHERE ctr_id IN ({SYNTHETIC_CTRS})",
    "beneficiamentos nas áreas": (
        "SELECT count(*) FROM ctr_onsiteprocessing p JOIN pev_network_receivingfacility f "
        "ON f.id = p.facility_id WHERE f.code LIKE 'SYN-%%'"
    ),
    "denúncias": (
        "SELECT count(*) FROM fiscalization_dumpingreport WHERE protocol LIKE 'SYN-%%'"
    ),
    "licenças de transportadores no polo do consórcio": (
        "SELECT count(*) FROM ctr_transporterlicence WHERE number LIKE 'SYN-T-%%-%%'"
    ),
    "acordos de destino": f"SELECT count(*) FROM ({SYN_AGREEMENTS}) s",
    "CTRs para área de outro município": (
        f"SELECT count(*) FROM ctr_ctr c JOIN pev_network_receivingfacility f "
        f"ON f.id = c.destination_facility_id WHERE f.municipality_id <> c.municipality_id "
        f"AND c.id IN ({SYNTHETIC_CTRS})"
    ),
    "papéis da equipe municipal": (
        "SELECT count(*) FROM jurisdiction_staffrole r JOIN auth_user u ON u.id = r.user_id "
        f"WHERE u.username LIKE '{STAFF_PREFIX}%%'"
    ),
}  # fmt: skip


def counts() -> dict[str, int]:
    """How many synthetic rows each table holds."""
    with connection.cursor() as cursor:
        result = {}
        for name, sql in COUNT_SQL.items():
            cursor.execute(sql)
            result[name] = cursor.fetchone()[0]
        return result


def _referencing_tables(cursor, table: str) -> list[str]:
    cursor.execute(
        "SELECT DISTINCT conrelid::regclass::text FROM pg_constraint "
        "WHERE contype = 'f' AND confrelid = %s::regclass AND conrelid <> confrelid",
        [table],
    )
    return [r[0] for r in cursor.fetchall()]


def _remove_staff() -> int:
    """The synthetic staff's roles, and the accounts themselves, but those a record protects
    (the access log, append-only, keeps who read what): these stay, inactive and without
    roles, and the next generation makes them active again. Returns the roles removed."""
    from jurisdiction.models import CurrentMunicipality, StaffRole

    user_model = get_user_model()
    staff = user_model.objects.filter(username__startswith=STAFF_PREFIX)
    removed, _ = StaffRole.objects.filter(user__in=staff).delete()
    CurrentMunicipality.objects.filter(user__in=staff).delete()
    try:
        with transaction.atomic():
            staff.delete()
    except ProtectedError as error:
        kept = {
            getattr(record, f.attname)
            for record in error.protected_objects
            for f in record._meta.concrete_fields
            if f.is_relation and f.related_model is user_model
        }
        with transaction.atomic():
            staff.exclude(pk__in=kept).delete()
        staff.update(is_active=False)
    return removed


def reset(progress: Progress | None = None) -> Summary:
    """Remove every synthetic row (see the markers above); other data stays.

    CTR events are append-only (a trigger refuses DELETE): when every event is synthetic the
    table is emptied with TRUNCATE; otherwise the others are kept aside, the table truncated
    and they are put back with their ids. When every CTR is synthetic, the CTR tables are
    truncated too (much faster than deleting a million rows)."""
    summary = Summary(seed=0)
    with transaction.atomic(), connection.cursor() as cursor:
        run = _Runner(cursor, summary, progress)
        cursor.execute("SET LOCAL work_mem = '256MB'")
        # TRUNCATE refuses tables with pending (deferred) foreign key checks: run them now.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        cursor.execute("DROP TABLE IF EXISTS syn_ctr_ids, syn_kept_events")
        cursor.execute(f"CREATE TEMP TABLE syn_ctr_ids ON COMMIT DROP AS {SYNTHETIC_CTRS}")
        cursor.execute("CREATE INDEX ON syn_ctr_ids (id)")
        cursor.execute("ANALYZE syn_ctr_ids")
        synthetic = run.value("SELECT count(*) FROM syn_ctr_ids")
        others = run.value("SELECT count(*) FROM ctr_ctr") - synthetic
        other_refs = [
            t
            for t in _referencing_tables(cursor, "ctr_ctr")
            if t not in ("ctr_ctrwaste", "ctr_ctrevent")
        ]
        empty_refs = not any(run.value(f"SELECT EXISTS (SELECT 1 FROM {t})") for t in other_refs)
        truncated = False
        if synthetic and not others and empty_refs:
            tables = ", ".join(["ctr_ctrevent", "ctr_ctrwaste", "ctr_ctr", *other_refs])
            try:
                with transaction.atomic():
                    run.run("CTRs, resíduos e eventos (TRUNCATE)", f"TRUNCATE {tables}")
                summary.steps[-1].rows = synthetic
                truncated = True
            except DatabaseError:  # a table further down references them: delete instead
                pass
        if truncated:
            # The allocation is derived from the CTRs, all gone: only processing recorded at a
            # facility is left to allocate, on its next read.
            run.run(
                "cadeia de custódia (TRUNCATE)",
                [
                    f"TRUNCATE {custody.ALLOCATION_TABLE}",
                    f"INSERT INTO {custody.STALE_TABLE} (facility_id) SELECT DISTINCT "
                    f"facility_id FROM {custody.PROCESSING_TABLE} ON CONFLICT DO NOTHING",
                ],
            )
        if synthetic and not truncated:
            kept = run.value(
                "SELECT count(*) FROM ctr_ctrevent e WHERE NOT EXISTS "
                "(SELECT 1 FROM syn_ctr_ids s WHERE s.id = e.ctr_id)"
            )
            run.run(
                "eventos dos CTRs (TRUNCATE, mantendo os demais)",
                [
                    "CREATE TEMP TABLE syn_kept_events ON COMMIT DROP AS "
                    "SELECT e.* FROM ctr_ctrevent e WHERE NOT EXISTS "
                    "(SELECT 1 FROM syn_ctr_ids s WHERE s.id = e.ctr_id)",
                    "TRUNCATE ctr_ctrevent",
                    "INSERT INTO ctr_ctrevent SELECT * FROM syn_kept_events ORDER BY id",
                ],
            )
            summary.steps[-1].rows = kept
            run.run(
                "resíduos dos CTRs",
                "DELETE FROM ctr_ctrwaste w USING syn_ctr_ids s WHERE w.ctr_id = s.id",
            )
            run.run("CTRs", "DELETE FROM ctr_ctr c USING syn_ctr_ids s WHERE c.id = s.id")
        # Numbering continues after the last CTR that remains.
        run.run(
            "sequências de numeração",
            [
                "UPDATE ctr_numbersequence ns SET last_value = coalesce((SELECT max(c.sequence) "
                "FROM ctr_ctr c WHERE c.municipality_id = ns.municipality_id "
                "AND c.year = ns.year), 0)",
                "DELETE FROM ctr_numbersequence WHERE last_value = 0",
            ],
        )
        run.run(
            "obras",
            [
                "DELETE FROM ctr_worksite_plan_transporters p USING ctr_worksite w "
                "WHERE p.worksite_id = w.id AND w.permit_number LIKE 'SYN-%%'",
                "DELETE FROM ctr_worksite_plan_facilities p USING ctr_worksite w "
                "WHERE p.worksite_id = w.id AND w.permit_number LIKE 'SYN-%%'",
                "DELETE FROM ctr_worksite w WHERE w.permit_number LIKE 'SYN-%%' "
                "AND NOT EXISTS (SELECT 1 FROM ctr_ctr c WHERE c.worksite_id = w.id)",
            ],
        )
        syn_facilities = "SELECT id FROM pev_network_receivingfacility WHERE code LIKE 'SYN-%%'"
        # While the networks are there to tell which agreements are synthetic.
        run.run(
            "acordos de destino",
            f"DELETE FROM pev_network_municipality_accepted_destinations "
            f"WHERE id IN ({SYN_AGREEMENTS})",
        )
        run.call("equipe municipal", _remove_staff)
        run.run(
            "geradores",
            [
                # The operators of the synthetic facilities are generators too.
                f"DELETE FROM ctr_facilityoperator WHERE facility_id IN ({syn_facilities})",
                "DELETE FROM ctr_generator g WHERE g.name LIKE 'SYN-%%' "
                "AND NOT EXISTS (SELECT 1 FROM ctr_ctr c WHERE c.generator_id = g.id) "
                "AND NOT EXISTS (SELECT 1 FROM ctr_worksite w WHERE w.generator_id = g.id)",
            ],
        )
        syn_transporters = SYN_TRANSPORTER_IDS
        run.run(
            "transportadores, licenças, veículos e equipamentos",
            [
                f"DELETE FROM ctr_worksite_plan_transporters "
                f"WHERE transporter_id IN ({syn_transporters})",
                f"DELETE FROM ctr_membership WHERE transporter_id IN ({syn_transporters})",
                f"DELETE FROM ctr_vehicle WHERE transporter_id IN ({syn_transporters})",
                f"DELETE FROM ctr_equipment WHERE transporter_id IN ({syn_transporters})",
                # The marker is the licence: the transporters go first (their other
                # licences with them), then the marked licences (the foreign keys are
                # checked at the commit).
                f"DELETE FROM ctr_transporterlicence WHERE transporter_id IN ({syn_transporters})"
                " AND number NOT LIKE 'SYN-T-%%'",
                f"DELETE FROM ctr_transporter WHERE id IN ({syn_transporters})",
                "DELETE FROM ctr_transporterlicence WHERE number LIKE 'SYN-T-%%'",
            ],
        )
        run.run(
            "áreas de recebimento e licenças",
            [
                # Recorded at them (processing) or derived (the allocation): theirs alone;
                # the processing first, as its trigger marks the facility stale.
                f"DELETE FROM ctr_onsiteprocessing WHERE facility_id IN ({syn_facilities})",
                f"DELETE FROM ctr_custodyallocation WHERE facility_id IN ({syn_facilities})",
                f"DELETE FROM ctr_custodystale WHERE facility_id IN ({syn_facilities})",
                f"DELETE FROM pev_network_facilitylicense WHERE facility_id IN ({syn_facilities})",
                f"UPDATE pev_network_catchmentbasin SET served_by_id = NULL "
                f"WHERE served_by_id IN ({syn_facilities})",
                f"DELETE FROM ctr_worksite_plan_facilities "
                f"WHERE receivingfacility_id IN ({syn_facilities})",
                f"DELETE FROM ctr_membership WHERE facility_id IN ({syn_facilities})",
                "DELETE FROM pev_network_receivingfacility WHERE code LIKE 'SYN-%%'",
            ],
        )
        syn_reports = "SELECT id FROM fiscalization_dumpingreport WHERE protocol LIKE 'SYN-%%'"
        run.run(
            "denúncias",
            [
                f"DELETE FROM fiscalization_dumpingreportevent WHERE report_id IN ({syn_reports})",
                f"UPDATE fiscalization_dumpingreport SET duplicate_of_id = NULL "
                f"WHERE duplicate_of_id IN ({syn_reports})",
                "DELETE FROM fiscalization_dumpingreport WHERE protocol LIKE 'SYN-%%'",
            ],
        )
        get_user_model().objects.filter(username=SYN_USERNAME).delete()
        cursor.execute("DROP TABLE IF EXISTS syn_ctr_ids, syn_kept_events")
    summary.counts = counts()
    return summary
