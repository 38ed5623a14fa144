import datetime

from django import forms
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from ctr.models import CTR, CTRWasteClass, Transporter
from jurisdiction.scope import jurisdiction_of
from pev_network.models import ReceivingFacility

DEFAULT_PERIOD_DAYS = 90
MAX_PERIOD_DAYS = 3 * 366


class NucleoFilterForm(forms.Form):
    date_from = forms.DateField(
        label="De",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
    )
    date_to = forms.DateField(
        label="Até",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
    )
    waste_class = forms.ChoiceField(
        label="Classe", required=False, choices=[("", "Todas")] + list(CTRWasteClass.choices)
    )
    transporter = forms.ModelChoiceField(
        label="Transportador",
        required=False,
        queryset=Transporter.objects.order_by("name"),
        empty_label="Todos",
    )
    facility = forms.ModelChoiceField(
        label="Área de destino",
        required=False,
        queryset=ReceivingFacility.objects.defer("area").order_by("kind", "name"),
        empty_label="Todas",
    )

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._show_applied_period()
        # The municipality is the one the user works in (picked at /municipio/, one
        # place for every page); the lists follow it: a state's every transporter and facility
        # would weigh hundreds of kilobytes of <option>s, and another's are not the user's.
        self.municipality_id = jurisdiction_of(user).current_id
        municipality_id = self.municipality_id if self.municipality_id is not None else -1
        # Licensed there, or carried from there: EXISTS, not a join with DISTINCT (over a
        # million CTRs the join sorted on disk for seconds).
        licensed = Transporter.objects.in_municipalities([municipality_id]).values("pk")
        carried = CTR.objects.filter(municipality_id=municipality_id, transporter=OuterRef("pk"))
        self.fields["transporter"].queryset = Transporter.objects.filter(
            Q(pk__in=licensed) | Exists(carried)
        ).order_by("name")
        self.fields["facility"].queryset = (
            ReceivingFacility.objects.defer("area")
            .filter(municipality_id=municipality_id)
            .order_by("kind", "name")
        )

    def _show_applied_period(self) -> None:
        """The date fields show the period the page applies, also when it is the default
        (nothing asked, or a date left empty): never empty fields above a filtered map."""
        today = timezone.localdate()
        if not self.is_bound:
            defaults = self.clean_defaults()
            self.initial.setdefault("date_from", defaults["date_from"])
            self.initial.setdefault("date_to", defaults["date_to"])
            return
        data = self.data.copy()
        date_to = self._parsed("date_to")
        if not data.get("date_to"):
            date_to = today
            data["date_to"] = today.isoformat()
        if not data.get("date_from") and date_to is not None:
            data["date_from"] = (date_to - datetime.timedelta(days=DEFAULT_PERIOD_DAYS)).isoformat()
        self.data = data

    def _parsed(self, name: str) -> datetime.date | None:
        try:
            return self.fields[name].clean(self.data.get(name))
        except forms.ValidationError:
            return None

    def clean_defaults(self) -> dict:
        """The filter when nothing was asked: the last 90 days, everything."""
        today = timezone.localdate()
        return {"date_from": today - datetime.timedelta(days=DEFAULT_PERIOD_DAYS), "date_to": today}

    def clean(self):
        data = super().clean()
        today = timezone.localdate()
        date_to = data.get("date_to") or today
        date_from = data.get("date_from") or date_to - datetime.timedelta(days=DEFAULT_PERIOD_DAYS)
        if date_from > date_to:
            raise forms.ValidationError("A data inicial é posterior à final.")
        if (date_to - date_from).days > MAX_PERIOD_DAYS:
            raise forms.ValidationError("Escolha um período de até três anos.")
        data["date_from"], data["date_to"] = date_from, date_to
        return data
