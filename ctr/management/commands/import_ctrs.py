"""Issue many CTRs from a CSV file: `manage.py import_ctrs FILE --user USERNAME [--dry-run]`.

The format is the web import's (docs/transportador.md). Good rows are issued, one transaction
each; a row with any problem issues nothing and is listed with every problem. Exit status: 0
when every row was issued (or checked), 1 when the file was refused as a whole (nothing
issued), 2 when some rows were refused.
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from ctr import csv_import, roles


class Command(BaseCommand):
    help = "Emite CTRs a partir de um arquivo CSV (uma linha = um CTR)."

    def add_arguments(self, parser):
        parser.add_argument("file", help="arquivo CSV (formato em docs/transportador.md)")
        parser.add_argument(
            "--user", required=True, help="usuário vinculado ao transportador que emite"
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="só confere as linhas, sem emitir nenhum CTR",
        )

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"Usuário não encontrado: {options['user']}.")
        transporter = roles.transporter_of(user)
        if transporter is None:
            raise CommandError(
                f"O usuário {user.get_username()} não está vinculado a um transportador."
            )
        path = Path(options["file"])
        try:
            size = path.stat().st_size
            csv_import.check_size(size)
            data = path.read_bytes()
        except csv_import.CSVFileError as error:
            raise CommandError(f"{error.message} Nenhum CTR foi emitido.") from None
        except OSError as error:
            raise CommandError(f"Não foi possível ler {path}: {error.strerror}.") from None

        try:
            report = csv_import.import_ctrs(
                data, transporter, user, dry_run=options["dry_run"], progress=self.progress
            )
        except csv_import.CSVFileError as error:
            raise CommandError(f"{error.message} Nenhum CTR foi emitido.") from None
        finally:
            self.end_progress()

        for row in report.rows:
            if row.number:
                self.stdout.write(f"linha {row.line}: emitido {row.number}")
            elif row.checked:
                self.stdout.write(f"linha {row.line}: sem problemas (não emitido: --dry-run)")
            else:
                self.stdout.write(self.style.ERROR(f"linha {row.line}: recusada"))
                for problem in row.problems:
                    column = f"{problem.column}: " if problem.column else ""
                    code = f" [{problem.code}]" if problem.code else ""
                    self.stdout.write(f"    - {column}{problem.message}{code}")
            for warning in row.warnings:
                self.stdout.write(f"    aviso: {warning.message} [{warning.code}]")

        done = len(report.checked) if report.dry_run else len(report.issued)
        verb = "sem problemas" if report.dry_run else "emitidos"
        summary = (
            f"{len(report.rows)} linhas lidas; {done} {verb}; {len(report.refused)} recusadas."
        )
        if report.refused:
            raise CommandError(summary, returncode=2)
        self.stdout.write(self.style.SUCCESS(summary))

    # A progress line on a terminal only: logs and tests get the report alone.
    def progress(self, done: int, total: int) -> None:
        if sys.stderr.isatty() and (done % 50 == 0 or done == total):
            sys.stderr.write(f"\r{done}/{total} linhas")
            sys.stderr.flush()
            self._progress_shown = True

    def end_progress(self) -> None:
        if getattr(self, "_progress_shown", False):
            sys.stderr.write("\n")
