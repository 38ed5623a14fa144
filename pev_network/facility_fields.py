"""What each column of a facility file means: our fields, the names Brazilian open data gives
them, and how each value is read (kinds, waste classes, capacities, dates, license status).
Used by the facility import (importing.py) on frames read by geofile.py; nothing here reads
files or writes rows."""

from __future__ import annotations

import datetime
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import geopandas as gpd
from shapely.geometry import MultiPolygon

from .geofile import Problem, cell_text, column_key
from .models import (
    FacilityKind,
    FacilityLicense,
    LicenseStatus,
    ReceivingFacility,
    WasteClass,
    default_accepted_classes,
)
from .services import NetworkError

# Our attribute names, in the order the docs list them. `--field OURS=THEIRS` maps them.
FIELDS: tuple[str, ...] = (
    "code",
    "kind",
    "name",
    "operator",
    "address",
    "accepted_classes",
    "capacity_m3_per_day",
    "license_number",
    "license_issuer",
    "license_valid_from",
    "license_valid_until",
    "license_status",
    "license_status_since",
)

# The column names Brazilian open data uses for each field (municipal registries of ecopontos,
# spreadsheets of licensed areas, CETESB-style licence tables), compared after column_key:
# lower case, no accents, "do/da/de" dropped, spaces and punctuation as "_" ("Nome do
# Ecoponto" -> nome_ecoponto, "Nº Licença" -> no_licenca). Our own name comes first, then these
# in order; the first present wins, and `--field` overrides them all. Each name belongs to one
# field only. "classe" is the waste class (CONAMA 307: A, B, C, D), not the kind of area.
# Shapefile cuts names to 10 characters: the unambiguous cuts of ours are here too.
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "code": (
        "codigo", "cod", "codigo_ecoponto", "cod_ecoponto", "codigo_pev", "cod_pev",
        "codigo_area", "cod_area", "codigo_unidade", "cod_unidade", "id_ecoponto", "id_pev",
        "cadastro", "numero_cadastro", "no_cadastro",
    ),
    "kind": (
        "tipo", "tipo_area", "tipo_unidade", "tipo_equipamento", "tipo_instalacao",
        "categoria", "classificacao", "modalidade", "tipologia", "equipamento",
    ),
    "name": (
        "nome", "nome_ecoponto", "nome_pev", "nome_area", "nome_unidade", "nome_equipamento",
        "nome_local", "denominacao", "identificacao", "ecoponto", "pev", "unidade",
    ),
    "operator": (
        "operador", "operadora", "responsavel", "empresa", "razao_social", "gestor",
        "gestora", "administrador", "administracao", "concessionaria", "empreendedor",
    ),
    "address": (
        "endereco", "endereco_completo", "logradouro", "localizacao", "local",
    ),
    "accepted_classes": (
        "accepted_c", "classes", "classe", "classes_aceitas", "classe_residuo",
        "classes_residuos", "residuos_aceitos", "tipos_residuo",
    ),
    "capacity_m3_per_day": (
        "capacity_m", "capacidade", "capacidade_m3_dia", "capacidade_m3", "capacidade_diaria",
        "capacidade_dia",
    ),
    "license_number": (
        "license_nu", "licenca", "numero_licenca", "no_licenca", "n_licenca", "num_licenca",
        "licenca_ambiental", "licenca_operacao", "lo", "numero_lo", "no_lo",
    ),
    "license_issuer": (
        "license_is", "orgao_emissor", "emissor", "orgao_licenciador", "orgao_ambiental",
        "orgao",
    ),
    "license_valid_from": (
        "license_va", "inicio_validade", "validade_inicio", "valida_desde", "data_emissao",
        "emissao", "data_licenca", "data_inicio",
    ),
    # "Validade" on a Brazilian licence is the day it ends.
    "license_valid_until": (
        "validade", "fim_validade", "validade_fim", "valida_ate", "vencimento",
        "data_vencimento", "data_validade", "data_fim",
    ),
    "license_status": (
        "license_st", "situacao", "status", "situacao_licenca", "status_licenca",
    ),
    "license_status_since": (
        "situacao_desde", "status_desde", "data_situacao", "data_status",
    ),
}  # fmt: skip

# Accented, lower-case or spaced variants are normalised first (see _token).
KIND_ALIASES: dict[str, str] = {
    "PEV": FacilityKind.PEV,
    "ECOPONTO": FacilityKind.PEV,
    "PONTO DE ENTREGA VOLUNTARIA": FacilityKind.PEV,
    "ATT": FacilityKind.ATT,
    "TRANSBORDO": FacilityKind.ATT,
    "AREA DE TRANSBORDO E TRIAGEM": FacilityKind.ATT,
    "AREA DE TRANSBORDO": FacilityKind.ATT,
    "AREA DE TRIAGEM E TRANSBORDO": FacilityKind.ATT,
    "RECYCLING": FacilityKind.RECYCLING,
    "RECICLAGEM": FacilityKind.RECYCLING,
    "AREA DE RECICLAGEM": FacilityKind.RECYCLING,
    "USINA DE RECICLAGEM": FacilityKind.RECYCLING,
    "CENTRAL DE RECICLAGEM": FacilityKind.RECYCLING,
    "LANDFILL": FacilityKind.LANDFILL,
    "ATERRO": FacilityKind.LANDFILL,
    "ATERRO DE RCC": FacilityKind.LANDFILL,
    "ATERRO DE INERTES": FacilityKind.LANDFILL,
    "ATERRO DE RESIDUOS DA CONSTRUCAO CIVIL": FacilityKind.LANDFILL,
}
STATUS_ALIASES: dict[str, str] = {
    "ACTIVE": LicenseStatus.ACTIVE,
    "ATIVA": LicenseStatus.ACTIVE,
    "ATIVO": LicenseStatus.ACTIVE,
    # How municipal registries write a working facility in their "Situação" column.
    "VIGENTE": LicenseStatus.ACTIVE,
    "VALIDA": LicenseStatus.ACTIVE,
    "REGULAR": LicenseStatus.ACTIVE,
    "EM FUNCIONAMENTO": LicenseStatus.ACTIVE,
    "EM OPERACAO": LicenseStatus.ACTIVE,
    "FUNCIONANDO": LicenseStatus.ACTIVE,
    "INTERDITADA": LicenseStatus.SUSPENDED,
    "INTERDITADO": LicenseStatus.SUSPENDED,
    "SUSPENDED": LicenseStatus.SUSPENDED,
    "SUSPENSA": LicenseStatus.SUSPENDED,
    "SUSPENSO": LicenseStatus.SUSPENDED,
    "REVOKED": LicenseStatus.REVOKED,
    "CASSADA": LicenseStatus.REVOKED,
    "CASSADO": LicenseStatus.REVOKED,
    "REVOGADA": LicenseStatus.REVOKED,
    "REVOGADO": LicenseStatus.REVOKED,
}
CLASS_ALIASES: dict[str, str] = {str(c): str(c) for c in WasteClass} | {
    "VOLUMOSOS": WasteClass.VOLUMOSO
}

ISO_DATE = re.compile(
    # A date-typed column read as text may carry a midnight time (GeoPackage DATETIME).
    r"^(\d{4})-(\d{2})-(\d{2})(?:[T ]00:00(?::00(?:\.0+)?)?(?:Z|[+-]00:?00)?)?$"
)
BR_DATE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")


@dataclass(frozen=True)
class LicenseData:
    number: str
    issuer: str
    valid_from: datetime.date
    valid_until: datetime.date | None
    status: str
    status_since: datetime.date | None


@dataclass
class FacilityData:
    """A validated feature, ready to be written."""

    number: int
    code: str | None
    kind: str
    name: str
    operator: str
    address: str
    accepted_classes: list[str]
    capacity_m3_per_day: Decimal | None
    area: MultiPolygon  # EPSG:4326
    license: LicenseData | None


# --- options and names -----------------------------------------------------------------------


def parse_field_mappings(specs: list[str] | None) -> dict[str, str]:
    """`["name=NOME", "kind=TIPO"]` -> `{"name": "NOME", "kind": "TIPO"}`. An empty column
    (`license_status=`) means: do not read that field, even if a column looks like it."""
    mapping: dict[str, str] = {}
    for spec in specs or []:
        ours, sep, theirs = spec.partition("=")
        ours, theirs = ours.strip(), theirs.strip()
        if not sep or not ours:
            raise NetworkError(
                f"--field '{spec}': use NOSSO=DELES, por exemplo --field name=NOME.", "bad_option"
            )
        if ours not in FIELDS:
            raise NetworkError(
                f"--field '{spec}': campo desconhecido '{ours}' (campos: {', '.join(FIELDS)}).",
                "bad_option",
            )
        mapping[ours] = theirs
    return mapping


def normalize_kind(value: str) -> str | None:
    """The FacilityKind for a kind name or one of its Portuguese aliases; None if unknown."""
    return KIND_ALIASES.get(_token(value))


def kind_in_words(value: str) -> str | None:
    """The FacilityKind a category names among other words, as open data writes it ("Mini
    Ecoponto", "Ecoponto de Entulho", "Usina de Reciclagem de Entulho"): the kind whose aliases
    appear as whole words. None when no kind is named, or when two are ("Ecoponto e Aterro")."""
    exact = normalize_kind(value)
    if exact is not None:
        return exact
    words = f" {' '.join(re.findall(r'[A-Z0-9]+', _token(value)))} "
    named = {kind for alias, kind in KIND_ALIASES.items() if f" {alias} " in words}
    return named.pop() if len(named) == 1 else None


# --- columns ---------------------------------------------------------------------------------


@dataclass
class Columns:
    """Which of the file's columns feeds each of our fields."""

    # Our field -> the file's column, for the fields the file has.
    of: dict[str, str]
    # Our field -> (the file's column, how it was chosen: "--field", "mesmo nome", "sinônimo").
    chosen: dict[str, tuple[str, str]]
    unused: list[str]


def resolve_columns(
    gdf: gpd.GeoDataFrame,
    field_map: dict[str, str],
    default_kind: str | None,
    problems: list[Problem],
) -> Columns:
    """The file's column for each of our fields: `--field` first, then our own name, then the
    aliases. A missing kind or name column, or a `--field` naming no column, is a problem."""
    available = [str(c) for c in gdf.columns if c != gdf.geometry.name]
    by_folded: dict[str, str] = {}
    by_key: dict[str, str] = {}
    for column in available:
        by_folded.setdefault(column.casefold(), column)
        by_key.setdefault(column_key(column), column)
    columns: dict[str, str] = {}
    chosen: dict[str, tuple[str, str]] = {}
    # --field first: the columns it names are not offered to other fields.
    for ours, theirs in field_map.items():
        if not theirs:
            continue  # `--field ours=`: not read
        found = theirs if theirs in available else by_folded.get(theirs.casefold())
        if found is None:
            found = by_key.get(column_key(theirs))
        if found is not None:
            columns[ours] = found
            chosen[ours] = (found, "--field")
        else:
            problems.append(
                Problem(
                    None,
                    ours,
                    f"a coluna '{theirs}' indicada em --field não existe no arquivo "
                    f"(colunas: {', '.join(available) or 'nenhuma'})",
                )
            )
    taken = set(columns.values())
    for ours in FIELDS:
        if ours in field_map:
            continue
        # Our own name (exact, then in any case or spelling), then the aliases, in order.
        own = ours if ours in available else by_folded.get(ours) or by_key.get(column_key(ours))
        candidates = [(own, "mesmo nome")]
        candidates += [(by_key.get(alias), "sinônimo") for alias in COLUMN_ALIASES[ours]]
        for found, how in candidates:
            if found is not None and found not in taken:
                columns[ours] = found
                chosen[ours] = (found, how)
                taken.add(found)
                break
    unused = [c for c in available if c not in taken]
    listed = f"colunas do arquivo: {', '.join(available) or 'nenhuma'}"
    if "kind" not in columns and default_kind is None:
        problems.append(
            Problem(
                None,
                "kind",
                f"o arquivo não tem a coluna do tipo ({listed}; procurei kind, "
                f"{', '.join(COLUMN_ALIASES['kind'][:3])}…): indique-a com --field kind=COLUNA "
                "ou use --kind PEV|ATT|RECYCLING|LANDFILL para o arquivo todo",
            )
        )
    if "name" not in columns:
        problems.append(
            Problem(
                None,
                "name",
                f"o arquivo não tem a coluna do nome ({listed}; procurei name, "
                f"{', '.join(COLUMN_ALIASES['name'][:4])}…): indique-a com --field name=COLUNA",
            )
        )
    return Columns(columns, chosen, unused)


# --- attributes ------------------------------------------------------------------------------


class _FieldError(ValueError):
    pass


def validate_attributes(
    gdf: gpd.GeoDataFrame,
    columns: dict[str, str],
    default_kind: str | None,
    areas: list[MultiPolygon | None],
    problems: list[Problem],
    progress: Callable[[int, int], None] | None = None,
) -> list[FacilityData]:
    """The features whose attributes (and area) are all good, ready to be written; a problem
    for every bad value. `progress(done, total)` after each feature."""
    rows: list[FacilityData] = []
    records = gdf[list(columns.values())].to_dict("records") if columns else [{}] * len(gdf)
    total = len(records)
    for i, record in enumerate(records):
        number = i + 1
        values = {ours: cell_text(record.get(theirs)) for ours, theirs in columns.items()}
        code = values.get("code")
        ok = True

        def check(
            ours: str,
            parse: Callable[[str | None], object],
            values=values,
            code=code,
            number=number,
        ):
            nonlocal ok
            try:
                return parse(values.get(ours))
            except _FieldError as exc:
                ok = False
                problems.append(Problem(number, ours, str(exc), code, columns.get(ours, ours)))
                return None

        code = check("code", _max_length("code"))
        kind = check("kind", lambda v: _parse_kind(v, default_kind))
        name = check("name", _required(_max_length("name"), "nome ausente"))
        operator = check("operator", _max_length("operator"))
        address = check("address", _max_length("address"))
        classes = check("accepted_classes", _parse_classes)
        capacity = check("capacity_m3_per_day", _parse_capacity)
        license_data = _validate_license(values, check)
        if ok and areas[i] is not None:
            rows.append(
                FacilityData(
                    number=number,
                    code=code,
                    kind=kind,
                    name=name,
                    operator=operator or "",
                    address=address or "",
                    accepted_classes=classes or default_accepted_classes(kind),
                    capacity_m3_per_day=capacity,
                    area=areas[i],
                    license=license_data,
                )
            )
        if progress:
            progress(number, total)
    return rows


def _validate_license(values: dict[str, str | None], check) -> LicenseData | None:
    number = check("license_number", _max_length("license_number", FacilityLicense, "number"))
    issuer = check("license_issuer", _max_length("license_issuer", FacilityLicense, "issuer"))
    valid_from = check("license_valid_from", _parse_date)
    valid_until = check("license_valid_until", _parse_date)
    status = check("license_status", _parse_status)
    status_since = check("license_status_since", _parse_date)
    if not values.get("license_number"):
        if valid_from or valid_until or status_since:
            check("license_number", _fail("número da licença ausente, mas há datas de licença"))
        return None
    if not values.get("license_issuer"):
        check("license_issuer", _fail("órgão emissor ausente (obrigatório com número de licença)"))
    if not values.get("license_valid_from"):
        check("license_valid_from", _fail("início da validade ausente (obrigatório com licença)"))
    if valid_from and valid_until and valid_until < valid_from:
        check("license_valid_until", _fail("a validade termina antes de começar"))
    status = status or LicenseStatus.ACTIVE
    if status != LicenseStatus.ACTIVE and not values.get("license_status_since"):
        check(
            "license_status_since",
            _fail("informe desde quando a licença está suspensa ou cassada"),
        )
    if None in (number, issuer, valid_from) or (
        status != LicenseStatus.ACTIVE and not status_since
    ):
        return None
    return LicenseData(number, issuer, valid_from, valid_until, status, status_since)


def check_duplicates(rows: list[FacilityData], problems: list[Problem]) -> None:
    """A code or a license (issuer, number) used by two features of one file."""
    first_code: dict[str, int] = {}
    first_license: dict[tuple[str, str], int] = {}
    for row in rows:
        if row.code:
            if row.code in first_code:
                problems.append(
                    Problem(
                        row.number,
                        "code",
                        f"código repetido (já usado na feição {first_code[row.code]})",
                        row.code,
                    )
                )
            first_code.setdefault(row.code, row.number)
        if row.license:
            key = (row.license.issuer, row.license.number)
            if key in first_license:
                problems.append(
                    Problem(
                        row.number,
                        "license_number",
                        f"licença {key[1]} ({key[0]}) repetida "
                        f"(já usada na feição {first_license[key]})",
                        row.code,
                    )
                )
            first_license.setdefault(key, row.number)


def _token(value: str) -> str:
    """Upper case, no accents, single spaces: 'Área de  reciclagem' -> 'AREA DE RECICLAGEM'."""
    decomposed = unicodedata.normalize("NFKD", value)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.replace("_", " ").upper().split())


def _fail(reason: str) -> Callable[[str | None], None]:
    def parse(_value: str | None) -> None:
        raise _FieldError(reason)

    return parse


def _required(parse: Callable[[str | None], object], reason: str):
    def wrapped(value: str | None):
        if value is None:
            raise _FieldError(reason)
        return parse(value)

    return wrapped


def _max_length(ours: str, model=ReceivingFacility, model_field: str | None = None):
    limit = model._meta.get_field(model_field or ours).max_length

    def parse(value: str | None) -> str | None:
        if value is not None and len(value) > limit:
            raise _FieldError(f"texto com {len(value)} caracteres; o máximo é {limit}")
        return value

    return parse


# How the command gives a whole file one kind whatever its column says; the admin's import
# words it with its own fields (nucleo.admin).
KIND_OVERRIDE = "use --kind TIPO com --field kind="


def unknown_kind_reason(value: str, *, in_column: bool = True) -> str:
    reason = f"tipo desconhecido '{value}' (use PEV, ATT, RECYCLING ou LANDFILL"
    if in_column:
        return f"{reason}, ou {KIND_OVERRIDE} para dar um só tipo ao arquivo todo)"
    return f"{reason})"


def _parse_kind(value: str | None, default_kind: str | None) -> str:
    if value is None:
        if default_kind is None:
            raise _FieldError("tipo ausente (use PEV, ATT, RECYCLING ou LANDFILL, ou --kind)")
        return default_kind
    kind = kind_in_words(value)
    if kind is None:
        raise _FieldError(unknown_kind_reason(value))
    return kind


def _parse_classes(value: str | None) -> list[str]:
    if value is None:
        return []
    classes: list[str] = []
    unknown: list[str] = []
    for item in re.split(r"[,;]", value):
        token = _token(item)
        token = token.removeprefix("CLASSE ").strip()
        if not token:
            continue
        waste_class = CLASS_ALIASES.get(token)
        if waste_class is None:
            unknown.append(item.strip())
        elif str(waste_class) not in classes:
            classes.append(str(waste_class))
    if unknown:
        raise _FieldError(
            f"classe(s) desconhecida(s) {', '.join(repr(u) for u in unknown)} "
            "(use A, B, C, D ou VOLUMOSO, separadas por vírgula)"
        )
    return classes


def _parse_capacity(value: str | None) -> Decimal | None:
    if value is None:
        return None
    text = value.replace(" ", "")
    if "," in text:
        # Brazilian notation: 1.234,5
        text = text.replace(".", "").replace(",", ".")
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise _FieldError(f"número inválido '{value}'") from None
    if not number.is_finite() or number < 0:
        raise _FieldError(f"capacidade inválida '{value}' (informe m³ por dia, não negativo)")
    number = number.quantize(Decimal("0.01"))
    if number >= Decimal("1e8"):
        raise _FieldError(f"capacidade grande demais '{value}'")
    return number


def _parse_date(value: str | None) -> datetime.date | None:
    if value is None:
        return None
    if match := ISO_DATE.match(value):
        year, month, day = (int(g) for g in match.groups())
    elif match := BR_DATE.match(value):
        day, month, year = (int(g) for g in match.groups())
    else:
        raise _FieldError(f"data inválida '{value}' (use AAAA-MM-DD ou DD/MM/AAAA)")
    try:
        return datetime.date(year, month, day)
    except ValueError:
        raise _FieldError(f"data inválida '{value}': esse dia não existe") from None


def _parse_status(value: str | None) -> str | None:
    if value is None:
        return None
    status = STATUS_ALIASES.get(_token(value))
    if status is None:
        raise _FieldError(
            f"situação desconhecida '{value}' (use ACTIVE, SUSPENDED ou REVOKED; "
            "ou ATIVA, SUSPENSA ou CASSADA; se a coluna não é a situação da licença, "
            "--field license_status= deixa de lê-la)"
        )
    return status
