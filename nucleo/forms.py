import datetime

from django import forms
from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from ctr.models import CTR, CTRWasteClass, Transporter
from pev_network.models import Municipality, ReceivingFacility

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
    municipality = forms.ModelChoiceField(
        label="Município",
        required=False,
        empty_label="Padrão",
        queryset=Municipality.objects.none(),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Only municipalities with something to show: a state has 645. EXISTS, not a join
        # with DISTINCT: over a million CTRs the join sorted on disk for seconds.
        facilities = ReceivingFacility.objects.filter(municipality=OuterRef("pk"))
        ctrs = CTR.objects.filter(municipality=OuterRef("pk"))
        self.fields["municipality"].queryset = (
            Municipality.objects.defer("boundary")
            .filter(Q(Exists(facilities)) | Q(Exists(ctrs)))
            .order_by("name")
        )
        # The empty choice is the default municipality: say which.
        default = (
            Municipality.objects.defer("boundary")
            .filter(ibge_code=settings.DEFAULT_MUNICIPALITY_IBGE)
            .first()
        )
        if default is not None:
            self.fields["municipality"].empty_label = f"{default.name}/{default.uf} (padrão)"
        self._show_applied_period()
        # The other lists follow the municipality shown: a state's every transporter and
        # facility would weigh hundreds of kilobytes of <option>s.
        municipality_id = self._municipality_id()
        if municipality_id is not None:
            # Licensed there (issue 24: a licence per municipality), or with CTRs there.
            self.fields["transporter"].queryset = Transporter.objects.filter(
                Transporter.objects.municipal_q([municipality_id])
                | Exists(
                    CTR.objects.filter(municipality_id=municipality_id, transporter=OuterRef("pk"))
                )
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

    def _municipality_id(self) -> int | None:
        raw = self.data.get("municipality") if self.is_bound else None
        if raw and str(raw).isdigit():
            return int(raw)
        default = (
            Municipality.objects.filter(ibge_code=settings.DEFAULT_MUNICIPALITY_IBGE)
            .values_list("pk", flat=True)
            .first()
        )
        return default

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
