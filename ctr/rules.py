"""The rule catalogue of the CTR (docs: shared/domain.md), one small unit per rule.

Each rule is declared once, here: its stable code, its severity, the article it comes from, its
title, its message templates in Portuguese and, for the rules checked at issue, the SQL that
finds the same breaches in a whole set of rows (the CSV import, ctr.bulk). The check (Python,
one CTR) and the SQL (set-based) hand the same template the same facts, and the template
formats them (FORMATS, one pair of Python and SQL per kind of value), so both paths word a
finding alike; tests/ctr/test_ctr_bulk.py runs both on a table of cases.

`evaluate` runs every rule of a stage and returns every finding at once: a CTR is never refused
one rule at a time (the principle of art. 132 of the Rio law in legal/). The catalogue page
`/regras/`, the API `/api/v1/rules/`, ctr.bulk and the tests all read REGISTRY.
"""

from __future__ import annotations

import datetime
import json
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.contrib.gis.geos import Point

from config.br import br_date, br_number
from config.br_forms import format_point
from pev_network.models import (
    FacilityKind,
    Municipality,
    MunicipalParameters,
    ReceivingFacility,
    WasteClass,
    licensed_sql,
)

from . import plausibility
from .models import (
    PROHIBITED_CLASSES,
    CTRWasteClass,
    Equipment,
    Generator,
    LicenceStatus,
    Transporter,
    TransporterLicence,
    Vehicle,
    Worksite,
    licence_restriction_sql,
    licence_valid_sql,
)


class Severity:
    ERROR = "error"
    WARNING = "warning"
    ALERT = "alert"
    LABELS = {ERROR: "erro", WARNING: "aviso", ALERT: "alerta"}
    ORDER = {ERROR: 0, WARNING: 1, ALERT: 2}  # errors first, as evaluate and ctr.bulk list them


class Stage:
    ISSUE = "issue"
    RECEPTION = "reception"
    MONITORING = "monitoring"
    LABELS = {ISSUE: "na emissão", RECEPTION: "no recebimento", MONITORING: "no acompanhamento"}


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    message: str
    article: str
    field: str | None = None

    def as_dict(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "article": self.article,
            "field": self.field,
        }


# --- how a value prints in a message: once in Python, once in SQL -------------------------------


def fmt(value: Decimal) -> str:
    """Brazilian decimal comma, no trailing zeros, no thousands dot: 1,5 m³."""
    return br_number(value, grouping=False)


def waste_name(code: str) -> str:
    """A waste class as a sentence names it: its label without the "(proibido)" mark."""
    return CTRWasteClass(code).label.removesuffix(" (proibido)")


def kind_name(code: str) -> str:
    return dict(FacilityKind.choices).get(code, code)


def classes_text(codes: Iterable[str]) -> str:
    return ", ".join(sorted(set(codes))) or "nenhuma"


# fmt in SQL: decimal comma, no trailing zeros.
FMT = "replace(trim_scale({})::text, '.', ',')"
# f"{x:.6f}": to_char of a float8 prints with C's "%.6f", as Python does (checked on 4,000
# values in tests/ctr/test_ctr_bulk.py).
COORD = "to_char({}, 'FM990.000000')"
# config.br_forms.format_point in SQL: "(lat; lon)", decimal comma.
POINT = (
    "'(' || replace(" + COORD.format("ST_Y({0})") + ", '.', ',') || '; ' || "
    "replace(" + COORD.format("ST_X({0})") + ", '.', ',') || ')'"
)


@dataclass(frozen=True)
class Format:
    """One kind of value in a message: `python` prints a value, `sql` prints a column ({0})."""

    python: Callable[[Any], str]
    sql: str


# A template's field names its kind after a colon ("{day:date}"); no kind is text as it is.
# The SQL of "class" and "kind" reads the labels from FORMAT_PARAMS.
FORMATS: dict[str, Format] = {
    "": Format(str, "{0}"),
    "date": Format(br_date, "coalesce(to_char({0}, 'DD/MM/YYYY'), '—')"),
    "decimal": Format(fmt, FMT),
    "point": Format(lambda p: format_point(p.x, p.y), POINT),
    "class": Format(waste_name, "(%(waste_names)s::jsonb ->> {0})"),
    "kind": Format(kind_name, "coalesce(%(kind_labels)s::jsonb ->> {0}, {0})"),
    "classes": Format(
        classes_text,
        "(SELECT coalesce(string_agg(a, ', ' ORDER BY a), 'nenhuma') FROM "
        '(SELECT DISTINCT a::text COLLATE "C" AS a FROM unnest({0}) a) s)',
    ),
}


# The labels that the SQL of FORMATS reads, as parameters.
FORMAT_PARAMS = {
    "waste_names": json.dumps({c.value: waste_name(c.value) for c in CTRWasteClass}),
    "kind_labels": json.dumps({k.value: str(k.label) for k in FacilityKind}),
}


def _sql_literal(text: str) -> str:
    # Doubled %: the statements run with psycopg2 parameters.
    return "'" + text.replace("'", "''").replace("%", "%%") + "'"


@dataclass(frozen=True)
class Message:
    """One way to break a rule: its template and, for the set-based path, its SQL.

    The SQL is a SELECT over the staged rows of ctr.bulk (`r`, ctr_bulk_row: what the row
    declares) and their facts (`f`, ctr_bulk_fact: the row's CTRDraft, resolved in PostGIS),
    with the transporter's facts as parameters (sql_params). It gives one row per breach:
    `line`, `sub` (the order of the breaches within a CTR, as the check yields them: the waste
    line), `field`, and one column per field of the template, unformatted.
    """

    template: str
    sql: str | None = None

    @property
    def fields(self) -> list[tuple[str, str]]:
        """(name, kind) of each field of the template, in order."""
        return [
            (name, spec or "")
            for _, name, spec, _ in string.Formatter().parse(self.template)
            if name is not None
        ]

    def format(self, params: Mapping[str, Any]) -> str:
        return _MESSAGE_FORMATTER.vformat(self.template, (), params)

    def sql_text(self, row: str) -> str:
        """The message in SQL, from the columns of `row` (the alias of the message's SELECT)."""
        text, columns = [], []
        for literal, name, spec, _ in string.Formatter().parse(self.template):
            text.append(literal.replace("%", "%%"))
            if name is not None:
                text.append("%s")
                columns.append(FORMATS[spec or ""].sql.format(f'{row}."{name}"'))
        if not columns:
            return _sql_literal(self.template)
        return f"format({_sql_literal(''.join(text))}, {', '.join(columns)})"


class _Formatter(string.Formatter):
    def format_field(self, value, format_spec: str) -> str:
        return FORMATS[format_spec].python(value)


_MESSAGE_FORMATTER = _Formatter()


@dataclass(frozen=True)
class Breach:
    """What a check found: the field concerned, which message of the rule, and its facts."""

    field: str | None
    variant: str
    params: dict[str, Any]


MAIN = ""  # the variant of a rule with a single message


def breach(field: str | None = None, variant: str = MAIN, **params) -> Breach:
    return Breach(field, variant, params)


@dataclass(frozen=True)
class Rule:
    code: str
    severity: str
    article: str
    title: str
    stage: str
    check: Callable[..., Iterable[Breach]]
    messages: Mapping[str, Message]  # by variant, in the order the check yields them
    # Why an issue rule has no SQL: ctr.bulk cannot know the fact it reads.
    not_in_bulk: str = ""
    # One SELECT for all the messages, when they share one scan: as a Message's, plus a
    # `variant` column naming the message of each breach (and the columns of every template).
    sql: str | None = None
    # Its fact depends on what the rows before it in a CSV file issue (the stock they ship):
    # ctr.bulk checks it after walking the file's rows in order.
    sequential: bool = False

    @property
    def description(self) -> str:
        return (self.check.__doc__ or "").strip()

    @property
    def in_bulk(self) -> bool:
        return self.sql is not None or all(m.sql for m in self.messages.values())

    def finding(self, found: Breach) -> Finding:
        message = self.messages[found.variant].format(found.params)
        return Finding(self.code, self.severity, message, self.article, found.field)


REGISTRY: dict[str, Rule] = {}


def rule(
    code: str,
    severity: str,
    article: str,
    title: str,
    message: Message | None = None,
    messages: Mapping[str, Message] | None = None,
    stage: str = Stage.ISSUE,
    not_in_bulk: str = "",
    sql: str | None = None,
    sequential: bool = False,
):
    """Register a check under its code with its message (or messages, by variant). The check
    yields one breach() per breach. A rule checked at issue brings the SQL of each message (or
    one `sql` for all of them), or says in `not_in_bulk` why the CSV import cannot check it;
    `sequential` when its fact depends on the rows before it in the file (Rule.sequential)."""
    if (message is None) == (messages is None):
        raise ValueError(f"rule {code}: give either message or messages")
    by_variant = {MAIN: message} if message is not None else dict(messages)
    for text in by_variant.values():
        for name, spec in text.fields:
            if not name.isidentifier() or spec not in FORMATS:
                raise ValueError(f"rule {code}: bad field {{{name}:{spec}}} in its message")
    with_sql = [m.sql is not None for m in by_variant.values()]
    if sql is not None:
        if any(with_sql):
            raise ValueError(f"rule {code}: SQL for the rule and for a message")
        with_sql = [True] * len(with_sql)
    if stage == Stage.ISSUE and not_in_bulk and any(with_sql):
        raise ValueError(f"rule {code}: not_in_bulk, yet a message has SQL")
    if stage == Stage.ISSUE and not not_in_bulk and not all(with_sql):
        raise ValueError(
            f"rule {code}: a rule checked at issue needs the SQL of every message (ctr.bulk) "
            "or not_in_bulk, saying why the CSV import cannot check it"
        )
    if stage != Stage.ISSUE and any(with_sql):
        raise ValueError(f"rule {code}: only rules checked at issue run in SQL")

    def register(check):
        if code in REGISTRY:
            raise ValueError(f"duplicate rule {code}")
        REGISTRY[code] = Rule(
            code, severity, article, title, stage, check, by_variant, not_in_bulk, sql, sequential
        )
        return check

    return register


def sql_params(transporter: Transporter) -> dict:
    """The parameters the rules' SQL reads: the transporter's facts that do not depend on the
    row (the CTRDraft's transporter, the same for every row of an import) and FORMAT_PARAMS.
    Its licence depends on each row's municipality: a column of ctr_bulk_fact."""
    return {
        **FORMAT_PARAMS,
        "document": transporter.document,
        "self_generator": transporter.is_self_generator,
        "prohibited": sorted(str(c) for c in PROHIBITED_CLASSES),
    }


def place_name(municipality: Municipality | None) -> str:
    """A municipality as the messages name it, "Guaratinguetá/SP" (in SQL: PLACE_SQL)."""
    return f"{municipality.name}/{municipality.uf}" if municipality is not None else ""


# place_name in SQL, of a pev_network_municipality row `{0}`.
PLACE_SQL = "({0}.name || '/' || {0}.uf)"


@dataclass
class WasteLine:
    waste_class: str
    volume_m3: Decimal
    description: str = ""


@dataclass(frozen=True)
class OriginStock:
    """A class at the origin facility of an onward CTR: its stock at the end of the day, what
    it received of it up to then, and how far sorting may change the volume (in %)."""

    stock_m3: Decimal
    received_m3: Decimal
    tolerance_pct: Decimal

    @property
    def allowed_m3(self) -> Decimal:
        return self.stock_m3 + self.received_m3 * self.tolerance_pct / 100


@dataclass
class CTRDraft:
    """Everything the rules read about a CTR, resolved beforehand (spatial facts in PostGIS).
    ctr.bulk resolves the same facts for a set of rows into ctr_bulk_fact."""

    transport_date: datetime.date
    transporter: Transporter
    origin: Point
    destination: Point
    waste: list[WasteLine]
    generator: Generator | None = None
    vehicle: Vehicle | None = None
    vehicle_plate: str = ""
    equipment: Equipment | None = None
    equipment_code: str = ""
    worksite_is_large_generator: bool = False
    plan_transporter_ids: set[int] = field(default_factory=set)
    plan_facility_ids: set[int] = field(default_factory=set)
    municipality: Municipality | None = None
    # The parameters in force on the transport date: the municipality's, and the facility's
    # municipality's (ctr.issue_reads reads both in the issue's one statement).
    parameters: MunicipalParameters | None = None
    facility_parameters: MunicipalParameters | None = None
    # The transporter's licence in the CTR's municipality (any status), None without one
    # (TRANSPORTER_NOT_LICENSED, TRANSPORTER_SUSPENDED).
    licence: TransporterLicence | None = None
    requested_facility: ReceivingFacility | None = None
    facility: ReceivingFacility | None = None
    facility_licensed: bool = False
    # The facility lies in the CTR's municipality or in one it lists in
    # Municipality.accepted_destinations (DESTINATION_OUTSIDE_AGREEMENT).
    destination_agreed: bool = True
    recycling_area_available: bool = False
    # An onward CTR (sorted waste leaving a facility, art. 3 III): the facility, its license on
    # the day, whether the origin point is inside it, and its stock per class at the end of
    # the day with the sorting tolerance (ctr.stock).
    origin_facility: ReceivingFacility | None = None
    origin_facility_licensed: bool = False
    origin_in_facility: bool = True
    origin_stock: dict[str, OriginStock] = field(default_factory=dict)
    # The registered worksite the CTR leaves from (ORIGIN_OUTSIDE_WORKSITE): found by id or
    # by generator and address, None when it has no registration; whether the origin lies
    # within it, and the GPS tolerance around it (its municipality's).
    registered_worksite: Worksite | None = None
    origin_in_worksite: bool = True
    worksite_tolerance_m: Decimal = Decimal(0)
    # ctr/offline.sync_facts: a CTR kept on the driver's phone offline,
    # its number, the hours from its departure to its arrival here, and the limit.
    provisional_number: str = ""
    provisional_hours: Decimal = Decimal(0)
    provisional_late: bool = False
    provisional_max_hours: int = 0

    def shipped_by_class(self) -> dict[str, Decimal]:
        shipped: dict[str, Decimal] = {}
        for line in self.waste:
            shipped[line.waste_class] = shipped.get(line.waste_class, Decimal("0")) + line.volume_m3
        return shipped

    @property
    def total_volume(self) -> Decimal:
        return sum((line.volume_m3 for line in self.waste), Decimal("0"))

    @property
    def small_volume_limit(self) -> Decimal:
        # A PEV is the municipality's own public equipment: its municipality's limit applies,
        # as in force on the transport date (Lei 3.978/2007 art. 12 §3).
        for parameters in (self.facility_parameters, self.parameters):
            if parameters is not None:
                return parameters.small_volume_limit_m3
        return MunicipalParameters._meta.get_field("small_volume_limit_m3").default


# --- the catalogue -----------------------------------------------------------------------
# In the SQL: `r` the staged row, `f` its facts (Message); ROWS and FACTS are their FROMs.

ROWS = "ctr_bulk_row r"
FACTS = "ctr_bulk_fact f JOIN ctr_bulk_row r ON r.line = f.line"
# Each waste line of the row, `w.c` its class and `w.i` its position from 1.
WASTE_LINES = "CROSS JOIN LATERAL unnest(r.classes) WITH ORDINALITY w(c, i)"
WASTE_FIELD = "(w.i - 1)::int AS sub, 'waste[' || (w.i - 1) || '].class' AS field"


# The transporter's licence in the CTR's municipality (the origin's), on the transport date:
# the check reads CTRDraft.licence (ctr.services.licence_in), the SQL the licence whose id
# ctr.bulk found for each row's municipality (f.licence_id, NULL without one) and its
# municipality's name (f.municipality_label). Validity and restriction are
# TransporterLicence.is_valid_on / restricted_on, in SQL licence_valid_sql /
# licence_restriction_sql (ctr.models: written once).
LICENCE_VALID_SQL = licence_valid_sql("l", "r.transport_date")


@rule(
    "TRANSPORTER_NOT_LICENSED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 13",
    "Transportador licenciado no município do CTR, com licença válida na data do transporte",
    messages={
        "other_generator": Message(
            "Gerador que transporta os próprios resíduos só pode emitir CTR dos seus "
            "resíduos (art. 12 §4): o gerador informado é outro.",
            sql=f"""
            SELECT r.line, 0 AS sub, 'generator' AS field
            FROM {FACTS}
            WHERE %(self_generator)s AND f.generator_document <> %(document)s
            """,
        ),
        "unlicensed": Message(
            "O transportador não tem licença em {municipality} na data do transporte ({day:date}).",
            sql=f"""
            SELECT r.line, 0 AS sub, 'transport_date' AS field,
                   f.municipality_label AS municipality, r.transport_date AS day
            FROM {FACTS}
            WHERE NOT %(self_generator)s AND f.municipality_id IS NOT NULL
              AND f.licence_id IS NULL
            """,
        ),
        "not_valid": Message(
            "A licença {licence} do transportador em {municipality} não é válida em "
            "{day:date} (válida de {valid_from:date} a {valid_until:date}).",
            sql=f"""
            SELECT r.line, 0 AS sub, 'transport_date' AS field, l.number AS licence,
                   f.municipality_label AS municipality, r.transport_date AS day,
                   l.valid_from, l.valid_until
            FROM {FACTS} JOIN {TransporterLicence._meta.db_table} l ON l.id = f.licence_id
            WHERE NOT %(self_generator)s AND NOT {LICENCE_VALID_SQL}
            """,
        ),
    },
)
def transporter_not_licensed(ctr: CTRDraft):
    """O transportador deve ser licenciado (cadastrado) pelo município do CTR, o da origem,
    com licença válida na data do transporte; a licença de outro município não vale aqui. O
    gerador que transporta os próprios resíduos dispensa o licenciamento (art. 12 §4), mas só
    pode levar resíduos seus."""
    transporter = ctr.transporter
    if transporter.is_self_generator:
        if ctr.generator is not None and ctr.generator.document != transporter.document:
            yield breach("generator", "other_generator")
        return
    if ctr.municipality is None:
        return  # no municipality, no licence to read: ORIGIN_OUTSIDE_MUNICIPALITY refuses it
    licence = ctr.licence
    if licence is None:
        yield breach(
            "transport_date",
            "unlicensed",
            municipality=place_name(ctr.municipality),
            day=ctr.transport_date,
        )
    elif not licence.is_valid_on(ctr.transport_date):
        yield breach(
            "transport_date",
            "not_valid",
            licence=licence.number,
            municipality=place_name(ctr.municipality),
            day=ctr.transport_date,
            valid_from=licence.valid_from,
            valid_until=licence.valid_until,
        )


# TransporterLicence.restricted_on(r.transport_date) of the row's licence, in SQL.
RESTRICTION_SQL = licence_restriction_sql("l", "r.transport_date")
LICENCE_FACTS = f"{FACTS} JOIN {TransporterLicence._meta.db_table} l ON l.id = f.licence_id"


@rule(
    "TRANSPORTER_SUSPENDED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 25 IV-V, art. 34",
    "Licença do transportador no município do CTR não suspensa nem cassada na data do transporte",
    messages={
        "suspended_until": Message(
            "O transportador está suspenso em {municipality} desde {since:date} até {until:date}.",
            sql=f"""
            SELECT r.line, 0 AS sub, NULL::text AS field, f.municipality_label AS municipality,
                   l.status_since AS since, l.suspended_until AS until
            FROM {LICENCE_FACTS}
            WHERE {RESTRICTION_SQL} = '{LicenceStatus.SUSPENDED.value}'
              AND l.suspended_until IS NOT NULL
            """,
        ),
        "suspended": Message(
            "O transportador está suspenso em {municipality} desde {since:date}.",
            sql=f"""
            SELECT r.line, 0 AS sub, NULL::text AS field, f.municipality_label AS municipality,
                   l.status_since AS since
            FROM {LICENCE_FACTS}
            WHERE {RESTRICTION_SQL} = '{LicenceStatus.SUSPENDED.value}'
              AND l.suspended_until IS NULL
            """,
        ),
        "revoked": Message(
            "A licença do transportador em {municipality} foi cassada em {since:date}.",
            sql=f"""
            SELECT r.line, 0 AS sub, NULL::text AS field, f.municipality_label AS municipality,
                   l.status_since AS since
            FROM {LICENCE_FACTS}
            WHERE {RESTRICTION_SQL} = '{LicenceStatus.REVOKED.value}'
            """,
        ),
    },
)
def transporter_suspended(ctr: CTRDraft):
    """Um transportador suspenso ou cassado não pode transportar no município que o suspendeu
    ou cassou; a suspensão em um município não impede os CTRs de outro."""
    licence = ctr.licence
    if licence is None:
        return
    status = licence.restricted_on(ctr.transport_date)
    if status is None:
        return
    place = place_name(ctr.municipality)
    if status == LicenceStatus.SUSPENDED:
        until = licence.suspended_until
        yield breach(
            None,
            "suspended_until" if until else "suspended",
            municipality=place,
            since=licence.status_since,
            until=until,
        )
    else:
        yield breach(None, "revoked", municipality=place, since=licence.status_since)


@rule(
    "ORIGIN_OUTSIDE_MUNICIPALITY",
    Severity.ERROR,
    "Lei 3.978/2007 art. 2",
    "Origem dentro do limite de um município atendido",
    message=Message(
        "A origem {origin:point} não está dentro de nenhum município atendido pela plataforma.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'origin' AS field, r.origin
        FROM {FACTS}
        WHERE f.municipality_id IS NULL
        """,
    ),
)
def origin_outside_municipality(ctr: CTRDraft):
    """A origem (a obra ou imóvel) deve estar dentro do limite do município; é ele que define o
    município do CTR."""
    if ctr.municipality is None:
        yield breach("origin", origin=ctr.origin)


@rule(
    "DESTINATION_OUTSIDE_FACILITY",
    Severity.ERROR,
    "Lei 3.978/2007 art. 13 p.ú., art. 2 §1 VI",
    "Ponto de descarga dentro do polígono da área de destino (com a tolerância do GPS)",
    messages={
        "requested": Message(
            "O ponto de descarga {destination:point} não está dentro da área “{facility}” "
            "informada como destino."
        ),
        "anywhere": Message(
            "O ponto de descarga {destination:point} não está dentro de nenhuma área de "
            "recebimento da rede."
        ),
    },
    # One scan for both messages.
    sql=f"""
    SELECT r.line, 0 AS sub, 'destination' AS field,
           CASE WHEN f.requested_id IS NOT NULL THEN 'requested' ELSE 'anywhere' END AS variant,
           r.destination, f.requested_name AS facility
    FROM {FACTS}
    WHERE f.facility_id IS NULL
    """,
)
def destination_outside_facility(ctr: CTRDraft):
    """O resíduo só pode ser descarregado dentro de uma área da rede; o ponto de descarga deve
    estar dentro do polígono da área, admitida a tolerância de GPS do município."""
    if ctr.facility is not None:
        return
    if ctr.requested_facility is not None:
        yield breach(
            "destination",
            "requested",
            destination=ctr.destination,
            facility=ctr.requested_facility.name,
        )
    else:
        yield breach("destination", "anywhere", destination=ctr.destination)


@rule(
    "FACILITY_NOT_LICENSED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 14 §1",
    "Área de destino com licença válida na data do transporte",
    message=Message(
        "A área “{facility}” não tem licença válida em {day:date}.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'destination_facility' AS field,
               f.facility_name AS facility, r.transport_date AS day
        FROM {FACTS}
        WHERE f.facility_id IS NOT NULL AND NOT f.licensed
        """,
    ),
)
def facility_not_licensed(ctr: CTRDraft):
    """Os receptores devem ser licenciados: a licença da área de destino deve valer na data do
    transporte."""
    if ctr.facility is not None and not ctr.facility_licensed:
        yield breach("destination_facility", facility=ctr.facility.name, day=ctr.transport_date)


@rule(
    "DESTINATION_OUTSIDE_AGREEMENT",
    Severity.ERROR,
    "Lei 3.978/2007 art. 2 caput, art. 4 §2 II",
    "Área de destino no município do CTR ou em um município cujas áreas ele aceita "
    "(consórcio ou convênio)",
    message=Message(
        "A área “{facility}” fica em {place}, que não está entre os municípios cujas áreas "
        "recebem os CTRs de {municipality} (consórcio ou convênio).",
        sql=f"""
        SELECT r.line, 0 AS sub, 'destination_facility' AS field,
               f.facility_name AS facility, f.facility_place AS place,
               f.municipality_label AS municipality
        FROM {FACTS}
        WHERE f.facility_id IS NOT NULL AND NOT f.destination_agreed
        """,
    ),
)
def destination_outside_agreement(ctr: CTRDraft):
    """Os resíduos gerados no município devem ir às áreas do seu plano (art. 2 caput, art. 4
    §2 II): as do próprio município ou as de um município com que ele tem consórcio ou
    convênio (a lista "municípios cujas áreas recebem os CTRs deste"). Uma área licenciada
    em outro município, fora dessa lista, não faz parte da rede do município de origem."""
    # An error, not a warning: art. 2 caput says "devem ser destinados às áreas previstas no
    # art. 4º", the network of the municipality's own plan; a licence elsewhere (art. 14 §1,
    # FACILITY_NOT_LICENSED) does not put an area in it, an agreement does (docs/legal.md).
    if ctr.facility is not None and not ctr.destination_agreed:
        yield breach(
            "destination_facility",
            facility=ctr.facility.name,
            place=place_name(ctr.facility.municipality),
            municipality=place_name(ctr.municipality),
        )


@rule(
    "CLASS_NOT_ACCEPTED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 3 II-IV, art. 18",
    "Toda classe de resíduo do CTR é aceita pela área de destino",
    message=Message(
        "A área “{facility}” ({kind:kind}) não recebe {waste:class}; aceita: {accepted:classes}.",
        sql=f"""
        SELECT r.line, {WASTE_FIELD}, f.facility_name AS facility, f.facility_kind AS kind,
               w.c AS waste, f.accepted_classes AS accepted
        FROM {FACTS} {WASTE_LINES}
        WHERE f.facility_id IS NOT NULL AND NOT (w.c = ANY(%(prohibited)s))
          AND NOT (w.c = ANY(f.accepted_classes))
        """,
    ),
)
def class_not_accepted(ctr: CTRDraft):
    """Cada área recebe só as classes para que foi licenciada: aterro de RCC e área de
    reciclagem, só classe A."""
    facility = ctr.facility
    if facility is None:
        return
    for index, line in enumerate(ctr.waste):
        if line.waste_class in PROHIBITED_CLASSES:
            continue
        if line.waste_class not in facility.accepted_classes:
            yield breach(
                f"waste[{index}].class",
                facility=facility.name,
                kind=facility.kind,
                waste=line.waste_class,
                accepted=facility.accepted_classes,
            )


@rule(
    "PROHIBITED_WASTE",
    Severity.ERROR,
    "Lei 3.978/2007 art. 7, art. 14 §6",
    "Sem resíduo domiciliar, industrial ou de serviço de saúde",
    message=Message(
        "{waste:class} não pode ser levado à rede de recebimento de RCC e volumosos.",
        sql=f"""
        SELECT r.line, {WASTE_FIELD}, w.c AS waste
        FROM {ROWS} {WASTE_LINES}
        WHERE w.c = ANY(%(prohibited)s)
        """,
    ),
)
def prohibited_waste(ctr: CTRDraft):
    """A rede não recebe resíduos domiciliares não inertes, industriais nem de serviços de saúde."""
    for index, line in enumerate(ctr.waste):
        if line.waste_class in PROHIBITED_CLASSES:
            yield breach(f"waste[{index}].class", waste=line.waste_class)


@rule(
    "LARGE_VOLUME_AT_PEV",
    Severity.ERROR,
    "Lei 3.978/2007 art. 12 §1-2",
    "PEV recebe no máximo o limite de pequeno volume (1 m³) por descarga",
    message=Message(
        "O PEV “{facility}” recebe até {volume_limit:decimal} m³ por descarga; o CTR declara "
        "{total:decimal} m³. Grandes volumes vão para ATT, área de reciclagem ou aterro de RCC.",
        sql=f"""
        SELECT f.line, 0 AS sub, 'waste' AS field, f.facility_name AS facility,
               f.small_volume_limit AS volume_limit, f.total
        FROM ctr_bulk_fact f
        WHERE f.facility_kind = '{FacilityKind.PEV.value}' AND f.total > f.small_volume_limit
        """,
    ),
)
def large_volume_at_pev(ctr: CTRDraft):
    """Um PEV recebe só pequenos volumes: até o limite do município (1 m³) por descarga;
    grandes volumes vão para a rede de ATT, reciclagem e aterro."""
    facility = ctr.facility
    if facility is not None and facility.kind == FacilityKind.PEV:
        limit = ctr.small_volume_limit
        if ctr.total_volume > limit:
            yield breach(
                "waste", facility=facility.name, volume_limit=limit, total=ctr.total_volume
            )


@rule(
    "OVER_EQUIPMENT_CAPACITY",
    Severity.ERROR,
    "Lei 3.978/2007 art. 12 §4 II",
    "Volume declarado não excede a capacidade nominal do equipamento",
    message=Message(
        "O volume declarado ({total:decimal} m³) excede a capacidade nominal do equipamento "
        "{equipment} ({capacity:decimal} m³).",
        sql="""
        SELECT f.line, 0 AS sub, 'waste' AS field, f.total, f.equipment_db_code AS equipment,
               f.equipment_capacity AS capacity
        FROM ctr_bulk_fact f
        WHERE f.equipment_id IS NOT NULL AND f.total > f.equipment_capacity
        """,
    ),
)
def over_equipment_capacity(ctr: CTRDraft):
    """A caçamba só pode ser usada até o seu nível original: sem chapas que aumentem a
    capacidade."""
    equipment = ctr.equipment
    if equipment is not None and ctr.total_volume > equipment.nominal_capacity_m3:
        yield breach(
            "waste",
            total=ctr.total_volume,
            equipment=equipment.code,
            capacity=equipment.nominal_capacity_m3,
        )


# Lei 3.978/2007 art. 13 (transporters "devem ser cadastrados") and art. 22 II (inspectors
# "vistoriar os veículos cadastrados para o transporte"): the truck is in the registration.
@rule(
    "VEHICLE_NOT_REGISTERED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 13, art. 22 II",
    "Veículo cadastrado pelo transportador",
    message=Message(
        "O veículo de placa {plate} não está no cadastro deste transportador.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'vehicle_plate' AS field,
               CASE WHEN r.vehicle_plate = '' THEN '(vazia)' ELSE r.vehicle_plate END AS plate
        FROM {FACTS}
        WHERE f.vehicle_id IS NULL
        """,
    ),
)
def vehicle_not_registered(ctr: CTRDraft):
    """O veículo (a placa) deve estar no cadastro do transportador, ativo: são os veículos
    cadastrados para o transporte que a fiscalização vistoria."""
    if ctr.vehicle is None:
        yield breach("vehicle_plate", plate=ctr.vehicle_plate or "(vazia)")


# Lei 3.978/2007 art. 13 and art. 22 II ("os equipamentos acondicionadores de resíduos"; art. 3
# VII: caçambas and the like): the caçamba named is in the registration. No caçamba named is
# no breach: a truck's own body carries the load.
@rule(
    "EQUIPMENT_NOT_REGISTERED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 13, art. 22 II",
    "Equipamento (caçamba) cadastrado pelo transportador",
    message=Message(
        "O equipamento {equipment} não está no cadastro deste transportador.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'equipment_code' AS field, r.equipment_code AS equipment
        FROM {FACTS}
        WHERE f.equipment_id IS NULL AND r.equipment_code <> ''
        """,
    ),
)
def equipment_not_registered(ctr: CTRDraft):
    """O equipamento (a caçamba) indicado deve estar no cadastro do transportador, ativo."""
    if ctr.equipment is None and ctr.equipment_code:
        yield breach("equipment_code", equipment=ctr.equipment_code)


@rule(
    "NOT_IN_GENERATOR_PLAN",
    Severity.WARNING,
    "Lei 3.978/2007 art. 9 p.ú. I",
    "O PGRCC do grande gerador indica este transportador e este destino",
    # The worksite of a CSV row is its generator's at its address (ctr.services.build_draft,
    # by id or by generator and address); ctr_bulk_fact holds whether it is a large
    # generator's and whether its PGRCC in force (Worksite.plan_*) names the transporter and
    # the destination (bulk.RESOLVE_SQL).
    messages={
        "transporter": Message(
            "O PGRCC da obra não indica este transportador.",
            sql=f"""
            SELECT r.line, 0 AS sub, 'transporter' AS field
            FROM {FACTS}
            WHERE f.plan_large AND NOT f.plan_transporter
            """,
        ),
        "facility": Message(
            "O PGRCC da obra não indica “{facility}” como destino.",
            sql=f"""
            SELECT r.line, 0 AS sub, 'destination_facility' AS field, f.facility_name AS facility
            FROM {FACTS}
            WHERE f.plan_large AND f.facility_id IS NOT NULL AND NOT f.plan_facility
            """,
        ),
    },
)
def not_in_generator_plan(ctr: CTRDraft):
    """O grande gerador anuncia no seu Projeto de Gerenciamento os transportadores e destinos
    que usará."""
    if not ctr.worksite_is_large_generator:
        return
    if ctr.transporter.pk not in ctr.plan_transporter_ids:
        yield breach("transporter", "transporter")
    if ctr.facility is not None and ctr.facility.pk not in ctr.plan_facility_ids:
        yield breach("destination_facility", "facility", facility=ctr.facility.name)


@rule(
    "CLASS_A_TO_LANDFILL",
    Severity.WARNING,
    "Lei 3.978/2007 art. 18 p.ú.",
    "Classe A a aterro havendo área de reciclagem licenciada",
    message=Message(
        "Há área de reciclagem licenciada no município: o resíduo classe A deve ser "
        "prioritariamente reciclado.",
        # ctr.services.recycling_area_available, only for the rows it concerns.
        sql=f"""
        SELECT r.line, 0 AS sub, 'destination_facility' AS field
        FROM {FACTS}
        WHERE f.facility_kind = '{FacilityKind.LANDFILL.value}'
          AND '{WasteClass.A.value}' = ANY(r.classes)
          AND EXISTS (
            SELECT 1 FROM pev_network_receivingfacility rf
            WHERE rf.kind = '{FacilityKind.RECYCLING.value}'
              AND rf.municipality_id = f.municipality_id
              AND '{WasteClass.A.value}' = ANY(rf.accepted_classes)
              AND {licensed_sql("rf.id", "r.transport_date")}
          )
        """,
    ),
)
def class_a_to_landfill(ctr: CTRDraft):
    """O resíduo classe A deve ser prioritariamente reciclado; o aterro é para quando a
    reciclagem for inviável."""
    if (
        ctr.facility is not None
        and ctr.facility.kind == FacilityKind.LANDFILL
        and ctr.recycling_area_available
        and any(line.waste_class == WasteClass.A for line in ctr.waste)
    ):
        yield breach("destination_facility")


@rule(
    "ORIGIN_OUTSIDE_WORKSITE",
    Severity.WARNING,
    "Lei 3.978/2007 art. 3 VI, art. 13",
    "Origem do CTR dentro da obra cadastrada, com a tolerância do GPS",
    messages={
        "area": Message(
            "A origem {origin:point} fica fora da área cadastrada da obra “{worksite}”, além "
            "da tolerância de {tolerance:decimal} m do GPS."
        ),
        "point": Message(
            "A origem {origin:point} fica a mais de {tolerance:decimal} m do local cadastrado "
            "da obra “{worksite}”."
        ),
    },
    # ctr_bulk_worksite (bulk.RESOLVE_SQL): each row's registered worksite, found by generator
    # and address as ctr.services.find_worksite finds it, and whether the origin is within it.
    sql="""
    SELECT r.line, 0 AS sub, 'origin' AS field,
           CASE WHEN ws.has_area THEN 'area' ELSE 'point' END AS variant,
           r.origin, ws.address AS worksite, ws.tolerance
    FROM ctr_bulk_worksite ws JOIN ctr_bulk_row r ON r.line = ws.line
    WHERE NOT ws.origin_inside
    """,
)
def origin_outside_worksite(ctr: CTRDraft):
    """O CTR informa a origem dos resíduos (art. 3 VI): a carga de uma obra cadastrada pelo
    gerador parte de dentro dela, do contorno desenhado ou do ponto marcado, com a tolerância
    do GPS do município. É aviso, não erro: a lei não proíbe o transporte por isso, mas uma
    origem fora da obra pode ser resíduo de outro lugar sob o nome dela, e fica registrada
    para o Núcleo e a fiscalização (art. 13)."""
    site = ctr.registered_worksite
    if site is not None and not ctr.origin_in_worksite:
        yield breach(
            "origin",
            "area" if site.area is not None else "point",
            origin=ctr.origin,
            worksite=site.address,
            tolerance=ctr.worksite_tolerance_m,
        )


# --- onward CTRs: sorted waste leaving an ATT or a PEV --------------------------------------

# In the SQL, an onward row is one with f.origin_facility_id (the facility it leaves, known
# and the importing user's to ship from); ctr_bulk_origin_class holds, per line and class, the
# volume shipped and the stock stored at the end of the transport day (ctr.stock), and
# ctr_bulk_stock the stock the row finds once the rows before it in the file are issued.
SHIPPING_KINDS = (FacilityKind.ATT, FacilityKind.PEV)
ONWARD_FACTS = f"{FACTS} WHERE f.origin_facility_id IS NOT NULL"


@rule(
    "ORIGIN_FACILITY_KIND",
    Severity.ERROR,
    "Lei 3.978/2007 art. 3 III e V",
    "CTR de saída parte de uma ATT ou de um PEV",
    message=Message(
        "Só ATT e PEV expedem resíduos recebidos: “{facility}” é {kind:kind}.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'origin_facility' AS field, f.origin_name AS facility,
               f.origin_kind AS kind
        FROM {ONWARD_FACTS}
          AND f.origin_kind NOT IN ({", ".join(f"'{k.value}'" for k in SHIPPING_KINDS)})
        """,
    ),
)
def origin_facility_kind(ctr: CTRDraft):
    """A ATT recebe e faz a triagem dos resíduos para posterior remoção (art. 3 III); o PEV
    concentra pequenos volumes que o município leva adiante (art. 3 V). Aterro e área de
    reciclagem são destinos."""
    facility = ctr.origin_facility
    if facility is not None and facility.kind not in SHIPPING_KINDS:
        yield breach("origin_facility", facility=facility.name, kind=facility.kind)


@rule(
    "ORIGIN_FACILITY_NOT_LICENSED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 14 §1",
    "Área de origem do CTR de saída com licença válida na data do transporte",
    message=Message(
        "A área de origem “{facility}” não tem licença válida em {day:date}.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'origin_facility' AS field, f.origin_name AS facility,
               r.transport_date AS day
        FROM {ONWARD_FACTS} AND NOT f.origin_licensed
        """,
    ),
)
def origin_facility_not_licensed(ctr: CTRDraft):
    """Os receptores devem ser licenciados (art. 14 §1), também quando expedem o que
    receberam."""
    if ctr.origin_facility is not None and not ctr.origin_facility_licensed:
        yield breach("origin_facility", facility=ctr.origin_facility.name, day=ctr.transport_date)


@rule(
    "ORIGIN_OUTSIDE_ORIGIN_FACILITY",
    Severity.ERROR,
    "Lei 3.978/2007 art. 3 III e VI",
    "Origem do CTR de saída dentro da área de origem",
    message=Message(
        "A origem {origin:point} não está dentro da área “{facility}”.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'origin' AS field, r.origin, f.origin_name AS facility
        FROM {ONWARD_FACTS} AND NOT f.origin_inside
        """,
    ),
)
def origin_outside_origin_facility(ctr: CTRDraft):
    """O CTR de saída parte da área que recebeu os resíduos: a origem fica dentro do seu
    polígono, com a tolerância do GPS do município."""
    if ctr.origin_facility is not None and not ctr.origin_in_facility:
        yield breach("origin", origin=ctr.origin, facility=ctr.origin_facility.name)


@rule(
    "CLASS_NOT_RECEIVED_AT_ORIGIN",
    Severity.ERROR,
    "Lei 3.978/2007 art. 3 III",
    "A área de origem recebeu cada classe que expede",
    message=Message(
        "A área “{facility}” não recebeu {cls:class} até {day:date} (CTRs recebidos): não "
        "pode expedi-la.",
        sql=f"""
        SELECT r.line, {WASTE_FIELD}, f.origin_name AS facility, w.c AS cls,
               r.transport_date AS day
        FROM {FACTS} {WASTE_LINES}
        LEFT JOIN ctr_bulk_origin_class s ON s.line = r.line AND s.waste_class = w.c
        WHERE f.origin_facility_id IS NOT NULL AND coalesce(s.received, 0) <= 0
        """,
    ),
)
def class_not_received_at_origin(ctr: CTRDraft):
    """Uma área de triagem expede o que recebeu: uma classe que nenhum CTR confirmado levou
    até ela não pode sair dela."""
    if ctr.origin_facility is None:
        return
    for index, line in enumerate(ctr.waste):
        stock = ctr.origin_stock.get(line.waste_class)
        if stock is None or stock.received_m3 <= 0:
            yield breach(
                f"waste[{index}].class",
                facility=ctr.origin_facility.name,
                cls=line.waste_class,
                day=ctr.transport_date,
            )


# OriginStock.allowed_m3 in SQL, on the columns stock, received and tolerance of {s} (exact:
# a product, where "/ 100" would round to the division's scale), and the breach
# over_facility_stock finds on them (ctr.bulk's walk of the file reads it too: a row that
# breaks it issues nothing, so ships nothing).
ALLOWED_SQL = "({s}.stock + {s}.received * {s}.tolerance * 0.01)"
OVER_STOCK_SQL = "{s}.received > 0 AND {s}.volume > {s}.allowed"
# Decimal.quantize(Decimal("0.001")) in SQL: to the thousandth, half to even (PostgreSQL's
# round() takes half away from zero).
QUANTIZE_SQL = (
    "(CASE WHEN {0} * 1000 - floor({0} * 1000) = 0.5"
    " THEN (floor({0} * 1000) + abs(mod(floor({0} * 1000), 2))) / 1000"
    " ELSE round({0}, 3) END)"
)


@rule(
    "OVER_FACILITY_STOCK",
    Severity.ERROR,
    "Lei 3.978/2007 art. 3 III, art. 13 p.ú.",
    "Volume expedido dentro do estoque da área de origem, mais a tolerância de triagem",
    message=Message(
        "Saída de {volume:decimal} m³ de {cls:class} acima do que a área “{facility}” pode "
        "expedir em {day:date}: estoque de {stock:decimal} m³ mais {tolerance:decimal}% do "
        "recebido ({allowed:decimal} m³).",
        sql=f"""
        SELECT s.line, s.sub, 'waste' AS field, s.volume, s.waste_class AS cls,
               f.origin_name AS facility, r.transport_date AS day, s.stock, s.tolerance,
               {QUANTIZE_SQL.format("s.allowed")} AS allowed
        FROM ctr_bulk_stock s
        JOIN ctr_bulk_fact f ON f.line = s.line JOIN ctr_bulk_row r ON r.line = s.line
        WHERE {OVER_STOCK_SQL.format(s="s")}
        """,
    ),
    sequential=True,
)
def over_facility_stock(ctr: CTRDraft):
    """O volume que sai de uma classe não passa do estoque da área (recebido − expedido −
    beneficiado na área), mais a variação de volume que a triagem admite (parâmetro do
    município, por classe). Uma classe nunca recebida já é outra constatação."""
    if ctr.origin_facility is None:
        return
    for waste_class, volume in ctr.shipped_by_class().items():
        stock = ctr.origin_stock.get(waste_class)
        if stock is None or stock.received_m3 <= 0:
            continue
        if volume > stock.allowed_m3:
            yield breach(
                "waste",
                volume=volume,
                cls=waste_class,
                facility=ctr.origin_facility.name,
                day=ctr.transport_date,
                stock=stock.stock_m3,
                tolerance=stock.tolerance_pct,
                allowed=stock.allowed_m3.quantize(Decimal("0.001")),
            )


# The offline provisional CTR (ctr/offline.py).
@rule(
    "PROVISIONAL_SYNC_LATE",
    Severity.WARNING,
    "Lei 3.978/2007 art. 3 VI, art. 13",
    "CTR provisório (emitido sem conexão) enviado dentro do prazo do município",
    message=Message(
        "O CTR provisório {number} chegou {hours:decimal} h depois da saída, além do prazo "
        "de {limit} h do município para enviar um CTR emitido sem conexão."
    ),
    not_in_bulk="uma linha do CSV não tem número provisório nem hora de saída: a importação "
    "não traz CTRs guardados num aparelho sem conexão",
)
def provisional_sync_late(ctr: CTRDraft):
    """O CTR é o documento do transportador sobre cada carga (art. 3 VI), e o transportador
    está submetido à ação gestora do Poder Público (art. 13): um CTR guardado no aparelho por
    falta de conexão fica fora do controle até chegar ao sistema. A lei não fixa o prazo; é um
    parâmetro do município (Município: prazo para sincronizar, 24 h por padrão)."""
    if ctr.provisional_number and ctr.provisional_late:
        yield breach(
            "provisional_departure_at",
            number=ctr.provisional_number,
            hours=ctr.provisional_hours,
            limit=ctr.provisional_max_hours,
        )


@dataclass
class ReceptionFacts:
    declared_m3: Decimal
    received_m3: Decimal
    tolerance_pct: Decimal
    # ctr.plausibility: where the reception was confirmed (None: the
    # device sent no location) and the trip from departure to reception.
    place: plausibility.Place | None = None
    travel: plausibility.Travel | None = None


@rule(
    "RECEIVED_VOLUME_MISMATCH",
    Severity.WARNING,
    "Lei 3.978/2007 art. 13 p.ú.",
    "Volume recebido confere com o declarado (dentro da tolerância)",
    message=Message(
        "Recebido {received:decimal} m³, declarado {declared:decimal} m³: diferença acima de "
        "{tolerance:decimal}%."
    ),
    stage=Stage.RECEPTION,
)
def received_volume_mismatch(facts: ReceptionFacts):
    """O receptor confere o volume que chegou; uma diferença além da tolerância é registrada."""
    if facts.declared_m3 <= 0:
        return
    difference = abs(facts.received_m3 - facts.declared_m3)
    if difference * 100 > facts.tolerance_pct * facts.declared_m3:
        yield breach(
            "received_volume_m3",
            received=facts.received_m3,
            declared=facts.declared_m3,
            tolerance=facts.tolerance_pct,
        )


# --- where and when the reception was confirmed (ctr.plausibility) ----------------------------


@rule(
    "RECEPTION_AWAY_FROM_FACILITY",
    Severity.WARNING,
    "Lei 3.978/2007 art. 13 p.ú.",
    "Recebimento confirmado na área de destino (dentro da tolerância do GPS)",
    message=Message(
        "Recebimento confirmado a {distance} m da área “{facility}”, além da tolerância de "
        "{tolerance:decimal} m do GPS."
    ),
    stage=Stage.RECEPTION,
)
def reception_away_from_facility(facts: ReceptionFacts):
    """O recebimento comprova a destinação correta: confirmado longe da área, com o local do
    aparelho do receptor, é registrado para o Núcleo (não é recusado: o GPS de um celular erra
    sob um telhado; o Núcleo vê o padrão)."""
    place = facts.place
    if place is not None and place.away:
        yield breach(
            "location",
            distance=br_number(place.distance_m, 0),  # "2.062": a thousands dot, in metres
            facility=place.facility,
            tolerance=place.tolerance_m,
        )


@rule(
    "TRAVEL_TOO_FAST",
    Severity.ALERT,
    "Lei 3.978/2007 art. 3 VI, art. 13 p.ú.",
    "Tempo de viagem possível para a distância da origem ao destino",
    message=Message(
        "Recebido {elapsed} depois da partida: {distance:decimal} km de percurso estimado "
        "levam pelo menos {fastest} a {speed:decimal} km/h."
    ),
    stage=Stage.RECEPTION,
)
def travel_too_fast(facts: ReceptionFacts):
    """Uma carga que chega antes do que a distância permite não saiu de onde nem quando o
    CTR diz (o CTR informa a origem, art. 3 VI): um alerta para o acompanhamento."""
    trip = facts.travel
    if trip is not None and trip.too_fast:
        yield breach(
            None,
            elapsed=plausibility.duration_text(trip.elapsed_min),
            distance=Decimal(str(round(trip.road_km, 1))),
            fastest=plausibility.duration_text(trip.fastest_min),
            speed=trip.max_speed_kmh,
        )


@rule(
    "TRAVEL_TOO_SLOW",
    Severity.ALERT,
    "Lei 3.978/2007 art. 13 p.ú., art. 2 §1",
    "Tempo de viagem sem indício de desvio no caminho",
    message=Message(
        "Recebido {elapsed} depois da partida: {distance:decimal} km de percurso estimado "
        "levam no máximo {slowest} (a {speed:decimal} km/h, mais {slack} min de espera); "
        "possível desvio no caminho."
    ),
    stage=Stage.RECEPTION,
)
def travel_too_slow(facts: ReceptionFacts):
    """Uma carga que demora muito mais do que a distância pede pode ter passado por outro
    lugar antes (e ter sido aliviada num bota-fora, art. 2 §1): um alerta para o
    acompanhamento e um suspeito das denúncias de descarte perto da origem."""
    trip = facts.travel
    if trip is not None and trip.too_slow:
        yield breach(
            None,
            elapsed=plausibility.duration_text(trip.elapsed_min),
            distance=Decimal(str(round(trip.road_km, 1))),
            slowest=plausibility.duration_text(trip.slowest_min),
            speed=trip.min_speed_kmh,
            slack=trip.slack_min,
        )


@dataclass
class OpenFacts:
    number: str
    hours_open: float
    alert_hours: int


@rule(
    "OPEN_TOO_LONG",
    Severity.ALERT,
    "Lei 3.978/2007 art. 2 §1",
    "CTR recebido dentro do prazo de alerta do município",
    message=Message("O {number} está aberto há {hours} h, além do prazo de {alert_hours} h."),
    stage=Stage.MONITORING,
)
def open_too_long(facts: OpenFacts):
    """Um CTR que não chega ao destino no prazo é sinal de descarte irregular."""
    if facts.hours_open > facts.alert_hours:
        yield breach(
            None, number=facts.number, hours=int(facts.hours_open), alert_hours=facts.alert_hours
        )


def evaluate(subject, stage: str = Stage.ISSUE) -> list[Finding]:
    """Every finding of every rule of the stage, errors first, in catalogue order."""
    findings = [
        item.finding(found)
        for item in REGISTRY.values()
        if item.stage == stage
        for found in item.check(subject)
    ]
    return sorted(findings, key=lambda f: Severity.ORDER[f.severity])


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity == Severity.ERROR for f in findings)
