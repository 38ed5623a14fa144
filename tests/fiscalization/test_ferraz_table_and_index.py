"""Ferraz de Vasconcelos as Lei 3.190/2013 writes its fines: the R$ 350,00
of art. 9 I and the R$ 500,00 of art. 9 II are lines of its table, each citing its inciso, with
the doubling of §1 and the tripling of §2; and their yearly update by the IGP (§6), from the
variations the municipality enters with their source (no index figure ships), shown on the
record and the case page with the years applied and the years missing."""

import io
from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from pypdf import PdfReader

from ctr import roles
from fiscalization import enforcement, penalty_table
from fiscalization.models.enforcement import DeliveryMethod, PenaltyTableEntry
from fiscalization.models.frameworks import IndexVariation, PenaltyFramework
from pev_network.models import Municipality
from tests.ctr_world import build_world, make_user
from tests.enforcement_world import (
    FERRAZ,
    GUARATINGUETA,
    RIO,
    D,
    at,
    entries,
    fine_applied,
    fixture_framework,
    govern_by,
    open_case,
)

pytestmark = pytest.mark.django_db
CENT = Decimal("0.01")


@pytest.fixture
def world():
    return build_world()


def ferraz(world, base_year=None) -> dict[str, PenaltyTableEntry]:
    """The test town governed by Ferraz's framework, its law's lines installed; `base_year`:
    the year of the amounts, as a later version of the framework would set it (the shipped
    one: 2013, the law's)."""
    framework = govern_by(FERRAZ, world.town)
    if base_year is not None:
        PenaltyFramework.objects.filter(pk=framework.pk).update(index_base_year=base_year)
        framework.refresh_from_db()
    penalty_table.install_law_lines(world.town, framework)
    return {e.code: e for e in PenaltyTableEntry.objects.filter(municipality=world.town)}


def draw(world, when, *lines: PenaltyTableEntry):
    case = open_case(world, when)
    record = enforcement.draw_up_record(
        case,
        list(lines),
        delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True,
        drawn_up_at=when.replace(hour=when.hour + 2),
    )
    return fine_applied(world, record)


def text_of(client: Client, url: str) -> str:
    return client.get(url).content.decode()


def pdf_text(client: Client, record) -> str:
    pdf = client.get(f"/fiscalizacao/autos/{record.pk}/pdf/").content
    return " ".join(" ".join(pg.extract_text() for pg in PdfReader(io.BytesIO(pdf)).pages).split())


def updated(base: str, *percents: str) -> Decimal:
    """The law's amount times the entered variations, to the cent (art. 9 §6)."""
    amount = Decimal(base)
    for percent in percents:
        amount *= 1 + Decimal(percent) / 100
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


# --- art. 9 I-II: the table ----------------------------------------------------------------


def test_ferraz_ships_the_fines_of_art_9_each_citing_its_inciso():
    framework = fixture_framework(FERRAZ)
    lines = {line["legal_reference"]: Decimal(line["amount"]) for line in framework.fine_lines}
    assert lines == {
        "Lei 3.190/2013 art. 9 I": Decimal("350.00"),
        "Lei 3.190/2013 art. 9 II": Decimal("500.00"),
    }
    assert "art. 9 I (R$ 350,00" in framework.cite("fine_lines")
    framework.full_clean()
    # The other laws write no line here (Lei 3.978/2007 art. 23 lost its table).
    for other in (GUARATINGUETA, RIO):
        assert fixture_framework(other).fine_lines == []


def test_ferraz_lines_are_confirmed_lines_of_the_municipality_table(world):
    lines = ferraz(world)
    first, second = lines["ART9-I"], lines["ART9-II"]
    assert (first.fine_ufesp, first.legal_reference) == (
        Decimal("350.00"),
        "Lei 3.190/2013 art. 9 I",
    )
    assert (second.fine_ufesp, second.legal_reference) == (
        Decimal("500.00"),
        "Lei 3.190/2013 art. 9 II",
    )
    usable = PenaltyTableEntry.objects.usable(world.town, D(2025, 3, 10))
    assert set(usable) == {first, second}
    assert first.confirming_act == "Lei nº 3.190/2013"
    # Installing again changes nothing.
    framework = PenaltyFramework.objects.get(ibge_code=world.town.ibge_code, index_name="IGP")
    assert penalty_table.install_law_lines(world.town, framework) == []
    assert PenaltyTableEntry.objects.filter(municipality=world.town).count() == 2


def test_art_9_fines_double_on_recidivism_and_triple_the_last_when_it_persists(world):
    lines = ferraz(world)
    first = draw(world, at(2025, 1, 6, 9), lines["ART9-I"])
    assert first.total_ufesp == Decimal("350.00")  # art. 9 I
    second = draw(world, at(2025, 3, 10, 9), lines["ART9-I"])
    assert second.total_ufesp == 2 * first.total_ufesp  # §1: "aplicada em dobro"
    third = draw(world, at(2025, 6, 2, 9), lines["ART9-II"])
    assert third.total_ufesp == 3 * second.total_ufesp  # §2: 3 × the last fine applied
    assert third.proposes_revocation
    assert [i.legal_reference for i in third.items.all()] == ["Lei 3.190/2013 art. 9 II"]


# --- art. 9 §6: the yearly IGP update ----------------------------------------------------------


def enter(world, year: int, percent: str, source: str) -> IndexVariation:
    return IndexVariation.objects.create(
        municipality=world.town, year=year, percent=Decimal(percent), source=source
    )


def test_a_fine_is_the_law_amount_times_the_variations_entered_since_the_base_year(world):
    lines = ferraz(world, base_year=2023)
    enter(world, 2024, "4.5", "FGV, IGP-DI acumulado de 2023 (exemplo de teste)")
    enter(world, 2025, "-1.25", "FGV, IGP-DI acumulado de 2024 (exemplo de teste)")
    record = draw(world, at(2025, 3, 10, 9), lines["ART9-I"], lines["ART9-II"])
    expected = updated("350", "4.5", "-1.25") + updated("500", "4.5", "-1.25")
    assert record.total_ufesp == expected
    assert record.index_factor == (Decimal("1.045") * Decimal("0.9875")).quantize(Decimal("1e-6"))
    assert "2024: 4,5000% (FGV, IGP-DI acumulado de 2023" in record.index_update
    assert "2025: -1,2500%" in record.index_update
    assert "não cadastrada" not in record.index_update
    client = Client()
    client.force_login(world.fiscal)
    page = text_of(client, f"/fiscalizacao/processos/{record.case_id}/")
    assert "2024: 4,5000%" in page and "art. 9 §6" in page
    assert "2024: 4,5000%" in pdf_text(client, record)


def test_a_year_not_entered_is_said_on_the_case_page_and_the_record(world):
    lines = ferraz(world, base_year=2023)
    enter(world, 2024, "4.5", "FGV (exemplo de teste)")
    enter(world, 2025, "3", "FGV (exemplo de teste)")
    record = draw(world, at(2026, 3, 10, 9), lines["ART9-I"])
    # 2026's variation missing: the fine uses the ones entered, and says which is missing.
    assert record.total_ufesp == updated("350", "4.5", "3")
    assert "variação do IGP de 2026 não cadastrada" in record.index_update
    client = Client()
    client.force_login(world.fiscal)
    assert "variação do IGP de 2026 não cadastrada" in text_of(
        client, f"/fiscalizacao/processos/{record.case_id}/"
    )
    assert "variação do IGP de 2026 não cadastrada" in pdf_text(client, record)
    # Entered later, it governs the records drawn up after; this one keeps its amount.
    enter(world, 2026, "2", "FGV (exemplo de teste)")
    record.refresh_from_db()
    assert record.total_ufesp == updated("350", "4.5", "3")


def test_the_shipped_base_year_is_the_law_s_2013(world):
    lines = ferraz(world)
    record = draw(world, at(2025, 3, 10, 9), lines["ART9-I"])
    assert record.total_ufesp == Decimal("350.00")  # nothing entered: the law's amount
    assert "Valores de 2013" in record.index_update
    assert "variação do IGP de 2014 não cadastrada" in record.index_update


def test_guaratingueta_fines_are_not_updated_by_any_index(world):
    enter(world, 2025, "10", "Variação que não se aplica (exemplo de teste)")
    case = open_case(world, at(2025, 3, 10, 9))
    notice = enforcement.issue_notice(case, "Remover", DeliveryMethod.HAND, at(2025, 3, 10, 10))
    enforcement.register_notice_delivery(notice, at(2025, 3, 10, 10))
    line = entries("INF-01")[0]
    record = enforcement.draw_up_record(
        case, [line], delivery_method=DeliveryMethod.HAND, signed_by_offender=True,
        drawn_up_at=at(2025, 3, 14, 11),
    )  # fmt: skip
    assert record.total_ufesp == line.fine_ufesp
    assert record.index_factor is None and record.index_update == ""


def variations_admin(user) -> Client:
    """`user` signed in to the admin with the permissions on the index variations."""
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.user_permissions.add(*Permission.objects.filter(codename__endswith="_indexvariation"))
    client = Client()
    client.force_login(user)
    return client


ADD = "/admin/fiscalization/indexvariation/add/"


def test_the_municipality_staff_enter_the_variations_in_the_admin_scoped_to_it(world):
    client = variations_admin(world.nucleo)
    page = text_of(client, ADD)
    assert "Ano em que a atualização se aplica" in page and "Fonte" in page
    form = {
        "municipality": world.town.pk,
        "year": "2025",
        "percent": "3.5",
        "source": "FGV, IGP-DI (exemplo de teste)",
    }
    posted = client.post(ADD, form)
    assert posted.status_code == 302, posted.content.decode()[:2000]
    row = IndexVariation.objects.get()
    assert (row.municipality, row.entered_by) == (world.town, world.nucleo)
    # The same year twice: refused in Portuguese, nothing written.
    again = client.post(ADD, {**form, "percent": "9"})
    assert again.status_code == 200
    assert "Já há variação cadastrada para este ano no município." in again.content.decode()
    assert IndexVariation.objects.get().percent == Decimal("3.5")
    # Another municipality's staff do not see it.
    other = Municipality.objects.create(
        ibge_code="3550308", name="Outra", uf="SP", boundary=world.town.boundary
    )
    client = variations_admin(make_user("nucleo-outra", roles.NUCLEO, other))
    listing = text_of(client, "/admin/fiscalization/indexvariation/")
    assert "IGP-DI (exemplo de teste)" not in listing
    assert client.get(f"/admin/fiscalization/indexvariation/{row.pk}/change/").status_code in (
        302,
        404,
    )


def test_the_sum_of_the_fines_cites_only_the_record_s_own_law(world):
    # "Soma das infrações (art. 30 §3)" was printed on every municipality's
    # record; only Lei 3.978/2007 makes simultaneous fines cumulative (art. 30 §3).
    lines = ferraz(world)
    record = draw(world, at(2025, 3, 10, 9), lines["ART9-I"], lines["ART9-II"])
    client = Client()
    client.force_login(world.fiscal)
    page = text_of(client, f"/fiscalizacao/processos/{record.case_id}/")
    pdf = pdf_text(client, record)
    assert "Soma das infrações" in page and "Soma das infrações" in pdf
    for text in (page, pdf):
        assert "art. 30 §3" not in text and "3.978" not in text


def test_guaratingueta_s_sum_of_the_fines_cites_art_30_3(world):
    case = open_case(world, at(2025, 3, 10, 9))
    notice = enforcement.issue_notice(case, "Remover", DeliveryMethod.HAND, at(2025, 3, 10, 10))
    enforcement.register_notice_delivery(notice, at(2025, 3, 10, 10))
    own = enforcement.draw_up_record(
        case, [entries("INF-01")[0]], delivery_method=DeliveryMethod.HAND,
        signed_by_offender=True, drawn_up_at=at(2025, 3, 14, 11),
    )  # fmt: skip
    client = Client()
    client.force_login(world.fiscal)
    own_page = text_of(client, f"/fiscalizacao/processos/{own.case_id}/")
    assert "Soma das infrações (Lei 3.978/2007 art. 30 §3)" in own_page
    assert "multas cumulativas, Lei 3.978/2007 art. 30 §3" in pdf_text(client, own)
