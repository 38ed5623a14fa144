"""Import a municipality's infraction table (Lei 3.978/2007 art. 23) from a CSV file:
`manage.py import_penalty_table FILE --municipality IBGE [--dry-run] [--confirm --act "..."]`.

The format is in docs/fiscalizacao.md; the service is fiscalization.penalty_table. All or
nothing: a file with any problem writes nothing and lists each (line and column). Without
--confirm the lines are provisional (no record can use them); --confirm --act "Lei nº
4.699/2017" confirms them by the law that fixes the amounts (the framework's fine_table_law).
Exit status: 0 when written (or simulated), 1 when the file or an option was refused, 2 when
some lines were refused.
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from config.errors import DomainError
from fiscalization import penalty_table
from pev_network.models import Municipality


class Command(BaseCommand):
    help = "Importa a tabela de infrações (art. 23) de um município a partir de um CSV."

    def add_arguments(self, parser):
        parser.add_argument("file", help="arquivo CSV (formato em docs/fiscalizacao.md)")
        parser.add_argument(
            "--municipality", required=True, help="código IBGE do município (7 dígitos)"
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="simula: confere e relata, sem gravar nada"
        )
        parser.add_argument(
            "--confirm",
            action="store_true",
            help="grava as linhas como confirmadas pelo município (exige --act)",
        )
        parser.add_argument(
            "--act",
            default="",
            help="lei que fixa os valores, ex.: “Lei nº 4.699/2017” (Guaratinguetá, art. 23)",
        )
        parser.add_argument("--by", help="usuário que confirma (registrado em cada linha)")

    def handle(self, *args, **options):
        town = Municipality.objects.defer("boundary").filter(ibge_code=options["municipality"])
        if not (town := town.first()):
            raise CommandError(f"Município não encontrado: IBGE {options['municipality']}.")
        if options["act"] and not options["confirm"]:
            raise CommandError("--act só vale com --confirm.")
        by = None
        if options["by"]:
            by = get_user_model().objects.filter(username=options["by"]).first()
            if by is None:
                raise CommandError(f"Usuário não encontrado: {options['by']}.")
        path = Path(options["file"])
        try:
            data = path.read_bytes()
        except OSError as error:
            raise CommandError(f"Não foi possível ler {path}: {error.strerror}.") from None
        try:
            report = penalty_table.import_table(
                data,
                town,
                dry_run=options["dry_run"],
                confirm=options["confirm"],
                act=options["act"],
                by=by,
            )
        except DomainError as error:
            raise CommandError(f"{error.message} Nada foi gravado.") from None
        for line, text in report.described:
            self.stdout.write(self.style.ERROR(text) if line.problems else text)
        if not report.ok:
            raise CommandError(report.summary(), returncode=2)
        self.stdout.write(self.style.SUCCESS(report.summary()))
