"""The art. 23 table as the municipality's data: nothing invented is usable,
the municipality fills its table (admin or CSV import with a simulation), and an issued record
keeps the lines it was drawn up with."""

from __future__ import annotations

import io
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from pypdf import PdfReader

from fiscalization import enforcement, enforcement_pdf, penalty_table
from fiscalization.enforcement import EnforcementError
from fiscalization.models.enforcement import (
    DeliveryMethod,
    EntryStatus,
    OffenderRole,
    PenaltyTableEntry,
)
from tests.builders import municipality
from tests.ctr_world import build_world
from tests.enforcement_world import D, at, entries, notified_and_expired, open_case, record_for
from tests.migrations import migrate

pytestmark = pytest.mark.django_db

HEADER = (
    "codigo;fundamento_legal;descricao;multa_ufesp;quem_pode_ser_autuado;vigente_desde;vigente_ate"
)
ACT = "Lei nº 4.699/2017"


@pytest.fixture
def world():
    return build_world()


def csv_bytes(*rows: str, header: str = HEADER) -> bytes:
    return ("\ufeff" + "\r\n".join([header, *rows]) + "\r\n").encode()


def line(town, code="INF-01", **values) -> PenaltyTableEntry:
    defaults = {
        "legal_reference": "Lei 3.978/2007 art. 2 §1",
        "description": "Dispor RCC em local proibido",
        "fine_ufesp": Decimal("100"),
        "valid_from": D(2007, 11, 9),
        "status": EntryStatus.CONFIRMED,
        "confirmed_at": at(2025, 1, 2),
        "confirming_act": ACT,
    }
    return PenaltyTableEntry.objects.create(municipality=town, code=code, **{**defaults, **values})


def draw_up(case, entry):
    return enforcement.draw_up_record(
        case,
        [entry],
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True,
        drawn_up_at=notified_and_expired(case),
    )


# --- a record uses only lines its municipality confirmed, valid on the day --------------------


@pytest.mark.parametrize(
    "values, why",
    [
        ({"status": EntryStatus.PROVISIONAL, "confirmed_at": None, "confirming_act": ""},
         "é provisória: o município não confirmou o valor"),
        ({"active": False}, "está inativa"),
        ({"valid_from": D(2025, 3, 4)}, "não está vigente em 03/03/2025"),
        ({"valid_until": D(2025, 3, 2)}, "não está vigente em 03/03/2025"),
    ],
)  # fmt: skip
def test_record_with_an_unusable_line_is_refused_saying_who_fills_the_table(world, values, why):
    case = open_case(world, opened_at=at(2025, 3, 3, 9))  # the infraction's day
    entry = line(world.town, code="X-01", **values)
    with pytest.raises(EnforcementError) as refused:
        draw_up(case, entry)
    message = refused.value.message
    assert message.startswith(
        f"A linha X-01 (Lei 3.978/2007 art. 2 §1) da tabela de infrações {why}"
    )
    assert "Núcleo Permanente de Gestão" in message and "administrador" in message
    assert "“Tabela de infrações (art. 23)”" in message and "importação CSV" in message
    assert "simule" in message
    assert refused.value.code == "entry_not_usable" and refused.value.status == 400
    assert not case.records.exists()


def test_line_of_another_municipality_is_refused(world):
    case = open_case(world, opened_at=at(2025, 3, 3, 9))
    other = line(municipality("3550308", "São Paulo"), code="SP-01")
    with pytest.raises(EnforcementError, match="SP-01 .* é da tabela de outro município"):
        draw_up(case, other)


def test_line_valid_on_the_day_of_the_infraction_is_accepted(world):
    case = open_case(world, opened_at=at(2025, 3, 3, 9))
    entry = line(world.town, code="X-01", valid_from=D(2025, 3, 3), valid_until=D(2025, 3, 3))
    assert draw_up(case, entry).total_ufesp == Decimal("100.00")


def test_the_seeded_provisional_lines_draw_up_nothing(world):
    """The lines of migration 0003 as 0009 leaves them: Guaratinguetá's, inactive, provisional."""
    seeded = line(world.town, status=EntryStatus.PROVISIONAL, active=False, confirmed_at=None,
                  confirming_act="")  # fmt: skip
    with pytest.raises(EnforcementError, match="INF-01 .* é provisória"):
        draw_up(open_case(world), seeded)


# --- the record form lists only what the record may use ----------------------------------------


def record_form_page(world, case) -> str:
    web = Client()
    web.force_login(world.fiscal)
    response = web.get(f"/fiscalizacao/processos/{case.pk}/auto/")
    assert response.status_code == 200
    return response.content.decode()


def test_record_form_lists_only_the_usable_lines_of_the_case(world):
    case = open_case(world, opened_at=at(2025, 3, 3, 9))
    usable = line(world.town, code="OK-01")
    line(world.town, code="PROV-01", status=EntryStatus.PROVISIONAL, confirming_act="")
    line(world.town, code="OFF-01", active=False)
    line(world.town, code="LATE-01", valid_from=D(2026, 1, 1))
    line(municipality("3550308", "São Paulo"), code="SP-01")
    page = record_form_page(world, case)
    assert f'value="{usable.pk}"' in page and "OK-01" in page
    for code in ("PROV-01", "OFF-01", "LATE-01", "SP-01"):
        assert code not in page
    assert "Nenhuma linha da tabela" not in page


def test_record_form_without_usable_lines_says_who_fills_the_table(world):
    case = open_case(world, opened_at=at(2025, 3, 3, 9))
    line(world.town, code="PROV-01", status=EntryStatus.PROVISIONAL, confirming_act="")
    page = record_form_page(world, case)
    assert "PROV-01" not in page
    assert (
        "Nenhuma linha da tabela de infrações de Guaratinguetá (teste) está confirmada e vigente "
        "em 03/03/2025" in page
    )
    assert "Núcleo Permanente de Gestão" in page and "importação CSV" in page


# --- the CSV import --------------------------------------------------------------------------

GOOD = (
    "INF-01;Lei 3.978/2007 art. 2 §1;Dispor RCC em local proibido;120,5;motorista, transportadora;"
    "01/01/2026;",
    "INF-02;Lei 3.978/2007 art. 13;Transportar sem cadastro;50;;2026-01-01;31/12/2026",
)


def test_dry_run_reports_what_would_be_created_and_writes_nothing(world):
    report = penalty_table.import_table(csv_bytes(*GOOD), world.town, dry_run=True)
    assert report.ok and not report.written
    assert [text for _, text in report.described] == [
        "linha 2: INF-01 desde 01/01/2026 seria criada.",
        "linha 3: INF-02 desde 01/01/2026 seria criada.",
    ]
    assert not PenaltyTableEntry.objects.filter(municipality=world.town).exists()


def test_import_creates_provisional_lines_unless_confirmed_by_an_act(world):
    report = penalty_table.import_table(csv_bytes(*GOOD), world.town)
    assert report.written and report.count(penalty_table.CREATE) == 2
    inf01 = PenaltyTableEntry.objects.get(municipality=world.town, code="INF-01")
    assert (inf01.fine_ufesp, inf01.status, inf01.active) == (
        Decimal("120.50"), EntryStatus.PROVISIONAL, True
    )  # fmt: skip
    assert inf01.offender_roles == [OffenderRole.DRIVER, OffenderRole.TRANSPORT_DIRECTOR]
    assert inf01.valid_until is None
    assert PenaltyTableEntry.objects.get(code="INF-02").valid_until == D(2026, 12, 31)

    report = penalty_table.import_table(
        csv_bytes(*GOOD), world.town, confirm=True, act=ACT, by=world.nucleo
    )
    assert [text for _, text in report.described][
        0
    ] == "linha 2: INF-01 desde 01/01/2026 confirmada."
    inf01.refresh_from_db()
    assert (inf01.status, inf01.confirming_act, inf01.confirmed_by) == (
        EntryStatus.CONFIRMED, ACT, world.nucleo
    )  # fmt: skip


def test_bad_line_names_line_and_column_and_nothing_is_written(world):
    rows = (*GOOD, "INF-03;art. 13 p.ú.;Destinar a área não licenciada;oitenta;ninguém;32/01/2026;")
    report = penalty_table.import_table(csv_bytes(*rows), world.town, confirm=True, act=ACT)
    assert not report.ok and not report.written
    [bad] = report.refused
    assert bad.describe(False) == (
        "linha 4, coluna multa_ufesp: “oitenta” não é um número (ex.: 12,5).; "
        "linha 4, coluna vigente_desde: “32/01/2026” não é uma data (use DD/MM/AAAA ou "
        "AAAA-MM-DD).; linha 4, coluna quem_pode_ser_autuado: Não reconhecido: ninguém. Use "
        "proprietario, representante, motorista, transportadora ou area_de_recepcao (art. 24)."
    )
    assert "nada foi gravado" in report.summary()
    assert not PenaltyTableEntry.objects.filter(municipality=world.town).exists()


def test_overlapping_lines_of_a_code_in_the_file_are_refused(world):
    rows = (GOOD[0], "INF-01;art. 2;Outra;10;;01/06/2026;")
    report = penalty_table.import_table(csv_bytes(*rows), world.town)
    [bad] = report.refused
    assert bad.line == 3 and bad.problems[0].column == "vigente_ate"
    assert not PenaltyTableEntry.objects.filter(municipality=world.town).exists()


def test_a_new_period_ends_the_running_one_and_changes_no_record(world):
    old = line(world.town)
    record = draw_up(open_case(world, opened_at=at(2025, 3, 3, 9)), old)
    report = penalty_table.import_table(csv_bytes(GOOD[0]), world.town, confirm=True, act=ACT)
    assert [text for _, text in report.described] == [
        "linha 2: INF-01 desde 01/01/2026 criada; encerra a vigência de INF-01 desde 09/11/2007 "
        "em 31/12/2025."
    ]
    old.refresh_from_db()
    assert old.valid_until == D(2025, 12, 31)
    assert [item.fine_ufesp for item in record.items.all()] == [Decimal("100.00")]


def test_confirming_needs_the_act(world):
    with pytest.raises(penalty_table.PenaltyTableError, match="informe a lei que fixa os valores"):
        penalty_table.import_table(csv_bytes(*GOOD), world.town, confirm=True)


@pytest.mark.parametrize(
    "act",
    [
        "Decreto nº 1.234/2026",  # a decree: the table is the law's
        "Portaria SMSU nº 12/2025",
        "Lei nº 3.978/2007",  # the law whose table lost its text, not the one that words it
        "Lei Complementar nº 15/2020",
    ],
)
def test_only_a_citation_of_the_law_that_words_the_table_confirms_it(world, act):
    # Lei 3.978/2007 art. 23 "(Redação dada pela Lei nº 4699/2017)": Guaratinguetá's framework
    # names that law, and only an act citing it confirms the amounts.
    with pytest.raises(penalty_table.PenaltyTableError, match="Lei nº 4.699/2017") as refused:
        penalty_table.import_table(csv_bytes(*GOOD), world.town, confirm=True, act=act)
    assert "não de um decreto" in refused.value.message
    assert not PenaltyTableEntry.objects.filter(municipality=world.town).exists()
    for cited in ("Lei nº 4.699/2017", "Lei Municipal nº 4699/2017, art. 1º"):
        penalty_table.import_table(csv_bytes(*GOOD), world.town, confirm=True, act=cited)
        assert PenaltyTableEntry.objects.get(code="INF-01").confirming_act == cited


def test_the_admin_import_help_suggests_the_law_not_a_decree(world):
    client = admin_client()
    page = client.get("/admin/fiscalization/penaltytableentry/importar/").content.decode()
    assert "Lei nº 4.699/2017" in page and "Decreto" not in page
    refused = upload(client, world.town, csv_bytes(*GOOD), confirm="on", act="Decreto nº 1/2026")
    assert refused.status_code == 400
    assert "não de um decreto" in refused.content.decode()


def test_a_file_without_the_required_columns_is_refused_whole(world):
    from config.csv_reader import CSVFileError

    with pytest.raises(CSVFileError, match="Faltam colunas obrigatórias no cabeçalho: multa_ufesp"):
        penalty_table.import_table(
            csv_bytes("INF-01;art. 2;x;01/01/2026", header=HEADER.replace("multa_ufesp;", "")),
            world.town,
        )


def test_command_simulates_then_confirms(world, tmp_path):
    path = tmp_path / "tabela.csv"
    path.write_bytes(csv_bytes(*GOOD))
    out = io.StringIO()
    call_command("import_penalty_table", str(path), "--municipality", "3518404", "--dry-run",
                 stdout=out)  # fmt: skip
    assert "Simulação (nada gravado)" in out.getvalue() and "seria criada" in out.getvalue()
    assert not PenaltyTableEntry.objects.filter(municipality=world.town).exists()
    call_command("import_penalty_table", str(path), "--municipality", "3518404", "--confirm",
                 "--act", ACT, "--by", "nucleo", stdout=io.StringIO())  # fmt: skip
    assert PenaltyTableEntry.objects.usable(world.town, D(2026, 2, 1)).count() == 2


def test_command_with_a_bad_line_exits_2_and_writes_nothing(world, tmp_path):
    path = tmp_path / "tabela.csv"
    path.write_bytes(csv_bytes(GOOD[0], "INF-02;art. 13;;50;;01/01/2026;"))
    with pytest.raises(CommandError) as failed:
        call_command("import_penalty_table", str(path), "--municipality", "3518404",
                     stdout=io.StringIO())  # fmt: skip
    assert failed.value.returncode == 2
    assert not PenaltyTableEntry.objects.filter(municipality=world.town).exists()


def admin_client():
    admin = get_user_model().objects.create_superuser("gestor", "g@example.org", "x")
    client = Client()
    client.force_login(admin)
    return client


def upload(client, town, data: bytes, **options):
    file = io.BytesIO(data)
    file.name = "tabela.csv"
    return client.post(
        "/admin/fiscalization/penaltytableentry/importar/",
        {"file": file, "municipality": town.pk, **options},
    )


def test_admin_page_simulates_by_default_and_imports(world):
    client = admin_client()
    listing = client.get("/admin/fiscalization/penaltytableentry/").content.decode()
    assert "/admin/fiscalization/penaltytableentry/importar/" in listing
    form = client.get("/admin/fiscalization/penaltytableentry/importar/").content.decode()
    assert 'name="dry_run"' in form and "checked" in form.split('name="dry_run"')[1][:80]
    page = upload(client, world.town, csv_bytes(*GOOD), dry_run="on").content.decode()
    assert "Simulação (nada gravado)" in page and "INF-02 desde 01/01/2026 seria criada." in page
    assert not PenaltyTableEntry.objects.filter(municipality=world.town).exists()
    upload(client, world.town, csv_bytes(*GOOD), confirm="on", act=ACT)
    confirmed = PenaltyTableEntry.objects.get(municipality=world.town, code="INF-01")
    assert confirmed.status == EntryStatus.CONFIRMED and confirmed.confirmed_by.username == "gestor"


def test_admin_page_shows_the_bad_line_and_writes_nothing(world):
    page = upload(
        admin_client(), world.town, csv_bytes(GOOD[0], "INF-02;art. 13;x;-5;;01/01/2026;")
    )
    text = page.content.decode()
    assert "linha 3, coluna multa_ufesp: A multa vai de 0 a 999.999,99 UFESP" in text
    assert not PenaltyTableEntry.objects.filter(municipality=world.town).exists()


def test_confirming_a_line_in_the_admin_records_who_and_needs_the_act(world):
    entry = line(world.town, status=EntryStatus.PROVISIONAL, confirmed_at=None, confirming_act="")
    client = admin_client()
    url = f"/admin/fiscalization/penaltytableentry/{entry.pk}/change/"
    fields = {
        "municipality": world.town.pk,
        "code": entry.code,
        "legal_reference": entry.legal_reference,
        "description": entry.description,
        "fine_ufesp": "100",
        "offender_roles": [OffenderRole.DRIVER],
        "valid_from": "09/11/2007",
        "valid_until": "",
        "active": "on",
        "status": EntryStatus.CONFIRMED,
        "note": "",
    }
    refused = client.post(url, {**fields, "confirming_act": ""})
    assert "Para confirmar a linha, informe o ato que fixa o valor." in refused.content.decode()
    client.post(url, {**fields, "confirming_act": ACT})
    entry.refresh_from_db()
    assert (entry.status, entry.confirming_act) == (EntryStatus.CONFIRMED, ACT)
    assert entry.confirmed_by.username == "gestor" and entry.confirmed_at is not None


# --- an issued record keeps the lines it used ------------------------------------------------


def pdf_text(content: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


def test_changing_the_table_after_the_record_changes_nothing_in_it(world, frozen_today):
    # The PDF says when it was made, to the minute: the clock frozen, both are made in one.
    record = record_for(world, codes=("INF-01", "INF-04"))  # 100 + 30
    pdf_before = pdf_text(enforcement_pdf.record_pdf(record))
    web = Client()
    web.force_login(world.fiscal)
    page_before = web.get(f"/fiscalizacao/processos/{record.case_id}/").content.decode()
    assert "Dispor RCC ou volumosos em local proibido" in pdf_before.replace("\n", " ")

    PenaltyTableEntry.objects.filter(pk__in=[e.pk for e in entries("INF-01")]).update(
        code="NOVO-01",
        description="Texto novo da linha",
        legal_reference="Decreto novo",
        fine_ufesp=Decimal("999"),
    )
    record.refresh_from_db()
    items = list(record.items.values_list("code", "legal_reference", "fine_ufesp"))
    assert items == [
        ("INF-01", "Lei 3.978/2007 art. 2 §1", Decimal("100.00")),
        ("INF-04", "Lei 3.978/2007 art. 3 VI, art. 13 p.ú.", Decimal("30.00")),
    ]
    assert record.total_ufesp == Decimal("130.00")
    assert enforcement.record_fine(record).total_ufesp == Decimal("130.00")
    pdf_after = pdf_text(enforcement_pdf.record_pdf(record))
    assert "Texto novo" not in pdf_after and "NOVO-01" not in pdf_after and "999" not in pdf_after
    assert pdf_after == pdf_before
    page_after = web.get(f"/fiscalizacao/processos/{record.case_id}/").content.decode()
    assert "Texto novo" not in page_after and "NOVO-01" not in page_after
    assert "Dispor RCC ou volumosos em local proibido" in page_after
    assert page_before.count("INF-01") == page_after.count("INF-01")


# --- migration 0009: the existing table becomes Guaratinguetá's, provisional ---------------------

BEFORE = [("fiscalization", "0008_delivery_attempts")]


@pytest.fixture
def latest_schema_afterwards():
    yield
    migrate()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("guaratingueta", [True, False])
def test_migration_keeps_every_record_and_leaves_nothing_usable(
    latest_schema_afterwards, guaratingueta
):
    from django.db import connection

    world = build_world()
    record = record_for(world, codes=("INF-01", "INF-04"))
    used = dict(record.items.values_list("pk", "entry_id"))
    migrate(BEFORE)
    with connection.cursor() as cursor:
        # A line the municipality typed in the admin before: no act recorded either.
        cursor.execute(
            "INSERT INTO fiscalization_penaltytableentry (code, legal_reference, description, "
            "fine_ufesp, offender_roles, active, note) VALUES ('LOCAL-01', 'art. 9', 'Local', "
            "10, '{}', true, '')"
        )
        if not guaratingueta:  # a database whose municipality is another one
            cursor.execute(
                "UPDATE pev_network_municipality SET ibge_code = '3599999' WHERE id = %s",
                [world.town.pk],
            )
    migrate()  # through 0009 (and the later ones, which leave the table alone)

    record.refresh_from_db()
    assert dict(record.items.values_list("pk", "entry_id")) == used
    assert list(record.items.values_list("code", "legal_reference", "description")) == [
        (e.code, e.legal_reference, e.description)
        for e in PenaltyTableEntry.objects.filter(pk__in=used.values()).order_by("code")
    ]
    assert record.total_ufesp == Decimal("130.00")
    lines = PenaltyTableEntry.objects.all()
    assert {e.municipality_id for e in lines} == {world.town.pk}
    assert {e.status for e in lines} == {EntryStatus.PROVISIONAL}
    assert {e.valid_from for e in lines} == {D(2007, 11, 9)}
    seeded = lines.filter(code__startswith="INF-")
    assert not seeded.filter(active=True).exists()
    if guaratingueta:
        assert seeded.count() == 12 and lines.get(code="LOCAL-01").active
    else:  # without Guaratinguetá only the lines a record uses have an owner: the rest go
        assert sorted(lines.values_list("code", flat=True)) == ["INF-01", "INF-04"]
    assert not PenaltyTableEntry.objects.usable(world.town, D(2025, 3, 3)).exists()
