"""Web pages of dumping reports (pt-BR): the citizens' form and follow-up page, the inspectors'
map, list and report pages, and the private photos. Thin: parse with intake_forms, call
fiscalization.intake, render."""

from __future__ import annotations

import math

from django.conf import settings
from django.contrib import messages
from django.contrib.gis.db.models import Extent
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_http_methods, require_POST, require_safe

import audit
from config.api_errors import InvalidParameter
from config.api_params import parse_lon_lat
from config.clients import client_key
from config.errors import add_to_form
from config.list_order import Column, ListOrder
from config.rate_limits import RateLimited
from ctr import roles
from ctr.roles import municipal_only
from jurisdiction.access import DataScope, declare
from jurisdiction.scope import jurisdiction_of, municipalities
from maps import bounds, municipal
from maps.base import render_parts
from pev_network import public_layers
from pev_network import services as network

from . import intake, intake_maps, pending_photos, throttle
from .api import photos_with_distance
from .intake_forms import CategoryForm, InspectorFilterForm, MergeForm, ReportForm, StatusForm
from .models import DumpingPhoto, DumpingReport
from .photos import MAX_PHOTOS

# More matching reports than this and the map shows counts per grid cell instead of points
# (design.md: never thousands of raw markers in one page).
MAP_POINT_LIMIT = 2000
PAGE_SIZE = 50
# Grid cells across the larger side of the map's extent when aggregating.
CELLS_ACROSS = 60
# Cells smaller than ~100 m would split one dumping spot into several.
MIN_CELL_DEG = 0.001

REPORT_LIST_ORDER = ListOrder(
    [
        Column("protocolo", "Protocolo", ("protocol",)),
        Column("recebida", "Recebida em", ("created_at",), first_desc=True),
        Column("categoria", "Categoria", ("category", "created_at")),
        Column("situacao", "Situação", ("status", "created_at")),
        Column("municipio", "Município", ("municipality__name", "created_at")),
        Column("quem", "Quem", ("reporter_kind", "created_at")),
    ],
    default="-recebida",
)


def _outline(ibge: str | None = None) -> dict | None:
    code = ibge or settings.DEFAULT_MUNICIPALITY_IBGE
    return public_layers.municipality_outline_geojson(code) if code else None


# --- citizens --------------------------------------------------------------------------------


def _rate_limited_page(request, form, error: RateLimited, place, pending=None):
    # A blocked submission is not processed: its new photos are not kept, and the page says so.
    response = _form_page(
        request,
        form,
        place,
        status=429,
        rate_limit=error.message,
        pending=pending,
        photos_dropped=bool(request.FILES.getlist("photos")),
    )
    response["Retry-After"] = str(error.retry_after)
    return response


def _form_page(
    request,
    form,
    place: municipal.Place,
    status=200,
    nearby=None,
    rate_limit=None,
    pending=None,
    photos_dropped=False,
):
    chosen = None
    if form.is_bound and not form.errors.get("longitude") and not form.errors.get("latitude"):
        try:
            chosen = (float(form.cleaned_data["longitude"]), float(form.cleaned_data["latitude"]))
        except (AttributeError, KeyError, TypeError):
            chosen = None
    outline = _outline(place.ibge) if place.municipality else None
    the_map = intake_maps.report_form_map(outline, chosen)
    pending = pending or pending_photos.Pending()
    context = {
        **place.context(),
        "nav": "denunciar",
        "form": form,
        "map": render_parts(the_map),
        "municipality": outline["properties"] if outline else None,
        "nearby": nearby,
        "radius_m": intake.NEARBY_RADIUS_M,
        "days": intake.NEARBY_DAYS,
        "rate_limit": rate_limit,
        # Photos of an earlier submission of this form, kept (fiscalization.pending_photos).
        "pending_token": pending.token,
        "pending_photos": [
            {"index": i, "name": photo.original_name, "thumb": pending_photos.thumbnail_uri(photo)}
            for i, photo in enumerate(pending.photos)
        ],
        "pending_expired": pending.expired,
        "photos_dropped": photos_dropped,
        "photo_room": max(0, MAX_PHOTOS - len(pending.photos)),
    }
    return render(request, "fiscalization/intake/denunciar.html", context, status=status)


def _submitted_photos(request, form, pending: pending_photos.Pending):
    """The photos of this submission: those kept from the earlier ones (less the ones the user
    removed), then the new uploads, each checked by content (fiscalization.photos). Returns
    them and the refusals; the good ones are kept even when another file is refused."""
    removed = set(request.POST.getlist("remove_pending"))
    kept = [photo for i, photo in enumerate(pending.photos) if str(i) not in removed]
    files = request.FILES.getlist("photos")
    if len(kept) + len(files) > MAX_PHOTOS:
        return kept, [pending_photos.too_many(len(kept) + len(files))]
    new, errors = pending_photos.check_each(files)
    return kept + new, errors


def _reported_point(form):
    """The point of a submitted form, when its coordinates are valid (the page's municipality
    without an address of its own)."""
    if form.errors.get("longitude") or form.errors.get("latitude"):
        return None
    try:
        return form.point()
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


@declare(DataScope.PUBLIC)
@require_http_methods(["GET", "HEAD", "POST"])
def report_new(request, ibge: str | None = None):
    """/denunciar/ and /m/<IBGE code>/denunciar/: anyone reports a dumping spot, without an
    account. The page shows the municipality of its address (else the default); the report
    goes to the municipality where the point is (intake.create_report). When the form comes
    back (an error, or "is it one of these?"), the photos sent are kept and shown: a browser
    cannot fill the file input again. The browser gets its device id for the limits."""
    response = _report_new(request, ibge)
    throttle.remember_device(request, response)
    return response


def _report_new(request, ibge: str | None):
    if request.method != "POST":
        return _form_page(request, ReportForm(), municipal.place(ibge))

    form = ReportForm(request.POST, request.FILES)
    pending = pending_photos.load(request.POST.get("pending_photos", ""))
    inspector = roles.is_municipal(request.user)
    client = throttle.client_of(request)
    if not inspector:
        try:
            throttle.check_report_attempt(client)
        except RateLimited as error:
            form.is_valid()
            place = municipal.place(ibge, _reported_point(form))
            return _rate_limited_page(request, form, error, place, pending)
    form_ok = form.is_valid()
    # The page coming back shows the address's municipality, else the point's.
    place = municipal.place(ibge, _reported_point(form))
    photos, refused = _submitted_photos(request, form, pending)
    if not form_ok or refused:
        for problem in refused:
            form.add_error("photos", f"{problem.filename}: {problem.message}")
        too_large = bool(refused) and all(e.code == "too_large" for e in refused)
        status = 413 if form_ok and too_large else 400
        return _form_page(
            request, form, place, status=status, pending=pending_photos.keep(pending, photos)
        )
    try:
        report = intake.create_report(
            form.new_report(),
            photos,
            by=request.user if inspector else None,
            confirm_new=form.cleaned_data["confirm_new"],
        )
    except intake.NearbyReportsExist as error:
        return _form_page(
            request,
            form,
            place,
            nearby=intake.public_nearby(error.reports),
            pending=pending_photos.keep(pending, photos),
        )
    except intake.IntakeError as error:
        form.add_error(None, error.message)
        return _form_page(
            request,
            form,
            place,
            status=error.status,
            pending=pending_photos.keep(pending, photos),
        )
    pending_photos.discard(pending)
    if not inspector:
        throttle.count_report(client)
    messages.success(
        request,
        format_html(
            "Denúncia registrada com o protocolo <strong>{}</strong> e encaminhada à {}, onde "
            "fica o local. Guarde este número para acompanhar o andamento.",
            report.protocol,
            municipal.of(report.municipality).letterhead.issuer,
        ),
    )
    return redirect("intake:follow", protocol=report.protocol)


@declare(DataScope.PUBLIC)
@require_safe
def report_nearby(request):
    """JSON for the form's "is it one of these?": open reports near a point (public data only)."""
    try:
        throttle.NEARBY.check_and_hit(client_key(request.META))
    except RateLimited as error:
        response = JsonResponse({"detail": error.message}, status=429)
        response["Retry-After"] = str(error.retry_after)
        return response
    try:
        point = parse_lon_lat(request.GET)
    except InvalidParameter as error:
        return JsonResponse({"detail": "; ".join(sum(error.detail.values(), []))}, status=400)
    municipality = network.municipality_at(point)
    reports = intake.nearby_open_reports(point) if municipality else []
    return JsonResponse(
        {
            "municipality": f"{municipality.name}/{municipality.uf}" if municipality else None,
            "radius_m": intake.NEARBY_RADIUS_M,
            "days": intake.NEARBY_DAYS,
            "reports": [
                {**item, "follow_url": reverse("intake:follow", args=[item["protocol"]])}
                for item in intake.public_nearby(reports)
            ],
        }
    )


def _report_not_found(request, protocol: str, message: str = ""):
    return render(
        request,
        "fiscalization/intake/denuncia_nao_encontrada.html",
        {"protocol": protocol[:40], "message": message, "lookup_value": protocol[:40]},
        status=404 if not message else 400,
    )


@declare(DataScope.PUBLIC)
@require_safe
def report_lookup(request):
    """/denuncia/?protocolo=…: the protocol box of the home page and /denunciar/. With or
    without the dashes, any case: it goes to the follow-up page of that protocol."""
    if "protocolo" not in request.GET:
        # /denuncia/ typed or bookmarked without a protocol: the box that asks for it.
        return render(request, "fiscalization/intake/denuncia_buscar.html")
    raw = request.GET["protocolo"].strip()
    if not raw:
        return _report_not_found(request, "", "Informe o protocolo recebido ao denunciar.")
    protocol = intake.normalize_protocol(raw)
    if protocol is None:
        return _report_not_found(
            request,
            raw,
            f"“{raw[:40]}” não é um protocolo: ele tem o ano e oito letras ou números, como "
            "2026-ABCD-EFGH (os traços são opcionais).",
        )
    return redirect("intake:follow", protocol=protocol)


@declare(DataScope.PUBLIC)
@require_safe
def report_follow(request, protocol: str):
    """/denuncia/<protocol>/: public follow-up. Status, dates, category and the history of
    status changes; never the photos, the contact, the description or inspectors' notes."""
    # Typed in the address bar in any case, with or without the dashes.
    canonical = intake.normalize_protocol(protocol)
    report = (
        DumpingReport.objects.select_related("municipality", "duplicate_of")
        .defer("municipality__boundary")
        .filter(protocol=canonical or protocol.strip().upper())
        .first()
    )
    if report is None:
        return _report_not_found(request, protocol)
    context = {
        # The municipality the report went to: its name, its letterhead.
        **municipal.of(report.municipality).context(),
        "report": report,
        "history": intake.public_history(report),
        "nav": "denunciar",
    }
    return render(request, "fiscalization/intake/denuncia.html", context)


# --- inspectors ------------------------------------------------------------------------------


def _popup(report: DumpingReport) -> str:
    return str(
        format_html(
            '<div class="ctr-popup"><p class="ctr-popup-title"><a href="{}">{}</a></p>'
            "<dl><dt>Categoria</dt><dd>{}</dd><dt>Situação</dt><dd>{}</dd>"
            "<dt>Recebida em</dt><dd>{}</dd></dl></div>",
            reverse("intake:inspect-report", args=[report.pk]),
            report.protocol,
            report.get_category_display(),
            report.get_status_display(),
            timezone.localtime(report.created_at).strftime("%d/%m/%Y %H:%M"),
        )
    )


def _cell_size(queryset) -> float:
    """Degrees per cell: the matching reports' extent over CELLS_ACROSS, rounded to a tidy
    value (1, 2 or 5 × a power of ten) so that the grid does not jump between pages."""
    extent = queryset.order_by().aggregate(e=Extent("location"))["e"]
    if not extent:
        return 0.01
    span = max(extent[2] - extent[0], extent[3] - extent[1]) / CELLS_ACROSS
    span = max(span, MIN_CELL_DEG)
    power = 10 ** math.floor(math.log10(span))
    return next(f * power for f in (1, 2, 5, 10) if f * power >= span)


def _current_ibge(user) -> str | None:
    """The IBGE code of the municipality the user works in now."""
    current = jurisdiction_of(user).current_id
    return municipalities().filter(pk=current).values_list("ibge_code", flat=True).first()


@require_safe
@municipal_only
def inspect_index(request):
    """/fiscalizacao/: map and list of the reports of the municipality the user works in now,
    with the API's filters."""
    form = InspectorFilterForm(request.GET or None, user=request.user)
    status = 200
    ours = intake.base_queryset(request.user, current=True)
    if form.is_bound and not form.is_valid():
        status = 400
        queryset = DumpingReport.objects.none()
    else:
        query = form.query() if form.is_bound else intake.ReportQuery()
        try:
            queryset = intake.search_reports(query, ours)
        except intake.IntakeError as error:
            form.add_error(None, error.message)
            status = 400
            queryset = DumpingReport.objects.none()
    total = queryset.count()
    current_ibge = _current_ibge(request.user)
    outline = _outline(current_ibge)
    basins = public_layers.catchment_basins_geojson(timezone.localdate(), bounds.window(outline))
    cells, points, cell = [], [], None
    if total > MAP_POINT_LIMIT:
        cell = _cell_size(queryset)
        cells = intake.report_cells_for(queryset, cell)
    elif total:
        points = [
            intake_maps.ReportPoint(r.location.x, r.location.y, r.status, _popup(r))
            for r in queryset.select_related(None).only(
                "pk", "protocol", "location", "category", "status", "created_at"
            )
        ]
    the_map = intake_maps.inspection_map(outline, basins, points, cells, cell)
    listed = REPORT_LIST_ORDER.apply(queryset, request.GET)
    page = Paginator(listed, PAGE_SIZE).get_page(request.GET.get("pagina"))
    params = request.GET.copy()
    params.pop("pagina", None)
    api_params = params.copy()
    api_params.pop("ordem", None)
    if current_ibge:  # the API lists all of the user's municipalities: this page's one
        api_params["municipality"] = current_ibge
    context = {
        "nav": "fiscalizacao",
        "sort": REPORT_LIST_ORDER.headers(request.GET),
        "form": form,
        "map": render_parts(the_map),
        "total": total,
        "aggregated": bool(cells),
        "point_limit": MAP_POINT_LIMIT,
        "page": page,
        "query_string": params.urlencode(),
        "api_url": reverse("dumping-report-list")
        + (f"?{api_params.urlencode()}" if api_params else ""),
    }
    return render(request, "fiscalization/intake/fiscalizacao.html", context, status=status)


def _detail_page(request, report: DumpingReport, status=200, **forms):
    report = intake.base_queryset().get(pk=report.pk)
    photos = photos_with_distance(report)
    exif_points = [
        (
            p.exif_location.x,
            p.exif_location.y,
            f"Foto {n}: tirada a {p.distance_from_report_m:.0f} m do local informado",
        )
        for n, p in enumerate(photos, start=1)
        if p.exif_location is not None
    ]
    the_map = intake_maps.report_detail_map((report.location.x, report.location.y), exif_points)
    allowed = intake.allowed_statuses(report)
    # Reports to merge into: of the same municipality (a dumping across the border is the
    # other municipality's report).
    candidates = [
        r
        for r in intake.nearby_open_reports(report.location, days=365, exclude=report)
        if r.duplicate_of_id is None and r.municipality_id == report.municipality_id
    ]
    context = {
        "nav": "fiscalizacao",
        "report": report,
        "photos": photos,
        "events": [
            {
                "at": e.at,
                "actor": e.actor.get_username() if e.actor else "",
                "from_label": intake.STATUS_LABELS.get(e.from_status, ""),
                "to_label": intake.STATUS_LABELS.get(e.to_status, e.to_status),
                "changed": e.from_status != e.to_status,
                "note": e.note,
            }
            for e in report.events.select_related("actor")
        ],
        "duplicates": report.duplicates.only("pk", "protocol", "created_at").order_by("created_at"),
        "suggestions": intake.suggest_categories(report.location),
        "candidates": candidates,
        "radius_m": intake.NEARBY_RADIUS_M,
        "map": render_parts(the_map),
        "status_form": forms.get("status_form") or StatusForm(allowed=allowed),
        "merge_form": forms.get("merge_form") or MergeForm(),
        "category_form": forms.get("category_form")
        or CategoryForm(initial={"category": report.category}),
        "suspects_url": f"/fiscalizacao/denuncias/{report.pk}/suspeitos/",
    }
    return render(
        request, "fiscalization/intake/fiscalizacao_denuncia.html", context, status=status
    )


def _report(request, pk: int) -> DumpingReport:
    """The report, if of one of the user's municipalities (another's is a 404)."""
    return get_object_or_404(DumpingReport.objects.visible_to(request.user), pk=pk)


@require_safe
@municipal_only
def inspect_report(request, pk: int):
    report = _report(request, pk)
    audit.record(request, report, "Denúncia: página de inspeção")
    return _detail_page(request, report)


def _act(request, report, form, form_name: str, run, success: str):
    if not form.is_valid():
        return _detail_page(request, report, status=400, **{form_name: form})
    try:
        run(form.cleaned_data)
    except intake.IntakeError as error:
        add_to_form(form, error)
        return _detail_page(request, report, status=error.status, **{form_name: form})
    messages.success(request, success)
    return redirect("intake:inspect-report", pk=report.pk)


@require_POST
@municipal_only
def inspect_status(request, pk: int):
    report = _report(request, pk)
    form = StatusForm(request.POST, allowed=intake.allowed_statuses(report))
    return _act(
        request,
        report,
        form,
        "status_form",
        lambda data: intake.change_status(report, data["status"], request.user, data["note"]),
        "Situação alterada.",
    )


@require_POST
@municipal_only
def inspect_merge(request, pk: int):
    report = _report(request, pk)
    form = MergeForm(request.POST, user=request.user)
    return _act(
        request,
        report,
        form,
        "merge_form",
        lambda data: intake.merge_duplicate(report, data["into"], request.user, data["note"]),
        "Denúncia mesclada: agora é duplicata da original.",
    )


@require_POST
@municipal_only
def inspect_category(request, pk: int):
    report = _report(request, pk)
    form = CategoryForm(request.POST)
    return _act(
        request,
        report,
        form,
        "category_form",
        lambda data: intake.change_category(report, data["category"], request.user, data["note"]),
        "Categoria alterada.",
    )


@require_safe
@municipal_only
def photo(request, pk: int):
    """A report's photo, for the Núcleo and inspectors only (MEDIA_ROOT is never served
    publicly). The stored file has no metadata; its type is the one we encoded it in."""
    item = get_object_or_404(
        DumpingPhoto.objects.visible_to(request.user).select_related("report"), pk=pk
    )
    try:
        handle = item.image.open("rb")
    except (FileNotFoundError, OSError):
        raise Http404("O arquivo desta foto não foi encontrado.") from None
    response = FileResponse(
        handle,
        content_type=item.content_type,
        as_attachment=False,
        filename=f"{item.report.protocol}-{item.pk}.{item.extension}",
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Cache-Control"] = "private, max-age=3600"
    return response
