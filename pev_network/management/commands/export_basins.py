"""Export the bacias de captação (GeoPackage, GeoJSON or CSV with WKT)."""

from django.core.management.base import BaseCommand, CommandError

from pev_network.exporting import export_basins
from pev_network.services import NetworkError


class Command(BaseCommand):
    help = "Exporta as bacias de captação para GeoPackage, GeoJSON ou CSV (WKT)."

    def add_arguments(self, parser):
        parser.add_argument("output", help="arquivo .gpkg, .geojson ou .csv")
        parser.add_argument("--format", choices=["gpkg", "geojson", "csv"])

    def handle(self, *args, **options):
        try:
            count = export_basins(options["output"], options["format"])
        except NetworkError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"{count} bacia(s) exportada(s) para {options['output']}.")
