"""The rule catalogue of the CTR (docs: shared/domain.md), one small unit per rule.

Each rule is declared once, in this package: its stable code, its severity, the article it
comes from, its title, its message templates in Portuguese and, for the rules checked at issue,
the SQL that finds the same breaches in a whole set of rows (the CSV import, ctr.bulk). The
check (Python, one CTR) and the SQL (set-based) hand the same template the same facts, and the
template formats them (FORMATS, one pair of Python and SQL per kind of value), so both paths word a
finding alike; tests/ctr/test_ctr_bulk.py runs both on a table of cases.

`evaluate` runs every rule of a stage and returns every finding at once: a CTR is never refused
one rule at a time (the principle of art. 132 of the Rio law in legal/). The catalogue page
`/regras/`, the API `/api/v1/rules/`, ctr.bulk and the tests all read REGISTRY.

The package's modules, each named for what it holds: `catalogue` (severities, stages, findings,
messages, REGISTRY, `rule`, `evaluate`), `drafts` (CTRDraft: what the issue rules read), and the
rules by stage: `issue`, `onward` (CTRs leaving an ATT or a PEV), `provisional` (CTRs issued
offline) and `reception` (at reception, and the alert on a CTR still open). Importers take every
name from `ctr.rules`.
"""

# The catalogue's order (the /regras/ page, the API, ctr.bulk and evaluate list the rules in it)
# is the order in which these modules register their rules: issue, onward, provisional,
# reception, the modules' names in alphabetical order, as the imports are sorted.
from .catalogue import (
    COORD,
    FMT,
    FORMAT_PARAMS,
    FORMATS,
    MAIN,
    PLACE_SQL,
    POINT,
    REGISTRY,
    Breach,
    Finding,
    Format,
    Message,
    Rule,
    Severity,
    Stage,
    breach,
    classes_text,
    evaluate,
    fmt,
    has_errors,
    kind_name,
    place_name,
    rule,
    sql_params,
    waste_name,
)
from .drafts import CTRDraft, OriginStock, WasteLine
from .issue import FACTS, ROWS, WASTE_FIELD, WASTE_LINES
from .onward import ALLOWED_SQL, OVER_STOCK_SQL, QUANTIZE_SQL, SHIPPING_KINDS
from .provisional import provisional_sync_late
from .reception import OpenFacts, ReceptionFacts

__all__ = [
    "ALLOWED_SQL",
    "COORD",
    "FACTS",
    "FMT",
    "FORMAT_PARAMS",
    "FORMATS",
    "MAIN",
    "OVER_STOCK_SQL",
    "PLACE_SQL",
    "POINT",
    "QUANTIZE_SQL",
    "REGISTRY",
    "ROWS",
    "SHIPPING_KINDS",
    "WASTE_FIELD",
    "WASTE_LINES",
    "WasteLine",
    "Breach",
    "CTRDraft",
    "Finding",
    "Format",
    "Message",
    "OpenFacts",
    "OriginStock",
    "ReceptionFacts",
    "Rule",
    "Severity",
    "Stage",
    "breach",
    "classes_text",
    "evaluate",
    "fmt",
    "has_errors",
    "kind_name",
    "place_name",
    "provisional_sync_late",
    "rule",
    "sql_params",
    "waste_name",
]
