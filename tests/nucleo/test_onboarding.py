"""Bringing a municipality in: `manage.py onboard_municipality` and its
service, nucleo.onboarding, on the real boundaries of SP (fixtures/sp_estado_municipios_645_
tbrugz.geojson, byte for byte the shared geodata's, provenance in fixtures/README.md)."""

from __future__ import annotations

import datetime
import io
import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError

from fiscalization.models.enforcement import PenaltyTableEntry
from fiscalization.models.frameworks import PenaltyFramework
from jurisdiction.models import Role, StaffRole
from jurisdiction.scope import jurisdiction_of
from nucleo import onboarding
from pev_network.models import (
    FIRST_SET_FROM,
    FacilityLicense,
    Municipality,
    MunicipalityPiece,
    MunicipalParameters,
    ReceivingFacility,
    parameter_names,
)
from tests.builders import ORIGIN, municipality, offset, set_parameters, square
from tests.clock import FROZEN_NOW
from tests.ctr_world import TODAY, make_user
from tests.enforcement_world import FERRAZ, GUARATINGUETA, ensure_frameworks

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
SP = ROOT / "fixtures" / "sp_estado_municipios_645_tbrugz.geojson"
NETWORK = ROOT / "fixtures" / "exemplo_rede_aparecida.geojson"
APARECIDA = "3502507"
EMAIL = "ana.souza@example.org"


@pytest.fixture(autouse=True)
def frameworks():
    ensure_frameworks()


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("onboard_municipality", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def aparecida(*extra: str) -> list[str]:
    return [APARECIDA, "--boundary", str(SP), "--nucleo-email", EMAIL, *extra]


def snapshot() -> dict[str, int]:
    """How many rows of everything the onboarding writes."""
    return {
        model.__name__: model.objects.count()
        for model in (
            Municipality,
            MunicipalityPiece,
            PenaltyFramework,
            StaffRole,
            ReceivingFacility,
            FacilityLicense,
            get_user_model(),
        )
    }


# --- the whole operation ---


def test_onboarding_creates_the_municipality_its_framework_copy_nucleo_and_network(
    frozen_today, django_capture_on_commit_callbacks
):
    guaratingueta = municipality(GUARATINGUETA, "Guaratinguetá")
    with django_capture_on_commit_callbacks(execute=True):
        out = run(*aparecida("--framework-from", FERRAZ, "--network", str(NETWORK)))

    town = Municipality.objects.get(ibge_code=APARECIDA)
    assert (town.name, town.uf) == ("Aparecida", "SP")
    assert town.boundary_source == SP.name
    # The boundary is the file's, and the point lookups know it (its subdivided pieces).
    assert town.boundary.contains(town.boundary.point_on_surface)
    assert MunicipalityPiece.objects.filter(municipality=town).exists()
    assert town.parameters_on(TODAY).small_volume_limit_m3 == Decimal("1.000")  # the defaults
    framework = PenaltyFramework.objects.get(ibge_code=APARECIDA)
    assert framework.name.startswith("Aparecida — cópia de Ferraz de Vasconcelos")
    assert framework.valid_from == FROZEN_NOW.date()
    facilities = ReceivingFacility.objects.filter(municipality=town)
    assert sorted(facilities.values_list("code", flat=True)) == ["APA-ATT-01", "APA-PEV-01"]
    assert FacilityLicense.objects.filter(facility__in=facilities).count() == 2
    assert not ReceivingFacility.objects.filter(municipality=guaratingueta).exists()
    # The report: what was made, in Portuguese.
    assert "Município criado: Aparecida/SP (IBGE 3502507)" in out
    assert "cópia de “Ferraz de Vasconcelos — Lei 3.190/2013” criada para editar" in out
    assert f"link para definir a senha enviado a {EMAIL}" in out
    assert "Áreas criadas: 2" in out
    (message,) = mail.outbox
    assert message.to == [EMAIL] and "Aparecida" not in message.subject
    assert "Núcleo Permanente de Gestão de Aparecida/SP" in message.body


def test_the_municipalitys_own_law_is_recorded_and_never_copied():
    """--waste-law is what its documents cite; copying another's parameters never brings its
    law along (pev_network.letterhead: no document cites another municipality's law)."""
    municipality(GUARATINGUETA, "Guaratinguetá")
    run(*aparecida("--parameters-from", GUARATINGUETA, "--waste-law", " Lei Municipal nº 1/2020 "))
    assert Municipality.objects.get(ibge_code=APARECIDA).waste_law == "Lei Municipal nº 1/2020"
    assert (
        Municipality.objects.get(ibge_code=GUARATINGUETA).waste_law == "Lei Municipal nº 3.978/2007"
    )


def test_without_a_law_the_new_municipality_has_none_on_record():
    municipality(GUARATINGUETA, "Guaratinguetá")
    run(*aparecida("--parameters-from", GUARATINGUETA))
    assert Municipality.objects.get(ibge_code=APARECIDA).waste_law == ""


def test_dry_run_writes_nothing_and_mails_no_one(django_capture_on_commit_callbacks):
    municipality(GUARATINGUETA, "Guaratinguetá")
    before = snapshot()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        out = run(
            *aparecida(
                "--framework-from", FERRAZ, "--network", str(NETWORK), "--dry-run", "--show-link"
            )
        )
    assert snapshot() == before
    assert callbacks == [] and mail.outbox == []
    # …and says what it would have done, with the real counts of the network's import.
    assert "Município a criar: Aparecida/SP (IBGE 3502507)" in out
    assert "Áreas a criar: 2" in out
    assert f"um link para definir a senha seria enviado a {EMAIL}" in out
    assert "Simulação (--dry-run): nada foi gravado e nenhum e-mail foi enviado." in out
    assert "/conta/senha/" not in out  # no link of an account that does not exist


# --- refused, with a Portuguese reason, and nothing written ---


def refusal(*args: str) -> str:
    before = snapshot()
    with pytest.raises(CommandError) as error:
        run(*args)
    assert snapshot() == before
    assert mail.outbox == []
    return str(error.value)


@pytest.mark.parametrize("code", ["35025", "35025070", "9902507", "35O2507"])
def test_a_malformed_ibge_code_is_refused(code):
    message = refusal(code, "--boundary", str(SP), "--nucleo-email", EMAIL)
    assert f"Código IBGE inválido: “{code}”" in message
    assert "nada foi gravado" in message


def test_a_code_whose_boundary_is_not_in_the_file_is_refused():
    # Rio de Janeiro: a real code, not in a file of SP's municipalities.
    message = refusal("3304557", "--boundary", str(SP), "--nucleo-email", EMAIL)
    assert "O arquivo sp_estado_municipios_645_tbrugz.geojson não tem o limite do município " in (
        message
    )
    assert "dígito verificador" not in message


def test_a_mistyped_code_is_told_its_check_digit_is_wrong():
    message = refusal("3502508", "--boundary", str(SP), "--nucleo-email", EMAIL)
    assert "não tem o limite do município 3502508" in message
    assert "O dígito verificador não confere" in message and "seria 7" in message


def test_a_missing_boundary_file_is_refused(tmp_path):
    message = refusal(
        APARECIDA, "--boundary", str(tmp_path / "nao.geojson"), "--nucleo-email", EMAIL
    )
    assert "Arquivo de limites recusado; nada foi importado" in message
    assert "arquivo não encontrado" in message


def test_an_invalid_boundary_is_refused_unless_fixed(tmp_path):
    bowtie = {
        "type": "FeatureCollection",
        "features": [
            {
                "type": "Feature",
                "properties": {"id": APARECIDA, "name": "Aparecida"},
                "geometry": {
                    "type": "Polygon",
                    "coordinates": [
                        [[-45.26, -22.95], [-45.20, -22.85], [-45.20, -22.95], [-45.26, -22.85],
                         [-45.26, -22.95]]
                    ],
                },
            }
        ],
    }  # fmt: skip
    path = tmp_path / "aparecida.geojson"
    path.write_text(json.dumps(bowtie))
    message = refusal(APARECIDA, "--boundary", str(path), "--nucleo-email", EMAIL)
    assert "geometria inválida" in message and "--fix-invalid" in message
    out = run(APARECIDA, "--boundary", str(path), "--nucleo-email", EMAIL, "--fix-invalid")
    assert "Geometria corrigida (--fix-invalid)" in out
    assert Municipality.objects.filter(ibge_code=APARECIDA).exists()


def test_an_unknown_framework_is_refused_and_the_shipped_ones_listed():
    message = refusal(*aparecida("--framework-from", "3550308"))
    assert "Não há regime de penalidades do município 3550308 para copiar" in message
    assert f"{GUARATINGUETA} (Guaratinguetá — Lei 3.978/2007" in message
    assert f"{FERRAZ} (Ferraz de Vasconcelos" in message


def test_an_existing_municipality_is_refused():
    municipality(APARECIDA, "Aparecida")
    message = refusal(*aparecida())
    assert "O município Aparecida/SP (IBGE 3502507) já está na plataforma" in message


def test_unknown_parameters_source_and_bad_email_are_refused_together():
    """Every reason at once, not one per run."""
    message = refusal(
        APARECIDA,
        "--boundary",
        str(SP),
        "--nucleo-email",
        "ana.souza",
        "--parameters-from",
        "3550308",
        "--framework-from",
        "1234567",
    )
    assert "Não há município com o código IBGE 3550308 de onde copiar os parâmetros" in message
    assert "E-mail do Núcleo inválido: “ana.souza”" in message
    assert "Não há regime de penalidades do município 1234567" in message


def test_a_network_area_outside_the_municipality_refuses_everything(tmp_path):
    guaratingueta = municipality(GUARATINGUETA, "Guaratinguetá")
    network = json.loads(NETWORK.read_text())
    # The PEV drawn inside Guaratinguetá (the test square around ORIGIN), not in Aparecida.
    inside_guara = square(*offset(*ORIGIN, 500, 500), 30)
    network["features"][1]["geometry"] = json.loads(inside_guara.geojson)
    path = tmp_path / "rede.geojson"
    path.write_text(json.dumps(network))
    message = refusal(*aparecida("--network", str(path)))
    assert "feição 2 (código APA-PEV-01)" in message
    assert f"a área fica fora do limite do município (em {guaratingueta})" in message


def test_a_network_code_of_another_municipalitys_area_is_refused(tmp_path):
    from tests.builders import licensed_facility

    guaratingueta = municipality(GUARATINGUETA, "Guaratinguetá")
    theirs = licensed_facility("PEV", square(*ORIGIN, 30), "PEV deles", guaratingueta)
    theirs.code = "APA-PEV-01"
    theirs.save()
    message = refusal(*aparecida("--network", str(NETWORK)))
    assert "o código APA-PEV-01 já é de uma área de outro município (PEV deles)" in message
    theirs.refresh_from_db()
    assert theirs.municipality == guaratingueta and theirs.name == "PEV deles"


def test_only_the_platform_administrator_onboards():
    nucleo = make_user("nucleo_guara", Role.NUCLEO, municipality(GUARATINGUETA, "Guaratinguetá"))
    new = onboarding.NewMunicipality(ibge_code=APARECIDA, boundary_file=SP, nucleo_email=EMAIL)
    with pytest.raises(onboarding.NotAdministrator) as error:
        onboarding.onboard(new, by=nucleo)
    assert error.value.status == 403
    assert not Municipality.objects.filter(ibge_code=APARECIDA).exists()


# --- the framework, the parameters, the account ---


def test_the_framework_copy_is_independent_of_its_source(frozen_today):
    source = PenaltyFramework.objects.get(ibge_code=FERRAZ)
    source_values = {f.attname: getattr(source, f.attname) for f in source._meta.concrete_fields}
    run(*aparecida("--framework-from", FERRAZ, "--framework-valid-from", "01/03/2026"))
    copy = PenaltyFramework.objects.get(ibge_code=APARECIDA)
    assert copy.pk != source.pk and copy.valid_from == datetime.date(2026, 3, 1)
    assert copy.appeal_days == source.appeal_days and copy.citations == source.citations
    assert "Copiado em" in copy.readings and "Revise a lei" in copy.readings

    # Editing the copy (its parameters and the citations' JSON) leaves the source as it was…
    copy.appeal_days += 5
    copy.citations["appeal_days"] = "Lei Municipal de Aparecida nº 1/2026, art. 10"
    copy.law = "Lei Municipal de Aparecida nº 1/2026"
    copy.save()
    source.refresh_from_db()
    assert {f.attname: getattr(source, f.attname) for f in source._meta.concrete_fields} == (
        source_values
    )
    # …and the other way round.
    source.citations["repair_hours"] = "mudado na origem"
    source.save()
    copy.refresh_from_db()
    assert copy.citations["repair_hours"] != "mudado na origem"


def test_without_framework_none_governs_and_nothing_is_copied():
    # Guaratinguetá's law does not govern another municipality.
    before = PenaltyFramework.objects.count()
    out = run(*aparecida())
    assert PenaltyFramework.objects.count() == before
    assert "Regime de penalidades: nenhum." in out
    assert "nenhum processo de fiscalização pode ser aberto nele" in out
    assert "Guaratinguetá" not in out


def test_a_municipality_with_a_shipped_framework_keeps_it():
    """Ferraz de Vasconcelos' framework ships with the system: bringing Ferraz in uses it."""
    before = PenaltyFramework.objects.count()
    out = run(FERRAZ, "--boundary", str(SP), "--nucleo-email", EMAIL)
    assert PenaltyFramework.objects.count() == before
    assert "o próprio do município, já cadastrado: “Ferraz de Vasconcelos" in out
    # The fines its law writes are lines of its table (Lei 3.190/2013 art. 9 I-II).
    table = PenaltyTableEntry.objects.filter(municipality__ibge_code=FERRAZ, status="CONFIRMED")
    assert sorted(table.values_list("legal_reference", "fine_ufesp")) == [
        ("Lei 3.190/2013 art. 9 I", Decimal("350.00")),
        ("Lei 3.190/2013 art. 9 II", Decimal("500.00")),
    ]
    assert "ART9-I (Lei 3.190/2013 art. 9 I)" in out


def test_copying_a_framework_over_a_shipped_one_is_refused():
    message = refusal(
        FERRAZ, "--boundary", str(SP), "--nucleo-email", EMAIL, "--framework-from", GUARATINGUETA
    )
    assert f"O município {FERRAZ} já tem regime de penalidades próprio" in message


def test_parameters_copied_from_another_municipality_are_independent():
    guaratingueta = municipality(GUARATINGUETA, "Guaratinguetá")
    source = set_parameters(
        guaratingueta,
        small_volume_limit_m3=Decimal("1.500"),
        gps_tolerance_m=Decimal("22.5"),
        sorting_tolerance_pct={"A": "12"},
        generator_confirmation_required=True,
    )
    out = run(*aparecida("--parameters-from", GUARATINGUETA))
    town = Municipality.objects.get(ibge_code=APARECIDA)
    (copied,) = town.parameter_sets.all()
    for name in onboarding.PARAMETERS:
        assert getattr(copied, name) == getattr(source, name), name
    assert town.name == "Aparecida" and town.boundary_source == SP.name
    assert f"Parâmetros: copiados de {guaratingueta}" in out
    copied.sorting_tolerance_pct["A"] = "20"
    copied.save()
    source.refresh_from_db()
    assert source.sorting_tolerance_pct == {"A": "12"}


def test_the_parameters_copied_are_the_set_the_source_has_in_force_today(frozen_today):
    """A consortium's new member takes the figures its neighbour applies now: not the
    neighbour's first set, which a later one replaced, nor a set that starts tomorrow; they are
    the new municipality's first set, in force from its first day."""
    guaratingueta = municipality(GUARATINGUETA, "Guaratinguetá")
    set_parameters(guaratingueta, gps_tolerance_m=Decimal("15.0"))
    MunicipalParameters.objects.create(
        municipality=guaratingueta,
        valid_from=TODAY - datetime.timedelta(days=30),
        gps_tolerance_m=Decimal("22.5"),
        open_ctr_alert_hours=72,
    )
    MunicipalParameters.objects.create(
        municipality=guaratingueta,
        valid_from=TODAY + datetime.timedelta(days=1),
        gps_tolerance_m=Decimal("99.0"),
    )
    run(*aparecida("--parameters-from", GUARATINGUETA))
    (copied,) = Municipality.objects.get(ibge_code=APARECIDA).parameter_sets.all()
    assert (copied.gps_tolerance_m, copied.open_ctr_alert_hours) == (Decimal("22.5"), 72)
    assert copied.valid_from == FIRST_SET_FROM


def test_every_field_of_a_municipality_is_a_parameter_or_its_identity():
    """A new field of Municipality must be classified: copied to a new municipality from
    another (a legal parameter) or never (what the municipality is)."""
    fields = {f.name for f in Municipality._meta.concrete_fields}
    assert fields == set(onboarding.IDENTITY)
    # The parameters are a set of their own, copied whole.
    assert set(onboarding.PARAMETERS) == set(parameter_names())


def test_the_nucleo_account_holds_its_role_only_in_the_new_municipality(
    django_capture_on_commit_callbacks,
):
    municipality(GUARATINGUETA, "Guaratinguetá")
    with django_capture_on_commit_callbacks(execute=True):
        run(*aparecida("--nucleo-name", "Ana Souza"))
    town = Municipality.objects.get(ibge_code=APARECIDA)
    user = get_user_model().objects.get(email=EMAIL)
    assert user.username == EMAIL and user.get_full_name() == "Ana Souza"
    assert list(StaffRole.objects.filter(user=user).values_list("municipality", "role")) == [
        (town.pk, Role.NUCLEO)
    ]
    j = jurisdiction_of(user)
    assert j.readable_ids == {town.pk} and j.current_id == town.pk and not j.everywhere
    # Nobody knows its password: it has none until the person follows the link.
    assert not user.has_usable_password() and not user.is_staff and not user.is_superuser
    assert len(mail.outbox) == 1


def test_a_consortium_member_already_nucleo_elsewhere_gets_the_role_here_too(
    django_capture_on_commit_callbacks,
):
    guaratingueta = municipality(GUARATINGUETA, "Guaratinguetá")
    ana = make_user("ana", Role.NUCLEO, guaratingueta)
    ana.email = EMAIL
    ana.save()
    with django_capture_on_commit_callbacks(execute=True):
        out = run(*aparecida())
    town = Municipality.objects.get(ibge_code=APARECIDA)
    assert set(StaffRole.objects.filter(user=ana).values_list("municipality", flat=True)) == {
        guaratingueta.pk,
        town.pk,
    }
    assert get_user_model().objects.filter(email=EMAIL).count() == 1
    assert (
        "conta existente “ana” recebe o papel" in out and "já tinha papéis em Guaratinguetá" in out
    )
    assert mail.outbox == []  # it has a password already


def test_a_generators_account_cannot_become_the_nucleo():
    from ctr.models import Generator

    generator = Generator.objects.create(name="Construtora Gama Ltda.", document="11222333000181")
    user = make_user("gama", generator=generator)
    user.email = EMAIL
    user.save()
    message = refusal(*aparecida())
    assert "é de um transportador, de uma área de recebimento ou de um gerador" in message


def test_the_ibge_check_digit_holds_for_every_municipality_of_sp():
    codes = [f["properties"]["id"] for f in json.loads(SP.read_text())["features"]]
    assert len(codes) == 645
    assert [c for c in codes if onboarding.ibge_check_digit(c) != int(c[6])] == []


def test_the_command_answers_help_in_portuguese(manage_py_help):
    text = manage_py_help("onboard_municipality")
    assert "Inclui um município na plataforma" in text and "--dry-run" in text
