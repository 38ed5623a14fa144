"""Issue many CTRs from a CSV file: `manage.py import_ctrs FILE --user USERNAME [--dry-run]`.

The format is the web import's (docs/transportador.md). The file is streamed, any size, and
checked and issued set-based (ctr.bulk), one transaction per chunk of rows; `--per-row` takes
the reference path instead (ctr.services.issue per row, within the web page's limits). A row
with any problem issues nothing and is listed with every problem. Exit status: 0 when every
row was issued (or checked), 1 when the file was refused as a whole (nothing issued), 2 when
some rows were refused.
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from config import csv_reader
from ctr import roles
from ctr.bulk import csv_import
from ctr.bulk import importer as bulk


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
        parser.add_argument(
            "--per-row",
            action="store_true",
            help="confere e emite linha a linha (o caminho de referência, lento; mesmos "
            f"limites da página: {csv_reader.MAX_ROWS} linhas, "
            f"{csv_reader.MAX_BYTES // 1024 // 1024} MB)",
        )
        parser.add_argument(
            "--chunk-rows",
            type=int,
            default=bulk.CHUNK_ROWS,
            help=f"linhas por lote (uma transação cada; padrão {bulk.CHUNK_ROWS})",
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
        if options["chunk_rows"] < 1:
            raise CommandError("--chunk-rows deve ser ao menos 1.")
        path = Path(options["file"])
        self.dry_run = options["dry_run"]
        if options["per_row"]:
            read, done, refused = self.per_row(path, transporter, user)
        else:
            read, done, refused = self.streamed(path, transporter, user, options["chunk_rows"])

        verb = "sem problemas" if self.dry_run else "emitidos"
        summary = f"{read} linhas lidas; {done} {verb}; {refused} recusadas."
        if refused:
            raise CommandError(summary, returncode=2)
        self.stdout.write(self.style.SUCCESS(summary))

    def streamed(self, path: Path, transporter, user, chunk_rows: int) -> tuple[int, int, int]:
        try:
            stream = csv_import.open_stream(path)
        except csv_reader.CSVFileError as error:
            raise CommandError(f"{error.message} Nenhum CTR foi emitido.") from None
        except OSError as error:
            raise CommandError(f"Não foi possível ler {path}: {error.strerror}.") from None
        if "origin_facility" in stream.columns:
            # The onward rows' origins, for the whole file before any chunk is issued.
            try:
                with csv_import.open_stream(path) as first:
                    csv_import.check_origins(first.rows(), user)
            except csv_reader.CSVFileError as error:
                stream.close()
                self.write_rows(error.rows)
                raise CommandError(f"{error.message} Nenhum CTR foi emitido.") from None
        importer = bulk.BulkImporter(transporter, user, dry_run=self.dry_run, chunk_rows=chunk_rows)
        try:
            importer.run(stream.rows(), self.write_rows, self.progress)
        except csv_reader.CSVFileError as error:
            totals = importer.totals
            if not totals.read:
                raise CommandError(f"{error.message} Nenhum CTR foi emitido.") from None
            raise CommandError(
                f"{error.message} Antes do erro, {totals.read} linhas foram processadas e "
                f"{totals.issued} CTRs emitidos."
            ) from None
        finally:
            stream.close()
            self.end_progress()
        totals = importer.totals
        return totals.read, totals.checked if self.dry_run else totals.issued, totals.refused

    def per_row(self, path: Path, transporter, user) -> tuple[int, int, int]:
        try:
            size = path.stat().st_size
            csv_reader.check_size(size)
            data = path.read_bytes()
        except csv_reader.CSVFileError as error:
            raise CommandError(f"{error.message} Nenhum CTR foi emitido.") from None
        except OSError as error:
            raise CommandError(f"Não foi possível ler {path}: {error.strerror}.") from None
        try:
            report = csv_import.import_ctrs(
                data,
                transporter,
                user,
                dry_run=self.dry_run,
                progress=lambda done, total: self.progress(done, total),
                per_row=True,
            )
        except csv_reader.CSVFileError as error:
            self.write_rows(error.rows)
            raise CommandError(f"{error.message} Nenhum CTR foi emitido.") from None
        finally:
            self.end_progress()
        self.write_rows(report.rows)
        done = len(report.checked) if self.dry_run else len(report.issued)
        return len(report.rows), done, len(report.refused)

    def write_rows(self, rows: list[csv_import.RowResult]) -> None:
        write = self.stdout.write
        for row in rows:
            if row.number:
                write(f"linha {row.line}: emitido {row.number}")
            elif row.checked:
                write(f"linha {row.line}: sem problemas (não emitido: --dry-run)")
            else:
                write(self.style.ERROR(f"linha {row.line}: recusada"))
                for problem in row.problems:
                    column = f"{problem.column}: " if problem.column else ""
                    code = f" [{problem.code}]" if problem.code else ""
                    write(f"    - {column}{problem.message}{code}")
            for warning in row.warnings:
                write(f"    aviso: {warning.message} [{warning.code}]")

    # A progress line on a terminal only: logs and tests get the report alone.
    def progress(self, done: int, total: int | None = None) -> None:
        if sys.stderr.isatty() and (total is None or done % 50 == 0 or done == total):
            sys.stderr.write(f"\r{done}/{total} linhas" if total else f"\r{done} linhas")
            sys.stderr.flush()
            self._progress_shown = True

    def end_progress(self) -> None:
        if getattr(self, "_progress_shown", False):
            sys.stderr.write("\n")
