"""The Núcleo's map page (/nucleo/mapa/): HTML size and build time against the number of CTRs.

Requests go through Django's test Client in this process (middleware, view, SQL, folium,
template: everything but the network), as a user of the Núcleo group. In the same run, the
public /onde-descartar/ page (a map of the network, no CTRs) is the baseline the ratios refer to,
and the login page is the floor of what any page costs.
"""

from __future__ import annotations

import datetime
import json
import re
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from pev_network.models import Municipality

from .staff import nucleo_everywhere
from .timing import Plan, Result, measure

NAME = "nucleo_map"
TITLE = "Mapa do Núcleo (`/nucleo/mapa/`)"
USERNAME = "bench-nucleo"
# The targets.
MAX_HTML_BYTES = 2_000_000
MAX_BUILD_SECONDS = 1.0


@dataclass
class Case:
    key: str
    label: str
    url: str
    public: bool = False
    baseline: bool = False


@dataclass
class State:
    nucleo: Client
    public: Client


def setup() -> State:
    user, created = get_user_model().objects.get_or_create(
        username=USERNAME, defaults={"first_name": "Benchmark", "last_name": "Núcleo"}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    nucleo_everywhere(user)
    nucleo = Client()
    nucleo.force_login(user)
    return State(nucleo=nucleo, public=Client())


def _busiest_municipality() -> Municipality | None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT municipality_id FROM ctr_ctr GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1"
        )
        row = cursor.fetchone()
    return Municipality.objects.defer("boundary").get(pk=row[0]) if row else None


def cases() -> list[Case]:
    today = timezone.localdate()
    two_years = today - datetime.timedelta(days=730)
    default = Municipality.objects.defer("boundary").filter(
        ibge_code=settings.DEFAULT_MUNICIPALITY_IBGE
    )
    default_name = default[0].name if default else settings.DEFAULT_MUNICIPALITY_IBGE
    result = [
        Case(
            "padrao",
            f"Núcleo: município padrão ({default_name}), últimos 90 dias",
            "/nucleo/mapa/",
        )
    ]
    busiest = _busiest_municipality()
    if busiest:
        result += [
            Case(
                "maior_90d",
                f"Núcleo: {busiest.name} (o município com mais CTRs), últimos 90 dias",
                f"/nucleo/mapa/?municipality={busiest.pk}",
            ),
            Case(
                "maior_2anos",
                f"Núcleo: {busiest.name}, dois anos (o período inteiro dos dados)",
                f"/nucleo/mapa/?municipality={busiest.pk}"
                f"&date_from={two_years.isoformat()}&date_to={today.isoformat()}",
            ),
        ]
    result += [
        Case(
            "onde_descartar",
            "Base: página pública `/onde-descartar/` (mapa da rede)",
            "/onde-descartar/",
            public=True,
            baseline=True,
        ),
        Case("entrar", "Piso: página de login `/entrar/`", "/entrar/", public=True),
    ]
    return result


def _get(client: Client, url: str):
    # As over HTTPS in production (DEBUG off redirects plain HTTP there).
    response = client.get(url, secure=True)
    if response.status_code != 200:
        raise RuntimeError(f"GET {url} respondeu {response.status_code}")
    return response


SELECT_RE = re.compile(r'<select name="(\w+)".*?</select>', re.S)
GEOJSON_RE = re.compile(r"geo_json_\w+_add\((\{.*?\})\);", re.S)
STYLER_RE = re.compile(r"function geo_json_\w+_styler\(feature\) \{.*?\n        \}", re.S)


def _layer_name(collection: dict) -> str:
    features = collection.get("features") or []
    if not features:
        return "GeoJSON vazio"
    first = features[0]
    kind = (first.get("geometry") or {}).get("type", "?")
    props = first.get("properties") or {}
    if kind == "LineString":
        what = "fluxos de CTR"
    elif "kind" in props:
        shape = "polígonos" if "Polygon" in kind else "marcadores"
        what = f"áreas {props['kind']} ({shape})"
    elif "label" in props:
        what = re.sub(r"^[\d.,]+\s*", "", str(props["label"]))
        what = f"{what} ({'polígonos' if 'Polygon' in kind else 'pontos'})"
    else:
        what = kind
    return f"camada: {what}, {len(features)} feições"


def composition(html: str) -> list[tuple[str, int]]:
    """What the page is made of: form selects, GeoJSON layers, folium's style functions."""
    parts = []
    for match in SELECT_RE.finditer(html):
        options = match.group(0).count("<option")
        parts.append((f"formulário: seletor {match.group(1)} ({options} opções)", match.group(0)))
    for match in GEOJSON_RE.finditer(html):
        try:
            name = _layer_name(json.loads(match.group(1)))
        except ValueError:
            name = "camada GeoJSON"
        parts.append((name, match.group(1)))
    stylers = STYLER_RE.findall(html)
    if stylers:
        parts.append((f"folium: funções de estilo por feição ({len(stylers)})", "".join(stylers)))
    sizes = [(name, len(text.encode())) for name, text in parts]
    sizes.append(
        ("o resto (HTML, JavaScript do folium, CSS)", len(html.encode()) - sum(n for _, n in sizes))
    )
    return sorted(sizes, key=lambda p: p[1], reverse=True)


def run(state: State, size: int, reports: int, runs: int) -> list[Result]:
    results = []
    for case in cases():
        client = state.public if case.public else state.nucleo
        html = _get(client, case.url).content
        html_bytes = len(html)
        parts = composition(html.decode()) if not case.public else None
        stats = measure(lambda client=client, case=case: _get(client, case.url), runs)
        with CaptureQueriesContext(connection) as captured:
            _get(client, case.url)
        sql_seconds = sum(float(q["time"]) for q in captured.captured_queries)
        results.append(
            Result(
                benchmark=NAME,
                case=case.key,
                label=case.label,
                size=size,
                reports=reports,
                url=case.url,
                html_bytes=html_bytes,
                stats=stats,
                queries=len(captured.captured_queries),
                sql_seconds=sql_seconds,
                baseline=case.baseline,
                parts=parts,
            )
        )
    baseline = next(r for r in results if r.baseline)
    for result in results:
        result.ratio = result.stats.median / baseline.stats.median
    return results


def profile(state: State, results: list[Result], top: int = 3) -> list[Plan]:
    """The queries of the Núcleo page that spends most in SQL, slowest first; EXPLAIN
    (ANALYZE, BUFFERS) of the `top` slowest."""
    nucleo = [r for r in results if r.url.startswith("/nucleo/")]
    if not nucleo:
        return []
    slowest = max(nucleo, key=lambda r: r.sql_seconds)
    with CaptureQueriesContext(connection) as captured:
        _get(state.nucleo, slowest.url)
    queries = sorted(captured.captured_queries, key=lambda q: float(q["time"]), reverse=True)
    plans = []
    with connection.cursor() as cursor:
        for i, query in enumerate(queries):
            text = query["sql"]
            plan = ""
            # Server-side cursors (QuerySet.iterator) arrive as DECLARE … FOR SELECT.
            select = re.sub(r"^DECLARE .*? CURSOR WITH(?:OUT)? HOLD FOR ", "", text, flags=re.S)
            if i < top and select.lstrip().upper().startswith(("SELECT", "WITH")):
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + select)
                plan = "\n".join(row[0] for row in cursor.fetchall())
            plans.append(Plan(slowest.label, float(query["time"]), select, plan))
    return plans


def verdict(results: list[Result]) -> str:
    """The issue's targets, read at the largest size."""
    from .report import thousands

    largest = max(r.size for r in results)
    pages = [r for r in results if r.size == largest and r.url.startswith("/nucleo/")]
    if not pages:
        return ""
    heaviest = max(pages, key=lambda r: r.html_bytes)
    slowest = max(pages, key=lambda r: r.stats.median)
    size_ok = heaviest.html_bytes < MAX_HTML_BYTES
    time_ok = slowest.stats.median <= MAX_BUILD_SECONDS
    sizes = sorted({r.size for r in results})
    spread = {
        case: [r.html_bytes for r in results if r.case == case and r.url.startswith("/nucleo/")]
        for case in {r.case for r in pages}
    }
    growth = max((max(v) / min(v) for v in spread.values() if v and min(v)), default=1)
    return (
        f"**Metas** (com {thousands(largest)} CTRs e {thousands(heaviest.reports)} denúncias): "
        f"HTML abaixo de 2 MB — **{'atingida' if size_ok else 'NÃO atingida'}** "
        f"(a maior página tem {thousands(heaviest.html_bytes)} bytes); montagem em até 1 s — "
        f"**{'atingida' if time_ok else 'NÃO atingida'}** (a mais lenta, “{slowest.label}”, "
        f"leva {thousands(slowest.stats.median, 2)} s de mediana)."
    ) + (
        f" De {thousands(sizes[0])} a {thousands(sizes[-1])} CTRs, o HTML de uma mesma página "
        f"do Núcleo variou no máximo {(growth - 1) * 100:.0f}%."
        if len(sizes) > 1
        else ""
    )
