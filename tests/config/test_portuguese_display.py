"""Portuguese everywhere a user reads: no raw codes on the pages of any
role, the admin in Portuguese, spreadsheets that open in a pt-BR spreadsheet, documents
formatted, the public verification of a normal CTR not alarming."""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
from decimal import Decimal
from html.parser import HTMLParser

import pytest
import time_machine
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.template import Context, Template
from django.test import Client
from django.utils.text import camel_case_to_spaces

from config.br_forms import format_point
from ctr import errors, rules
from ctr.models import CTR
from fiscalization import intake
from fiscalization.models import DumpingCategory
from pev_network.geometry_messages import validity_reason_pt
from pev_network.models import ReceivingFacility
from tests.ctr.test_ctr_documents import cancel, issue, pdf_text, receive, refuse
from tests.ctr_world import TODAY, build_world
from tests.enforcement_world import at, record_for

pytestmark = pytest.mark.django_db

APPS = ["ctr", "pev_network", "fiscalization", "audit"]
# Codes that are also the law's own names: the UFESP is the unit Lei 3.978/2007 sets its fees
# and fines in (art. 12 §3, 31, 36), and a penalty framework's money unit.
LAW_TERMS = {"PEV", "ATT", "UFESP"}


def choice_codes() -> set[str]:
    """Every stored value of every choice of our models, and every rule code: data, never text
    for a reader. One-letter codes (waste class A, B...) are also what people call them."""
    codes = set(rules.REGISTRY)
    for app in APPS:
        for model in apps.get_app_config(app).get_models():
            for field in model._meta.get_fields():
                choices = getattr(field, "choices", None) or getattr(
                    getattr(field, "base_field", None), "choices", None
                )
                for value, _label in choices or ():
                    if isinstance(value, str) and len(value) > 1:
                        codes.add(value)
    return codes - LAW_TERMS


class VisibleText(HTMLParser):
    """The text a reader sees: not scripts or styles, and not what the page marks as a
    reference (<code>, <small>): a rule's code stays there, small, next to its title. The
    text of charts (matplotlib writes each label as a comment before its glyphs) counts."""

    HIDDEN = {"script", "style", "code", "small", "template", "title", "textarea"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in {"br", "img", "input", "meta", "link", "hr", "wbr", "source", "path"}:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def hidden(self) -> bool:
        return any(tag in self.HIDDEN for tag in self.stack)

    def handle_data(self, data):
        if not self.hidden():
            self.parts.append(data)

    def handle_comment(self, data):
        if "svg" in self.stack and not self.hidden():
            self.parts.append(data)

    @classmethod
    def of(cls, html: str) -> str:
        parser = cls()
        parser.feed(html)
        return " ".join(parser.parts)


def codes_in(text: str, codes: set[str]) -> set[str]:
    return {c for c in codes if re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", text)}


def map_texts(html: str) -> str:
    """What the maps show in popups and tooltips: built on the server, they travel inside the
    page's scripts as GeoJSON properties (`popup_html`, `label`)."""
    texts = []
    for raw in re.findall(r'"(?:popup_html|label)": "((?:[^"\\]|\\.)*)"', html):
        texts.append(VisibleText.of(json.loads(f'"{raw}"')))
    return " ".join(texts)


SKIP = ("/sair", "/static/", "/admin/", "/api/", "/ogc/", "/arquivos/", "/fotos/", ".pdf", ".csv",
        ".gpkg", "csv=", "/exportar/", "/tiles/", ".json", ".mvt")  # fmt: skip


def crawl(client: Client, start: list[str], limit: int = 60) -> dict[str, str]:
    """GET the start pages and the pages they link to (same site), at most `limit`, each
    kind of URL (numbers replaced) at most three times. Returns url -> visible text."""
    seen: dict[str, str] = {}
    shapes: dict[str, int] = {}
    queue = list(start)
    while queue and len(seen) < limit:
        url = queue.pop(0)
        if url in seen:
            continue
        shape = re.sub(r"\d+", "N", url.split("?")[0])
        if shapes.get(shape, 0) >= 3:
            continue
        shapes[shape] = shapes.get(shape, 0) + 1
        response = client.get(url)
        assert response.status_code < 500, url
        seen[url] = ""
        if "html" not in response.get("Content-Type", "") or response.status_code != 200:
            continue
        html = response.content.decode()
        seen[url] = VisibleText.of(html) + " " + map_texts(html)
        for link in re.findall(r'href="(/[^"#]*)"', html):
            link = link.replace("&amp;", "&")
            if not any(s in link for s in SKIP) and link not in seen:
                queue.append(link)
    return seen


@pytest.fixture
def lived_world():
    """The CTR world with a bit of everything to show: received, refused, cancelled and open
    CTRs, one with a warning finding, a dumping report and an infraction record."""
    with time_machine.travel(datetime.datetime(2026, 11, 30, 12, tzinfo=datetime.UTC)):
        world = build_world()
        receive(world, issue(world))
        refuse(world, issue(world))
        cancel(world, issue(world))
        receive(world, issue(world, facility=world.landfill))  # class A to a landfill: a warning
        issue(world, facility=world.recycling)
        intake.create_report(intake.NewReport(world.origin, DumpingCategory.VACANT_LOT, "Entulho."))
        record_for(world, opened_at=at(2026, 11, 2, 9))
        yield world


def client_for(user) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(pk=user.pk))
    return client


ROLE_STARTS = {
    "alfa_user": ["/", "/transportador/ctrs/", "/transportador/ctrs/importar/", "/regras/"],
    "operator": ["/", "/recebimentos/"],
    "nucleo": ["/", "/nucleo/", "/nucleo/mapa/", "/transportador/ctrs/"],
    "fiscal": ["/", "/fiscalizacao/", "/fiscalizacao/processos/", "/transportador/ctrs/"],
    None: ["/", "/onde-descartar/", "/denunciar/", "/verificar/", "/regras/"],
}


@pytest.mark.parametrize("role", list(ROLE_STARTS), ids=[r or "public" for r in ROLE_STARTS])
def test_no_choice_or_rule_code_is_shown_as_text(lived_world, role):
    codes = choice_codes()
    assert {"RECYCLING", "LANDFILL", "received", "NOTIFIED", "VOLUMOSO"} <= codes
    client = client_for(getattr(lived_world, role)) if role else Client()
    starts = list(ROLE_STARTS[role])
    if role is None:
        starts += [f"/verificar/{n}/" for n in CTR.objects.values_list("number", flat=True)]
    with time_machine.travel(datetime.datetime(2026, 11, 30, 15, tzinfo=datetime.UTC)):
        pages = crawl(client, starts)
    assert len(pages) >= len(ROLE_STARTS[role])
    shown = {url: codes_in(text, codes) for url, text in pages.items()}
    assert {url: found for url, found in shown.items() if found} == {}


def test_the_checker_sees_a_raw_code():
    html = (
        "<p>Tipo: RECYCLING <code>LANDFILL</code> <small>DESTINATION_OUTSIDE_FACILITY</small></p>"
    )
    assert codes_in(VisibleText.of(html), choice_codes()) == {"RECYCLING"}
    page = '<script>var f = {"properties": {"popup_html": "<p>Tipo: LANDFILL</p>"}};</script>'
    assert codes_in(VisibleText.of(page) + map_texts(page), choice_codes()) == {"LANDFILL"}


def test_finding_shows_the_rule_title_with_the_code_small(lived_world):
    ctr = CTR.objects.get(destination_facility=lived_world.landfill)
    html = client_for(lived_world.alfa_user).get(f"/transportador/ctrs/{ctr.number}/")
    page = html.content.decode()
    title = rules.REGISTRY["CLASS_A_TO_LANDFILL"].title
    assert title in VisibleText.of(page)
    assert "<code>CLASS_A_TO_LANDFILL</code>" in page


def test_printed_ctr_shows_the_rule_title(lived_world):
    ctr = CTR.objects.get(destination_facility=lived_world.landfill)
    response = client_for(lived_world.alfa_user).get(f"/ctrs/{ctr.number}/pdf/")
    text = " ".join(pdf_text(response.content).split())
    assert rules.REGISTRY["CLASS_A_TO_LANDFILL"].title in text
    assert "Nº CTR-" in text and "CTR CTR-" not in text


# --- admin ---------------------------------------------------------------------------------


@pytest.fixture
def superuser_client():
    user = get_user_model().objects.create_superuser("gestor", "gestor@example.org", "x")
    client = Client()
    client.force_login(user)
    return client


def test_every_admin_model_names_itself_in_portuguese():
    missing = [
        model._meta.label
        for model in admin.site._registry
        if "verbose_name_plural" not in model._meta.original_attrs
    ]
    assert missing == []
    # Third-party models too (django-axes has no pt-BR of its own: locale/pt_BR).
    names = {m._meta.label: str(m._meta.verbose_name_plural) for m in admin.site._registry}
    assert names["axes.AccessAttempt"] == "tentativas de acesso"
    assert names["fiscalization.EmbargoBreach"] == "descumprimentos de embargo"


def english_defaults() -> dict[str, str]:
    """Django's default names (from the class name), which must not show anywhere."""
    out = {}
    for model in admin.site._registry:
        default = camel_case_to_spaces(model._meta.object_name)
        if default != str(model._meta.verbose_name).lower():
            out[model._meta.label] = default
    return out


def test_every_admin_changelist_opens_in_portuguese(superuser_client, lived_world):
    defaults = english_defaults()
    assert "embargo breach" in defaults.values()
    index = superuser_client.get("/admin/").content.decode()
    pages = {"/admin/": index}
    for model in admin.site._registry:
        url = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        response = superuser_client.get(url)
        assert response.status_code == 200, url
        pages[url] = response.content.decode()
    for url, html in pages.items():
        text = VisibleText.of(html).lower()
        found = [n for n in defaults.values() if re.search(rf"(?<![\w-]){n}s?(?![\w-])", text)]
        assert found == [], url
    assert "Descumprimentos de embargo" in index and "Embargo breachs" not in index


def admin_form_data(response) -> dict:
    """What the admin change page would post back unchanged: its form and inline formsets."""
    data = {}

    def put(form, prefix=None):
        for name, field in form.fields.items():
            key = f"{prefix}-{name}" if prefix else name
            value = form.initial.get(name, field.initial)
            if isinstance(value, list | tuple):
                data[key] = [str(v.pk if hasattr(v, "pk") else v) for v in value]
                continue
            shown = field.widget.format_value(value) if value is not None else None
            if isinstance(value, bool):
                if value:
                    data[key] = "on"
                continue
            data[key] = "" if shown is None else shown

    put(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        for name, value in formset.management_form.initial.items():
            data[f"{formset.prefix}-{name}"] = value
        for form in formset.forms:
            put(form, form.prefix)
    return data


def test_facility_admin_edits_accepted_classes_with_checkboxes(superuser_client, lived_world):
    facility = lived_world.att
    url = f"/admin/pev_network/receivingfacility/{facility.pk}/change/"
    page = superuser_client.get(url)
    html = page.content.decode()
    boxes = re.findall(r'<input type="checkbox" name="accepted_classes" value="([^"]+)"', html)
    assert boxes == ["A", "B", "C", "D", "VOLUMOSO"]
    assert "Resíduos volumosos" in html
    data = admin_form_data(page)
    data["accepted_classes"] = ["A", "VOLUMOSO"]
    data["area"] = facility.area.geojson
    response = superuser_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:4000]
    assert ReceivingFacility.objects.get(pk=facility.pk).accepted_classes == ["A", "VOLUMOSO"]


def test_facility_admin_read_only_shows_class_names(lived_world):
    """The Núcleo may view the network in the admin, not change it."""
    from django.contrib.auth.models import Permission

    user = lived_world.nucleo
    user.is_staff = True
    user.save()
    user.user_permissions.add(Permission.objects.get(codename="view_receivingfacility"))
    client = client_for(user)
    url = f"/admin/pev_network/receivingfacility/{lived_world.att.pk}/change/"
    response = client.get(url)
    assert response.status_code == 200
    text = VisibleText.of(response.content.decode())
    assert "Resíduos volumosos" in text and "VOLUMOSO" not in text


def test_admin_shows_documents_formatted(superuser_client, lived_world):
    html = superuser_client.get("/admin/ctr/transporter/").content.decode()
    assert "11.222.333/0001-81" in html and ">11222333000181<" not in html


# --- spreadsheets --------------------------------------------------------------------------


def read_csv(raw: bytes) -> list[dict]:
    assert raw.startswith(b"\xef\xbb\xbf")  # UTF-8 with BOM
    return list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig")), delimiter=";"))


def test_ctr_csv_export_opens_in_a_brazilian_spreadsheet(lived_world, tmp_path):
    target = tmp_path / "ctrs.csv"
    call_command("export_ctrs", str(target), "--from", "2026-11-01", "--to", "2026-11-30",
                 stdout=io.StringIO())  # fmt: skip
    rows = read_csv(target.read_bytes())
    received = next(r for r in rows if r["Situação"] == "Recebido")
    assert received["Data do transporte"] == TODAY.strftime("%d/%m/%Y")
    assert received["Tipo da área de destino"] == "ATT"
    assert received["Classes de resíduo"] == "Classe A"
    assert received["Volume declarado (m³)"] == "3"
    assert received["CNPJ/CPF do transportador"] == "11.222.333/0001-81"
    assert received["Placa"] == "ABC-1D23"
    lat = lived_world.origin.y
    assert received["Latitude da origem"] == f"{lat:.6f}".replace(".", ",")
    assert re.fullmatch(r"\d\d/\d\d/2026 \d\d:\d\d", received["Emitido em"])
    kinds = {r["Tipo da área de destino"] for r in rows}
    assert {"Aterro de RCC", "Área de reciclagem"} <= kinds
    statuses = {r["Situação"] for r in rows}
    assert statuses == {"Recebido", "Recusado", "Cancelado", "Emitido"}
    # The Núcleo's download is the same file.
    response = client_for(lived_world.nucleo).get(
        "/nucleo/exportar/ctrs.csv?date_from=2026-11-01&date_to=2026-11-30"
    )
    web = read_csv(b"".join(response.streaming_content))
    assert [r["Número do CTR"] for r in web] == [r["Número do CTR"] for r in rows]


def test_dashboard_csv_shows_labels_not_codes(lived_world):
    client = client_for(lived_world.nucleo)
    areas = read_csv(
        client.get("/nucleo/?date_from=2026-11-01&date_to=2026-11-30&csv=areas").content
    )
    assert {r["tipo"] for r in areas} <= {"PEV", "ATT", "Área de reciclagem", "Aterro de RCC"}
    assert "Aterro de RCC" in {r["tipo"] for r in areas}
    classes = client.get("/nucleo/?date_from=2026-11-01&date_to=2026-11-30&csv=classes").content
    rows = read_csv(classes)
    assert {r["classe"] for r in rows} == {"Classe A"}
    assert all("," in r["volume (m³)"] or r["volume (m³)"].isdigit() for r in rows)


# --- documents, points, the public verification --------------------------------------------


@pytest.mark.parametrize(
    "value,shown",
    [
        ("52998224725", "529.982.247-25"),
        ("11222333000181", "11.222.333/0001-81"),
        ("***.982.247-**", "***.982.247-**"),  # masked on a public page: stays masked
    ],
)
def test_document_filter(value, shown):
    template = Template("{% load br %}{{ doc|documento }}")
    assert template.render(Context({"doc": value})) == shown


def test_points_in_messages_are_latitude_first_with_a_decimal_comma():
    assert format_point(-45.19253, -22.799585) == "(-22,799585; -45,192530)"
    assert validity_reason_pt("Self-intersection[-45.18 -22.8]") == (
        "auto-interseção em (-22,80; -45,18)"
    )


def test_rule_message_shows_the_discharge_point_as_the_fields_do(lived_world):
    from django.contrib.gis.geos import Point

    from ctr import services

    request = services.IssueRequest(
        transport_date=TODAY,
        vehicle_plate="ABC1D23",
        equipment_code="C-01",
        origin=lived_world.origin,
        destination=Point(-45.192530, -22.799585, srid=4326),
        waste=[rules.WasteLine("A", Decimal("3"))],
        generator=services.GeneratorData(name="Maria da Obra", document="52998224725"),
        worksite=services.WorksiteData(address="Rua A, 1", location=lived_world.origin),
    )
    with pytest.raises(errors.RuleViolation) as refused:
        services.issue(lived_world.alfa, lived_world.alfa_user, request)
    messages = [f.message for f in refused.value.findings]
    assert any("(-22,799585; -45,192530)" in m for m in messages), messages


def test_confirmation_messages_do_not_repeat_ctr(lived_world):
    ctr = issue(lived_world)
    client = client_for(lived_world.operator)
    response = client.post(
        f"/recebimentos/{ctr.number}/confirmar/",
        {f"r-{ctr.pk}-received_volume_m3": "3"},
        follow=True,
    )
    page = response.content.decode()
    assert f"Recebimento do {ctr.number} confirmado." in page
    assert "CTR CTR-" not in page


def verification_box(html: str) -> tuple[str, str]:
    match = re.search(r'<p class="(conclusion[^"]*)" role="(\w+)">', html)
    assert match, html
    return match.group(1), match.group(2)


def test_verification_of_a_normal_issued_ctr_is_informative_not_an_alert(lived_world):
    ctr = issue(lived_world)
    box, role = verification_box(Client().get(f"/verificar/{ctr.number}/").content.decode())
    assert box == "conclusion conclusion-info" and role == "status"


def test_verification_of_refused_and_cancelled_is_an_alert(lived_world):
    for ctr in (refuse(lived_world, issue(lived_world)), cancel(lived_world, issue(lived_world))):
        box, role = verification_box(Client().get(f"/verificar/{ctr.number}/").content.decode())
        assert box == "conclusion conclusion-pending" and role == "alert"
    received = receive(lived_world, issue(lived_world))
    box, role = verification_box(Client().get(f"/verificar/{received.number}/").content.decode())
    assert box == "conclusion" and role == "status"
