"""Plausible synthetic data at state scale (see synthetic/generator.py), for benchmarks and
demos."""

import time

from django.core.management.base import BaseCommand, CommandError

from config.br import br_number
from synthetic import generator


class Command(BaseCommand):
    help = (
        "Gera dados sintéticos plausíveis (rede de áreas, transportadores, CTRs, denúncias) "
        "em SQL, por conjuntos; marca-os com 'SYN-' para que --reset os remova."
    )

    def add_arguments(self, parser):
        parser.add_argument("--ctrs", type=int, default=0, help="quantos CTRs acrescentar")
        parser.add_argument("--reports", type=int, default=0, help="quantas denúncias acrescentar")
        parser.add_argument("--seed", type=int, help="semente (1 a 1048576): mesmos dados")
        parser.add_argument(
            "--reset", action="store_true", help="remove os dados sintéticos anteriores antes"
        )
        parser.add_argument(
            "--municipalities",
            action="store_true",
            help="carrega os 645 municípios de SP se faltarem (mantém os limites já cadastrados)",
        )
        parser.add_argument(
            "--municipality-limit",
            type=int,
            help="só os N primeiros municípios (o padrão, depois por código IBGE); "
            "vale quando a rede sintética ainda não existe",
        )
        parser.add_argument(
            "--onward-share",
            type=float,
            default=0.0,
            help="fração dos CTRs que são de saída, das ATTs e dos PEVs para o destino final "
            "(ex.: 0.2; padrão 0)",
        )
        parser.add_argument(
            "--no-analyze", action="store_true", help="não atualiza as estatísticas (ANALYZE)"
        )

    def handle(self, *args, **options):
        verbose = options["verbosity"] >= 1
        progress = self._progress if verbose else None
        started = time.perf_counter()
        try:
            if options["reset"]:
                summary = generator.reset(progress)
                if verbose:
                    self.stdout.write("Dados sintéticos removidos.\n" + summary.table())
            if options["municipalities"]:
                created = generator.ensure_municipalities(progress)
                if verbose:
                    self.stdout.write(f"Municípios criados: {created}.")
            if options["ctrs"] or options["reports"]:
                summary = generator.generate(
                    ctrs=options["ctrs"],
                    reports=options["reports"],
                    seed=options["seed"],
                    municipality_limit=options["municipality_limit"],
                    progress=progress,
                    analyze=not options["no_analyze"],
                    onward_share=options["onward_share"],
                )
                if verbose:
                    self.stdout.write(
                        f"Semente: {summary.seed}; municípios: {summary.municipalities}.\n"
                        + summary.table()
                    )
        except generator.SyntheticError as exc:
            raise CommandError(str(exc)) from exc
        if verbose:
            self.stdout.write("Dados sintéticos no banco:")
            for name, count in generator.counts().items():
                self.stdout.write(f"  {name}: {br_number(count)}")
            self.stdout.write(f"Tempo total: {time.perf_counter() - started:.1f} s")

    def _progress(self, message: str) -> None:
        self.stdout.write(f"[{time.strftime('%H:%M:%S')}] {message}")
        self.stdout.flush()
