"""Opening a case and finding cases: the list's filter, the offender's generator found by
document or name among those the user sees, and the case form."""

from __future__ import annotations

import re

from django import forms
from django.contrib.gis.geos import Point
from django.core.exceptions import ValidationError

from config.br_forms import CoordinateField
from ctr.documents import format_document, normalize_document
from ctr.models import Generator, Transporter
from jurisdiction.scope import jurisdiction_of, municipalities
from pev_network.models import Municipality, ReceivingFacility

from ..intake import normalize_protocol
from ..models.enforcement import CaseStatus, OffenderRole
from ..models.reports import DumpingReport
from .fields import datetime_field


class CaseFilterForm(forms.Form):
    status = forms.ChoiceField(
        label="Situação", required=False, choices=[("", "Todas"), *CaseStatus.choices]
    )
    q = forms.CharField(label="Número, infrator ou documento", required=False, max_length=100)


def generator_label(generator: Generator) -> str:
    """How a suggestion reads and what the box keeps: the document first, so that the choice
    is unambiguous (two generators may share a name)."""
    return f"{format_document(generator.document)} — {generator.name}"


def find_generator(text: str, user=None) -> Generator | None:
    """The generator of a suggestion ("CPF/CNPJ — nome"), of a typed CPF/CNPJ, or of a name
    that only one generator has, among those `user` sees (its municipalities'); a
    Portuguese error otherwise."""
    text = (text or "").strip()
    if not text:
        return None
    generators = Generator.objects.visible_to(user)
    head = text.split("—", 1)[0]
    number = re.sub(r"\D", "", head)
    if len(number) in (11, 14):
        generator = generators.filter(document=number).first()
        if generator is None:
            raise ValidationError(f"Não há gerador cadastrado com o CPF/CNPJ {head.strip()}.")
        return generator
    matches = list(generators.filter(name__iexact=text)[:2])
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ValidationError(
            f"Há mais de um gerador chamado “{text}”: escolha na lista ou informe o CPF/CNPJ."
        )
    raise ValidationError(
        f"Não há gerador “{text}”: digite o CPF/CNPJ ou parte do nome e escolha na lista."
    )


def search_generators(text: str, user, limit: int = 10) -> list[Generator]:
    """Suggestions for the box: by the beginning of the CPF/CNPJ, or by part of the name,
    among the generators `user` sees (its municipalities': CPFs are personal data, LGPD)."""
    text = (text or "").strip()
    if len(text) < 2:
        return []
    number = re.sub(r"[.\-/\s]", "", text)
    queryset = Generator.objects.visible_to(user).only("pk", "name", "document")
    if number.isdigit():
        queryset = queryset.filter(document__startswith=number)
    else:
        queryset = queryset.filter(name__icontains=text)
    return list(queryset.order_by("name", "pk")[:limit])


class CaseForm(forms.Form):
    """A case opened by hand: it is the municipality's where the facts
    happened, the report's or the location's; without either, the one chosen here among those
    where the user acts (the one it works in now first). Its links (transporter, facility,
    generator, report) are among those the user sees."""

    municipality = forms.ModelChoiceField(
        Municipality.objects.none(),
        label="Município",
        empty_label=None,
        required=False,
        help_text="Com a denúncia ou o local, o processo é do município onde eles ficam.",
    )
    opened_at = datetime_field("Constatada em")
    description = forms.CharField(
        label="Irregularidade constatada",
        widget=forms.Textarea(attrs={"rows": 4}),
        max_length=4000,
        help_text="O que a fiscalização viu, onde e quando (art. 22).",
    )
    offender_role = forms.ChoiceField(
        label="Papel do infrator (art. 24)", choices=OffenderRole.choices
    )
    offender_name = forms.CharField(label="Nome ou razão social do infrator", max_length=200)
    offender_document = forms.CharField(label="CPF ou CNPJ do infrator", max_length=20)
    offender_address = forms.CharField(
        label="Endereço para notificação", max_length=300, required=False
    )
    transporter = forms.ModelChoiceField(
        Transporter.objects.none(),
        label="Transportador vinculado",
        required=False,
        empty_label="Nenhum",
        help_text="Para o motorista, o proprietário do veículo ou o dirigente da transportadora "
        "(art. 24 III-IV): suspensão e cassação valem para o cadastro dele.",
    )
    facility = forms.ModelChoiceField(
        ReceivingFacility.objects.none(),
        label="Área de recepção vinculada",
        required=False,
        empty_label="Nenhuma",
        help_text="Para o proprietário, operador ou responsável técnico (art. 24 V): suspensão "
        "e cassação valem para a licença dela.",
    )
    # A text box with suggestions as you type (the municipality's generators are thousands:
    # never all of them in a <select>); fiscalization/static/fiscalization/generator-search.js
    # fills its <datalist> from GET /fiscalizacao/processos/geradores/?q=.
    generator = forms.CharField(
        label="Gerador vinculado",
        required=False,
        max_length=200,
        help_text="Para o proprietário, ocupante ou responsável pela obra (art. 24 I-II). "
        "Digite o CPF/CNPJ ou parte do nome e escolha na lista.",
        widget=forms.TextInput(
            attrs={
                "list": "geradores-sugestoes",
                "autocomplete": "off",
                "spellcheck": "false",
                "data-suggest": "generators",
            }
        ),
    )
    dumping_report = forms.CharField(
        label="Protocolo da denúncia de descarte", max_length=16, required=False
    )
    latitude = CoordinateField("lat", required=False, max_digits=9, decimal_places=6)
    longitude = CoordinateField("lon", required=False, max_digits=10, decimal_places=6)
    obstructed_inspection = forms.BooleanField(
        label="O infrator impediu ou dificultou a fiscalização (agravante, art. 26 I)",
        required=False,
    )

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        j = jurisdiction_of(user)
        acting = j.acting_ids()
        places = municipalities().order_by("name", "uf")
        if acting is not None:
            places = places.filter(pk__in=acting)
        elif not j.everywhere:
            places = places.none()
        self.fields["municipality"].queryset = places
        if j.current_id is not None and (acting is None or j.current_id in acting):
            self.fields["municipality"].initial = j.current_id
        self.fields["transporter"].queryset = Transporter.objects.visible_to(user)
        self.fields["facility"].queryset = ReceivingFacility.objects.visible_to(user).defer("area")

    def clean_offender_document(self):
        try:
            return normalize_document(self.cleaned_data["offender_document"])
        except ValidationError as exc:
            raise ValidationError(exc.messages[0]) from None

    def clean_generator(self):
        return find_generator(self.cleaned_data["generator"], self.user)

    def clean_dumping_report(self):
        raw = self.cleaned_data["dumping_report"].strip().upper()
        if not raw:
            return None
        protocol = normalize_protocol(raw) or raw
        # Another municipality's report does not exist for the user.
        report = (
            DumpingReport.objects.visible_to(self.user)
            .select_related("municipality")
            .defer("municipality__boundary")
            .filter(protocol=protocol)
            .first()
        )
        if report is None:
            raise ValidationError(f"Não há denúncia com o protocolo {protocol}.")
        return report

    def clean(self):
        data = super().clean()
        lat, lon = data.get("latitude"), data.get("longitude")
        if (lat is None) != (lon is None):
            raise ValidationError("Informe latitude e longitude, ou nenhuma das duas.")
        data["location"] = Point(float(lon), float(lat), srid=4326) if lat is not None else None
        return data
