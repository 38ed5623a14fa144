"""Load municipal boundaries from a GeoJSON/GeoPackage/Shapefile (e.g. all 645 of SP)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from pev_network import boundaries


class Command(BaseCommand):
    help = "Importa limites municipais (código IBGE, nome, UF) de um arquivo geográfico."

    def add_arguments(self, parser):
        parser.add_argument("file", help="GeoJSON, GeoPackage ou Shapefile (.zip) com os limites")
        parser.add_argument("--layer", help="camada a ler, se o arquivo tiver mais de uma")
        parser.add_argument("--uf", help="UF dos municípios, se o arquivo não tiver essa coluna")
        parser.add_argument("--code-field", help="coluna do código IBGE (padrão: detectar)")
        parser.add_argument("--name-field", help="coluna do nome (padrão: detectar)")
        parser.add_argument(
            "--keep-existing",
            action="store_true",
            help="não substitui o limite de municípios já cadastrados",
        )
        parser.add_argument(
            "--fix-invalid",
            action="store_true",
            help="corrige geometrias inválidas com make_valid e informa o que mudou",
        )
        parser.add_argument("--dry-run", action="store_true", help="valida sem gravar")

    def handle(self, *args, **options):
        path = Path(options["file"])
        if not path.exists():
            raise CommandError(f"Arquivo não encontrado: {path}")
        try:
            report = boundaries.import_municipalities(
                path,
                uf=options["uf"],
                code_field=options["code_field"],
                name_field=options["name_field"],
                keep_existing=options["keep_existing"],
                fix_invalid=options["fix_invalid"],
                layer=options["layer"],
                dry_run=options["dry_run"],
                progress=options["verbosity"] >= 1,
            )
        except boundaries.BoundaryImportError as exc:
            raise CommandError(str(exc)) from exc
        if options["verbosity"] >= 1:
            self.stdout.write(report.summary())
