"""Export the CTRs of a period (CSV or GeoPackage with origins and destinations), or with
`--flows` the onward flows between facilities (ctr.exports.export_flows)."""

import datetime

from django.core.management.base import BaseCommand, CommandError

from ctr.exports import ExportError, export_ctrs, export_flows
from pev_network.models import Municipality


def _date(value: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"Data inválida '{value}': use AAAA-MM-DD.") from None


class Command(BaseCommand):
    help = "Exporta os CTRs de um período para CSV ou GeoPackage (origens e destinos)."

    def add_arguments(self, parser):
        parser.add_argument("output", help="arquivo .csv ou .gpkg")
        parser.add_argument("--from", dest="date_from", required=True, help="AAAA-MM-DD")
        parser.add_argument("--to", dest="date_to", required=True, help="AAAA-MM-DD")
        parser.add_argument("--municipality", help="código IBGE")
        parser.add_argument(
            "--flows",
            action="store_true",
            help="exporta os fluxos de saída entre áreas (origem → destino, classe, mês) em vez "
            "dos CTRs",
        )

    def handle(self, *args, **options):
        municipality_id = None
        if options["municipality"]:
            municipality = Municipality.objects.filter(ibge_code=options["municipality"]).first()
            if municipality is None:
                raise CommandError(f"Município {options['municipality']} não cadastrado.")
            municipality_id = municipality.pk
        try:
            export = export_flows if options["flows"] else export_ctrs
            report = export(
                options["output"],
                _date(options["date_from"]),
                _date(options["date_to"]),
                municipality_id,
            )
        except ExportError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(report.summary())
