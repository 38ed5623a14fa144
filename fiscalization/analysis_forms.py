"""Forms of the analysis pages: hotspots, suspects, roadside check (pt-BR messages)."""

from __future__ import annotations

import datetime

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone

from config.br_forms import BRFloatField
from ctr.documents import normalize_plate
from jurisdiction.scope import jurisdiction_of

from . import hotspots, suspects

MAX_SINCE_DAYS = 5 * 365


def _date_input():
    return forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d")


class HotspotForm(forms.Form):
    """The hotspots of the municipality the user works in now (another is chosen at
    /municipio/)."""

    eps_m = BRFloatField(
        label="Raio (m)",
        min_value=1,
        max_value=5000,
        required=False,
        help_text="Distância máxima entre denúncias vizinhas do mesmo ponto.",
    )
    min_points = forms.IntegerField(
        label="Mínimo de denúncias", min_value=2, max_value=1000, required=False
    )
    since = forms.DateField(label="Desde", required=False, widget=_date_input())
    until = forms.DateField(label="Até", required=False, widget=_date_input())

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        self.fields["eps_m"].widget.attrs.update(placeholder=f"{hotspots.DEFAULT_EPS_M:g}")
        self.fields["min_points"].widget.attrs.update(placeholder=hotspots.DEFAULT_MIN_POINTS)

    def clean(self):
        data = super().clean()
        today = timezone.localdate()
        since, until = data.get("since"), data.get("until")
        if since and since < today - datetime.timedelta(days=MAX_SINCE_DAYS):
            self.add_error("since", "Escolha uma data dos últimos cinco anos.")
        if since and until and until < since:
            self.add_error("until", "A data final é anterior à inicial.")
        return data

    def query(self) -> hotspots.HotspotQuery:
        """The query of a valid form, in the municipality the user works in now (none: no
        hotspot at all, never every municipality's)."""
        data = self.cleaned_data if self.is_bound else {}
        current = jurisdiction_of(self.user).current_id
        return hotspots.HotspotQuery(
            eps_m=data.get("eps_m") or hotspots.DEFAULT_EPS_M,
            min_points=data.get("min_points") or hotspots.DEFAULT_MIN_POINTS,
            since=data.get("since"),
            until=data.get("until"),
            municipality_id=current,
            municipality_ids=frozenset() if current is None else None,
        )


class SuspectsForm(forms.Form):
    window_days = forms.IntegerField(
        label="Janela (dias antes)", min_value=1, max_value=90, required=False
    )
    radius_km = BRFloatField(label="Raio (km)", min_value=0.1, max_value=50, required=False)
    hotspot = forms.BooleanField(label="Usar o ponto crítico da denúncia", required=False)
    eps_m = BRFloatField(label="Raio do ponto crítico (m)", min_value=1, max_value=5000,
                             required=False)  # fmt: skip
    min_points = forms.IntegerField(
        label="Mínimo de denúncias", min_value=2, max_value=1000, required=False
    )
    since = forms.DateField(label="Denúncias desde", required=False, widget=_date_input())

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["window_days"].widget.attrs.update(placeholder=suspects.DEFAULT_WINDOW_DAYS)
        self.fields["radius_km"].widget.attrs.update(placeholder=f"{suspects.DEFAULT_RADIUS_KM:g}")
        self.fields["eps_m"].widget.attrs.update(placeholder=f"{hotspots.DEFAULT_EPS_M:g}")
        self.fields["min_points"].widget.attrs.update(placeholder=hotspots.DEFAULT_MIN_POINTS)

    def values(self) -> dict:
        data = self.cleaned_data if self.is_bound else {}
        return {
            "window_days": data.get("window_days") or suspects.DEFAULT_WINDOW_DAYS,
            "radius_km": data.get("radius_km") or suspects.DEFAULT_RADIUS_KM,
            "hotspot": bool(data.get("hotspot")),
            "query": hotspots.HotspotQuery(
                eps_m=data.get("eps_m") or hotspots.DEFAULT_EPS_M,
                min_points=data.get("min_points") or hotspots.DEFAULT_MIN_POINTS,
                since=data.get("since"),
            ),
        }


class RoadsideForm(forms.Form):
    plate = forms.CharField(
        label="Placa do veículo",
        max_length=10,
        widget=forms.TextInput(
            attrs={
                "autocomplete": "off",
                "autocapitalize": "characters",
                "spellcheck": "false",
                "placeholder": "ABC1D23",
                "enterkeyhint": "search",
            }
        ),
        error_messages={"required": "Informe a placa do veículo."},
    )

    def clean_plate(self) -> str:
        try:
            return normalize_plate(self.cleaned_data["plate"])
        except ValidationError as exc:
            raise ValidationError(exc.messages) from None
