"""Decimal comma in every decimal and coordinate field (config/br_forms.py): the forms of the
pages and the admin read "-22,799585" as -22.799585, and refuse ambiguous numbers in
Portuguese. And every number shown goes through one function (config/br.py)."""

import re
from decimal import Decimal
from pathlib import Path

import pytest
from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import models
from django.test import Client

from config.br import br_money, br_number
from config.br_forms import BRDecimalField, parse_decimal
from ctr import forms as ctr_forms
from fiscalization import analysis_forms, intake_forms
from fiscalization.enforcement_forms import cases, fields, notices, payments, penalties, records
from fiscalization.models.enforcement import EnforcementCase
from maps import forms as maps_forms
from nucleo import forms as nucleo_forms
from tests.ctr_world import build_world

FORM_MODULES = [
    ctr_forms,
    cases,
    fields,
    notices,
    records,
    payments,
    penalties,
    intake_forms,
    analysis_forms,
    maps_forms,
    nucleo_forms,
]


def decimal_fields():
    """Every number field of every form class of the web pages, found by walking them."""
    found = []
    for module in FORM_MODULES:
        for name in dir(module):
            form = getattr(module, name)
            if not (isinstance(form, type) and issubclass(form, forms.BaseForm)):
                continue
            if form.__module__ != module.__name__:
                continue
            for field_name, field in form.base_fields.items():
                if isinstance(field, forms.DecimalField | forms.FloatField):
                    found.append((f"{form.__name__}.{field_name}", field))
    return found


DECIMAL_FIELDS = decimal_fields()


def test_forms_have_decimal_fields_to_check():
    names = {name for name, _field in DECIMAL_FIELDS}
    assert {"CaseForm.latitude", "ReportForm.longitude", "NearestFacilityForm.volume_m3"} <= names


@pytest.mark.parametrize("name,field", DECIMAL_FIELDS, ids=[n for n, _f in DECIMAL_FIELDS])
def test_every_decimal_field_reads_a_decimal_comma(name, field):
    assert isinstance(field, BRDecimalField), f"{name} is a {type(field).__name__}"
    # A value inside any of the fields' ranges (coordinates, volumes, radii, costs).
    low = field.min_value if field.min_value is not None else 0
    text = "1,5" if low <= Decimal("1.5") else "-22,5"
    value = field.clean(text)
    assert Decimal(str(value)) == Decimal(text.replace(",", "."))
    widget_html = field.widget.render(name, None)
    assert 'type="number"' not in widget_html  # browsers drop the comma of a number input
    if field.widget.is_hidden:
        return  # filled by a script (the device's location), never typed
    assert 'inputmode="decimal"' in widget_html


@pytest.mark.parametrize("text", ["-22,799585", "-22.799585", " -22,799585 ", "−22,799585"])
def test_coordinate_with_comma_or_point(text):
    field = cases.CaseForm.base_fields["latitude"]
    assert field.clean(text) == Decimal("-22.799585")


@pytest.mark.parametrize("text", ["-22.799.585", "1.234,5", "1,234.5", "1,2,3", "22°47'", "nan"])
def test_ambiguous_numbers_are_refused_in_portuguese(text):
    field = cases.CaseForm.base_fields["latitude"]
    with pytest.raises(forms.ValidationError) as error:
        field.clean(text)
    assert "vírgula" in error.value.messages[0] and "-22,799585" in error.value.messages[0]


def test_coordinate_with_more_decimals_than_stored_is_rounded_not_refused():
    field = cases.CaseForm.base_fields["longitude"]
    assert field.clean("-45,19253049") == Decimal("-45.192530")


def test_parse_decimal_refuses_thousand_separators():
    assert parse_decimal("2,5") == Decimal("2.5")
    with pytest.raises(ValueError):
        parse_decimal("1.500,00")


@pytest.mark.django_db
def test_case_form_page_stores_a_latitude_typed_with_a_comma():
    """The reported bug: the case form's latitude turned "-22,799585" into -22799585."""
    world = build_world()
    web = Client()
    web.force_login(world.fiscal)
    response = web.post(
        "/fiscalizacao/processos/novo/",
        {
            "municipality": world.town.pk,
            "opened_at": "2025-03-03T09:00",
            "description": "Entulho na calçada.",
            "offender_role": "TRANSPORT_DIRECTOR",
            "offender_name": "João Dirigente",
            "offender_document": "11.222.333/0001-81",
            "transporter": world.alfa.pk,
            "latitude": "-22,799585",
            "longitude": "-45,192530",
        },
    )
    assert response.status_code == 302, response.content.decode()
    case = EnforcementCase.objects.get()
    assert case.location.y == pytest.approx(-22.799585, abs=1e-9)
    assert case.location.x == pytest.approx(-45.19253, abs=1e-9)


@pytest.mark.django_db
def test_report_form_page_reads_comma_coordinates_and_volume():
    world = build_world()
    form = intake_forms.ReportForm(
        {
            "longitude": "-45,192530",
            "latitude": "-22,799585",
            "category": "VIA_PUBLICA",
            "estimated_volume_m3": "1,5",
        }
    )
    assert form.is_valid(), form.errors
    assert form.cleaned_data["latitude"] == Decimal("-22.799585")
    assert form.cleaned_data["estimated_volume_m3"] == Decimal("1.5")
    assert world.town.pk


def test_nearest_facility_form_reads_comma_coordinates_and_volume():
    form = maps_forms.NearestFacilityForm(
        {"longitude": "-45,192530", "latitude": "-22,799585", "volume_m3": "0,5"}
    )
    assert form.is_valid(), form.errors
    assert form.point().y == pytest.approx(-22.799585)
    assert form.cleaned_data["volume_m3"] == Decimal("0.5")


def test_admin_decimal_fields_read_a_comma():
    """Every DecimalField of every model in the admin gets the comma-reading field."""
    checked = 0
    for model, model_admin in admin.site._registry.items():
        for db_field in model._meta.fields:
            if isinstance(db_field, models.DecimalField):
                formfield = model_admin.formfield_for_dbfield(db_field, request=None)
                assert isinstance(formfield, BRDecimalField), f"{model.__name__}.{db_field.name}"
                checked += 1
    assert checked >= 5


@pytest.mark.django_db
def test_admin_saves_a_municipality_parameter_typed_with_a_comma(frozen_today):
    from tests.builders import municipality
    from tests.ctr_world import TODAY

    town = municipality()
    user = get_user_model().objects.create_superuser("gestor", "g@example.org", "x")
    web = Client()
    web.force_login(user)
    # A new set of the municipality's parameters, from today (the add page starts from the
    # figures in force).
    url = "/admin/pev_network/municipalparameters/add/"
    page = web.get(f"{url}?municipality={town.pk}")
    assert page.status_code == 200
    form = page.context["adminform"].form
    data = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if isinstance(value, list):  # a many-to-many (accepted destinations): its ids
            data[name] = [str(getattr(item, "pk", item)) for item in value]
            continue
        # As the page shows it (BoundField.value): prepared first, so a JSON field's dict is
        # sent back as JSON.
        shown = field.widget.format_value(field.prepare_value(value)) if value is not None else None
        data[name] = "" if shown is None else shown
    data["small_volume_limit_m3"] = "1,25"
    response = web.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert town.parameters_on(TODAY).small_volume_limit_m3 == Decimal("1.25")


# --- showing numbers: config.br.br_number, the one function every page, PDF, CSV and message
# calls. Each row is a case one of the functions it replaced handled its own way.

BR_NUMBERS = [
    # value, places, grouping, text
    (Decimal("1.000"), None, True, "1"),  # a volume: as many decimals as it has
    (Decimal("1E+1"), None, True, "10"),  # never "1E+1", as normalize() alone gives
    (Decimal("1234.75"), None, True, "1.234,75"),
    (Decimal("1234.50"), None, False, "1234,5"),  # a rule's message, a form field, a CSV cell
    (Decimal("0.125"), 2, True, "0,13"),  # money and UFESP: half up, as a bill
    (Decimal("-1234.565"), 2, True, "-1.234,57"),
    (0.125, 2, True, "0,12"),  # a float: as f"{x:.2f}" (its binary value, ties to even)
    (2.25, 1, True, "2,2"),  # the Núcleo's volumes
    (12.5, 0, True, "12"),  # a chart tick
    (1234.56, 1, True, "1.234,6"),  # a file size, an area
    (-22.799585, 6, False, "-22,799585"),  # a coordinate
    (0.1, None, True, "0,1"),  # a float's shortest form, not its binary expansion
    (2.5, None, False, "2,5"),  # a timeout in seconds
    (-45.19, None, False, "-45,19"),
    (1_234_567, None, True, "1.234.567"),  # counts
    (5, 1, True, "5,0"),
    (None, None, True, "0"),  # an empty sum
    ("1.50", None, True, "1,5"),
]


@pytest.mark.parametrize("value,places,grouping,text", BR_NUMBERS)
def test_br_number(value, places, grouping, text):
    assert br_number(value, places, grouping=grouping) == text


def test_br_number_takes_a_numpy_integer():
    numpy = pytest.importorskip("numpy")
    assert br_number(numpy.int64(1500)) == "1.500"


def test_br_money_puts_the_sign_before_the_currency():
    assert br_money(Decimal("1234.56")) == "R$ 1.234,56"
    assert br_money(Decimal("-1234.56")) == "-R$ 1.234,56"
    assert br_money(Decimal("0.005")) == "R$ 0,01"


# Formatting a number by hand: swapping the separators of Python's output, or asking Python
# for its thousands comma.
HAND_FORMATTING = re.compile(r'replace\("\.", ","\)|replace\(",", "(X|_|\\0)"\)|:,(\.|\}|\{)')


def test_numbers_are_formatted_in_one_place():
    root = Path(__file__).resolve().parents[2]
    packages = [p.parent for p in root.glob("*/__init__.py") if p.parent.name != "tests"]
    found = [
        f"{path.relative_to(root)}:{n}"
        for package in packages
        for path in sorted(package.rglob("*.py"))
        if path != root / "config" / "br.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if HAND_FORMATTING.search(line)
    ]
    assert {"config", "ctr", "nucleo", "synthetic"} <= {p.name for p in packages}
    assert not found, f"use config.br.br_number: {found}"
