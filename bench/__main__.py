"""`python -m bench [--sizes 10000,100000] [--runs 7] …`: the benchmarks, at each size of the
synthetic data, on the bench database; the figures go to docs/performance.md."""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

from . import BENCHMARKS, DEFAULT_REPORTS, DEFAULT_RUNS, DEFAULT_SEED, DEFAULT_SIZES, machine
from .database import open_bench, settle, warm

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "docs" / "performance.md"


def _sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(part.replace("_", "")) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"tamanhos inválidos: {text}") from None
    if not sizes or sizes[0] < 1:
        raise argparse.ArgumentTypeError("informe tamanhos positivos, ex.: 10000,100000")
    return sizes


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Mede as páginas com 10 mil, 100 mil e 1 milhão de CTRs sintéticos "
        "num banco separado e escreve docs/performance.md.",
    )
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=list(DEFAULT_SIZES),
        help="quantidades de CTRs, separadas por vírgula (padrão: 10000,100000,1000000)",
    )
    parser.add_argument("--reports", type=int, default=DEFAULT_REPORTS, help="denúncias")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="medições por página")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="semente dos dados")
    parser.add_argument(
        "--only",
        choices=[name.rsplit(".", 1)[1] for name in BENCHMARKS],
        action="append",
        help="só este benchmark (repetível)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="não regenera os dados se o banco já tem exatamente esse tamanho",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help="onde escrever os resultados (padrão: docs/performance.md)",
    )
    parser.add_argument("--no-write", action="store_true", help="só imprime, não escreve")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs deve ser ao menos 1")
    # The generated block of docs/performance.md holds every benchmark at every size: a partial
    # run written there would erase the others' figures (it did once, on 02/12/2026).
    partial = args.only or sorted(args.sizes) != sorted(DEFAULT_SIZES)
    if partial and not args.no_write and args.output == DEFAULT_OUTPUT:
        parser.error(
            "com --only ou --sizes, a execução é parcial e apagaria em docs/performance.md os "
            "resultados dos outros benchmarks: use --output OUTRO.md ou --no-write"
        )
    return args


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def prepare_data(size: int, reports: int, seed: int, reuse: bool):
    from synthetic import generator as synthetic

    from .timing import Generation

    command = (
        f"python manage.py generate_synthetic --reset --municipalities --ctrs {size} "
        f"--reports {reports} --seed {seed}"
    )
    counts = synthetic.counts()
    if reuse and counts["CTRs"] == size and counts["denúncias"] == reports:
        say(f"Dados de {size} CTRs reaproveitados.")
        warm(say)
        return Generation(size, reports, 0.0, command, reused=True)
    say(f"Gerando {size} CTRs e {reports} denúncias (semente {seed})…")
    started = time.perf_counter()
    synthetic.reset()
    summary = synthetic.generate(ctrs=size, reports=reports, seed=seed, progress=say)
    settle(say)
    warm(say)
    seconds = time.perf_counter() - started
    say(f"Dados prontos em {seconds:.1f} s (geração {summary.seconds:.1f} s).")
    return Generation(size, reports, seconds, command)


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    load_at_start = machine.load()
    if open_bench(say) is None:
        return 2

    from django.utils import timezone

    from synthetic import generator as synthetic

    from . import report

    created = synthetic.ensure_municipalities(say)
    if created:
        say(f"{created} municípios carregados.")
    wanted = [m for m in BENCHMARKS if not args.only or m.rsplit(".", 1)[1] in args.only]
    modules = [importlib.import_module(name) for name in wanted]
    states = {module.NAME: module.setup() for module in modules}
    # The in-process measurements (django.test.Client) run in the state of a production
    # worker, which config/wsgi.py leaves with every view imported and the startup frozen.
    from config.startup import load_everything_and_freeze

    load_everything_and_freeze()

    generations, results, plans = [], [], []
    for size in args.sizes:
        generations.append(prepare_data(size, args.reports, args.seed, args.reuse))
        for module in modules:
            say(f"{module.NAME}: {size} CTRs, {args.runs} medições por página…")
            mine = module.run(states[module.NAME], size, args.reports, args.runs)
            for r in mine:
                say(
                    f"  {r.case}: {r.html_bytes} bytes, mediana {r.stats.median:.3f} s "
                    f"(mín {r.stats.min:.3f}, máx {r.stats.max:.3f}), razão {r.ratio:.2f}, "
                    f"{r.queries} consultas, SQL {r.sql_seconds:.3f} s"
                )
            results += mine
            if size == args.sizes[-1]:
                plans += module.profile(states[module.NAME], mine)

    generated = report.render(
        machine=machine.describe(load_at_start),
        when=timezone.localtime().strftime("%Y-%m-%d %H:%M %Z"),
        command=report.command_line("bench", argv),
        generations=generations,
        results=results,
        plans=plans,
        benchmarks=modules,
        seed=args.seed,
        reports=args.reports,
        runs=args.runs,
    )
    report.publish(generated, args.output, args.no_write, say)
    return 0


if __name__ == "__main__":
    sys.exit(main())
