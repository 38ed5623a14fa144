"""The SQL of the set-based CSV import (ctr.bulk.importer runs it, chunk by chunk, in the order
its docstring gives): the temporary tables a session stages the rows in, the statements that
resolve each row's references into ctr_bulk_fact, one INSERT … SELECT per rule (built from the
SQL that ctr.rules declares with each message), the walk of the onward rows, and the inserts
that issue a chunk's CTRs. Parameters are named (%(name)s): the importer's params.
"""

from __future__ import annotations

from pev_network.models import Municipality, licensed_sql, parameters_sql

from .. import rules, services
from ..custody import stock
from ..models import (
    ADDRESS_KEY_SQL,
    CROSSING_INTO_SQL,
    WORKSITE_CONFLICT_SQL,
    FacilityOperator,
    Generator,
    TransporterLicence,
    Worksite,
)

# The PGRCC in force of each worksite (Worksite.plan_transporters, plan_facilities).
PLAN_TRANSPORTERS = Worksite.plan_transporters.through._meta.db_table
PLAN_FACILITIES = Worksite.plan_facilities.through._meta.db_table
# The municipalities whose facilities a municipality's CTRs may use (consortia).
ACCEPTED_DESTINATIONS = Municipality.accepted_destinations.through._meta.db_table

# The issue-stage rules checked here, each by the SQL of its messages (ctr.rules), and those
# whose fact a CSV row cannot state (Rule.not_in_bulk).
IMPLEMENTED_RULES = frozenset(
    r.code for r in rules.REGISTRY.values() if r.stage == rules.Stage.ISSUE and r.in_bulk
)
NOT_APPLICABLE_RULES = frozenset(r.code for r in rules.REGISTRY.values() if r.not_in_bulk)

STAGE_COLUMNS = (
    "line",
    "transport_date",
    "vehicle_plate",
    "equipment_code",
    "generator_name",
    "generator_document",
    "worksite_address",
    "worksite_neighbourhood",
    "origin",
    "destination",
    "destination_facility_id",
    "classes",
    "volumes",
    "description",
    "origin_facility_id",
)
TEXT_COLUMNS = (
    "vehicle_plate",
    "equipment_code",
    "generator_name",
    "generator_document",
    "worksite_address",
    "worksite_neighbourhood",
    "description",
)

CARRIED_TABLES = "ctr_bulk_carried_move, ctr_bulk_carried_operator, ctr_bulk_carried_generator"
CREATE_SQL = [
    "DROP TABLE IF EXISTS ctr_bulk_row, ctr_bulk_finding, ctr_bulk_rule, ctr_bulk_base, "
    + CARRIED_TABLES,
    # Temporary: private to this session, no WAL; emptied per chunk.
    """
    CREATE TEMP TABLE ctr_bulk_row (
        line integer PRIMARY KEY,
        transport_date date NOT NULL,
        vehicle_plate text NOT NULL,
        equipment_code text NOT NULL,
        generator_name text NOT NULL,
        generator_document text NOT NULL,
        worksite_address text NOT NULL,
        worksite_neighbourhood text NOT NULL,
        origin geometry(Point, 4326),  -- an onward row may leave it to its facility
        destination geometry(Point, 4326) NOT NULL,
        destination_facility_id bigint,
        classes text[] NOT NULL,
        volumes numeric[] NOT NULL,
        description text NOT NULL,
        origin_facility_id bigint
    )
    """,
    """
    CREATE TEMP TABLE ctr_bulk_finding (
        line integer NOT NULL,
        code text NOT NULL,
        variant integer NOT NULL,
        sub integer NOT NULL,
        field text,
        message text NOT NULL
    )
    """,
    """
    CREATE TEMP TABLE ctr_bulk_rule (
        code text PRIMARY KEY,
        severity text NOT NULL,
        article text NOT NULL,
        severity_rank integer NOT NULL,
        rule_rank integer NOT NULL
    )
    """,
    "CREATE TEMP TABLE ctr_bulk_base (municipality_id bigint, year integer, base integer)",
    # A dry run issues nothing, yet each chunk must find what the chunks before it would have
    # issued from a facility: the stock they ship, the operator the first of them declares,
    # the name each new generator is registered with. (An import that issues finds them in
    # ctr_ctr, ctr_facilityoperator and ctr_generator.)
    """
    CREATE TEMP TABLE ctr_bulk_carried_move (
        facility_id bigint, waste_class text, day date, shipped numeric)
    """,
    "CREATE TEMP TABLE ctr_bulk_carried_operator (facility_id bigint PRIMARY KEY, document text)",
    "CREATE TEMP TABLE ctr_bulk_carried_generator (document text PRIMARY KEY, name text)",
]
CHUNK_TABLES = (
    "ctr_bulk_place, ctr_bulk_near, ctr_bulk_candidate, ctr_bulk_fact, ctr_bulk_origin_day, "
    "ctr_bulk_origin_class, ctr_bulk_onward, ctr_bulk_walk, ctr_bulk_stock, ctr_bulk_accepted, "
    "ctr_bulk_worksite"
)
DROP_SQL = (
    "DROP TABLE IF EXISTS ctr_bulk_row, ctr_bulk_finding, ctr_bulk_rule, ctr_bulk_base, "
    f"{CARRIED_TABLES}, {CHUNK_TABLES}, ctr_bulk_ok, ctr_bulk_numbered"
)

RESOLVE_SQL = [
    f"DROP TABLE IF EXISTS {CHUNK_TABLES}",
    # The municipality of the origin: pev_network.services.municipality_id_at, as a join.
    # ST_Intersects on the subdivided pieces (a point on the border counts), the lowest id
    # when two cover the point. The pieces drive the join (LATERAL) and the points are found
    # through the staging table's GiST index: one piece is tested against many points in a
    # row, so PostGIS prepares it once (points driving took 30 µs a probe, 2 s a chunk).
    """
    CREATE TEMP TABLE ctr_bulk_place AS
    SELECT x.line, min(p.municipality_id) AS municipality_id
    FROM pev_network_municipalitypiece p
    CROSS JOIN LATERAL (
        SELECT r.line FROM ctr_bulk_row r WHERE ST_Intersects(p.geom, r.origin)
    ) x
    GROUP BY x.line
    """,
    "ANALYZE ctr_bulk_place (line)",
    # Every facility within the GPS tolerance of the discharge point (ctr.services.
    # resolve_destination): ST_DWithin on geography for metres (at 0 it is covers). When the
    # row names a facility, only that one. The facilities drive the join, as above: PostGIS
    # caches a polygon's tree while the points near it are tested, so the geography work is
    # done in facility order (the OFFSET 0 fence keeps it there, before any hash join). The
    # points come from the GiST index on the facility's box grown by the largest tolerance in
    # degrees (metres per degree of longitude taken low, so the box is never too small), then
    # the exact test at the largest tolerance; a row whose municipality has a smaller one is
    # tested again with its own.
    """
    CREATE TEMP TABLE ctr_bulk_near AS
    SELECT r.line, f.id AS facility_id, r.transport_date, r.destination
    FROM pev_network_receivingfacility f
    CROSS JOIN LATERAL (
        SELECT r.line, r.destination, r.transport_date
        FROM ctr_bulk_row r
        WHERE r.destination && ST_Expand(f.area, %(max_tolerance)s / (110000.0 * greatest(
                  cos(radians(greatest(abs(ST_YMin(f.area)), abs(ST_YMax(f.area))) + 0.01)),
                  0.01)))
          AND (r.destination_facility_id IS NULL OR r.destination_facility_id = f.id)
    ) r
    WHERE ST_DWithin(f.area::geography, r.destination::geography, %(max_tolerance)s)
    """,
    "ANALYZE ctr_bulk_near (line)",
    # The distance orders the candidates (licensed first, then the nearest): computed only
    # where there is more than one.
    """
    CREATE TEMP TABLE ctr_bulk_candidate AS
    SELECT c.line, c.facility_id, c.licensed,
           CASE WHEN c.candidates > 1 THEN ST_Distance(
               (SELECT f.area FROM pev_network_receivingfacility f WHERE f.id = c.facility_id)
                   ::geography,
               c.destination::geography) END AS distance
    FROM (
        SELECT n.line, n.facility_id, n.destination,
               count(*) OVER (PARTITION BY n.line) AS candidates,
               """
    + licensed_sql("n.facility_id", "n.transport_date")
    + """ AS licensed
        FROM ctr_bulk_near n
        LEFT JOIN ctr_bulk_place pl ON pl.line = n.line
        LEFT JOIN LATERAL """
    + parameters_sql("pl.municipality_id", "n.transport_date")
    + """ mp ON true
        WHERE coalesce(mp.gps_tolerance_m::float8, %(default_tolerance)s) >= %(max_tolerance)s
           OR ST_DWithin(
                  (SELECT f.area FROM pev_network_receivingfacility f WHERE f.id = n.facility_id)
                      ::geography,
                  n.destination::geography,
                  coalesce(mp.gps_tolerance_m::float8, %(default_tolerance)s))
    ) c
    """,
    # Every fact the rules read, one row per staged row. Licensed first, then the nearest (ties
    # by id: the per-row query leaves them to the executor).
    """
    CREATE TEMP TABLE ctr_bulk_fact AS
    SELECT r.line, pl.municipality_id, m.ibge_code,
           """
    + rules.PLACE_SQL.format("m")
    + """ AS municipality_label,
           -- The transporter's licence in the row's municipality (ctr.services.licence_in):
           -- TRANSPORTER_NOT_LICENSED and TRANSPORTER_SUSPENDED read it by its id.
           lic.id AS licence_id,
           v.id AS vehicle_id, e.id AS equipment_id, e.code AS equipment_db_code,
           e.nominal_capacity_m3 AS equipment_capacity,
           req.id AS requested_id, req.name AS requested_name,
           (r.destination_facility_id IS NOT NULL AND req.id IS NULL) AS unknown_facility,
           c.facility_id, coalesce(c.licensed, false) AS licensed, f.kind AS facility_kind,
           f.name AS facility_name, f.accepted_classes,
           f.municipality_id AS facility_municipality_id,
           """
    + rules.PLACE_SQL.format("fm")
    + """ AS facility_place,
           -- ctr.services.destination_agreed (DESTINATION_OUTSIDE_AGREEMENT): the facility in
           -- the row's municipality or in one it lists (Municipality.accepted_destinations).
           (f.municipality_id IS NULL OR pl.municipality_id IS NULL
            OR f.municipality_id = pl.municipality_id
            OR EXISTS (SELECT 1 FROM """
    + ACCEPTED_DESTINATIONS
    + """ ad WHERE ad.from_municipality_id = pl.municipality_id
                   AND ad.to_municipality_id = f.municipality_id)) AS destination_agreed,
           coalesce(fmp.small_volume_limit_m3, mp.small_volume_limit_m3, %(default_limit)s)
               AS small_volume_limit,
           (SELECT sum(x) FROM unnest(r.volumes) x) AS total,
           -- An onward row (ctr.services.onward_facts), when its facility is known and the
           -- user's to ship from (ctr.onward.onward_origins: %(onward_ids)s).
           o.id AS origin_facility_id,
           (r.origin_facility_id IS NOT NULL AND o.id IS NULL) AS origin_refused,
           o.name AS origin_name, o.kind AS origin_kind,
           CASE WHEN o.id IS NOT NULL THEN """
    + licensed_sql("o.id", "r.transport_date")
    + """ END AS origin_licensed,
           CASE WHEN o.id IS NOT NULL THEN ST_DWithin(
               o.area::geography, r.origin::geography,
               coalesce(mp.gps_tolerance_m::float8, %(default_tolerance)s)) END AS origin_inside,
           op.document AS operator_document,
           -- The draft's generator (ctr.services.onward_generator): on an onward row that
           -- leaves it empty, the operator's. None yet: then the operator is the one an
           -- earlier row of the file declares, and it was issued, so under a self-generator
           -- transporter (the one rule that reads it) the transporter itself.
           CASE WHEN o.id IS NULL THEN r.generator_document
                ELSE coalesce(nullif(r.generator_document, ''), op.document, %(document)s)
           END AS generator_document,
           -- NOT_IN_GENERATOR_PLAN (art. 9 p.ú. I): the worksite the row names, its
           -- generator's at its address (ctr.services.build_draft), and its PGRCC in force.
           coalesce(ws.is_large_generator, false) AS plan_large,
           EXISTS (SELECT 1 FROM """
    + PLAN_TRANSPORTERS
    + """ pt WHERE pt.worksite_id = ws.id AND pt.transporter_id = %(transporter)s)
               AS plan_transporter,
           EXISTS (SELECT 1 FROM """
    + PLAN_FACILITIES
    + """ pf WHERE pf.worksite_id = ws.id AND pf.receivingfacility_id = c.facility_id)
               AS plan_facility
    FROM ctr_bulk_row r
    LEFT JOIN ctr_bulk_place pl ON pl.line = r.line
    LEFT JOIN pev_network_municipality m ON m.id = pl.municipality_id
    -- The parameters in force on the row's transport date, of its municipality and of its
    -- facility's (ctr.issue_reads reads the same two for one CTR).
    LEFT JOIN LATERAL """
    + parameters_sql("pl.municipality_id", "r.transport_date")
    + """ mp ON true
    -- One licence per (transporter, municipality): the unique index finds it.
    LEFT JOIN """
    + TransporterLicence._meta.db_table
    + """ lic
      ON lic.transporter_id = %(transporter)s AND lic.municipality_id = pl.municipality_id
    LEFT JOIN pev_network_receivingfacility o
      ON o.id = r.origin_facility_id AND o.id = ANY(%(onward_ids)s)
    LEFT JOIN (
        SELECT fo.facility_id, g.document
        FROM """
    + FacilityOperator._meta.db_table
    + " fo JOIN "
    + Generator._meta.db_table
    + """ g ON g.id = fo.generator_id
        WHERE fo.facility_id = ANY(%(onward_ids)s)
        UNION ALL
        SELECT facility_id, document FROM ctr_bulk_carried_operator
    ) op ON op.facility_id = o.id
    LEFT JOIN ctr_vehicle v
      ON v.transporter_id = %(transporter)s AND v.plate = r.vehicle_plate AND v.active
    LEFT JOIN ctr_equipment e
      ON r.equipment_code <> '' AND e.transporter_id = %(transporter)s
         AND e.code = r.equipment_code AND e.active
    LEFT JOIN pev_network_receivingfacility req ON req.id = r.destination_facility_id
    LEFT JOIN (
        SELECT DISTINCT ON (line) line, facility_id, licensed
        FROM ctr_bulk_candidate
        ORDER BY line, licensed DESC, distance, facility_id
    ) c ON c.line = r.line
    LEFT JOIN pev_network_receivingfacility f ON f.id = c.facility_id
    LEFT JOIN pev_network_municipality fm ON fm.id = f.municipality_id
    LEFT JOIN LATERAL """
    + parameters_sql("f.municipality_id", "r.transport_date")
    + """ fmp ON true
    -- ctr.services.find_worksite: the lowest id, through the unique index's expression.
    LEFT JOIN LATERAL (
        SELECT w.id, w.is_large_generator
        FROM ctr_worksite w JOIN """
    + Generator._meta.db_table
    + """ g ON g.id = w.generator_id
        WHERE r.origin_facility_id IS NULL AND g.document = r.generator_document
          AND """
    + ADDRESS_KEY_SQL.format("w.address")
    + " = "
    + ADDRESS_KEY_SQL.format("r.worksite_address")
    + """
        ORDER BY w.id LIMIT 1
    ) ws ON true
    """,
    "ANALYZE ctr_bulk_fact (line)",
    # The stock of the facilities the onward rows ship from (ctr.custody.stock.moves_sql, and what
    # the chunks before this one would have shipped in a dry run): at the end of each day with a
    # movement, per class, unrounded (ctr.services.origin_stock rounds the stock the row finds).
    """
    CREATE TEMP TABLE ctr_bulk_origin_day AS
    SELECT facility_id, waste_class, day,
           sum(sum(received - shipped - processed)) OVER w AS closing,
           sum(sum(received)) OVER w AS received
    FROM ("""
    + stock.moves_sql("= ANY(%(onward_ids)s)")
    + """
          UNION ALL
          SELECT facility_id, waste_class, day, 0, shipped, 0 FROM ctr_bulk_carried_move
    ) m
    GROUP BY facility_id, waste_class, day
    WINDOW w AS (PARTITION BY facility_id, waste_class ORDER BY day)
    """,
    "CREATE INDEX ON ctr_bulk_origin_day (facility_id, waste_class, day)",
    # Per onward row and class shipped (in the order the check yields them, by the first line
    # of the class): the volume, the stock stored at the end of the transport day, what the
    # facility received of it up to then, and its municipality's sorting tolerance.
    """
    CREATE TEMP TABLE ctr_bulk_origin_class AS
    SELECT f.line, x.waste_class, x.sub, x.volume, d.closing, round(d.received, 3) AS received,
           coalesce((omp.sorting_tolerance_pct ->> x.waste_class)::numeric,
                    %(default_sorting_tolerance)s::numeric) AS tolerance
    FROM ctr_bulk_fact f
    JOIN ctr_bulk_row r ON r.line = f.line
    JOIN pev_network_receivingfacility o ON o.id = f.origin_facility_id
    LEFT JOIN LATERAL """
    + parameters_sql("o.municipality_id", "r.transport_date")
    + """ omp ON true
    CROSS JOIN LATERAL (
        SELECT u.c AS waste_class, (min(u.i) - 1)::int AS sub, sum(u.v) AS volume
        FROM unnest(r.classes, r.volumes) WITH ORDINALITY u(c, v, i)
        GROUP BY u.c
    ) x
    LEFT JOIN LATERAL (
        SELECT d.closing, d.received FROM ctr_bulk_origin_day d
        WHERE d.facility_id = f.origin_facility_id AND d.waste_class = x.waste_class
          AND d.day <= r.transport_date
        ORDER BY d.day DESC LIMIT 1
    ) d ON true
    """,
    "CREATE INDEX ON ctr_bulk_origin_class (line, waste_class)",
    # Each row's registered worksite (ctr.services.registered_worksite): the generator's at
    # the row's address, through the unique index's expression (ADDRESS_KEY_SQL), kept only
    # when registered; whether the origin lies within it (ORIGIN_OUTSIDE_WORKSITE). Worksites
    # the file itself creates have no registration, so no row depends on the rows before it.
    """
    CREATE TEMP TABLE ctr_bulk_worksite AS
    SELECT r.line, w.address, w.area IS NOT NULL AS has_area,
           coalesce(wmp.gps_tolerance_m, %(default_tolerance)s::numeric) AS tolerance,
           """
    + services.WITHIN_WORKSITE_SQL.format(
        w="w",
        point="r.origin",
        tolerance="coalesce(wmp.gps_tolerance_m::float8, %(default_tolerance)s)",
    )
    + """ AS origin_inside
    FROM ctr_bulk_row r
    JOIN """
    + Generator._meta.db_table
    + """ g ON g.document = r.generator_document
    JOIN ctr_worksite w
      ON w.generator_id = g.id AND """
    + ADDRESS_KEY_SQL.format("w.address")
    + " = "
    + ADDRESS_KEY_SQL.format("r.worksite_address")
    + """
    LEFT JOIN LATERAL """
    + parameters_sql("w.municipality_id", "r.transport_date")
    + """ wmp ON true
    WHERE r.origin_facility_id IS NULL AND w.registered_at IS NOT NULL
    """,
]


def rule_sql(rule: rules.Rule) -> str:
    """One INSERT … SELECT of every breach of `rule` into ctr_bulk_finding: the SQL of each of
    its messages (or the rule's, whose `variant` column names the message), the message built
    in SQL from the same template (rules.Message.sql_text)."""
    insert = "INSERT INTO ctr_bulk_finding (line, code, variant, sub, field, message)\n"
    messages = list(rule.messages.values())
    if rule.sql is not None:
        variants = list(rule.messages)
        rank = " ".join(f"WHEN '{v}' THEN {i}" for i, v in enumerate(variants))
        text = " ".join(
            f"WHEN '{v}' THEN {m.sql_text('x')}" for v, m in zip(variants, messages, strict=True)
        )
        return (
            insert + f"SELECT x.line, '{rule.code}', CASE x.variant {rank} END, x.sub, x.field,"
            f" CASE x.variant {text} END\nFROM ({rule.sql}) x"
        )
    branches = [
        f"SELECT x.line, '{rule.code}', {variant}, x.sub, x.field, {message.sql_text('x')}\n"
        f"FROM ({message.sql}) x"
        for variant, message in enumerate(messages)
    ]
    return insert + "\nUNION ALL\n".join(branches)


RULE_SQL: dict[str, str] = {
    r.code: rule_sql(r) for r in rules.REGISTRY.values() if r.code in IMPLEMENTED_RULES
}
# Checked after the walk of the file's onward rows (WALK_SQL), whose result they read.
SEQUENTIAL_RULES = tuple(code for code in RULE_SQL if rules.REGISTRY[code].sequential)

# The onward rows of each facility, walked in line order as one issue per row would meet them
# (rules.Rule.sequential): each finds the stock the rows before it left, and the operator
# the first of them to be issued declared. A recursive query steps through every facility's
# rows at once, one row per step, its state the operator and what was shipped per class and
# day (jsonb); a row is issued, so ships, when nothing refuses it. Set-based all the same:
# the SQL walks, not Python.
DAY_KEY = "to_char(r.transport_date, 'YYYY-MM-DD')"  # sorts as the days do
WALK_SQL = [
    # What the walk reads: the generator the row declares, whether something else refuses it
    # already (an error of another rule, an unknown destination), and per class (in the
    # order of ctr_bulk_origin_class.sub) the volume shipped and the stock stored.
    f"""
    CREATE TEMP TABLE ctr_bulk_onward AS
    SELECT f.line, f.origin_facility_id AS facility_id,
           row_number() OVER (PARTITION BY f.origin_facility_id ORDER BY f.line) AS seq,
           {DAY_KEY} AS day, nullif(r.generator_document, '') AS declared,
           f.operator_document AS operator,
           f.unknown_facility OR EXISTS (
               SELECT 1 FROM ctr_bulk_finding x JOIN ctr_bulk_rule u ON u.code = x.code
               WHERE x.line = f.line AND u.severity = '{rules.Severity.ERROR}') AS blocked,
           c.classes, c.subs, c.volumes, c.closings, c.received, c.tolerances
    FROM ctr_bulk_fact f JOIN ctr_bulk_row r ON r.line = f.line
    CROSS JOIN LATERAL (
        SELECT array_agg(s.waste_class ORDER BY s.sub) AS classes,
               array_agg(s.sub ORDER BY s.sub) AS subs,
               array_agg(s.volume ORDER BY s.sub) AS volumes,
               array_agg(s.closing ORDER BY s.sub) AS closings,
               array_agg(s.received ORDER BY s.sub) AS received,
               array_agg(s.tolerance ORDER BY s.sub) AS tolerances
        FROM ctr_bulk_origin_class s WHERE s.line = f.line
    ) c
    WHERE f.origin_facility_id IS NOT NULL
    """,
    "CREATE UNIQUE INDEX ON ctr_bulk_onward (facility_id, seq)",
    "ANALYZE ctr_bulk_onward",
    # Each step: the generator's refusal (ctr.services.onward_generator: none declared before
    # the facility has an operator, or another than its operator), the stock of each class
    # once the shipments of the rows before it up to its day are taken (ctr.custody.stock: a
    # move counts on its day), and whether it is issued.
    f"""
    CREATE TEMP TABLE ctr_bulk_walk AS
    WITH RECURSIVE walk AS (
        SELECT facility_id, 0::bigint AS seq, min(operator) AS operator,
               '{{}}'::jsonb AS shipped, NULL::integer AS line, NULL::text AS before,
               NULL::text AS refusal, false AS accepted, NULL::numeric[] AS stocks
        FROM ctr_bulk_onward GROUP BY facility_id
        UNION ALL
        SELECT w.facility_id, o.seq,
               CASE WHEN s.accepted THEN coalesce(w.operator, o.declared) ELSE w.operator END,
               CASE WHEN s.accepted THEN w.shipped || s.shipped ELSE w.shipped END,
               o.line, w.operator, s.refusal, s.accepted, s.stocks
        FROM walk w
        JOIN ctr_bulk_onward o ON o.facility_id = w.facility_id AND o.seq = w.seq + 1
        CROSS JOIN LATERAL (
            SELECT g.refusal, k.stocks, k.shipped,
                   g.refusal IS NULL AND NOT o.blocked AND NOT coalesce(k.over, false)
                       AS accepted
            FROM (
                SELECT CASE WHEN w.operator IS NULL AND o.declared IS NULL
                            THEN 'generator_required'
                            WHEN o.declared <> w.operator THEN 'generator_not_operator'
                       END AS refusal
            ) g
            CROSS JOIN (
                SELECT array_agg(x.stock ORDER BY x.i) AS stocks,
                       bool_or({rules.OVER_STOCK_SQL.format(s="x")}) AS over,
                       jsonb_object_agg(
                           x.waste_class,
                           coalesce(w.shipped -> x.waste_class, '{{}}')
                               || jsonb_build_object(o.day, x.today + x.volume)) AS shipped
                FROM (
                    SELECT y.*, {rules.ALLOWED_SQL.format(s="y")} AS allowed
                    FROM (
                        SELECT u.i, u.waste_class, u.volume, u.received, u.tolerance,
                               round(u.closing - q.consumed, 3) AS stock,
                               coalesce((w.shipped -> u.waste_class ->> o.day)::numeric, 0)
                                   AS today
                        FROM unnest(o.classes, o.volumes, o.closings, o.received, o.tolerances)
                             WITH ORDINALITY u(waste_class, volume, closing, received,
                                               tolerance, i)
                        CROSS JOIN LATERAL (
                            SELECT coalesce(sum(e.value::numeric), 0) AS consumed
                            FROM jsonb_each_text(w.shipped -> u.waste_class) e
                            WHERE e.key <= o.day
                        ) q
                    ) y
                ) x
            ) k
        ) s
    )
    SELECT line, facility_id, before, refusal, accepted, stocks FROM walk
    WHERE line IS NOT NULL
    """,
    "CREATE INDEX ON ctr_bulk_walk (line)",
    # What OVER_FACILITY_STOCK reads: the stock each class of a row finds.
    f"""
    CREATE TEMP TABLE ctr_bulk_stock AS
    SELECT y.*, {rules.ALLOWED_SQL.format(s="y")} AS allowed
    FROM (
        SELECT o.line, u.sub, u.waste_class, u.volume, u.received, u.tolerance, u.stock
        FROM ctr_bulk_walk k JOIN ctr_bulk_onward o ON o.line = k.line
        CROSS JOIN LATERAL unnest(o.classes, o.subs, o.volumes, o.received, o.tolerances,
                                  k.stocks) u(waste_class, sub, volume, received, tolerance,
                                              stock)
        WHERE k.refusal IS NULL
    ) y
    """,
]

# The rows issued (or, in a dry run, that would be): no error, no reference refused, and an
# onward row the walk issued; with the generator each CTR names (an onward row's operator).
ACCEPT_SQL = f"""
CREATE TEMP TABLE ctr_bulk_accepted AS
SELECT f.line, coalesce(k.before, r.generator_document) AS generator_key
FROM ctr_bulk_fact f JOIN ctr_bulk_row r ON r.line = f.line
LEFT JOIN ctr_bulk_walk k ON k.line = f.line
WHERE NOT f.unknown_facility AND NOT f.origin_refused
  AND (f.origin_facility_id IS NULL OR k.accepted)
  AND NOT EXISTS (
      SELECT 1 FROM ctr_bulk_finding x JOIN ctr_bulk_rule u ON u.code = x.code
      WHERE x.line = f.line AND u.severity = '{rules.Severity.ERROR}')
"""

# The walk's refusals, with the names their messages give: the facility, and its operator's
# as registered (before this chunk, by a chunk before it in a dry run, or by the first row
# issued here that declares it: ctr.services.generator_for).
REFUSALS_SQL = f"""
SELECT k.line, k.refusal, o.name,
       coalesce(g.name, cg.name, (
           SELECT r.generator_name FROM ctr_bulk_accepted a JOIN ctr_bulk_row r ON r.line = a.line
           WHERE r.generator_document = k.before AND r.generator_name <> ''
           ORDER BY r.line LIMIT 1))
FROM ctr_bulk_walk k
JOIN pev_network_receivingfacility o ON o.id = k.facility_id
LEFT JOIN {Generator._meta.db_table} g ON g.document = k.before
LEFT JOIN ctr_bulk_carried_generator cg ON cg.document = k.before
WHERE k.refusal IS NOT NULL
"""

# A dry run's chunk, for the chunks after it (CREATE_SQL).
CARRY_SQL = [
    """
    INSERT INTO ctr_bulk_carried_move (facility_id, waste_class, day, shipped)
    SELECT f.origin_facility_id, u.c, r.transport_date, u.v
    FROM ctr_bulk_accepted a
    JOIN ctr_bulk_fact f ON f.line = a.line JOIN ctr_bulk_row r ON r.line = a.line
    CROSS JOIN LATERAL unnest(r.classes, r.volumes) u(c, v)
    WHERE f.origin_facility_id IS NOT NULL
    """,
    """
    INSERT INTO ctr_bulk_carried_operator (facility_id, document)
    SELECT DISTINCT ON (f.origin_facility_id) f.origin_facility_id, a.generator_key
    FROM ctr_bulk_accepted a JOIN ctr_bulk_fact f ON f.line = a.line
    WHERE f.origin_facility_id IS NOT NULL AND f.operator_document IS NULL
    ORDER BY f.origin_facility_id, a.line
    ON CONFLICT DO NOTHING
    """,
    """
    INSERT INTO ctr_bulk_carried_generator (document, name)
    SELECT DISTINCT ON (r.generator_document) r.generator_document, r.generator_name
    FROM ctr_bulk_accepted a JOIN ctr_bulk_row r ON r.line = a.line
    WHERE r.generator_name <> ''
    ORDER BY r.generator_document, a.line
    ON CONFLICT DO NOTHING
    """,
]

# The checks of a chunk once its references are resolved, in order: (the rule's code, or ""
# for a step of the walk or the choice of the rows to issue; its SQL).
CHECK_SQL: list[tuple[str, str]] = [
    *((code, sql) for code, sql in RULE_SQL.items() if code not in SEQUENTIAL_RULES),
    *(("", sql) for sql in WALK_SQL),
    *((code, RULE_SQL[code]) for code in SEQUENTIAL_RULES),
    ("", ACCEPT_SQL),
]

FINDINGS_SQL = """
SELECT x.line, x.code, u.severity, x.message, u.article, x.field
FROM ctr_bulk_finding x JOIN ctr_bulk_rule u ON u.code = x.code
ORDER BY x.line, u.severity_rank, u.rule_rank, x.variant, x.sub
"""

ISSUE_SQL = [
    "DROP TABLE IF EXISTS ctr_bulk_ok, ctr_bulk_numbered",
    # The rows to issue (ACCEPT_SQL).
    """
    CREATE TEMP TABLE ctr_bulk_ok AS
    SELECT r.*, f.municipality_id, f.ibge_code, f.vehicle_id, f.equipment_id, f.facility_id,
           f.facility_municipality_id, f.total, extract(year FROM r.transport_date)::int AS year,
           (f.total > f.small_volume_limit) AS large_volume, a.generator_key
    FROM ctr_bulk_row r JOIN ctr_bulk_fact f ON f.line = r.line
    JOIN ctr_bulk_accepted a ON a.line = r.line
    """,
    "ANALYZE ctr_bulk_ok (line)",
    # ctr.services.generator_for: the registry's name is the first row's; each CTR records
    # the name its own row declares (ctr_ctr.generator_name, below). An onward row that
    # declares none names its facility's operator, registered already.
    """
    INSERT INTO ctr_generator (name, document)
    SELECT s.generator_name, s.generator_document
    FROM (
        SELECT DISTINCT ON (generator_document) line, generator_name, generator_document
        FROM ctr_bulk_ok WHERE generator_name <> '' ORDER BY generator_document, line
    ) s
    ORDER BY s.line
    ON CONFLICT (document) DO NOTHING
    """,
    # ctr.services.issue: the first onward CTR of a facility without an operator makes its
    # generator the operator.
    f"""
    INSERT INTO {FacilityOperator._meta.db_table} (facility_id, generator_id)
    SELECT DISTINCT ON (o.origin_facility_id) o.origin_facility_id, g.id
    FROM ctr_bulk_ok o JOIN {Generator._meta.db_table} g ON g.document = o.generator_key
    WHERE o.origin_facility_id IS NOT NULL
    ORDER BY o.origin_facility_id, o.line
    ON CONFLICT (facility_id) DO NOTHING
    """,
    # ctr.services.worksite_for: one worksite per generator and address, case and spacing
    # aside (the unique index's expression, ADDRESS_KEY_SQL); the first row wins. ON CONFLICT
    # on that index: a concurrent issuer or import that inserted the same site first wins.
    # Its location is the row's origin, so its municipality is the CTR's.
    """
    INSERT INTO ctr_worksite
        (generator_id, address, neighbourhood, location, permit_number, work_kind,
         is_large_generator, municipality_id)
    SELECT g.id, s.worksite_address, s.worksite_neighbourhood, s.origin, '', '', false,
           s.municipality_id
    FROM (
        SELECT DISTINCT ON (generator_document, """
    + ADDRESS_KEY_SQL.format("worksite_address")
    + """)
               line, generator_document, worksite_address, worksite_neighbourhood, origin,
               municipality_id
        FROM ctr_bulk_ok WHERE origin_facility_id IS NULL ORDER BY generator_document, """
    + ADDRESS_KEY_SQL.format("worksite_address")
    + """, line
    ) s
    JOIN ctr_generator g ON g.document = s.generator_document
    ORDER BY s.line
    ON CONFLICT """
    + WORKSITE_CONFLICT_SQL
    + """ DO NOTHING
    """,
    # Numbers: ctr.services.next_number for a set. The sequence rows are created if missing,
    # then locked in a fixed order (two imports never deadlock; a per-row issuer queues on the
    # row as it does behind another one), then advanced by the count of each.
    """
    INSERT INTO ctr_numbersequence (municipality_id, year, last_value)
    SELECT DISTINCT municipality_id, year, 0 FROM ctr_bulk_ok ORDER BY 1, 2
    ON CONFLICT (municipality_id, year) DO NOTHING
    """,
    """
    SELECT ns.id FROM ctr_numbersequence ns
    WHERE (ns.municipality_id, ns.year) IN (SELECT municipality_id, year FROM ctr_bulk_ok)
    ORDER BY ns.municipality_id, ns.year
    FOR UPDATE
    """,
    "TRUNCATE ctr_bulk_base",
    """
    WITH wanted AS (
        SELECT municipality_id, year, count(*) AS n FROM ctr_bulk_ok GROUP BY 1, 2
    ), advanced AS (
        UPDATE ctr_numbersequence ns SET last_value = ns.last_value + wanted.n
        FROM wanted
        WHERE ns.municipality_id = wanted.municipality_id AND ns.year = wanted.year
        RETURNING ns.municipality_id, ns.year, ns.last_value - wanted.n AS base
    )
    INSERT INTO ctr_bulk_base SELECT municipality_id, year, base FROM advanced
    """,
    # Each row's id, number, generator, worksite and warnings (narrow rows: the inserts below
    # join them to ctr_bulk_ok by line). Ids in line order, as one issue per row gives them;
    # the worksite of each (generator, address) pair is looked up once, not once per row.
    """
    CREATE TEMP TABLE ctr_bulk_numbered AS
    WITH numbered AS (
        SELECT x.line, nextval(%(id_sequence)s::regclass) AS id, x.sequence
        FROM (
            SELECT o.line, b.base + row_number() OVER (
                       PARTITION BY o.municipality_id, o.year ORDER BY o.line) AS sequence
            FROM ctr_bulk_ok o
            JOIN ctr_bulk_base b ON b.municipality_id = o.municipality_id AND b.year = o.year
            ORDER BY o.line
        ) x
    ), site AS MATERIALIZED (  -- not pulled up: one lookup per pair
        SELECT s.generator_document, s.worksite_address, g.id AS generator_id,
               (SELECT min(w.id) FROM ctr_worksite w
                WHERE w.generator_id = g.id
                  AND """
    + ADDRESS_KEY_SQL.format("w.address")
    + " = "
    + ADDRESS_KEY_SQL.format("s.worksite_address")
    + """) AS worksite_id
        FROM (
            SELECT DISTINCT generator_document, worksite_address FROM ctr_bulk_ok
            WHERE origin_facility_id IS NULL
        ) s
        JOIN ctr_generator g ON g.document = s.generator_document
    ), found AS (
        SELECT x.line,
               jsonb_agg(jsonb_build_object(
                   'code', x.code, 'severity', u.severity, 'message', x.message,
                   'article', u.article, 'field', x.field)
                   ORDER BY u.severity_rank, u.rule_rank, x.variant, x.sub) AS findings,
               jsonb_agg(x.code ORDER BY u.severity_rank, u.rule_rank, x.variant, x.sub)
                   AS codes
        FROM ctr_bulk_finding x JOIN ctr_bulk_rule u ON u.code = x.code
        GROUP BY x.line
    )
    SELECT n.line, n.id, n.sequence,
           coalesce(site.generator_id, (
               SELECT g.id FROM ctr_generator g WHERE g.document = o.generator_key
           )) AS generator_id,
           site.worksite_id,
           coalesce(fj.findings, '[]'::jsonb) AS findings,
           coalesce(fj.codes, '[]'::jsonb) AS codes,
           'CTR-' || o.ibge_code || '-' || o.year || '-'
               || CASE WHEN n.sequence < 1000000 THEN lpad(n.sequence::text, 6, '0')
                       ELSE n.sequence::text END AS number
    FROM ctr_bulk_ok o
    JOIN numbered n ON n.line = o.line
    -- An onward CTR has no worksite; its generator is its facility's operator.
    LEFT JOIN site ON o.origin_facility_id IS NULL
                  AND site.generator_document = o.generator_document
                  AND site.worksite_address = o.worksite_address
    LEFT JOIN found fj ON fj.line = o.line
    """,
    "ANALYZE ctr_bulk_numbered (line)",
    """
    INSERT INTO ctr_ctr
        (id, number, municipality_id, year, sequence, transporter_id, vehicle_id, equipment_id,
         generator_id, generator_name, worksite_id, origin, destination, origin_facility_id,
         destination_facility_id, crossing_into_id, transport_date, total_volume_m3, status,
         findings, fee_ufesp, received_volume_m3, closed_at, created_at, created_by_id)
    SELECT n.id, n.number, o.municipality_id, o.year, n.sequence, %(transporter)s,
           o.vehicle_id, o.equipment_id, n.generator_id,
           CASE WHEN o.generator_name <> '' THEN o.generator_name
                ELSE (SELECT g.name FROM ctr_generator g WHERE g.id = n.generator_id) END,
           n.worksite_id, o.origin, o.destination, o.origin_facility_id, o.facility_id,
           """
    + CROSSING_INTO_SQL.format("o.municipality_id", "o.facility_municipality_id")
    + """,
           o.transport_date, o.total, %(status)s, n.findings,
           CASE WHEN o.large_volume THEN 1 ELSE 0 END, NULL, NULL, %(at)s, %(user)s
    FROM ctr_bulk_numbered n JOIN ctr_bulk_ok o ON o.line = n.line ORDER BY n.id
    """,
    """
    INSERT INTO ctr_ctrwaste (ctr_id, waste_class, volume_m3, description)
    SELECT n.id, w.c, w.v, o.description
    FROM ctr_bulk_numbered n JOIN ctr_bulk_ok o ON o.line = n.line
    CROSS JOIN LATERAL unnest(o.classes, o.volumes) WITH ORDINALITY w(c, v, i)
    ORDER BY n.id, w.i
    """,
    # Append-only (the table refuses UPDATE and DELETE); INSERT is what it is for.
    """
    INSERT INTO ctr_ctrevent (ctr_id, at, actor_id, action, from_status, to_status, data)
    SELECT n.id, %(at)s, %(user)s, 'issue', '', %(status)s,
           jsonb_build_object('findings', n.codes)
    FROM ctr_bulk_numbered n ORDER BY n.id
    """,
]

ISSUED_TABLE = "ctr_bulk_numbered"  # the chunk's new CTRs: column `id` (ctr.signals)
ISSUED_SQL = f"SELECT line, number FROM {ISSUED_TABLE} ORDER BY line"
