"""The admin's "Incluir município": nucleo.onboarding from a form, for the
platform's administrator (superuser) only, the same operation as `manage.py
onboard_municipality`, a simulation by default.

The page hangs on the municipality list of pev_network's admin, whose ModelAdmin is extended
here and registered again: the operation crosses pev_network, fiscalization and jurisdiction,
and nucleo is the app allowed to import the three (pev_network may not import nucleo)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.urls import path, reverse

from config.br_forms import BRFloatField
from config.errors import DomainError
from fiscalization.models.frameworks import PenaltyFramework
from pev_network import facility_fields
from pev_network.admin import MunicipalityAdmin as NetworkMunicipalityAdmin
from pev_network.models import Municipality
from pev_network.services import NetworkError

from . import onboarding

# The boundaries of the 645 municipalities of SP that ship with the system (fixtures/README.md:
# tbrugz/geodata-br, CC0, from IBGE's mesh).
SHIPPED_SP = Path(settings.BASE_DIR) / "fixtures" / "sp_estado_municipios_645_tbrugz.geojson"
SHIPPED_SP_SOURCE = (
    "tbrugz/geodata-br geojson/geojs-35-mun.json @ c39dfb04 (CC0 1.0), malha municipal do IBGE"
)
GEODATA = ".geojson,.json,.gpkg,.zip,.shp,.csv"


def _framework_choices() -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for code, name in PenaltyFramework.objects.order_by("ibge_code", "-valid_from").values_list(
        "ibge_code", "name"
    ):
        seen.setdefault(code, f"cópia para editar de: {name} (IBGE {code})")
    return [("", "nenhum (o município não abre processos até cadastrar o seu)"), *seen.items()]


class OnboardingForm(forms.Form):
    ibge_code = forms.CharField(
        label="Código IBGE", max_length=7, min_length=7, help_text="Sete dígitos, ex.: 3502507."
    )
    shipped_sp = forms.BooleanField(
        label="Usar os limites de SP que acompanham o sistema (645 municípios, IBGE)",
        required=False,
        initial=True,
    )
    boundary_file = forms.FileField(
        label="Ou o arquivo de limites",
        required=False,
        help_text="GeoJSON, GeoPackage ou Shapefile (.zip); pode ter o estado todo: só o "
        "município do código é lido.",
        widget=forms.ClearableFileInput({"accept": GEODATA}),
    )
    boundary_source = forms.CharField(
        label="Fonte do limite",
        required=False,
        max_length=300,
        help_text="Repositório, versão e licença do arquivo (padrão: o nome do arquivo).",
    )
    name = forms.CharField(
        label="Nome",
        required=False,
        max_length=120,
        help_text="Se o do arquivo estiver errado (acentos perdidos num Shapefile).",
    )
    fix_invalid = forms.BooleanField(
        label="Corrigir geometrias inválidas (make_valid) e informar", required=False
    )
    parameters_from = forms.ModelChoiceField(
        Municipality.objects.defer("boundary").order_by("name"),
        label="Parâmetros legais",
        required=False,
        empty_label="os padrões",
        to_field_name="ibge_code",
        help_text="Ou copiados de outro município (um consórcio costuma adotar os mesmos).",
    )
    framework_from = forms.ChoiceField(label="Regime de penalidades", required=False)
    framework_valid_from = forms.DateField(
        label="Vigência da cópia do regime desde",
        required=False,
        input_formats=["%d/%m/%Y", "%Y-%m-%d"],
        help_text="DD/MM/AAAA; padrão: hoje.",
    )
    nucleo_email = forms.EmailField(label="E-mail da primeira pessoa do Núcleo")
    nucleo_name = forms.CharField(label="Nome dela", required=False, max_length=300)
    nucleo_username = forms.CharField(
        label="Usuário", required=False, max_length=150, help_text="Padrão: o próprio e-mail."
    )
    show_link = forms.BooleanField(
        label="Mostrar também o link para definir a senha (para entregar por outro meio)",
        required=False,
    )
    network_file = forms.FileField(
        label="Rede de recebimento (opcional)",
        required=False,
        help_text="No formato de `manage.py import_facilities` (docs/importacao.md).",
        widget=forms.ClearableFileInput({"accept": GEODATA}),
    )
    network_fields = forms.CharField(
        label="Colunas da rede",
        required=False,
        widget=forms.Textarea({"rows": 2}),
        help_text="Uma por linha, NOSSO=DELES (como --field), ex.: name=NOME_ECOPONTO.",
    )
    kind = forms.CharField(
        label="Tipo das áreas sem tipo", required=False, help_text="PEV, ATT, RECYCLING, LANDFILL."
    )
    buffer_m = BRFloatField(label="Pontos como círculos de (m)", required=False, min_value=0.1)
    dry_run = forms.BooleanField(
        label="Simular: mostrar o que seria feito, sem gravar nada nem enviar e-mail",
        required=False,
        initial=True,
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["framework_from"].choices = _framework_choices()

    def clean(self):
        data = super().clean()
        if not data.get("shipped_sp") and not data.get("boundary_file"):
            self.add_error("boundary_file", "Envie o arquivo de limites ou use o de SP.")
        if data.get("shipped_sp") and data.get("boundary_file"):
            self.add_error("boundary_file", "Envie um arquivo ou use o de SP, não os dois.")
        try:
            lines = (data.get("network_fields") or "").splitlines()
            data["field_map"] = facility_fields.parse_field_mappings(
                [line.strip() for line in lines if line.strip()]
            )
        except NetworkError as error:
            self.add_error("network_fields", error.message)
        return data


def _in_form_words(problem: str) -> str:
    """A refusal of the network file, with the command's override in this form's fields."""
    return problem.replace(
        facility_fields.KIND_OVERRIDE,
        "preencha “Tipo das áreas sem tipo” e escreva kind= em “Colunas da rede”",
    )


def _saved(upload, folder: Path) -> Path:
    """An upload as a file the geodata reader opens by path (its name keeps the format)."""
    target = folder / Path(upload.name).name
    with target.open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    return target


class MunicipalityAdmin(NetworkMunicipalityAdmin):
    change_list_template = "admin/nucleo/municipality_change_list.html"

    def get_urls(self):
        view = self.admin_site.admin_view(self.onboard_view)
        return [
            path("incluir/", view, name="pev_network_municipality_onboard"),
            *super().get_urls(),
        ]

    def onboard_view(self, request):
        """Bring a municipality in: a simulation by default, the report on the page; refused
        whole with every reason (nucleo.onboarding)."""
        if not request.user.is_superuser:
            raise PermissionDenied
        form = OnboardingForm(request.POST or None, request.FILES or None)
        report = problems = None
        status = 200
        if request.method == "POST":
            status = 400
            if form.is_valid():
                data = form.cleaned_data
                with tempfile.TemporaryDirectory(prefix="ctr-onboard-") as folder:
                    new = self._new(data, Path(folder))
                    try:
                        report = onboarding.onboard(new, by=request.user, dry_run=data["dry_run"])
                    except onboarding.OnboardingRefused as error:
                        problems = [_in_form_words(problem) for problem in error.problems]
                    except DomainError as error:
                        problems = [error.message]
                    else:
                        status = 200
                if report is not None and not report.dry_run:
                    self.message_user(
                        request, f"{report.municipality} incluído na plataforma.", messages.SUCCESS
                    )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Incluir um município",
            "form": form,
            "report": report,
            "problems": problems,
            "show_link": form.is_bound and form.is_valid() and form.cleaned_data["show_link"],
            "change_url": (
                reverse("admin:pev_network_municipality_change", args=[report.municipality.pk])
                if report is not None and not report.dry_run
                else None
            ),
        }
        return TemplateResponse(request, "admin/nucleo/onboard.html", context, status=status)

    @staticmethod
    def _new(data: dict, folder: Path) -> onboarding.NewMunicipality:
        if data["shipped_sp"]:
            boundary, source = SHIPPED_SP, data["boundary_source"] or SHIPPED_SP_SOURCE
        else:
            boundary, source = _saved(data["boundary_file"], folder), data["boundary_source"]
        network = None
        if data.get("network_file"):
            network = onboarding.NetworkFile(
                path=_saved(data["network_file"], folder),
                field_map=data["field_map"],
                kind=data["kind"] or None,
                buffer_m=data["buffer_m"],
                fix_invalid=data["fix_invalid"],
            )
        parameters_from = data["parameters_from"]
        return onboarding.NewMunicipality(
            ibge_code=data["ibge_code"],
            boundary_file=boundary,
            boundary_source=source,
            name=data["name"],
            fix_invalid=data["fix_invalid"],
            parameters_from=parameters_from.ibge_code if parameters_from else "",
            framework_from=data["framework_from"],
            framework_valid_from=data["framework_valid_from"],
            nucleo_email=data["nucleo_email"],
            nucleo_name=data["nucleo_name"],
            nucleo_username=data["nucleo_username"],
            network=network,
        )


admin.site.unregister(Municipality)
admin.site.register(Municipality, MunicipalityAdmin)
