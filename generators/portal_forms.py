"""The filters of the generator's CTR list and map: ctr's filters (status, transport period,
plate, number) plus the generator's own worksites and the CTRs awaiting its confirmation."""

from __future__ import annotations

from django import forms

from ctr.forms import CTRFilterForm
from ctr.models import Generator

from . import confirmation


class GeneratorCTRFilterForm(CTRFilterForm):
    worksite = forms.TypedChoiceField(label="Obra", required=False, coerce=int, empty_value=None)
    pending = forms.BooleanField(label="Só os que aguardam a minha confirmação", required=False)

    field_order = ["status", "worksite", "date_from", "date_to"]

    def __init__(self, *args, generator: Generator, **kwargs):
        super().__init__(*args, **kwargs)
        # Only its worksites: another's id in the query string is an invalid choice (400),
        # never a way to learn that the worksite exists.
        sites = generator.worksites.order_by("address", "pk").values_list("pk", "address")
        self.fields["worksite"].choices = [("", "Todas"), *sites]

    def apply(self, queryset):
        queryset = super().apply(queryset)
        data = getattr(self, "cleaned_data", {})
        if data.get("worksite"):
            queryset = queryset.filter(worksite_id=data["worksite"])
        if data.get("pending"):
            queryset = confirmation.awaiting(queryset)
        return queryset
