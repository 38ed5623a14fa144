"""The PGRCC pages: the generator's plan of a worksite (form prefilled by
the estimator, licensed transporters and destinations to choose, history), the Núcleo's queue
of submitted plans and its review (the estimator's figures beside the declared ones, approve
or return with a note), and the estimator's rates. Thin: generators.plans decides."""

from __future__ import annotations

import datetime
from decimal import Decimal

from django import forms
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone

import audit
from config.br import br_number
from config.br_forms import BRDecimalField
from ctr import roles
from ctr.models import Transporter, WorkKind, Worksite
from jurisdiction.access import DataScope, declare
from jurisdiction.scope import choices, jurisdiction_of
from pev_network import services as network
from pev_network.models import (
    Municipality,
    MunicipalParameters,
    ReceivingFacility,
    WasteClass,
    default_generation_rates,
    facility_kind_short,
    validate_generation_rates,
    waste_class_short,
)

from . import estimator, plans
from .comparison import worksite_comparison
from .models import PlanStatus, WastePlan

VOLUME = "volume_{}"
ACTIONS = {
    "estimate": "Preencher com a estimativa",
    "save": "Salvar rascunho",
    "submit": "Enviar ao Núcleo",
}


class IdsField(forms.TypedMultipleChoiceField):
    """Ids of transporters or facilities: the boxes offer the licensed ones, and an id that
    is not among them goes on to generators.plans, which says whose it is and why it is
    refused (art. 9 p.ú. I), rather than a bare "invalid choice"."""

    def __init__(self, **kwargs):
        super().__init__(
            coerce=int,
            empty_value=[],
            required=False,
            widget=forms.CheckboxSelectMultiple,
            **kwargs,
        )

    def valid_value(self, value) -> bool:
        return str(value).isdigit()


class PlanForm(forms.Form):
    action = forms.ChoiceField(choices=list(ACTIONS.items()), widget=forms.HiddenInput)
    transporters = IdsField(label="Transportadores")
    facilities = IdsField(label="Áreas de destino")

    def __init__(self, *args, transporters=(), facilities=(), **kwargs):
        super().__init__(*args, **kwargs)
        for waste_class in WasteClass:
            self.fields[VOLUME.format(waste_class.value)] = BRDecimalField(
                label=waste_class_short(waste_class.value), required=False, example="12,5"
            )
        self.fields["transporters"].choices = [(t.pk, str(t)) for t in transporters]
        self.fields["facilities"].choices = [
            (f.pk, f"{f.name} — {facility_kind_short(f.kind)}") for f in facilities
        ]

    def volume_fields(self):
        return [self[VOLUME.format(c)] for c in WasteClass.values]

    def plan_input(self) -> plans.PlanInput:
        data = self.cleaned_data
        return plans.PlanInput(
            volumes={c: data.get(VOLUME.format(c)) for c in WasteClass.values},
            transporter_ids=data["transporters"],
            facility_ids=data["facilities"],
        )

    def show(self, error: plans.PlanError) -> None:
        """Every reason of the refusal on its field (a volume's on its class)."""
        for name, text in error.errors:
            if name and name.startswith("volumes."):
                name = VOLUME.format(name.removeprefix("volumes."))
            self.add_error(name if name in self.fields else None, text)


def _forbidden(request):
    return render(request, "security/sem_acesso.html", status=403)


def _initial(plan: WastePlan | None, estimate: estimator.Estimate | None) -> dict:
    if plan is not None:
        initial = {VOLUME.format(v.waste_class): v.volume_m3 for v in plan.volumes.all()}
        initial["transporters"] = [t.pk for t in plan.transporters.all()]
        initial["facilities"] = [f.pk for f in plan.facilities.all()]
        return initial
    if estimate is not None:
        return {VOLUME.format(c.waste_class): c.volume_m3 for c in estimate.classes}
    return {}


def _history(worksite: Worksite):
    return (
        WastePlan.objects.filter(worksite=worksite)
        .prefetch_related("events__actor", "volumes")
        .order_by("-version")
    )


@declare(DataScope.SIDE)
def worksite_plan(request, pk: int):
    """/gerador/obras/<id>/pgrcc/: the generator's plan of its worksite. Another generator's
    worksite (or another municipality's, for the staff) is a 404; the staff who see it do not
    write its plan (403)."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    worksite = get_object_or_404(
        Worksite.objects.visible_to(request.user).select_related("generator"), pk=pk
    )
    if not plans.can_write(request.user, worksite):
        return _forbidden(request)
    day = timezone.localdate()
    plan = plans.latest(worksite)
    estimate = estimator.for_worksite(worksite)
    chosen = set(plan.transporters.values_list("pk", flat=True)) if plan else set()
    chosen_facilities = set(plan.facilities.values_list("pk", flat=True)) if plan else set()
    place = plans.worksite_municipality(worksite)
    options = {
        # Licensed in the worksite's municipality (art. 13, art. 9 p.ú. I).
        "transporters": plans.licensed_transporters(day, place),
        "facilities": list(plans.licensed_facilities(day)),
    }
    status = 200
    if request.method == "POST":
        form = PlanForm(request.POST, **options)
        if not form.is_valid():
            status = 400
        elif form.cleaned_data["action"] == "estimate":
            if estimate is None:
                form.add_error(None, "Informe a área construída e o tipo de obra da obra.")
                status = 400
            else:
                data = request.POST.copy()
                for item in estimate.classes:
                    data[VOLUME.format(item.waste_class)] = br_number(
                        item.volume_m3, grouping=False
                    )
                form = PlanForm(data, **options)
                form.is_valid()
        else:
            submit = form.cleaned_data["action"] == "submit"
            try:
                plans.save(worksite, request.user, form.plan_input(), submit=submit)
            except plans.PlanError as error:
                form.show(error)
                status = error.status
            else:
                messages.success(
                    request,
                    "PGRCC enviado ao Núcleo para análise."
                    if submit
                    else "Rascunho do PGRCC salvo.",
                )
                return redirect("generators:worksite-plan", pk=worksite.pk)
    else:
        form = PlanForm(initial=_initial(plan, estimate), **options)
    context = {
        "worksite": worksite,
        "plan": plan,
        "in_force": plans.in_force(worksite),
        "editable": plan is None or plan.status != PlanStatus.SUBMITTED,
        "new_version": plan is not None and plan.status not in plans.EDITABLE,
        "estimate": estimate,
        "form": form,
        "unlicensed": _unlicensed(chosen, chosen_facilities, options, day, place),
        "versions": _history(worksite),
    }
    return render(request, "generators/plans/worksite_plan.html", context, status=status)


def _unlicensed(transporter_ids, facility_ids, options, day, place) -> list[str]:
    """Why the plan's agents that are no longer licensed today (the transporters in the
    worksite's municipality, `place`) cannot stay in it."""
    offered = {t.pk for t in options["transporters"]}
    offered_facilities = {f.pk for f in options["facilities"]}
    reasons = [
        plans.transporter_refusal(t, day, place)
        for t in Transporter.objects.filter(pk__in=set(transporter_ids) - offered)
    ]
    reasons += [
        plans.facility_refusal(f, day)
        for f in ReceivingFacility.objects.prefetch_related("licenses").filter(
            pk__in=set(facility_ids) - offered_facilities
        )
    ]
    return [r for r in reasons if r]


# --- the Núcleo -------------------------------------------------------------------------------


@roles.municipal_only
def plan_queue(request):
    """/nucleo/pgrcc/: the plans waiting for a decision, oldest first, and the latest
    decisions, of the municipality the user works in now."""
    of_municipality = WastePlan.objects.visible_to(request.user, current=True)
    waiting = (
        of_municipality.filter(status=PlanStatus.SUBMITTED)
        .select_related("worksite__generator")
        .order_by("submitted_at", "pk")
    )
    decided = (
        of_municipality.filter(decided_at__isnull=False)
        .select_related("worksite__generator", "decided_by")
        .order_by("-decided_at")[:20]
    )
    return render(request, "generators/plans/queue.html", {"waiting": waiting, "decided": decided})


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(
        label="Decisão",
        choices=[("approve", "Aprovar"), ("return", "Devolver para ajustes")],
        widget=forms.RadioSelect,
    )
    note = forms.CharField(
        label="Parecer",
        required=False,
        max_length=4000,
        widget=forms.Textarea({"rows": 4}),
        help_text="Obrigatório ao devolver: diga o que o gerador deve ajustar.",
    )


@roles.municipal_only
def plan_review(request, pk: int):
    """/nucleo/pgrcc/<id>/: the plan, the estimator's figures beside the declared ones, the
    decision (the Núcleo's only, art. 20) and the history."""
    plan = get_object_or_404(
        WastePlan.objects.visible_to(request.user).select_related(
            "worksite__generator", "worksite__municipality"
        ),
        pk=pk,
    )
    worksite = plan.worksite
    status = 200
    if request.method == "POST":
        if not plans.is_nucleo(request.user, worksite.municipality_id):
            return _forbidden(request)
        form = DecisionForm(request.POST)
        if not form.is_valid():
            status = 400
        else:
            note = form.cleaned_data["note"]
            try:
                if form.cleaned_data["decision"] == "approve":
                    plans.approve(plan, request.user, note)
                    messages.success(request, f"PGRCC v{plan.version} aprovado.")
                else:
                    plans.request_changes(plan, request.user, note)
                    messages.success(request, f"PGRCC v{plan.version} devolvido ao gerador.")
            except plans.PlanError as error:
                for name, text in error.errors:
                    form.add_error(name if name in form.fields else None, text)
                status = error.status
            else:
                return redirect("generators:plan-review", pk=plan.pk)
    else:
        form = DecisionForm()
    audit.record(request, worksite, "PGRCC: análise do Núcleo")
    estimate = estimator.for_worksite(worksite)
    declared = {v.waste_class: v.volume_m3 for v in plan.volumes.all()}
    rows = [
        {
            "waste_class": c,
            "declared": declared.get(c),
            "estimated": estimate.of_class(c) if estimate else None,
        }
        for c in WasteClass.values
    ]
    context = {
        "plan": plan,
        "worksite": worksite,
        "rows": rows,
        "estimate": estimate,
        "declared_total": sum(declared.values(), Decimal(0)),
        "form": form,
        "can_decide": plans.is_nucleo(request.user, worksite.municipality_id)
        and plan.status == PlanStatus.SUBMITTED,
        "day": timezone.localdate(),
        "refusals": _unlicensed(
            plan.transporters.values_list("pk", flat=True),
            plan.facilities.values_list("pk", flat=True),
            {"transporters": [], "facilities": []},
            timezone.localdate(),
            plans.worksite_municipality(worksite),
        )
        if plan.status == PlanStatus.SUBMITTED
        else [],
        "versions": _history(worksite),
        "comparison": worksite_comparison(worksite),
        # Each transporter with its licence in the worksite's municipality (art. 13).
        "transporters": [
            (t, plans.licence_number(t, worksite)) for t in plan.transporters.order_by("name")
        ],
    }
    return render(request, "generators/plans/review.html", context, status=status)


# --- the estimator's rates --------------------------------------------------------------------

RATE = "rate_{}_{}"


class RatesForm(forms.Form):
    """m³ per m² for each kind of work and class (pev_network.MunicipalParameters.
    waste_generation_rates); every cell required, so an empty form changes nothing."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for kind in WorkKind:
            for waste_class in WasteClass:
                self.fields[RATE.format(kind.value, waste_class.value)] = BRDecimalField(
                    label=f"{kind.label}: {waste_class_short(waste_class.value)}",
                    example="0,0925",
                )

    def rows(self):
        return [
            (kind.label, [self[RATE.format(kind.value, c)] for c in WasteClass.values])
            for kind in WorkKind
        ]

    def clean(self):
        data = super().clean()
        if not self.errors:
            try:
                validate_generation_rates(self.rates())
            except ValidationError as error:
                self.add_error(None, error)
        return data

    def rates(self) -> dict:
        return {
            kind: {
                c: str(self.cleaned_data[RATE.format(kind, c)].normalize())
                for c in WasteClass.values
            }
            for kind in WorkKind.values
        }


def _rates_initial(parameters: MunicipalParameters) -> dict:
    return {
        RATE.format(kind, c): parameters.generation_rate(kind, c)
        for kind in WorkKind.values
        for c in WasteClass.values
    }


def _rates_start(municipality: Municipality, today: datetime.date) -> datetime.date:
    """The day new rates start: today, in a new set of the municipality's parameters; when a
    set started today already (rates saved earlier today), tomorrow: a set in force is never
    changed (MunicipalParameters.clean), and a set that has not started yet may be."""
    started_today = municipality.parameter_sets.filter(valid_from=today).exists()
    return today + datetime.timedelta(days=1) if started_today else today


@roles.municipal_only
def plan_rates(request):
    """/nucleo/pgrcc/indices/: the estimator's rates of one of the user's municipalities (the
    one it works in now unless it asks for another of its own); its Núcleo edits."""
    municipalities = list(choices(request.user).only("pk", "name", "uf"))
    if not municipalities:
        return render(request, "generators/plans/rates.html", {"municipality": None})
    chosen = request.POST.get("municipio") or request.GET.get("municipio")
    if chosen:
        municipality = next((m for m in municipalities if str(m.pk) == str(chosen)), None)
        if municipality is None:  # not one of the user's: as if it did not exist
            raise Http404
    else:
        current = jurisdiction_of(request.user).current_id
        municipality = next((m for m in municipalities if m.pk == current), municipalities[0])
    municipality = Municipality.objects.defer("boundary").get(pk=municipality.pk)
    today = timezone.localdate()
    status = 200
    can_edit = plans.is_nucleo(request.user, municipality.pk)
    if request.method == "POST":
        if not can_edit:
            return _forbidden(request)
        form = RatesForm(request.POST)
        if form.is_valid():
            start = _rates_start(municipality, today)
            network.parameters_from(municipality, start, waste_generation_rates=form.rates())
            messages.success(
                request, f"Índices de {municipality} salvos: valem a partir de {start:%d/%m/%Y}."
            )
            return redirect(f"{request.path}?municipio={municipality.pk}")
        status = 400
    else:
        # The figures a save would change: today's, or those saved earlier today.
        shown = municipality.parameters_on(_rates_start(municipality, today))
        form = RatesForm(initial=_rates_initial(shown))
    defaults = default_generation_rates()
    context = {
        "municipality": municipality,
        "municipalities": municipalities,
        "form": form,
        "can_edit": can_edit,
        "classes": [waste_class_short(c) for c in WasteClass.values],
        "defaults": [
            (kind.label, [Decimal(defaults[kind.value][c]) for c in WasteClass.values])
            for kind in WorkKind
        ],
    }
    return render(request, "generators/plans/rates.html", context, status=status)
