"""Pages of the Núcleo Permanente de Gestão (and the inspectors, who see the same)."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpResponseBadRequest
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

import audit
from config.br import br_number
from config.csv_safety import csv_response
from config.replica import replica_readable
from ctr import analytics
from ctr.exports import export_ctrs, export_flows
from ctr.models import CTRStatus
from ctr.roles import municipal_only
from fiscalization import services as fiscalization
from fiscalization.enforcement.frameworks import own_framework_in_force
from fiscalization.hotspot_layers import (
    HOTSPOT_COLOUR,
    RECURRING_COLOUR,
    add_hotspots,
    hotspots_collection,
)
from generators import confirmation, suspects
from maps import bounds
from maps.base import render_parts
from maps.legend import kind_legend
from pev_network import fiscal_units, management_layers, public_layers
from pev_network.exporting import export_basins, export_facilities
from pev_network.models import (
    FiscalUnit,
    Municipality,
    facility_kind_short,
    waste_class_short,
)

from . import charts as charts_svg
from . import flows as onward
from . import layers, worksites
from .forms import NucleoFilterForm


def map_key() -> list[tuple[str, list[tuple[str, str, str]]]]:
    """The map's legend as a key: groups of (colour, swatch style, short
    label), in the colours the layers are drawn with."""
    plan = layers.PLAN_COLOURS
    alert = layers.ALERT_COLOURS
    return [
        (
            "Áreas de recebimento",
            [(item["colour"], "solid", item["label"]) for item in kind_legend()]
            + [(layers.NOT_VALID_COLOUR, "dashed", "Licença não válida: não pode receber")],
        ),
        (
            "Linhas (a espessura é o volume)",
            [
                (layers.FLOW_COLOUR, "line", "Da região de origem ao destino"),
                (onward.Fate.COLOURS[onward.Fate.RECYCLED], "line", "Destinação final: reciclagem"),
                (onward.Fate.COLOURS[onward.Fate.LANDFILLED], "line", "Destinação final: aterro"),
            ],
        ),
        (
            "Círculos",
            [
                (layers.OVERDUE_COLOUR, "ring", "Origem de CTR em atraso (art. 2 §1)"),
                (layers.REPORT_COLOUR, "ring", "Denúncias de descarte"),
                (layers.AWAY_COLOUR, "ring", "Recebimento longe da área (art. 13 p.ú.)"),
                (layers.IMPLAUSIBLE_COLOUR, "ring", "Viagem rápida ou lenta demais"),
            ],
        ),
        (
            "Obras ativas: PGRCC",
            [
                (plan["none"], "ring", "sem PGRCC"),
                (plan["draft"], "ring", "em elaboração"),
                (plan["submitted"], "ring", "enviado ao Núcleo"),
                (plan["changes"], "ring", "devolvido para ajustes"),
                (plan["approved"], "ring", "aprovado"),
            ],
        ),
        (
            "Obras com alerta",
            [
                (alert["low_volume"], "ring", "volume muito abaixo do previsto"),
                (alert["overdue"], "ring", "além do término previsto"),
                (alert["idle"], "ring", "grande gerador sem CTR"),
            ],
        ),
        (
            "Pontos críticos de denúncias",
            [
                (HOTSPOT_COLOUR, "solid", "ponto crítico"),
                (RECURRING_COLOUR, "solid", "voltou a receber entulho depois da limpeza"),
            ],
        ),
    ]


@replica_readable
@require_safe
@municipal_only
def nucleo_map(request):
    form = NucleoFilterForm(request.GET or None, user=request.user)
    if request.GET and not form.is_valid():
        return render(request, "nucleo/mapa.html", {"form": form, "nav": "nucleo"}, status=400)
    flt, municipality = _filter_from(
        form, form.cleaned_data if request.GET else form.clean_defaults()
    )
    outline = (
        public_layers.municipality_outline_geojson(municipality.ibge_code) if municipality else None
    )
    extent = tuple(outline["bbox"]) if outline else (-45.45, -23.02, -45.02, -22.61)
    window = bounds.expand(extent, bounds.NEIGHBOURS_MARGIN_DEG)
    cell = analytics.grid_size_degrees(extent)
    now = timezone.now()
    all_flows = analytics.flows(flt, cell)
    flows, omitted_flows, omitted_volume = layers.aggregate_flows(all_flows, cell)
    overdue = analytics.overdue_origin_cells(flt, cell, now)
    reports = [
        analytics.Cell(lon, lat, n)
        for lon, lat, n in fiscalization.report_cells(
            flt.date_from, flt.date_to, cell, flt.municipality_id
        )
    ]
    # Where receptions were confirmed away, and implausible trips.
    away = analytics.reception_finding_cells(flt, cell, analytics.AWAY_CODES, "received_location")
    implausible = analytics.reception_finding_cells(flt, cell, analytics.TRAVEL_CODES, "origin")
    custody = analytics.custody_flows(flt)
    active_worksites = worksites.map_worksites(flt.municipality_id, timezone.localdate(now))
    if active_worksites:  # their popups name the generators (LGPD)
        audit.record(request, None, "Núcleo: mapa das obras")
    destinations, omitted_destinations, _ = onward.map_lines(
        custody, onward.Names.of(custody), bbox=window
    )
    the_map = layers.nucleo_map(
        destinations=destinations,
        facilities=management_layers.facilities_with_license_state_geojson(
            management_layers.network_of(municipality), bbox=window
        ),
        basins=public_layers.catchment_basins_geojson(bbox=window),
        outline=outline,
        flows=flows,
        overdue=overdue,
        reports=reports,
        worksites=active_worksites,
        away=away,
        implausible=implausible,
        facility_admin_url="/admin/pev_network/receivingfacility/{id}/change/",
        ctr_list_url=(
            f"/admin/ctr/ctr/?destination_facility__id__exact={{facility}}"
            f"&transport_date__gte={flt.date_from.isoformat()}"
            f"&transport_date__lte={flt.date_to.isoformat()}"
        ),
    )
    if municipality is not None:  # None would be every municipality's hotspots
        add_hotspots(
            the_map,
            hotspots_collection(
                municipality, flt.date_from, flt.date_to, limit=200, with_report_ids=False
            ),
            f"/fiscalizacao/denuncias/{{report}}/suspeitos/?hotspot=1&since={flt.date_from}",
        )
    context = {
        "nav": "nucleo",
        "form": form,
        "filter": flt,
        "municipality": municipality,
        "map": render_parts(the_map),
        "map_key": map_key(),
        "totals": analytics.totals(flt),
        "counts": {"flows": len(flows), "overdue": sum(c.count for c in overdue),
                   "reports": sum(c.count for c in reports),
                   "omitted_flows": omitted_flows, "omitted_volume": omitted_volume,
                   "destinations": len(destinations),
                   "omitted_destinations": omitted_destinations,
                   "worksites": len(active_worksites),
                   "flagged_worksites": sum(1 for w in active_worksites if w.reasons),
                   "away": sum(c.count for c in away),
                   "implausible": sum(c.count for c in implausible)},
    }  # fmt: skip
    return render(request, "nucleo/mapa.html", context)


EXPORT_NAMES = {
    "ctrs.csv": "text/csv; charset=utf-8",
    "ctrs.gpkg": "application/geopackage+sqlite3",
    "fluxos.csv": "text/csv; charset=utf-8",
    "fluxos.gpkg": "application/geopackage+sqlite3",
    "areas.gpkg": "application/geopackage+sqlite3",
    "bacias.gpkg": "application/geopackage+sqlite3",
}


@replica_readable
@require_safe
@municipal_only
def nucleo_exports(request):
    form = NucleoFilterForm(request.GET or None, user=request.user)
    valid = not request.GET or form.is_valid()
    data = form.cleaned_data if request.GET and valid else form.clean_defaults()
    return render(
        request,
        "nucleo/exportar.html",
        {
            "nav": "nucleo",
            "form": form,
            "period": data,
            "names": EXPORT_NAMES,
            "period_fields": ["date_from", "date_to"],
        },
        status=200 if valid else 400,
    )


@replica_readable
@require_safe
@municipal_only
def nucleo_export_file(request, name: str):
    """Build the file in a temporary folder and stream it; the folder goes when it is sent."""
    if name not in EXPORT_NAMES:
        raise Http404("Exportação desconhecida.")
    form = NucleoFilterForm(request.GET or None, user=request.user)
    if request.GET and not form.is_valid():
        return HttpResponseBadRequest(
            "Período inválido: " + " ".join(form.errors.get("__all__", ["verifique as datas."]))
        )
    data = form.cleaned_data if request.GET else form.clean_defaults()
    folder = tempfile.mkdtemp(prefix="ctr-export-")
    path = Path(folder) / name
    try:
        if name.startswith(("ctrs.", "fluxos.")):
            export = export_ctrs if name.startswith("ctrs.") else export_flows
            # The current municipality's CTRs, never every municipality's.
            export(path, data["date_from"], data["date_to"], form.municipality_id or -1)
            filename = (
                f"{path.stem}_{data['date_from']:%Y%m%d}_{data['date_to']:%Y%m%d}{path.suffix}"
            )
        elif name == "areas.gpkg":
            export_facilities(path, municipality_id=form.municipality_id or -1)
            filename = name
        else:
            export_basins(path, municipality_id=form.municipality_id or -1)
            filename = name
        handle = path.open("rb")
    finally:
        # The open handle keeps the file readable after its name is gone (POSIX).
        shutil.rmtree(folder, ignore_errors=True)
    return FileResponse(
        handle, as_attachment=True, filename=filename, content_type=EXPORT_NAMES[name]
    )


def _filter_from(form: NucleoFilterForm, data: dict) -> tuple[analytics.CTRFilter, object]:
    """The filter of the page: the current municipality's (never another's; a user
    with none sees nothing), the period, class, transporter and facility asked."""
    municipality = (
        Municipality.objects.defer("boundary").filter(pk=form.municipality_id).first()
        if form.municipality_id is not None
        else None
    )
    flt = analytics.CTRFilter(
        date_from=data["date_from"],
        date_to=data["date_to"],
        # -1: no municipality is no CTR (a filter without one would be every municipality's).
        municipality_id=municipality.pk if municipality else -1,
        waste_class=data.get("waste_class") or None,
        transporter_id=data["transporter"].pk if data.get("transporter") else None,
        facility_id=data["facility"].pk if data.get("facility") else None,
    )
    return flt, municipality


def _br(value: float | None, digits: int = 1) -> str:
    if value is None:
        return ""
    return br_number(value, digits)


@dataclass(frozen=True)
class DashboardData:
    months: list
    facilities: list
    basins: dict
    by_basin: dict
    ranking: list
    reports: list
    routes: list  # onward.Route: bacia → first area → where the waste is now
    recycling: list  # onward.RecyclingMonth
    stocks: list  # onward.FacilityStock


def _dashboard_data(flt: analytics.CTRFilter, now) -> DashboardData:
    custody = analytics.custody_flows(flt)
    return DashboardData(
        months=analytics.volume_by_class_and_month(flt),
        facilities=analytics.volume_by_facility(flt),
        basins=public_layers.catchment_basins_geojson(municipality_id=flt.municipality_id),
        by_basin=analytics.volume_by_basin(flt),
        ranking=analytics.transporter_compliance(flt, now),
        reports=fiscalization.reports_by_basin(flt.date_from, flt.date_to, flt.municipality_id),
        routes=onward.routes(custody, onward.Names.of(custody)),
        recycling=onward.recycling_by_month(custody),
        stocks=onward.facility_stocks(
            flt.municipality_id, flt.date_from, flt.date_to, timezone.localdate(now),
            flt.waste_class,
        ),
    )  # fmt: skip


# Tables that are only a CSV download: the page shows their link, never their rows.
CSV_ONLY = ("estoque_diario",)


def _dashboard_tables(
    data: DashboardData, csv_only: bool = False
) -> dict[str, tuple[list[str], list[list]]]:
    """Every table of the dashboard as (header, rows): the page and its CSV downloads show
    the same numbers. The CSV_ONLY tables' rows (every day of every class of every area) only
    when `csv_only` asks for them (a CSV download), not for the page."""
    basin_names = {f["id"]: f["properties"]["name"] for f in data.basins["features"]}
    by_basin = sorted(data.by_basin.items(), key=lambda item: -item[1][0])
    return {
        "classes": (
            ["mês", "classe", "volume (m³)"],
            [[m.strftime("%m/%Y"), waste_class_short(c), _br(v)] for m, c, v in data.months],
        ),
        "areas": (
            ["área", "tipo", "CTRs recebidos", "volume (m³)", "capacidade no período (m³)",
             "uso da capacidade (%)"],
            [[f.name, facility_kind_short(f.kind), f.ctrs, _br(f.volume_m3),
              _br(f.capacity_m3), _br(f.use_pct)]
             for f in data.facilities],
        ),
        "bacias": (
            ["bacia", "CTRs com origem na bacia", "volume (m³)"],
            [[basin_names.get(b, b), n, _br(v)] for b, (v, n) in by_basin],
        ),
        "transportadores": (
            ["transportador", "CTRs", "com constatações", "recusados", "em atraso",
             "conformidade (%)"],
            [[c.name, c.ctrs, c.with_findings, c.refused, c.overdue, _br(c.compliance_pct)]
             for c in data.ranking],
        ),
        "denuncias": (
            ["bacia", "PEV que atende", "denúncias", "denúncias por PEV"],
            [[name, pev or "sem PEV", n, n if pev else "—"] for _bid, name, pev, n in data.reports],
        ),
        "fluxos": (
            ["bacia de origem", "primeira área", "onde está agora", "situação", "volume (m³)"],
            [[r.basin, r.first, r.end, onward.Fate.LABELS[r.fate], _br(r.volume_m3)]
             for r in data.routes],
        ),
        "reciclagem": (
            ["mês", "reciclada ou reutilizada (m³)", "em aterro de RCC (m³)",
             "taxa de reciclagem (%)", "em estoque ou trânsito (m³)",
             "recusada ou sem rastreio (m³)"],
            [[r.month.strftime("%m/%Y"), _br(r.recycled), _br(r.landfilled),
              _br(r.rate_pct) or "—", _br(r.pending), _br(r.unknown)]
             for r in data.recycling],
        ),
        "estoque": (
            ["área", "tipo", "classe", "no primeiro dia (m³)", "no último dia (m³)",
             "máximo no período (m³)"],
            [[s.facility.name, facility_kind_short(s.facility.kind), waste_class_short(c),
              _br(values[0]), _br(values[-1]), _br(max(values))]
             for s in data.stocks for c, values in sorted(s.by_class.items())],
        ),
        "estoque_parado": (
            ["área", "classe", "volume (m³)", "acima de zero desde", "dias"],
            [[s.facility.name, waste_class_short(a.waste_class), _br(a.volume_m3),
              a.since.strftime("%d/%m/%Y"), a.days]
             for s in data.stocks for a in s.stale],
        ),
        # Only as a CSV: every day (or week) of every class of every area.
        "estoque_diario": (
            ["área", "classe", "dia", "estoque (m³)"],
            [[s.facility.name, waste_class_short(c), day.strftime("%d/%m/%Y"), _br(v)]
             for s in data.stocks for c, values in sorted(s.by_class.items())
             for day, v in zip(s.days, values, strict=True)] if csv_only else [],
        ),
    }  # fmt: skip


CSV_TITLES = {
    "classes": "volume_por_classe_e_mes",
    "areas": "volume_por_area",
    "bacias": "volume_por_bacia",
    "transportadores": "conformidade_dos_transportadores",
    "denuncias": "denuncias_por_bacia",
    "fluxos": "fluxos_ate_o_destino",
    "reciclagem": "reciclagem_da_classe_a_por_mes",
    "estoque": "estoque_por_area",
    "estoque_parado": "estoque_parado",
    "estoque_diario": "estoque_por_area_e_dia",
}


def _charts(data: DashboardData) -> dict:
    month_labels = sorted({m for m, _c, _v in data.months})
    classes = sorted({c for _m, c, _v in data.months})
    volume = {(m, c): v for m, c, v in data.months}
    series = {
        waste_class_short(c): [volume.get((m, c), 0.0) for m in month_labels] for c in classes
    }
    facilities = [f for f in data.facilities if f.use_pct is not None][:20]
    unknown = [f.name for f in data.facilities if f.use_pct is None]
    ranking = data.ranking[:20]
    return {
        "classes": charts_svg.stacked_bars(
            [m.strftime("%m/%Y") for m in month_labels], series, "Volume por classe e mês", "m³"
        ) if data.months else None,
        "areas": charts_svg.horizontal_bars(
            [f.name for f in facilities], [f.use_pct or 0 for f in facilities],
            "Uso da capacidade por área de recebimento", "% da capacidade no período",
            reference=100,
        ) if facilities else None,
        # Received somewhere whose capacity nobody declared: said in words, not an empty chart.
        "areas_unknown": unknown,
        "transportadores": charts_svg.horizontal_bars(
            [c.name for c in ranking], [c.compliance_pct for c in ranking],
            "Conformidade dos transportadores", "% dos CTRs sem constatação, recusa ou atraso",
            reference=100,
        ) if ranking else None,
        **_onward_charts(data),
    }  # fmt: skip


FLOW_TITLE = "Fluxo dos resíduos: da bacia de origem à primeira área e a onde estão agora"
# The drawing's width for a desktop and for a phone (390 px less the page's margins), so that
# its text is drawn at the page's size on both (nucleo/charts.py: flow_diagram).
FLOW_WIDTHS = {"wide": 960, "narrow": 350}


def _onward_charts(data: DashboardData) -> dict:
    diagram = onward.diagram(data.routes)
    flow = {
        size: charts_svg.flow_diagram(
            onward.COLUMN_TITLES, diagram.columns, diagram.links, onward.Fate.COLOURS,
            onward.Fate.LABELS, FLOW_TITLE, width,
        )
        for size, width in FLOW_WIDTHS.items()
    } if data.routes else None  # fmt: skip
    final = [r for r in data.recycling if r.final]
    recycling = charts_svg.stacked_bars(
        [r.month.strftime("%m/%Y") for r in final],
        {onward.Fate.LABELS[onward.Fate.RECYCLED]: [float(r.recycled) for r in final],
         onward.Fate.LABELS[onward.Fate.LANDFILLED]: [float(r.landfilled) for r in final]},
        "Classe A com destinação final por mês", "m³",
        colours=[onward.Fate.COLOURS[onward.Fate.RECYCLED],
                 onward.Fate.COLOURS[onward.Fate.LANDFILLED]],
        size=(4.8, 2.8),  # small: drawn near its true size on a phone
    ) if final else None  # fmt: skip
    stocks = data.stocks[: onward.STOCK_PANELS]
    stock = charts_svg.lines_by_panel(
        stocks[0].days,
        {s.facility.name: {waste_class_short(c): [float(v) for v in values]
                           for c, values in sorted(s.by_class.items())} for s in stocks},
        "Estoque por área e classe ao longo do período", "m³",
    ) if stocks else None  # fmt: skip
    return {
        "flow": flow,
        # The legend names the kinds the diagram shows.
        "fates": [
            (onward.Fate.COLOURS[k], label)
            for k, label in onward.Fate.LABELS.items()
            if any(r.fate == k for r in data.routes)
        ],
        "recycling": recycling,
        "stock": stock,
        "stock_omitted": [s.facility.name for s in data.stocks[onward.STOCK_PANELS :]],
    }


# A dashboard table shows this many rows a page (its CSV has them all).
TABLE_PAGE_SIZE = 15


def _paged_table(request, key: str, header: list, rows: list, csv: str) -> dict:
    """One of the dashboard's tables, paged by its own ?pagina-<key>= (the others stay where
    they are: the page's query string is kept)."""
    parameter = f"pagina-{key}"
    page = Paginator(rows, TABLE_PAGE_SIZE).get_page(request.GET.get(parameter))
    query = request.GET.copy()
    query.pop(parameter, None)
    query.pop("csv", None)
    base = f"?{query.urlencode()}&" if query else "?"
    return {
        "header": header,
        "rows": list(page),
        "csv": csv,
        "page": page,
        "page_url": f"{base}{parameter}=",
        "anchor": key,
    }


def _key_figures(flt: analytics.CTRFilter, data: DashboardData, totals: dict, today) -> dict:
    """What the Núcleo reads first: this month's CTRs, the period's volume
    by class, the CTRs still open and those overdue, the class A recycling rate, the stock
    alerts (art. 3 III: an ATT is a place of passage) and the queues (the menu's counts)."""
    month = analytics.totals(
        dataclasses.replace(flt, date_from=today.replace(day=1), date_to=today)
    )
    by_class: dict[str, Decimal] = {}
    for _month, waste_class, volume in data.months:
        short = waste_class_short(waste_class)
        by_class[short] = by_class.get(short, Decimal(0)) + Decimal(str(volume))
    recycled = sum((r.recycled for r in data.recycling), Decimal(0))
    final = sum((r.final for r in data.recycling), Decimal(0))
    return {
        "month_ctrs": month["ctrs"],
        "month_volume_m3": month["volume_m3"],
        "by_class": sorted(by_class.items()),
        "open": totals["by_status"].get(CTRStatus.ISSUED, {}).get("ctrs", 0),
        "overdue": sum(c.overdue for c in data.ranking),
        "recycling_pct": float(100 * recycled / final) if final else None,
        "stock_alerts": sum(len(s.stale) for s in data.stocks),
    }


def _fine_unit(municipality: Municipality | None) -> str | None:
    """The unit of the fines in `municipality` (its own framework in force), None without a
    framework; the UFESP's for the platform's view of every municipality."""
    if municipality is None:
        return FiscalUnit.UFESP
    framework = own_framework_in_force(municipality, timezone.localdate())
    return framework.money_unit if framework else None


@replica_readable
@require_safe
@municipal_only
def nucleo_dashboard(request):
    params = request.GET.copy()
    csv_name = params.pop("csv", [None])[0]
    form = NucleoFilterForm(params or None, user=request.user)
    if params and not form.is_valid():
        context = {"form": form, "nav": "nucleo"}
        return render(request, "nucleo/painel.html", context, status=400)
    flt, municipality = _filter_from(form, form.cleaned_data if params else form.clean_defaults())
    data = _dashboard_data(flt, timezone.now())
    tables = _dashboard_tables(data, csv_only=csv_name in CSV_ONLY)
    if csv_name is not None:
        if csv_name not in tables:
            raise Http404("Tabela desconhecida.")
        name = f"{CSV_TITLES[csv_name]}_{flt.date_from:%Y%m%d}_{flt.date_to:%Y%m%d}.csv"
        return csv_response(name, *tables[csv_name])
    outline = (
        public_layers.municipality_outline_geojson(municipality.ibge_code) if municipality else None
    )
    choropleth, breaks = layers.basin_choropleth(data.basins, data.by_basin, outline)
    query = params.urlencode()
    prefix = f"?{query}&" if query else "?"
    totals = analytics.totals(flt)
    context = {
        "nav": "nucleo",
        "form": form,
        "filter": flt,
        # A year without its UFESP, now or from 1 January.
        # Of the fines in the unit of the municipality's own framework (reais: none).
        "ufesp_notice": fiscal_units.notice(
            step=fiscal_units.NUCLEO_STEP, fine_unit=_fine_unit(municipality)
        ),
        "municipality": municipality,
        # Today's set: the stock alert has no CTR to take a day from.
        "parameters": municipality.parameters_on(timezone.localdate()) if municipality else None,
        "totals": totals,
        # The figures read first, before the sections.
        "key": _key_figures(flt, data, totals, timezone.localdate()),
        # The worksites' alerts today, whatever the period.
        "worksite_alerts": suspects.counts(
            timezone.localdate(), suspects.Scope(municipality_id=flt.municipality_id)
        ),
        "charts": _charts(data),
        "choropleth": render_parts(choropleth),
        "legend": list(zip(layers.CHOROPLETH_COLOURS, [_br(b) for b in breaks], strict=False)),
        "tables": {
            key: _paged_table(request, key, header, rows, f"{prefix}csv={key}")
            if key not in CSV_ONLY
            else {"csv": f"{prefix}csv={key}"}
            for key, (header, rows) in tables.items()
        },
        # Where a municipality asks, or asked on some days, for the generator's confirmation
        # (each CTR by the parameters of its transport date).
        "unconfirmed": confirmation.unconfirmed()
        .filter(municipality_id=flt.municipality_id)
        .count()
        if municipality is not None
        and municipality.parameter_sets.filter(generator_confirmation_required=True).exists()
        else None,
    }
    return render(request, "nucleo/painel.html", context)
