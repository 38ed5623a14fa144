"""The transporter's fleet pages: its vehicles and equipment, added through ctr.fleet,
deactivated and reactivated."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from config.errors import add_to_form

from . import fleet
from .forms import EquipmentForm, VehicleForm
from .models import Equipment, Vehicle
from .views import transporter_required


def _fleet_page(request, form_class, add, section: str, what: str, order: str):
    """The list of the transporter's vehicles or equipment and the form that adds one; `add`
    (ctr.fleet) holds the rules and writes, scoped to the transporter of the request."""
    transporter = request.transporter
    model = form_class.model
    status = 200
    if request.method == "POST":
        form = form_class(request.POST)
        if form.is_valid():
            try:
                item = add(transporter, **form.cleaned_data)
            except fleet.FleetError as error:
                add_to_form(form, error)
            else:
                label = item.code if model is Equipment else str(item)
                messages.success(request, f"{what} {label} cadastrado.")
                return redirect(f"ctr_web:{section}")
        status = 400
    else:
        form = form_class()
    return render(
        request,
        f"ctr/{section}.html",
        {
            "nav": "ctrs",
            "section": section,
            "form": form,
            "items": model.objects.filter(transporter=transporter).order_by("-active", order),
        },
        status=status,
    )


@transporter_required
def vehicles(request):
    return _fleet_page(request, VehicleForm, fleet.add_vehicle, "vehicles", "Veículo", "plate")


@transporter_required
def equipment(request):
    return _fleet_page(
        request, EquipmentForm, fleet.add_equipment, "equipment", "Equipamento", "code"
    )


def _set_active(request, model, pk: int, active: bool, redirect_to: str, what: str):
    item = get_object_or_404(model, pk=pk, transporter=request.transporter)
    if item.active != active:
        item.active = active
        item.save(update_fields=["active"])
    label = item.code if isinstance(item, Equipment) else str(item)
    state = "reativado" if active else "desativado"
    messages.success(request, f"{what} {label} {state}.")
    return redirect(redirect_to)


@require_POST
@transporter_required
def vehicle_active(request, pk: int, active: bool):
    return _set_active(request, Vehicle, pk, active, "ctr_web:vehicles", "Veículo")


@require_POST
@transporter_required
def equipment_active(request, pk: int, active: bool):
    return _set_active(request, Equipment, pk, active, "ctr_web:equipment", "Equipamento")
