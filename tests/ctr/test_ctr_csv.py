"""Importing many CTRs from CSV: good rows issued with consecutive numbers, bad rows issue
nothing and are reported with every problem; the file's own troubles are clear messages."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from config import csv_reader
from ctr import roles
from ctr.bulk import csv_format, csv_import
from ctr.models import CTR
from tests.ctr.onward_world import inbound
from tests.ctr_world import TODAY, build_world, make_user

pytestmark = pytest.mark.django_db

IMPORT = "/transportador/ctrs/importar/"


@pytest.fixture
def world():
    return build_world()


def num(value: float, decimal: str) -> str:
    return f"{value:.6f}".replace(".", decimal)


def row(world, decimal=",", facility=None, **overrides) -> dict:
    """A good row: 3 m³ of class A from the town to the ATT (or `facility`)."""
    target = world.inside(facility or world.att)
    values = {
        "transport_date": TODAY.isoformat(),
        "vehicle_plate": "ABC-1D23",
        "equipment_code": "C-01",
        "generator_name": "Maria da Obra",
        "generator_document": "529.982.247-25",
        "worksite_address": "Rua das Flores, 10",
        "worksite_neighbourhood": "Centro",
        "origin_lon": num(world.origin.x, decimal),
        "origin_lat": num(world.origin.y, decimal),
        "destination_lon": num(target.x, decimal),
        "destination_lat": num(target.y, decimal),
        "destination_facility": "",
        "waste": f"A=2{decimal}5; B=0{decimal}5",
        "description": "entulho",
    }
    values.update(overrides)
    return values


def csv_bytes(rows: list[dict], delimiter=";", encoding="utf-8", columns=None) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(
        out, fieldnames=columns or csv_import.COLUMNS, delimiter=delimiter, lineterminator="\n"
    )
    writer.writeheader()
    for item in rows:
        writer.writerow({k: v for k, v in item.items() if k in (columns or csv_import.COLUMNS)})
    return out.getvalue().encode(encoding)


def mixed_file(world) -> bytes:
    return csv_bytes(
        [
            row(world),  # line 2: good
            row(world, vehicle_plate="ZZZ9Z99"),  # 3: plate not in alfa's fleet
            row(world, facility=world.pev, waste="A=3"),  # 4: 3 m³ to a PEV
            row(world),  # 5: good
            row(world, transport_date="31/02/2026"),  # 6: no such day
            row(world, waste="A=muito"),  # 7: volume not a number
            row(world, origin_lon="-60,0", origin_lat="-10,0"),  # 8: origin outside
            row(world, transport_date="30/11/2026"),  # 9: good, Brazilian date
        ]
    )


def by_line(report) -> dict:
    return {r.line: r for r in report.rows}


def problem_text(result) -> str:
    return " | ".join(f"{p.column}: {p.message} {p.code}" for p in result.problems)


# --- the service -------------------------------------------------------------------------------


def test_good_rows_are_issued_in_order_and_bad_rows_issue_nothing(world):
    report = csv_import.import_ctrs(mixed_file(world), world.alfa, world.alfa_user)
    rows = by_line(report)
    assert [r.line for r in report.issued] == [2, 5, 9]
    # Consecutive numbers, no gaps left by the refused rows in between.
    prefix = f"CTR-3518404-{TODAY.year}-"
    assert [r.number for r in report.issued] == [f"{prefix}00000{i}" for i in (1, 2, 3)]
    assert CTR.objects.count() == 3
    assert CTR.objects.get(number=f"{prefix}000001").total_volume_m3 == Decimal("3")

    assert [r.line for r in report.refused] == [3, 4, 6, 7, 8]
    assert "VEHICLE_NOT_REGISTERED" in problem_text(rows[3])
    assert rows[3].problems[0].column == "vehicle_plate"
    assert "LARGE_VOLUME_AT_PEV" in problem_text(rows[4])
    assert rows[4].problems[0].column == "waste"
    assert "transport_date: Data inválida: “31/02/2026”" in problem_text(rows[6])
    assert "waste: Volume inválido em “A=muito”" in problem_text(rows[7])
    assert "ORIGIN_OUTSIDE_MUNICIPALITY" in problem_text(rows[8])
    assert rows[8].problems[0].column == "origin_lon, origin_lat"
    assert all(not r.number for r in report.refused)


def test_every_problem_of_a_row_is_reported_at_once(world):
    data = csv_bytes(
        [row(world, transport_date="ontem", generator_document="111", waste="X=1; A=-2")]
    )
    report = csv_import.import_ctrs(data, world.alfa, world.alfa_user)
    (result,) = report.rows
    columns = [p.column for p in result.problems]
    assert columns.count("transport_date") == 1
    assert columns.count("generator_document") == 1
    assert columns.count("waste") == 2  # unknown class X, negative volume
    assert CTR.objects.count() == 0

    # Rules too: two rules broken on one row, both listed.
    data = csv_bytes([row(world, facility=world.pev, waste="A=6")])
    (result,) = csv_import.import_ctrs(data, world.alfa, world.alfa_user).rows
    codes = sorted(p.code for p in result.problems)
    assert codes == ["LARGE_VOLUME_AT_PEV", "OVER_EQUIPMENT_CAPACITY"]


def test_semicolons_decimal_comma_and_latin1(world):
    data = csv_bytes(
        [
            row(
                world,
                generator_name="José da Conceição",
                worksite_address="Avenida São João, 1.200",
                waste="A=1,75",
            )
        ],
        delimiter=";",
        encoding="latin-1",
    )
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    report = csv_import.import_ctrs(data, world.alfa, world.alfa_user)
    assert report.encoding == "latin-1" and report.delimiter == ";"
    (result,) = report.issued
    ctr = CTR.objects.get(number=result.number)
    assert ctr.generator.name == "José da Conceição"
    assert ctr.worksite.address == "Avenida São João, 1.200"
    assert ctr.total_volume_m3 == Decimal("1.75")


def test_commas_decimal_point_and_utf8_with_bom(world):
    data = b"\xef\xbb\xbf" + csv_bytes(
        [row(world, decimal=".", generator_name="Açaí Reformas")], delimiter=","
    )
    report = csv_import.import_ctrs(data, world.alfa, world.alfa_user)
    assert report.encoding == "utf-8" and report.delimiter == ","
    (result,) = report.issued
    ctr = CTR.objects.get(number=result.number)
    assert ctr.generator.name == "Açaí Reformas"
    assert ctr.total_volume_m3 == Decimal("3")


def test_optional_columns_may_be_left_out_and_unknown_ones_are_ignored(world):
    columns = [*csv_import.REQUIRED_COLUMNS, "observacao_interna"]
    good = {**row(world), "observacao_interna": "x"}
    report = csv_import.import_ctrs(csv_bytes([good], columns=columns), world.alfa, world.alfa_user)
    assert len(report.issued) == 1
    assert report.ignored_columns == ["observacao_interna"]


def test_destination_facility_column(world):
    data = csv_bytes(
        [
            row(world, destination_facility=str(world.att.pk)),
            row(world, destination_facility=str(world.landfill.pk)),  # not where it unloads
            row(world, destination_facility="999999"),
            row(world, destination_facility="ATT"),
        ]
    )
    rows = by_line(csv_import.import_ctrs(data, world.alfa, world.alfa_user))
    assert rows[2].number
    assert "DESTINATION_OUTSIDE_FACILITY" in problem_text(rows[3])
    assert "A área de destino 999999 não existe." in problem_text(rows[4])
    assert "destination_facility: Área de destino inválida" in problem_text(rows[5])


def test_dry_run_checks_without_issuing(world):
    report = csv_import.import_ctrs(mixed_file(world), world.alfa, world.alfa_user, dry_run=True)
    assert [r.line for r in report.checked] == [2, 5, 9]
    assert len(report.refused) == 5
    assert report.issued == []
    assert CTR.objects.count() == 0


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "O arquivo está vazio."),
        (b"  \r\n \n", "O arquivo está vazio."),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "não é um CSV de texto"),
        (b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00", "não é um CSV de texto"),
        (b"\xff\xfe\xfd garbage without columns", "Faltam colunas obrigatórias"),
        (b"nome;placa\nMaria;ABC1D23\n", "Faltam colunas obrigatórias"),
        (b"transport_date;transport_date\n", "Coluna(s) repetida(s)"),
        (";".join(csv_import.COLUMNS).encode() + b"\n", "nenhuma linha de CTR"),
        (b'"unterminated;\n', "Faltam colunas"),
    ],
)
def test_unusable_files_are_refused_with_a_clear_message(world, data, message):
    with pytest.raises(csv_import.CSVFileError) as raised:
        csv_import.import_ctrs(data, world.alfa, world.alfa_user)
    assert message in raised.value.message
    assert CTR.objects.count() == 0


def test_missing_columns_are_named(world):
    columns = [c for c in csv_import.COLUMNS if c not in ("origin_lat", "waste")]
    with pytest.raises(csv_import.CSVFileError) as raised:
        csv_import.import_ctrs(
            csv_bytes([row(world)], columns=columns), world.alfa, world.alfa_user
        )
    assert "origem_lat (origin_lat), residuos (waste)" in raised.value.message


def test_too_many_rows_or_bytes_issue_nothing(world, monkeypatch):
    monkeypatch.setattr(csv_reader, "MAX_ROWS", 3)
    data = csv_bytes([row(world)] * 4)
    with pytest.raises(csv_import.CSVFileError, match="mais de 3 linhas"):
        csv_import.import_ctrs(data, world.alfa, world.alfa_user)
    monkeypatch.setattr(csv_reader, "MAX_BYTES", 100)
    with pytest.raises(csv_import.CSVFileError, match="o limite é"):
        csv_import.import_ctrs(csv_bytes([row(world)]), world.alfa, world.alfa_user)
    assert CTR.objects.count() == 0


def test_a_row_with_more_fields_than_the_header_is_refused(world):
    text = csv_bytes([row(world)]).decode().rstrip("\n") + ";sobrando\n"
    (result,) = csv_import.import_ctrs(text.encode(), world.alfa, world.alfa_user).rows
    assert "mais campos que o cabeçalho" in problem_text(result)


def test_overlong_text_is_a_row_problem_not_a_database_error(world):
    data = csv_bytes([row(world, generator_name="M" * 500)])
    (result,) = csv_import.import_ctrs(data, world.alfa, world.alfa_user).rows
    assert "generator_name: Texto longo demais" in problem_text(result)


def test_the_example_file_follows_the_format():
    text = csv_format.example_csv()
    _, rows, delimiter, ignored = csv_import.read_rows(text)
    assert delimiter == ";" and ignored == []
    for _, values in rows:
        request, problems = csv_import.parse_row(values)
        assert problems == [] and request is not None


def test_portuguese_column_names_import_as_the_english_ones(world):
    """The header in Portuguese (the example file's), in any case, the
    English names still accepted."""
    english = csv_bytes([row(world)]).decode()
    header, rest = english.split("\n", 1)
    names = header.split(";")
    portuguese = [csv_format.PORTUGUESE_NAMES[name].upper() for name in names]
    assert portuguese != [name.upper() for name in names]
    text = ";".join(portuguese) + "\n" + rest
    (result,) = csv_import.import_ctrs(text.encode(), world.alfa, world.alfa_user).rows
    assert result.number, problem_text(result)
    assert CTR.objects.get(number=result.number).vehicle.plate == "ABC1D23"


@pytest.mark.usefixtures("frozen_today")
def test_the_example_file_is_the_transporter_s_and_imports_without_a_finding(world):
    """The site's example is built for the signed-in transporter (its own
    plates and caçambas, a facility licensed in its municipality) and imports as it is."""
    client = client_for(world.alfa_user)
    example = client.get("/transportador/ctrs/importar/exemplo.csv")
    assert example.status_code == 200
    text = example.content.decode()
    plates = set(world.alfa.vehicles.values_list("plate", flat=True))
    _, rows, _, _ = csv_import.read_rows(text)
    assert {values["vehicle_plate"].replace("-", "") for _, values in rows} <= plates
    report = csv_import.import_ctrs(example.content, world.alfa, world.alfa_user, dry_run=True)
    assert [problem_text(r) for r in report.rows] == [""] * len(rows)
    response = upload(client, example.content, name="exemplo-ctrs.csv")
    assert response.status_code == 200
    assert f"{len(rows)} CTRs emitidos" in response.content.decode()
    issued = CTR.objects.filter(transporter=world.alfa)
    assert issued.count() == len(rows)
    assert [ctr.findings for ctr in issued] == [[]] * len(rows)


def test_the_example_file_has_portuguese_column_names():
    header = csv_format.example_csv().split("\r\n", 1)[0].split(";")
    assert header == [csv_format.PORTUGUESE_NAMES[name] for name in csv_format.COLUMNS]
    assert "data_transporte" in header and "transport_date" not in header


# --- the web page --------------------------------------------------------------------------------


def client_for(user) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(pk=user.pk))
    return client


def upload(client, data: bytes, name="ctrs.csv", **extra):
    return client.post(IMPORT, {"file": SimpleUploadedFile(name, data, "text/csv"), **extra})


def test_upload_shows_a_report_per_row(world):
    response = upload(client_for(world.alfa_user), mixed_file(world))
    assert response.status_code == 200
    html = response.content.decode()
    assert "3 CTRs emitidos" in html
    assert "5 linhas recusadas" in html
    for ctr in CTR.objects.all():
        assert f'href="/transportador/ctrs/{ctr.number}/"' in html
    assert 'id="linha-3"' in html and "VEHICLE_NOT_REGISTERED" in html
    assert "Data inválida: “31/02/2026”" in html


def test_a_wrong_plate_is_shown_as_a_plate_problem_in_the_plate_column(world):
    # The plate outside the fleet, with the fleet's own caçamba.
    data = csv_bytes([row(world, vehicle_plate="ZZZ9Z99"), row(world, equipment_code="X-77")])
    response = upload(client_for(world.alfa_user), data, dry_run="on")
    html = response.content.decode()
    plate_row = html[html.index('id="linha-2"') : html.index('id="linha-3"')]
    assert "<code>placa</code>" in plate_row and "ZZZ9Z99" in plate_row
    assert "VEHICLE_NOT_REGISTERED" in plate_row
    assert "EQUIPMENT_NOT_REGISTERED" not in plate_row
    cacamba_row = html[html.index('id="linha-3"') :]
    assert "<code>cacamba</code>" in cacamba_row
    assert "EQUIPMENT_NOT_REGISTERED" in cacamba_row
    assert "VEHICLE_NOT_REGISTERED" not in cacamba_row


def test_upload_of_garbage_is_a_clear_400(world):
    client = client_for(world.alfa_user)
    response = upload(client, b"\x00\x01\x02binary")
    assert response.status_code == 400
    assert "nenhum CTR foi emitido" in response.content.decode()
    assert "não é um CSV de texto" in response.content.decode()
    empty = upload(client, b"", name="vazio.csv")
    assert empty.status_code == 400
    missing = upload(client, b"a;b;c\n1;2;3\n")
    assert (
        "Faltam colunas obrigatórias no cabeçalho: data_transporte (transport_date)"
        in missing.content.decode()
    )
    no_file = client.post(IMPORT, {})
    assert no_file.status_code == 400
    assert "Este campo é obrigatório." in no_file.content.decode()
    assert CTR.objects.count() == 0


def test_upload_over_the_size_limit_is_refused_before_reading(world, monkeypatch):
    monkeypatch.setattr(csv_reader, "MAX_BYTES", 50)
    response = upload(client_for(world.alfa_user), csv_bytes([row(world)]))
    assert response.status_code == 400
    assert "o limite é" in response.content.decode()


def test_upload_dry_run(world):
    response = upload(client_for(world.alfa_user), mixed_file(world), dry_run="on")
    assert "Só verificação: nenhum CTR foi emitido." in response.content.decode()
    assert CTR.objects.count() == 0


def test_example_download(world):
    response = client_for(world.alfa_user).get(f"{IMPORT}exemplo.csv")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert "attachment" in response["Content-Disposition"]
    assert response.content.decode("utf-8-sig").startswith("data_transporte;placa")


def test_import_page_is_for_transporters_only(world):
    assert client_for(world.operator).get(IMPORT).status_code == 403
    page = client_for(world.alfa_user).get(IMPORT)
    assert page.status_code == 200
    for column in csv_import.COLUMNS:
        assert f"<code>{column}</code>" in page.content.decode()


# --- the management command ----------------------------------------------------------------------


def test_command_issues_the_good_rows_and_fails_on_the_bad(world, tmp_path):
    path = tmp_path / "ctrs.csv"
    path.write_bytes(mixed_file(world))
    out = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("import_ctrs", str(path), user="alfa", stdout=out)
    assert raised.value.returncode == 2
    assert "8 linhas lidas; 3 emitidos; 5 recusadas." in str(raised.value)
    text = out.getvalue()
    assert f"linha 2: emitido CTR-3518404-{TODAY.year}-000001" in text
    assert "linha 3: recusada" in text
    assert "VEHICLE_NOT_REGISTERED" in text
    assert CTR.objects.count() == 3


def test_command_on_a_clean_file_succeeds(world, tmp_path):
    path = tmp_path / "ctrs.csv"
    path.write_bytes(csv_bytes([row(world), row(world)]))
    out = io.StringIO()
    call_command("import_ctrs", str(path), user="alfa", stdout=out)
    assert "2 linhas lidas; 2 emitidos; 0 recusadas." in out.getvalue()
    assert CTR.objects.count() == 2


def test_command_dry_run_and_refusals(world, tmp_path):
    path = tmp_path / "ctrs.csv"
    path.write_bytes(csv_bytes([row(world)]))
    out = io.StringIO()
    call_command("import_ctrs", str(path), user="alfa", dry_run=True, stdout=out)
    assert "1 sem problemas" in out.getvalue()
    assert CTR.objects.count() == 0
    with pytest.raises(CommandError, match="Usuário não encontrado"):
        call_command("import_ctrs", str(path), user="ninguem")
    with pytest.raises(CommandError, match="não está vinculado a um transportador"):
        call_command("import_ctrs", str(path), user="operador")
    with pytest.raises(CommandError, match="Não foi possível ler"):
        call_command("import_ctrs", str(tmp_path / "nao-existe.csv"), user="alfa")
    path.write_bytes(b"")
    with pytest.raises(CommandError, match="O arquivo está vazio. Nenhum CTR foi emitido."):
        call_command("import_ctrs", str(path), user="alfa")


# --- onward CTRs: the origin_facility column ---------------------------------------------------

PREFEITURA = {"generator_name": "Prefeitura (teste)", "generator_document": "46.643.466/0001-06"}


@pytest.fixture
def pev_world(frozen_today):
    """The PEV with 0,8 m³ of A received; the municipality's collection: a municipal user who
    acts for Beta, the transporter that carries it."""
    world = build_world()
    inbound(world, {"A": "0.8"}, received="0.8", facility=world.pev)
    world.prefeitura = make_user("prefeitura", roles.NUCLEO, world.town, transporter=world.beta)
    return world


def pev_row(world, **overrides) -> dict:
    """Sorted waste from the PEV to the recycling area: its origin left to the PEV."""
    values = row(
        world,
        facility=world.recycling,
        vehicle_plate="XYZ9876",
        equipment_code="",
        worksite_address="",
        worksite_neighbourhood="",
        origin_lon="",
        origin_lat="",
        origin_facility=str(world.pev.pk),
        waste="A=0,5",
        **PREFEITURA,
    )
    values.update(overrides)
    return values


def test_the_municipality_imports_onward_ctrs_from_its_pev(pev_world):
    world = pev_world
    data = csv_bytes([pev_row(world), pev_row(world, generator_name="", generator_document="")])
    response = upload(client_for(world.prefeitura), data)
    assert response.status_code == 200
    html = response.content.decode()
    assert "1 CTR emitido" in html and "1 linha recusada" in html
    assert "OVER_FACILITY_STOCK" in html  # 0,3 m³ + 0,08 left after the first row
    (ctr,) = CTR.objects.filter(origin_facility__isnull=False)
    assert ctr.origin_facility == world.pev and ctr.transporter == world.beta
    assert world.pev.area.covers(ctr.origin) and ctr.worksite is None
    assert ctr.generator.document == "46643466000106"


def test_a_file_naming_another_s_facility_is_a_403_listing_every_line(pev_world):
    world = pev_world
    data = csv_bytes(
        [
            pev_row(world),
            pev_row(world, origin_facility=str(world.att.pk)),
            pev_row(world, origin_facility="999999"),
            pev_row(world, origin_facility="x"),
        ]
    )
    response = upload(client_for(world.prefeitura), data)
    assert response.status_code == 403
    html = response.content.decode()
    assert "nenhum CTR foi emitido" in html
    assert "3 linhas do arquivo indicam uma área de origem" in html
    assert (
        "Linha 3: <code>area_origem</code>: Só um operador da área “ATT” emite CTR de saída" in html
    )
    assert "Linha 4: <code>area_origem</code>: A área de origem 999999 não existe." in html
    assert "Linha 5: <code>area_origem</code>: Área de origem inválida: “x”" in html
    assert CTR.objects.filter(origin_facility__isnull=False).count() == 0
    # Unknown or malformed, but none of another's: a 400.
    malformed = csv_bytes([pev_row(world, origin_facility="0")])
    assert upload(client_for(world.prefeitura), malformed).status_code == 400
    # A transporter's user is not the municipality: its PEV is not theirs to ship from.
    assert upload(client_for(world.alfa_user), csv_bytes([pev_row(world)])).status_code == 403
    assert not CTR.objects.filter(origin_facility__isnull=False).exists()


@pytest.mark.parametrize("per_row", [False, True], ids=["bulk", "per-row"])
def test_the_command_refuses_such_a_file_before_issuing_any_row(pev_world, tmp_path, per_row):
    world = pev_world
    path = tmp_path / "saida.csv"
    path.write_bytes(csv_bytes([row(world), pev_row(world, origin_facility=str(world.att.pk))]))
    out = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("import_ctrs", str(path), user="prefeitura", stdout=out, per_row=per_row)
    assert raised.value.returncode == 1
    assert "Nenhum CTR foi emitido." in str(raised.value)
    assert "linha 3: recusada" in out.getvalue()
    assert "origin_facility: Só um operador da área “ATT”" in out.getvalue()
    assert CTR.objects.filter(created_by=world.prefeitura).count() == 0


def test_an_onward_row_has_no_worksite_and_may_leave_out_its_origin_and_operator(world):
    cases = {
        "worksite_address": ("Rua das Flores, 10", "worksite_address"),
        "origin_lat": ("", "origin_lat"),  # the longitude alone
        "generator_document": ("", "generator_document"),  # a name without its document
    }
    for column, (value, problem_column) in cases.items():
        values = pev_row(world, origin_lon="-45,19", origin_lat="-22,81")
        if column != "origin_lat":
            values.update(origin_lon="", origin_lat="")
        values[column] = value
        request, problems = csv_import.parse_row(values)
        assert request is None and [p.column for p in problems] == [problem_column], column
    request, problems = csv_import.parse_row(
        pev_row(world, generator_name="", generator_document="")
    )
    assert problems == [] and request.origin is None and request.generator is None
    assert request.worksite is None and request.origin_facility_id == world.pev.pk


def test_a_facility_number_in_other_digits_is_a_problem_not_an_error(world):
    for column in ("destination_facility", "origin_facility"):
        _, problems = csv_import.parse_row(row(world, **{column: "²"}))
        assert column in [p.column for p in problems]
