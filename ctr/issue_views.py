"""The transporter's ways to issue: the issue form (every finding beside its field, the map of
the licensed network) and the CSV import with its example file. The form's pieces serve the
operator's onward form too (ctr.onward_views)."""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_safe

from config import csv_reader
from config.br import br_number
from config.csv_safety import csv_response
from maps import services as maps
from pev_network.models import ReceivingFacility

from . import rules, services
from .bulk import csv_format, csv_import
from .errors import CTRError, RuleViolation
from .field import templates as ctr_templates
from .forms import FINDING_FIELDS, WASTE_LINE_RE, CTRForm, ImportForm, WasteFormSet
from .models import CTR
from .views import transporter_required

FORM_LABELS = {
    "transport_date": "Data do transporte",
    "vehicle": "Veículo",
    "equipment": "Equipamento",
    "generator_name": "Nome do gerador",
    "generator_document": "CPF/CNPJ do gerador",
    "worksite_address": "Endereço da obra",
    "worksite_neighbourhood": "Bairro",
    "origin_lon": "Longitude da origem",
    "origin_lat": "Latitude da origem",
    "destination_lon": "Longitude do destino",
    "destination_lat": "Latitude do destino",
    "destination_facility": "Área de destino",
    "transporter": "Transportador",
}


def _rule_message(finding: rules.Finding):
    """The finding's message and, linked to the catalogue, its rule and article."""
    return format_html(
        '{} <a class="rule-ref" href="{}#{}">{} · {}</a>',
        finding.message,
        reverse("ctr_web:rules"),
        finding.code,
        finding.code,
        finding.article,
    )


def _place_error(
    form, waste_forms, areas, top, field_name: str | None, message, fields=FINDING_FIELDS
):
    """Put one message beside the form field its `field_name` (an API name) concerns;
    `fields` maps those names to the form's, and what the form has no field for goes on top."""
    field_name = field_name or ""
    target = fields.get(field_name)
    line = WASTE_LINE_RE.match(field_name)
    if line and int(line.group(1)) < len(waste_forms):
        waste_forms[int(line.group(1))].add_error("waste_class", message)
    elif target in ("origin", "destination", "waste"):
        areas[target].append(message)
    elif target in form.fields:
        form.add_error(target, message)
    else:
        top.append(message)


@dataclass
class IssueAttempt:
    """What an issue form's post came to: the CTR, or the page's status and every problem in
    its place (`areas`: the origin, destination and waste boxes; `top`: above the form)."""

    ctr: CTR | None = None
    status: int = 200
    areas: dict = field(default_factory=lambda: defaultdict(list))
    top: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    def context(self, form, formset) -> dict:
        return {
            "form": form,
            "formset": formset,
            "areas": dict(self.areas),
            "summary": _error_summary(form, formset, self.areas, self.top)
            if self.status != 200
            else [],
            "warnings": self.warnings,
        }


def issue_forms(request, make_form, make_formset):
    """The issue form and its waste lines, bound to the post (unbound on GET and HEAD); None
    for another method."""
    if request.method == "POST":
        return make_form(request.POST), make_formset(request.POST)
    if request.method in ("GET", "HEAD"):
        return make_form(), make_formset()
    return None


def try_issue(request, form, formset, act, fields=FINDING_FIELDS) -> IssueAttempt:
    """On a post, validate the form and its waste lines and run `act(warnings)` (issue the
    CTR, or return None when the form must ask something first, with what it found among the
    warnings); a refusal puts every finding beside its field (errors, through `fields`) or
    among the warnings."""
    attempt = IssueAttempt()
    if request.method != "POST":
        return attempt
    attempt.status = 400
    form_ok = form.is_valid()
    if not (formset.is_valid() and form_ok):
        return attempt
    place = functools.partial(
        _place_error, form, formset.filled_forms(), attempt.areas, attempt.top, fields=fields
    )
    try:
        attempt.ctr = act(attempt.warnings)
    except RuleViolation as violation:
        attempt.status = 422
        for finding in violation.findings:
            if finding.severity == rules.Severity.ERROR:
                place(finding.field, _rule_message(finding))
            else:
                attempt.warnings.append(_rule_message(finding))
    except CTRError as error:
        attempt.status = error.status if error.status in (400, 409, 422) else 400
        place(error.field, error.message)
    return attempt


def _home_ibge(transporter) -> str:
    """The municipality the issue form's map opens on: the transporter's first licence's."""
    home = transporter.home_municipality()
    return home.ibge_code if home else settings.DEFAULT_MUNICIPALITY_IBGE


def map_context(ibge_code: str) -> dict:
    """The issue forms' map of the licensed network around a municipality (its IBGE code)."""
    destination_map = maps.ctr_form_map(ibge_code)
    return {
        "map": destination_map.parts,
        "facilities": destination_map.facilities,
        "facility_points": destination_map.facility_points,
        "legend": destination_map.legend,
    }


def _error_summary(form, formset, areas, top) -> list[dict]:
    """Every problem of the submission, each linked to its field (for the box at the top)."""
    summary = [{"anchor": "", "label": "", "message": m} for m in top]
    summary += [{"anchor": "", "label": "", "message": m} for m in form.non_field_errors()]
    for name, errors in form.errors.items():
        if name == "__all__":
            continue
        for message in errors:
            summary.append(
                {"anchor": f"id_{name}", "label": FORM_LABELS.get(name, name), "message": message}
            )
    for area, anchor, label in (
        ("origin", "origem", "Origem"),
        ("destination", "destino", "Destino"),
    ):
        summary += [{"anchor": anchor, "label": label, "message": m} for m in areas[area]]
    waste_messages = list(formset.non_form_errors()) + areas["waste"]
    summary += [{"anchor": "residuos", "label": "Resíduos", "message": m} for m in waste_messages]
    for index, errors in enumerate(formset.errors):
        for name, messages_ in errors.items():
            label = f"Resíduo {index + 1}"
            for message in messages_:
                summary.append(
                    {"anchor": f"id_waste-{index}-{name}", "label": label, "message": message}
                )
    return summary


@transporter_required
def ctr_new(request):
    transporter = request.transporter
    # CTR templates: ?modelo=<id> fills the form from one of the transporter's templates.
    template, initial, waste = ctr_templates.requested(transporter, request.GET.get("modelo"))
    forms_ = issue_forms(
        request,
        lambda *data: CTRForm(*data, transporter=transporter, initial=initial),
        lambda *data: WasteFormSet(*data, prefix="waste", initial=None if data else waste),
    )
    if forms_ is None:
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    form, formset = forms_

    def act(warnings: list):
        issue_request = form.to_request(formset.lines())
        registered = services.registered_generator_name(issue_request.generator)
        name = form.generator_name_to_use(registered)
        if name is None:
            # The document is registered under another name: ask which one goes on the CTR,
            # and say now what else the rules find, so that one more submission is enough.
            form.ask_generator_name(registered)
            _, findings = services.check(transporter, issue_request)
            if rules.has_errors(findings):
                raise RuleViolation(findings)
            warnings.extend(_rule_message(f) for f in findings)
            return None
        issue_request.generator.name = name
        return services.issue(transporter, request.user, issue_request)

    attempt = try_issue(request, form, formset, act)
    if attempt.ctr is not None:
        messages.success(request, f"{attempt.ctr.number} emitido.")
        return redirect("ctr_web:ctr-detail", number=attempt.ctr.number)
    context = {
        "nav": "ctrs",
        "section": "new",
        **attempt.context(form, formset),
        "has_fleet": form.fields["vehicle"].queryset.exists(),
        **map_context(_home_ibge(transporter)),
        # The templates come first on a fresh form: a repeated load in one tap.
        "ctr_templates": ctr_templates.of(transporter) if not (template or form.is_bound) else (),
        "ctr_template": template,
    }
    return render(request, "ctr/ctr_form.html", context, status=attempt.status)


# --- transporter: CSV import -----------------------------------------------------------------


@transporter_required
def ctr_import(request):
    report = None
    file_error = ""
    file_rows = ()
    status = 200
    if request.method == "POST":
        form = ImportForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                # Refused before it is read into memory.
                csv_reader.check_size(upload.size)
                data = upload.read(csv_reader.MAX_BYTES + 1)
                report = csv_import.import_ctrs(
                    data,
                    request.transporter,
                    request.user,
                    dry_run=form.cleaned_data["dry_run"],
                )
            except csv_reader.CSVFileError as error:
                file_error = error.message
                file_rows = error.rows  # the rows that refuse the whole file, if any
                status = error.status
        else:
            status = 400
    elif request.method in ("GET", "HEAD"):
        form = ImportForm()
    else:
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    facilities = (
        ReceivingFacility.objects.licensed_on(timezone.localdate())
        .defer("area")
        .order_by("kind", "name")
    )
    return render(
        request,
        "ctr/ctr_import.html",
        {
            "nav": "ctrs",
            "section": "import",
            "form": form,
            "report": report,
            "file_error": file_error,
            "file_rows": file_rows,
            "columns": [
                {
                    "name": name,
                    "portuguese": csv_format.PORTUGUESE_NAMES[name],
                    "help": csv_format.COLUMN_HELP[name],
                    "required": name in csv_format.REQUIRED_COLUMNS,
                }
                for name in csv_format.COLUMNS
            ],
            "max_rows": br_number(csv_reader.MAX_ROWS),
            "max_mb": csv_reader.MAX_BYTES // (1024 * 1024),
            "facilities": facilities,
        },
        status=status,
    )


@require_safe
@transporter_required
def ctr_import_example(request):
    # The importer drops the BOM csv_response puts for Excel.
    return csv_response(
        "exemplo-ctrs.csv",
        *csv_format.example_table(
            csv_import.example_rows(request.transporter, timezone.localdate())
        ),
    )
