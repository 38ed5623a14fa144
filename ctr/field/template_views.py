"""The transporter's CTR templates on the web: the list, a template from
scratch or edited, "salvar como modelo" from a CTR, and the short confirmation (day and
volumes) that issues from one. Issuing posts to the issue form itself (ctr.views.ctr_new with
?modelo=): one form, one path through the rules; a refusal shows that whole form, filled in,
with every finding beside its field."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from config.errors import DomainError, add_to_form

from .. import services
from ..forms import FINDING_FIELDS, CTRForm, WasteFormSet
from ..models import CTR
from ..views import render_detail, transporter_required
from . import templates as ctr_templates

TEMPLATE_FIELDS = {**FINDING_FIELDS, "name": "name"}


class TemplateForm(CTRForm):
    """The issue form without its day, plus the template's name."""

    name = forms.CharField(
        label="Nome do modelo",
        max_length=80,
        help_text="Como o motorista vai reconhecê-lo: a obra e o destino, por exemplo.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for unasked in ("transport_date", "generator_name_choice", "generator_name_offered"):
            del self.fields[unasked]
        self.order_fields(["name"])

    def to_data(self, waste) -> ctr_templates.TemplateData:
        data = self.cleaned_data
        equipment = data.get("equipment")
        facility = data.get("destination_facility")
        return ctr_templates.TemplateData(
            name=data["name"],
            generator=services.GeneratorData(data["generator_name"], data["generator_document"]),
            worksite=services.WorksiteData(
                data["worksite_address"], self.origin(), data.get("worksite_neighbourhood", "")
            ),
            destination=self.destination(),
            waste=waste,
            vehicle_plate=data["vehicle"].plate,
            equipment_code=equipment.code if equipment else "",
            destination_facility_id=facility.pk if facility else None,
        )


class SaveAsTemplateForm(forms.Form):
    name = forms.CharField(
        label="Nome do modelo",
        max_length=80,
        error_messages={"required": "Informe o nome do modelo."},
    )


def _template(request, pk: int):
    # Another transporter's template is not found (404), not forbidden: it does not exist
    # for them.
    return get_object_or_404(ctr_templates.of(request.transporter), pk=pk)


@require_safe
@transporter_required
def template_list(request):
    return render(
        request,
        "ctr/templates/list.html",
        {"nav": "ctrs", "section": "templates", "items": ctr_templates.of(request.transporter)},
    )


def _edit(request, template=None):
    transporter = request.transporter
    if request.method == "POST":
        form = TemplateForm(request.POST, transporter=transporter)
        formset = WasteFormSet(request.POST, prefix="waste")
    else:
        initial, waste = ctr_templates.form_initial(template) if template else ({}, None)
        if template:
            initial["name"] = template.name
        form = TemplateForm(transporter=transporter, initial=initial)
        formset = WasteFormSet(prefix="waste", initial=waste)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid() and formset.is_valid():
            try:
                saved = ctr_templates.save(
                    transporter, request.user, form.to_data(formset.lines()), template
                )
            except DomainError as error:
                status = error.status if error.status in (400, 409) else 400
                add_to_form(form, error, TEMPLATE_FIELDS)
            else:
                messages.success(request, f"Modelo “{saved.name}” salvo.")
                return redirect("ctr_web:template-list")
    return render(
        request,
        "ctr/templates/form.html",
        {
            "nav": "ctrs",
            "section": "templates",
            "form": form,
            "formset": formset,
            "template": template,
            "areas": {},
        },
        status=status,
    )


@require_http_methods(["GET", "HEAD", "POST"])
@transporter_required
def template_new(request):
    return _edit(request)


@require_http_methods(["GET", "HEAD", "POST"])
@transporter_required
def template_edit(request, pk: int):
    return _edit(request, _template(request, pk))


@require_POST
@transporter_required
def template_delete(request, pk: int):
    template = _template(request, pk)
    ctr_templates.delete(template)
    messages.success(request, f"Modelo “{template.name}” excluído.")
    return redirect("ctr_web:template-list")


@require_safe
@transporter_required
def template_issue(request, pk: int):
    """The driver's short form: the day and the volumes; the rest of the template rides in
    hidden fields of the issue form, which the post goes to."""
    template = _template(request, pk)
    initial, waste = ctr_templates.form_initial(template)
    form = CTRForm(transporter=request.transporter, initial=initial)
    formset = WasteFormSet(prefix="waste", initial=waste)
    return render(
        request,
        "ctr/templates/issue.html",
        {
            "nav": "ctrs",
            "section": "new",
            "template": template,
            "form": form,
            "lines": list(
                zip(formset.initial_forms, ctr_templates.waste_lines(template), strict=True)
            ),
            "formset": formset,
            "confirm": ("transport_date",),
        },
    )


@require_POST
@transporter_required
def ctr_save_as_template(request, number: str):
    """A refused name comes back on the CTR's page, typed as it was, the reason beside it."""
    ctr = get_object_or_404(
        CTR.objects.filter(transporter=request.transporter).select_related(
            "generator", "worksite", "vehicle", "equipment"
        ),
        number=number,
    )
    form = SaveAsTemplateForm(request.POST, prefix="modelo")
    if not form.is_valid():
        return render_detail(request, ctr, template_form=form, status=400)
    try:
        template = ctr_templates.from_ctr(ctr, request.user, form.cleaned_data["name"])
    except DomainError as error:
        form.add_error("name", error.message)
        return render_detail(request, ctr, template_form=form, status=error.status)
    messages.success(request, f"Modelo “{template.name}” salvo a partir do {ctr.number}.")
    return redirect("ctr_web:template-list")
