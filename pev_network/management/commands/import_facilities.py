"""Import the receiving network (PEV, ATT, reciclagem, aterro) from a geodata file."""

from __future__ import annotations

from typing import TextIO

from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper
from tqdm import tqdm

from pev_network import facility_fields, importing
from pev_network.services import NetworkError


class ProgressBars:
    """The services' progress callback drawn as tqdm bars on stderr, one bar per stage.

    On the raw stream, not Django's OutputWrapper (which adds a newline to every write and
    would break the bar's carriage returns); hidden when stderr is not a terminal, so logs and
    pipes get the summary only.
    """

    def __init__(self, stderr: OutputWrapper | TextIO, enabled: bool = True):
        self.stream = getattr(stderr, "_out", stderr)
        self.enabled = enabled
        self.stage: str | None = None
        self.bar: tqdm | None = None

    def update(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if stage != self.stage:
            self.close()
            self.stage = stage
            # disable=None: off when the stream is not a TTY.
            self.bar = tqdm(
                total=total, desc=stage, unit=" feições", file=self.stream, disable=None
            )
        if self.bar is not None:
            self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.bar = None
        self.stage = None

    def __enter__(self) -> ProgressBars:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class Command(BaseCommand):
    help = (
        "Importa áreas de recebimento (PEV, ATT, reciclagem, aterro) de GeoJSON, GeoPackage, "
        "Shapefile (.shp ou .zip) ou CSV (latitude e longitude, ou WKT). Valida todas as "
        "feições; com qualquer problema, nada é gravado."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "file", help="arquivo GeoJSON, GeoPackage, Shapefile (ou .zip com ele) ou CSV"
        )
        parser.add_argument("--layer", help="camada a ler, se o arquivo tiver mais de uma")
        parser.add_argument(
            "--field",
            action="append",
            default=[],
            metavar="NOSSO=DELES",
            help="nome da coluna no arquivo para um campo (repetível), ex.: --field name=NOME; "
            "vazio (--field license_status=) não lê o campo",
        )
        parser.add_argument(
            "--kind",
            help="tipo de todas as feições sem tipo: PEV, ATT, RECYCLING ou LANDFILL "
            "(aceita ECOPONTO, RECICLAGEM, ATERRO, TRANSBORDO…)",
        )
        parser.add_argument(
            "--buffer-m",
            type=float,
            metavar="N",
            help="importa pontos como círculos de N metros de raio",
        )
        parser.add_argument(
            "--fix-invalid",
            action="store_true",
            help="corrige geometrias inválidas com make_valid e informa o que mudou",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="valida e simula tudo, sem gravar nada"
        )

    def handle(self, *args, **options):
        verbosity = options["verbosity"]
        try:
            field_map = facility_fields.parse_field_mappings(options["field"])
        except NetworkError as exc:
            raise CommandError(exc.message) from exc
        with ProgressBars(self.stderr, enabled=verbosity >= 1) as bars:
            try:
                report = importing.import_facilities(
                    options["file"],
                    layer=options["layer"],
                    field_map=field_map,
                    kind=options["kind"],
                    buffer_m=options["buffer_m"],
                    fix_invalid=options["fix_invalid"],
                    dry_run=options["dry_run"],
                    progress=bars.update,
                )
            except importing.ImportRefused as exc:
                bars.close()
                if verbosity >= 1:
                    self.stdout.write(exc.report.summary())
                raise CommandError(exc.message) from exc
            except NetworkError as exc:
                raise CommandError(exc.message) from exc
        if verbosity >= 1:
            self.stdout.write(report.summary())
