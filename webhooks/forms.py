from django import forms

from .models import EventType


class EndpointForm(forms.Form):
    url = forms.CharField(
        label="Endereço (URL) do seu sistema",
        max_length=500,
        help_text="Começa por https://. Recebe um POST com JSON a cada evento.",
        widget=forms.URLInput(attrs={"inputmode": "url", "autocomplete": "off"}),
    )
    description = forms.CharField(label="Descrição", max_length=120, required=False)
    events = forms.MultipleChoiceField(
        label="Eventos",
        choices=EventType.choices,
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Escolha ao menos um evento."},
    )
