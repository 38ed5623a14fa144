"""Bring a municipality into the platform: nucleo.onboarding, as docs/municipios.md tells it."""

from __future__ import annotations

import datetime
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nucleo import onboarding
from pev_network import facility_fields
from pev_network.management.commands.import_facilities import ProgressBars
from pev_network.services import NetworkError


def _date(text: str) -> datetime.date:
    for fmt in ("%d/%m/%Y", "%Y-%m-%d"):
        try:
            return datetime.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise CommandError(f"--framework-valid-from: data inválida “{text}” (use DD/MM/AAAA).")


class Command(BaseCommand):
    help = (
        "Inclui um município na plataforma: cria-o a partir do código IBGE e do arquivo de "
        "limites, com os parâmetros legais, o regime de penalidades, a primeira conta do Núcleo "
        "(que recebe por e-mail um link para definir a senha) e, se dado, importa a rede de "
        "recebimento. Tudo ou nada; com --dry-run, só mostra o que faria (docs/municipios.md)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ibge_code", help="código IBGE do município (7 dígitos), ex.: 3502507")
        parser.add_argument(
            "--boundary",
            required=True,
            metavar="ARQUIVO",
            help="GeoJSON, GeoPackage ou Shapefile com o limite (pode ter todos os municípios "
            "do estado: só o do código é lido)",
        )
        parser.add_argument("--boundary-layer", help="camada do arquivo de limites")
        parser.add_argument("--code-field", help="coluna do código IBGE (padrão: detectar)")
        parser.add_argument("--name-field", help="coluna do nome (padrão: detectar)")
        parser.add_argument("--name", default="", help="nome do município, se o do arquivo difere")
        parser.add_argument(
            "--boundary-source",
            default="",
            help="de onde vem o limite (repositório, versão, licença); padrão: o nome do arquivo",
        )
        parser.add_argument(
            "--waste-law",
            default="",
            help="a lei municipal de resíduos da construção do município, como os documentos a "
            'citam (ex.: "Lei Municipal nº 1.234/2020"); sem ela, os documentos dizem que '
            "ainda não foi informada",
        )
        parser.add_argument(
            "--fix-invalid",
            action="store_true",
            help="corrige geometrias inválidas (do limite e da rede) com make_valid e informa",
        )
        parser.add_argument(
            "--parameters-from",
            default="",
            metavar="IBGE",
            help="copia os parâmetros legais deste município (padrão: os valores padrão)",
        )
        parser.add_argument(
            "--framework-from",
            default="",
            metavar="IBGE",
            help="copia o regime de penalidades deste município para editar (padrão: nenhum; "
            "sem regime próprio, o município não abre processos de fiscalização)",
        )
        parser.add_argument(
            "--framework-valid-from",
            type=_date,
            metavar="DD/MM/AAAA",
            help="início da vigência da cópia do regime (padrão: hoje)",
        )
        parser.add_argument(
            "--nucleo-email", required=True, help="e-mail da primeira pessoa do Núcleo"
        )
        parser.add_argument("--nucleo-name", default="", help="nome dessa pessoa")
        parser.add_argument(
            "--nucleo-username", default="", help="usuário dela (padrão: o próprio e-mail)"
        )
        parser.add_argument(
            "--show-link",
            action="store_true",
            help="mostra também o link para definir a senha (para entregá-lo por outro meio "
            "se o e-mail não chegar)",
        )
        parser.add_argument(
            "--network", metavar="ARQUIVO", help="rede de recebimento (como import_facilities)"
        )
        parser.add_argument("--network-layer", help="camada do arquivo da rede")
        parser.add_argument(
            "--field",
            action="append",
            default=[],
            metavar="NOSSO=DELES",
            help="coluna do arquivo da rede para um campo (repetível), como em import_facilities",
        )
        parser.add_argument("--kind", help="tipo das áreas sem tipo: PEV, ATT, RECYCLING, LANDFILL")
        parser.add_argument(
            "--buffer-m", type=float, metavar="N", help="pontos da rede como círculos de N m"
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="faz tudo e desfaz: mostra o que seria criado, sem gravar nem enviar e-mail",
        )

    def handle(self, *args, **options):
        verbosity = options["verbosity"]
        network = None
        if options["network"]:
            try:
                field_map = facility_fields.parse_field_mappings(options["field"])
            except NetworkError as exc:
                raise CommandError(exc.message) from exc
            network = onboarding.NetworkFile(
                path=Path(options["network"]),
                layer=options["network_layer"],
                field_map=field_map,
                kind=options["kind"],
                buffer_m=options["buffer_m"],
                fix_invalid=options["fix_invalid"],
            )
        elif options["field"] or options["kind"] or options["buffer_m"] is not None:
            raise CommandError("--field, --kind e --buffer-m valem para a rede: informe --network.")
        new = onboarding.NewMunicipality(
            ibge_code=options["ibge_code"],
            boundary_file=Path(options["boundary"]),
            boundary_layer=options["boundary_layer"],
            code_field=options["code_field"],
            name_field=options["name_field"],
            name=options["name"],
            boundary_source=options["boundary_source"],
            waste_law=options["waste_law"],
            fix_invalid=options["fix_invalid"],
            parameters_from=options["parameters_from"],
            framework_from=options["framework_from"],
            framework_valid_from=options["framework_valid_from"],
            nucleo_email=options["nucleo_email"],
            nucleo_name=options["nucleo_name"],
            nucleo_username=options["nucleo_username"],
            network=network,
        )
        with ProgressBars(self.stderr, enabled=verbosity >= 1) as bars:
            try:
                report = onboarding.onboard(new, dry_run=options["dry_run"], progress=bars.update)
            except onboarding.OnboardingRefused as exc:
                bars.close()
                if exc.network is not None and verbosity >= 1:
                    self.stdout.write(exc.network.summary())
                raise CommandError(exc.message) from exc
        if verbosity >= 1:
            self.stdout.write(report.summary())
            if options["show_link"] and report.link is not None:
                self.stdout.write(
                    f"Link para definir a senha (entregue só à própria pessoa): {report.link.url}"
                )
