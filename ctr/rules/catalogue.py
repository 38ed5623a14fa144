"""The frame of the rule catalogue: severities and stages, the findings, how a value prints in
a message (in Python and in SQL), the messages, the rules and their REGISTRY, `rule` that
registers one, and `evaluate` that runs a stage's rules. The rules themselves are in the modules
beside this one (ctr.rules)."""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from config.br import br_date, br_number
from config.br_forms import format_point
from pev_network.models import FacilityKind, Municipality

from ..models import PROHIBITED_CLASSES, CTRWasteClass, Transporter


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
