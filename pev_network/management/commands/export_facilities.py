"""Export the receiving network as GeoJSON, GeoPackage or CSV (WKT), in EPSG:4326."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from pev_network import exporting
from pev_network.management.commands.import_facilities import ProgressBars
from pev_network.services import NetworkError


class Command(BaseCommand):
    help = (
        "Exporta as áreas de recebimento com a licença vigente, em EPSG:4326, para GeoJSON, "
        "GeoPackage ou CSV com a geometria em WKT (coluna WKT)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("output", help="arquivo de saída (.geojson, .gpkg ou .csv)")
        parser.add_argument(
            "--format",
            choices=sorted(exporting.FORMATS),
            help="formato (padrão: pela extensão do arquivo)",
        )
        parser.add_argument("--kind", help="só este tipo: PEV, ATT, RECYCLING ou LANDFILL")

    def handle(self, *args, **options):
        with ProgressBars(self.stderr, enabled=options["verbosity"] >= 1) as bars:
            try:
                report = exporting.export_facilities(
                    options["output"],
                    options["format"],
                    kind=options["kind"],
                    progress=bars.update,
                )
            except NetworkError as exc:
                raise CommandError(exc.message) from exc
        if options["verbosity"] >= 1:
            self.stdout.write(report.summary())
