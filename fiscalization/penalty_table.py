"""The infraction table of Lei 3.978/2007 art. 23 as each municipality's data: who fills it,
which lines a record may use, and its CSV import.

The published text of the law lost its table: no amount is usable until the municipality
confirms it by citing the law that gives it. The table is in the law ("Redação dada pela Lei
nº 4699/2017"), not in a decree: the confirmation cites a law, and the one its framework names
(`PenaltyFramework.fine_table_law`) when it names one. A line is usable in
a record of its municipality for an infraction on a day when it is confirmed, active and valid
on that day (`PenaltyTableEntry.objects.usable`, `PenaltyTableEntry.refusal`).

The CSV (docs/fiscalizacao.md): one line of the table per row, `;` or `,` between fields,
UTF-8 or Latin-1, decimal comma or point, dates as DD/MM/AAAA or AAAA-MM-DD; the file is read
by config.csv_reader (the same reader as the CTR import). The import is all or nothing: every row
is checked first and every problem is reported (line and column); a file with any problem
writes nothing, and a dry run (simulação) does the same writes and rolls them back. A line is
identified by (municipality, codigo, vigente_desde): the same key updates it, a new
vigente_desde starts a new period and ends the open one of the same code the day before.
No request object here: the admin page and `manage.py import_penalty_table` share it.
"""

from __future__ import annotations

import datetime
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from config.br import br_date
from config.br_forms import parse_decimal
from config.csv_reader import check_size, decode, read_rows
from config.errors import DomainError
from ctr.bulk.csv_format import Problem, parse_date
from pev_network.models import Municipality

from .models.enforcement import EntryStatus, OffenderRole, PenaltyTableEntry

# Who fills the table and where: said wherever a record cannot use a line (the refusal of
# draw_up_record, the record page without usable lines).
WHO_FILLS = (
    "A tabela de infrações do art. 23 é preenchida pelo Núcleo Permanente de Gestão "
    "(administrador do sistema): no admin, em “Tabela de infrações (art. 23)”, ou pela "
    "importação CSV da tabela (simule antes de gravar), confirmando cada valor com o ato "
    "municipal que o fixa."
)

REQUIRED_COLUMNS = ("codigo", "fundamento_legal", "descricao", "multa_ufesp", "vigente_desde")
COLUMNS = (
    "codigo",
    "fundamento_legal",
    "descricao",
    "multa_ufesp",
    "quem_pode_ser_autuado",
    "vigente_desde",
    "vigente_ate",
    "observacao",
)
COLUMN_HELP = {
    "codigo": "Código da linha (ex.: INF-01); único por município e início de vigência.",
    "fundamento_legal": "Artigo da lei que a linha pune (ex.: Lei 3.978/2007 art. 2 §1).",
    "descricao": "A infração, como o auto a descreve.",
    "multa_ufesp": "Multa em UFESP (ex.: 100 ou 12,5).",
    "quem_pode_ser_autuado": (
        "Opcional: quem responde (art. 24), separados por vírgula: proprietario, "
        "representante, motorista, transportadora, area_de_recepcao. Vazio: qualquer um."
    ),
    "vigente_desde": "Primeiro dia de vigência do valor (DD/MM/AAAA ou AAAA-MM-DD).",
    "vigente_ate": "Opcional: último dia de vigência. Vazio: sem data de término.",
    "observacao": "Opcional: observação.",
}
# The art. 24 roles by their Portuguese names (and by their codes, what an export writes).
ROLE_NAMES = {
    "PROPRIETARIO": OffenderRole.PROPERTY,
    "REPRESENTANTE": OffenderRole.REPRESENTATIVE,
    "MOTORISTA": OffenderRole.DRIVER,
    "TRANSPORTADORA": OffenderRole.TRANSPORT_DIRECTOR,
    "AREA_DE_RECEPCAO": OffenderRole.FACILITY,
    **{role.value: role for role in OffenderRole},
}
FIELD_COLUMNS = {
    "legal_reference": "fundamento_legal",
    "description": "descricao",
    "fine_ufesp": "multa_ufesp",
    "offender_roles": "quem_pode_ser_autuado",
    "valid_until": "vigente_ate",
    "note": "observacao",
}
MAX_LENGTHS = {"codigo": 20, "fundamento_legal": 120, "descricao": 400}
ONE_DAY = datetime.timedelta(days=1)


class PenaltyTableError(DomainError):
    """The import as a whole cannot run (a missing act to confirm with): nothing written."""

    code = "penalty_table"


def refusal_message(entry: PenaltyTableEntry, why: str) -> str:
    return (
        f"A linha {entry.code} ({entry.legal_reference}) da tabela de infrações {why}: não "
        f"pode ser usada neste auto. {WHO_FILLS}"
    )


def no_usable_entry_message(municipality: Municipality, day: datetime.date) -> str:
    return (
        f"Nenhuma linha da tabela de infrações de {municipality.name} está confirmada e "
        f"vigente em {br_date(day)}: não há como lavrar o auto. {WHO_FILLS}"
    )


# --- one row -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableLine:
    """What a good row declares."""

    code: str
    legal_reference: str
    description: str
    fine_ufesp: Decimal
    offender_roles: tuple[str, ...]
    valid_from: datetime.date
    valid_until: datetime.date | None
    note: str

    def overlaps(self, valid_from: datetime.date, valid_until: datetime.date | None) -> bool:
        return (valid_until is None or self.valid_from <= valid_until) and (
            self.valid_until is None or valid_from <= self.valid_until
        )


def _plain(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.strip().upper().replace(" ", "_"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def parse_roles(text: str) -> tuple[tuple[str, ...], list[str]]:
    """'motorista, transportadora' -> the role codes, and the names not understood."""
    roles, unknown = [], []
    for name in text.replace("|", ",").split(","):
        if not name.strip():
            continue
        role = ROLE_NAMES.get(_plain(name))
        if role is None:
            unknown.append(name.strip())
        elif role.value not in roles:
            roles.append(role.value)
    return tuple(roles), unknown


def parse_line(row: dict[str, str]) -> tuple[TableLine | None, list[Problem]]:
    """The line a row declares, or every problem that keeps it from being one."""
    problems = []
    if row.get("__extra__"):
        problems.append(Problem("", "A linha tem mais campos que o cabeçalho."))
    for column in REQUIRED_COLUMNS:
        if not row.get(column, "").strip():
            problems.append(Problem(column, "Campo obrigatório em branco."))
    for column, limit in MAX_LENGTHS.items():
        if len(row.get(column, "").strip()) > limit:
            problems.append(Problem(column, f"Texto longo demais: até {limit} caracteres."))
    fine = None
    if text := row.get("multa_ufesp", "").strip():
        try:
            fine = parse_decimal(text)
        except ValueError:
            problems.append(Problem("multa_ufesp", f"“{text}” não é um número (ex.: 12,5)."))
        else:
            if fine < 0 or fine >= 10**6 or fine != round(fine, 2):
                problems.append(
                    Problem("multa_ufesp", "A multa vai de 0 a 999.999,99 UFESP, com 2 decimais.")
                )
    dates = {}
    for column in ("vigente_desde", "vigente_ate"):
        if text := row.get(column, "").strip():
            try:
                dates[column] = parse_date(text)
            except ValueError:
                problems.append(
                    Problem(column, f"“{text}” não é uma data (use DD/MM/AAAA ou AAAA-MM-DD).")
                )
    start, end = dates.get("vigente_desde"), dates.get("vigente_ate")
    if start and end and end < start:
        problems.append(Problem("vigente_ate", "A vigência termina antes de começar."))
    roles, unknown = parse_roles(row.get("quem_pode_ser_autuado", ""))
    if unknown:
        problems.append(
            Problem(
                "quem_pode_ser_autuado",
                f"Não reconhecido: {', '.join(unknown)}. Use proprietario, representante, "
                "motorista, transportadora ou area_de_recepcao (art. 24).",
            )
        )
    if problems:
        return None, problems
    return TableLine(
        code=row["codigo"].strip(),
        legal_reference=row["fundamento_legal"].strip(),
        description=row["descricao"].strip(),
        fine_ufesp=fine,
        offender_roles=roles,
        valid_from=start,
        valid_until=end,
        note=row.get("observacao", "").strip(),
    ), []


# --- the report ----------------------------------------------------------------------------

CREATE, CHANGE, CONFIRM, SAME = "create", "change", "confirm", "same"


@dataclass
class LineResult:
    line: int  # the line of the file (the header is line 1)
    code: str = ""
    valid_from: datetime.date | None = None
    action: str = ""  # CREATE, CHANGE, CONFIRM or SAME; empty when refused
    changes: list[str] = field(default_factory=list)  # the columns that change
    closes: list[str] = field(default_factory=list)  # earlier periods this line ends
    problems: list[Problem] = field(default_factory=list)

    def describe(self, dry_run: bool) -> str:
        """The line of the report, in Portuguese."""
        if self.problems:
            return "; ".join(
                f"linha {self.line}, coluna {p.column}: {p.message}"
                if p.column
                else f"linha {self.line}: {p.message}"
                for p in self.problems
            )
        verb = {
            CREATE: ("seria criada", "criada"),
            CHANGE: ("seria alterada", "alterada"),
            CONFIRM: ("seria confirmada", "confirmada"),
            SAME: ("sem alteração", "sem alteração"),
        }[self.action][0 if dry_run else 1]
        text = f"linha {self.line}: {self.code} desde {br_date(self.valid_from)} {verb}"
        if self.changes:
            text += f" ({', '.join(self.changes)})"
        for closed in self.closes:
            text += f"; encerra {closed}"
        return text + "."


@dataclass
class TableImport:
    municipality: Municipality
    dry_run: bool = False
    confirm: bool = False
    act: str = ""
    encoding: str = "utf-8"
    delimiter: str = ";"
    ignored_columns: list[str] = field(default_factory=list)
    lines: list[LineResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.refused

    @property
    def refused(self) -> list[LineResult]:
        return [line for line in self.lines if line.problems]

    def count(self, action: str) -> int:
        return sum(1 for line in self.lines if line.action == action and not line.problems)

    @property
    def described(self) -> list[tuple[LineResult, str]]:
        """Each line of the file with what the import does with it, in Portuguese."""
        simulated = self.dry_run or not self.ok
        return [(line, line.describe(simulated)) for line in self.lines]

    @property
    def written(self) -> bool:
        return self.ok and not self.dry_run

    def summary(self) -> str:
        town = self.municipality.name
        if not self.ok:
            return (
                f"Tabela de {town}: {len(self.refused)} linha(s) com problema em "
                f"{len(self.lines)}; nada foi gravado."
            )
        head = "Simulação (nada gravado)" if self.dry_run else "Importação concluída"
        status = f"confirmadas pelo ato “{self.act}”" if self.confirm else "provisórias"
        ignored = (
            f" Colunas ignoradas: {', '.join(self.ignored_columns)}."
            if self.ignored_columns
            else ""
        )
        return (
            f"{head} — tabela de {town}, linhas {status}: {self.count(CREATE)} nova(s), "
            f"{self.count(CHANGE)} alterada(s), {self.count(CONFIRM)} confirmada(s), "
            f"{self.count(SAME)} sem alteração.{ignored}"
        )


# --- the import ----------------------------------------------------------------------------

LAW_NUMBER = re.compile(r"(\d[\d.]*)\s*/\s*(\d{4})")


def _law_numbers(text: str) -> set[str]:
    """The law numbers cited in `text`, as 4699/2017 (with or without the thousands dot)."""
    return {f"{n.replace('.', '')}/{year}" for n, year in LAW_NUMBER.findall(text)}


def _check_act(act: str, municipality: Municipality) -> None:
    """The act that confirms the amounts: a law (Lei 3.978/2007 art. 23: the table is the
    law's, worded by Lei nº 4699/2017), the one the municipality's framework names, if any."""
    from .enforcement.frameworks import own_framework_in_force

    framework = own_framework_in_force(municipality, timezone.localdate())
    law = framework.fine_table_law.strip() if framework else ""
    example = law or "Lei nº …/…"
    if not act:
        raise PenaltyTableError(
            f"Para confirmar as linhas, informe a lei que fixa os valores (ex.: “{example}”).",
            field="act",
        )
    cites_a_law = re.match(r"lei\b", act, re.IGNORECASE) and _law_numbers(act)
    if not cites_a_law or (law and not _law_numbers(law) <= _law_numbers(act)):
        raise PenaltyTableError(
            f"Os valores da tabela de infrações são os da lei, não de um decreto ou outro ato: "
            f"cite {('a ' + law) if law else 'a lei que os fixa'} (ex.: “{example}”"
            + (", a redação da tabela do art. 23 da Lei 3.978/2007" if "4.699" in law else "")
            + ").",
            field="act",
        )


def import_table(
    data: bytes,
    municipality: Municipality,
    *,
    dry_run: bool = False,
    confirm: bool = False,
    act: str = "",
    by=None,
    at: datetime.datetime | None = None,
) -> TableImport:
    """Check every row of the CSV `data` and write the lines of `municipality`'s table, all in
    one transaction, or nothing when any row has a problem (the report says which, line and
    column). Without `confirm` the lines are provisional (unusable until confirmed); with it
    they are confirmed by `act` (the norm that gives the amounts), by `by`, at `at`. Raises
    CSVFileError when the file as a whole is unusable, PenaltyTableError without an act."""
    act = act.strip()
    if confirm:
        _check_act(act, municipality)
    if len(act) > PenaltyTableEntry._meta.get_field("confirming_act").max_length:
        raise PenaltyTableError("O nome do ato é longo demais (até 200 caracteres).", field="act")
    check_size(len(data))
    text, encoding = decode(data)
    _, rows, delimiter, ignored = read_rows(text, REQUIRED_COLUMNS, COLUMNS, "da tabela")
    report = TableImport(
        municipality, dry_run, confirm, act, encoding, delimiter, ignored_columns=ignored
    )
    parsed: list[tuple[LineResult, TableLine]] = []
    for number, row in rows:
        line, problems = parse_line(row)
        result = LineResult(number, problems=problems)
        report.lines.append(result)
        if line is not None:
            result.code, result.valid_from = line.code, line.valid_from
            parsed.append((result, line))
    at = at or timezone.now()
    with transaction.atomic():
        # One import per municipality at a time: the checks below read the table they change.
        existing = {
            (e.code, e.valid_from): e
            for e in PenaltyTableEntry.objects.select_for_update().filter(municipality=municipality)
        }
        _check_periods(parsed, existing)
        for result, line in parsed:
            if not result.problems:
                _write(result, line, existing, report, by, at)
        if dry_run or not report.ok:
            # The same writes as a real import, so a simulation (and a refused file's report)
            # says what each good line would do and meets the database's constraints; then
            # nothing stays.
            transaction.set_rollback(True)
    return report


def _check_periods(
    parsed: list[tuple[LineResult, TableLine]], existing: dict[tuple, PenaltyTableEntry]
) -> None:
    """One line per code on any day: the file's lines of a code do not overlap, nor overlap a
    line of the table that starts the same day or later (an earlier open one is ended)."""
    seen: dict[str, list[tuple[LineResult, TableLine]]] = {}
    for result, line in parsed:
        for other_result, other in seen.get(line.code, []):
            if line.overlaps(other.valid_from, other.valid_until):
                column = "vigente_desde" if line.valid_from == other.valid_from else "vigente_ate"
                result.problems.append(
                    Problem(
                        column,
                        f"{line.code} já está na linha {other_result.line} com vigência "
                        "que se sobrepõe a esta.",
                    )
                )
        seen.setdefault(line.code, []).append((result, line))
    keys = {(line.code, line.valid_from) for _, line in parsed}
    for (code, start), entry in existing.items():
        if (code, start) in keys:
            continue  # the file's row of the same key replaces it
        for result, line in seen.get(code, []):
            if start > line.valid_from and line.overlaps(entry.valid_from, entry.valid_until):
                result.problems.append(
                    Problem(
                        "vigente_ate",
                        f"Sobrepõe a linha {code} da tabela vigente desde {br_date(start)}: "
                        "informe vigente_ate anterior a essa data.",
                    )
                )


def _write(
    result: LineResult,
    line: TableLine,
    existing: dict[tuple, PenaltyTableEntry],
    report: TableImport,
    by,
    at: datetime.datetime,
) -> None:
    values = {
        "legal_reference": line.legal_reference,
        "description": line.description,
        "fine_ufesp": line.fine_ufesp,
        "offender_roles": list(line.offender_roles),
        "valid_until": line.valid_until,
        "note": line.note,
    }
    entry = existing.get((line.code, line.valid_from))
    if entry is None:
        entry = PenaltyTableEntry(
            municipality=report.municipality, code=line.code, valid_from=line.valid_from
        )
        result.action = CREATE
    else:
        result.changes = [
            FIELD_COLUMNS[name] for name, value in values.items() if getattr(entry, name) != value
        ]
        if not entry.active:
            result.changes.append("ativa")
        confirmed = entry.status == EntryStatus.CONFIRMED
        if result.changes:
            result.action = CHANGE
        elif report.confirm and not (confirmed and entry.confirming_act == report.act):
            result.action = CONFIRM
        else:
            result.action = SAME
            return
    for name, value in values.items():
        setattr(entry, name, value)
    entry.active = True
    if report.confirm:
        entry.status = EntryStatus.CONFIRMED
        entry.confirming_act, entry.confirmed_by, entry.confirmed_at = report.act, by, at
    else:
        # A new or changed line is not what any act confirmed.
        entry.status = EntryStatus.PROVISIONAL
        entry.confirming_act, entry.confirmed_by, entry.confirmed_at = "", None, None
    entry.save()
    _end_earlier(result, line, existing)


def _end_earlier(
    result: LineResult, line: TableLine, existing: dict[tuple, PenaltyTableEntry]
) -> None:
    """A new period of a code ends the earlier one still running on its first day."""
    for (code, start), entry in existing.items():
        if code != line.code or start >= line.valid_from:
            continue
        if entry.valid_until is None or entry.valid_until >= line.valid_from:
            entry.valid_until = line.valid_from - ONE_DAY
            entry.save(update_fields=["valid_until"])
            result.closes.append(
                f"a vigência de {code} desde {br_date(start)} em {br_date(entry.valid_until)}"
            )


# --- lines the law itself writes ---------------------------------------------------------------


def law_line_note(framework) -> str:
    note = f"Valor fixado no texto da própria lei ({framework.law})."
    if framework.index_base_year:
        note += (
            f" Valor de {framework.index_base_year}, atualizado na lavratura do auto "
            f"({framework.cite('index_name')})."
        )
    return note


def install_law_lines(municipality: Municipality, framework, *, by=None) -> list:
    """The lines whose amounts `framework`'s law itself writes (Lei 3.190/2013 art. 9 I: R$
    350,00, II: R$ 500,00), as confirmed lines of `municipality`'s table, valid with the
    framework and confirmed by its law; the lines already there stay as they are. Returns the
    lines created."""
    created = []
    for line in framework.fine_lines:
        entry, new = PenaltyTableEntry.objects.get_or_create(
            municipality=municipality,
            code=line["code"],
            valid_from=framework.valid_from,
            defaults={
                "legal_reference": line["legal_reference"],
                "description": line["description"],
                "fine_ufesp": Decimal(str(line["amount"])),
                "valid_until": framework.valid_until,
                "status": EntryStatus.CONFIRMED,
                "confirming_act": framework.fine_table_law or framework.law[:200],
                "confirmed_by": by,
                "confirmed_at": timezone.now(),
                "note": law_line_note(framework),
            },
        )
        if new:
            created.append(entry)
    return created
