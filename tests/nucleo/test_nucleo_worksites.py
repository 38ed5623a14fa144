"""The Núcleo's worksites: the list and each of its filters, its pages and
CSV, a worksite's page (comparison, chart, CTRs, alerts), the map's worksite layers, the
dashboard's counts and the suspects page of a dumping report; the LGPD access log."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.test import Client

from audit.models import AccessLog
from ctr.models import Generator, WorkKind
from fiscalization.models import DumpingReport
from generators.models import PlanStatus
from nucleo import layers
from tests.builders import municipality, offset, point
from tests.ctr_world import CNPJ_ALFA, build_world
from tests.generators.suspects_world import days, load, plan, site

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(frozen_today):
    world = build_world()
    # Overdue (not a large generator: no PGRCC), in the town.
    world.late = site(world, "Rua Atrasada, 1", start=days(-300), end=days(-60), large=False,
                      kind=WorkKind.RENOVATION, permit="ALV-0001")  # fmt: skip
    # A large generator far below its plan: 2 of the 50 m³ expected to date; loads recent.
    world.low = site(world, "Av. Pouco Volume, 200", start=days(-100), end=days(100),
                     permit="ALV-0002")  # fmt: skip
    plan(world.low, A="80", B="20")
    load(world, world.low, "2", day=days(-3))
    # A large generator's active worksite without CTR for 45 days, its plan sent to the Núcleo.
    world.idle = site(world, "Rua Parada, 3", start=days(-45), end=days(200),
                      kind=WorkKind.DEMOLITION)  # fmt: skip
    plan(world.idle, status=PlanStatus.SUBMITTED, A="10")
    # Fine: an approved plan, followed.
    world.fine = site(world, "Rua Em Dia, 4", start=days(-100), end=days(100))
    plan(world.fine, A="10")
    load(world, world.fine, "6", day=days(-2))
    # Ended, with a plan returned for changes; another generator.
    other = Generator.objects.create(name="Reformas Delta ME", document=CNPJ_ALFA)
    world.ended = site(world, "Rua Encerrada, 5", start=days(-300), end=days(-200),
                       ended=days(-190), large=False, generator=other)  # fmt: skip
    plan(world.ended, status=PlanStatus.CHANGES_REQUESTED, A="10")
    # Another municipality's worksite: never on the town's pages.
    other_town = municipality("3550308", "Outra Cidade (teste)")
    world.elsewhere = site(world, "Rua Vizinha, 8", large=False, generator=other,
                           municipality=other_town)  # fmt: skip
    # A draft, not started yet.
    world.draft = site(world, "Rua Futura, 6", start=days(10), end=days(300))
    plan(world.draft, status=PlanStatus.DRAFT, A="10")
    world.other_town = other_town
    return world


@pytest.fixture
def nucleo(world):
    client = Client()
    client.force_login(world.nucleo)
    return client


def listed(client, query: str = "") -> list[str]:
    response = client.get(f"/nucleo/obras/?{query}")
    assert response.status_code == 200, response.content[:500]
    return [row.worksite.address for row in response.context["rows"]]


def test_the_list_shows_every_worksite_with_its_plan_and_alerts(nucleo, world):
    response = nucleo.get("/nucleo/obras/")
    html = response.content.decode()
    assert response.context["page"].paginator.count == 6
    assert "Av. Pouco Volume, 200" in html and "Volume baixo" in html
    assert "2,00 m³ de 50,00 m³" in html  # the alert's figures
    assert "enviado ao Núcleo" in html and "sem PGRCC" in html
    assert response.context["counts"] == {"overdue": 1, "low_volume": 1, "idle": 1, "suspect": 2}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("reason=overdue", ["Rua Atrasada, 1"]),
        ("reason=low_volume", ["Av. Pouco Volume, 200"]),
        ("reason=idle", ["Rua Parada, 3"]),
        ("reason=suspect", ["Av. Pouco Volume, 200", "Rua Atrasada, 1"]),
        ("plan=none", ["Rua Atrasada, 1"]),
        ("plan=approved", ["Av. Pouco Volume, 200", "Rua Em Dia, 4"]),
        ("plan=submitted", ["Rua Parada, 3"]),
        ("plan=changes", ["Rua Encerrada, 5"]),
        ("plan=draft", ["Rua Futura, 6"]),
        ("kind=demolition", ["Rua Parada, 3"]),
        ("kind=renovation", ["Rua Atrasada, 1"]),
        ("state=active", ["Av. Pouco Volume, 200", "Rua Atrasada, 1", "Rua Em Dia, 4",
                          "Rua Parada, 3"]),
        ("state=ended", ["Rua Encerrada, 5"]),
        ("q=parada", ["Rua Parada, 3"]),
        ("q=ALV-0002", ["Av. Pouco Volume, 200"]),
        ("q=delta", ["Rua Encerrada, 5"]),
        ("q=11.222.333/0001-81", ["Rua Encerrada, 5"]),  # Delta's CNPJ, as typed
        ("state=active&reason=suspect&plan=approved", ["Av. Pouco Volume, 200"]),
    ],
)  # fmt: skip
def test_each_filter_filters(nucleo, world, query, expected):
    assert listed(nucleo, query) == expected


def test_another_municipality_s_worksites_are_neither_listed_nor_shown(nucleo, world):
    # The list is the town's (the one the Núcleo works in); a parameter naming the
    # other municipality changes nothing, and its worksite's page does not exist.
    assert "Rua Vizinha, 8" not in listed(nucleo)
    assert "Rua Vizinha, 8" not in listed(nucleo, f"municipality={world.other_town.pk}")
    assert listed(nucleo, "q=vizinha") == []
    assert nucleo.get(f"/nucleo/obras/{world.elsewhere.pk}/").status_code == 404
    csv_text = nucleo.get("/nucleo/obras/?csv=1").content.decode("utf-8-sig")
    assert "Rua Vizinha" not in csv_text and "Rua Encerrada, 5" in csv_text


def test_a_bad_filter_is_a_400_that_says_which(nucleo, world):
    response = nucleo.get("/nucleo/obras/?plan=talvez")
    assert response.status_code == 400
    assert "Faça uma escolha válida" in response.content.decode()


def test_the_list_is_paginated(nucleo, world):
    for i in range(55):
        site(world, f"Travessa {i:02d}", start=days(-5), end=days(100), large=False)
    first = nucleo.get("/nucleo/obras/?q=Travessa")
    assert len(first.context["rows"]) == 50
    second = nucleo.get("/nucleo/obras/?q=Travessa&pagina=2")
    assert [r.worksite.address for r in second.context["rows"]] == [
        f"Travessa {i}" for i in range(50, 55)
    ]
    assert "pagina=2" in first.content.decode()


def test_the_csv_has_the_filtered_rows_and_their_figures(nucleo, world):
    response = nucleo.get("/nucleo/obras/?reason=suspect&csv=1")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig")), delimiter=";"))
    assert rows[0][:2] == ["id", "endereço"]
    by_address = {row[1]: row for row in rows[1:]}
    assert set(by_address) == {"Av. Pouco Volume, 200", "Rua Atrasada, 1"}
    low = by_address["Av. Pouco Volume, 200"]
    assert low[14:18] == ["100,00", "50,00", "2,00", "4,0"]
    assert "abaixo de 50%" in low[18]
    assert AccessLog.objects.filter(purpose="Núcleo: obras (CSV)").count() == 1


def test_the_list_is_in_the_access_log(nucleo, world):
    nucleo.get("/nucleo/obras/")
    assert AccessLog.objects.filter(username="nucleo", purpose="Núcleo: lista de obras").exists()


def test_the_worksite_page_compares_charts_lists_and_explains(nucleo, world):
    response = nucleo.get(f"/nucleo/obras/{world.low.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="previsto-transportado"' in html  # generators/_comparison.html
    assert "<svg" in html and "Volumes acumulados da obra" in html
    assert world.low.ctrs.get().number in html
    assert "Volume baixo" in html and "2,00 m³ de 50,00 m³" in html
    assert "Construtora Gama Ltda." in html
    log = AccessLog.objects.get(purpose="Núcleo: página da obra")
    assert log.object_id == str(world.low.pk) and "Gama" not in log.object_label


def test_the_worksite_page_of_a_worksite_without_dates(nucleo, world):
    bare = site(world, "Rua Sem Datas, 9")
    response = nucleo.get(f"/nucleo/obras/{bare.pk}/")
    assert response.status_code == 200
    assert "a obra não é conferida" in response.content.decode()


def test_the_chart_prorates_the_plan_and_draws_the_alert_line(world):
    from generators import suspects
    from generators.comparison import worksite_comparison
    from nucleo.worksites import cumulative_lines
    from tests.ctr_world import TODAY

    lines = cumulative_lines(
        worksite_comparison(world.low), suspects.of_worksite(world.low, TODAY), TODAY
    )
    by_label = {line.label: line for line in lines}
    expected = by_label["Previsto (PGRCC)"]
    assert (expected.days, expected.values) == ([days(-100), days(100)], [0.0, 100.0])
    alert = by_label["Alerta (50% do previsto)"]
    assert alert.days == [days(-50), days(100)] and alert.values == [12.5, 50.0]
    assert by_label["Transportado (CTRs)"].values == [0.0, 2.0]
    assert by_label["Transportado (CTRs)"].days[-1] == days(-3).replace(day=30)


def test_only_municipal_users_see_the_worksites(world):
    client = Client()
    client.force_login(world.generator_user)
    assert client.get("/nucleo/obras/").status_code == 403
    assert client.get(f"/nucleo/obras/{world.low.pk}/").status_code == 403


# --- the map --------------------------------------------------------------------------------


def shows(name: str, html: str) -> bool:
    return name in html or json.dumps(name)[1:-1] in html


def test_the_map_has_the_active_worksites_by_plan_and_by_alert(nucleo, world):
    response = nucleo.get("/nucleo/mapa/")
    html = response.content.decode()
    assert shows(layers.LAYER_WORKSITES, html) and shows(layers.LAYER_SUSPECT_WORKSITES, html)
    # Active only: the ended and the not yet started are not drawn.
    assert response.context["counts"]["worksites"] == 4
    assert response.context["counts"]["flagged_worksites"] == 3
    assert shows("Av. Pouco Volume, 200", html) and not shows("Rua Futura, 6", html)
    assert AccessLog.objects.filter(purpose="Núcleo: mapa das obras").exists()


def test_the_worksite_layers_colour_by_plan_and_by_first_alert(world):
    from nucleo.worksites import map_worksites
    from tests.ctr_world import TODAY

    found = {w.popup_html.split("</p>")[0].rsplit(">", 1)[1]: w for w in
             map_worksites(world.town.pk, TODAY)}  # fmt: skip
    assert {a: w.plan_status for a, w in found.items()} == {
        "Rua Atrasada, 1": "none",
        "Av. Pouco Volume, 200": "approved",
        "Rua Parada, 3": "submitted",
        "Rua Em Dia, 4": "approved",
    }
    assert layers.first_alert(found["Av. Pouco Volume, 200"].reasons) == "low_volume"
    assert layers.first_alert(found["Rua Em Dia, 4"].reasons) is None


# --- the dashboard and the fiscalização --------------------------------------------------------


def test_the_dashboard_counts_and_links_the_alerts(nucleo, world):
    response = nucleo.get("/nucleo/")
    html = response.content.decode()
    assert response.context["worksite_alerts"]["suspect"] == 2
    assert response.context["worksite_alerts"]["idle"] == 1
    assert f"/nucleo/obras/?municipality={world.town.pk}&amp;reason=idle" in html


def test_the_suspects_of_a_report_list_the_suspect_worksites_nearby(world):
    report = DumpingReport.objects.create(
        municipality=world.town,
        location=point(*offset(*world.origin.coords, 300, 0)),
        category="LOTE_VAGO",
    )
    far = site(world, "Rua Longe, 7", start=days(-300), end=days(-60), large=False,
               location=point(*offset(*world.origin.coords, 9000, 0)))  # fmt: skip
    client = Client()
    client.force_login(world.fiscal)
    response = client.get(f"/fiscalizacao/denuncias/{report.pk}/suspeitos/")
    html = response.content.decode()
    assert response.status_code == 200
    nearby = [n.worksite.address for n in response.context["worksites"]]
    assert nearby == ["Rua Atrasada, 1", "Av. Pouco Volume, 200", "Rua Parada, 3"]  # all at 300 m
    assert far.address not in html
    assert "3 obra(s) com alerta a até 3 km" in html
    assert f"/nucleo/obras/{world.late.pk}/" in html
    assert AccessLog.objects.filter(purpose="Denúncia: obras suspeitas próximas").count() == 3
