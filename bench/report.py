"""docs/performance.md: the generated figures go between two markers; the prose around them
(written by people, after reading the figures) is kept when the benchmarks run again."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterable
from pathlib import Path

from config.br import br_number

from .timing import Generation, Plan, Result

BEGIN = "<!-- bench:begin — gerado por `python -m bench`; não edite entre estes marcadores -->"
END = "<!-- bench:end -->"

TEMPLATE = f"""# Desempenho

Medições feitas por `make bench` (pacote `bench/`), num banco separado (`ctr_bench`), com dados
sintéticos plausíveis gerados por `manage.py generate_synthetic` (ver `synthetic/generator.py`).

{BEGIN}
{END}
"""


def explained_query(title: str, sql: str, plan: str) -> list[str]:
    """A query and its EXPLAIN as docs/performance.md shows them: a bold title, then the SQL and
    the plan in blocks of their own."""
    return ["", f"**{title}**", "", "```sql", sql.strip(), "```", "", "```", plan, "```"]


def thousands(n: float, decimals: int = 0) -> str:
    return br_number(n, decimals)


def _seconds(s: float) -> str:
    if s < 1:
        return f"{s * 1000:.0f} ms"
    return f"{thousands(s, 2 if s < 10 else 1)} s"


def _bench_command(args_line: str) -> str:
    return f"`python -m bench {args_line}`"


def render(
    machine: dict[str, str],
    when: str,
    command: str,
    generations: list[Generation],
    results: list[Result],
    plans: list[Plan],
    benchmarks: Iterable[object],
    seed: int,
    reports: int,
    runs: int,
) -> str:
    lines = ["## Máquina e execução", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in machine.items()]
    lines += [
        f"| data | {when} |",
        f"| comando | `{command}` |",
        "",
        f"Cada tempo é a mediana de {runs} requisições (depois de uma de aquecimento, não "
        "contada), com o mínimo e o máximo; requisições pelo `django.test.Client` no mesmo "
        "processo (middleware, view, SQL, folium e template; sem rede), com `DEBUG=False`. "
        "A razão é a mediana da página dividida pela mediana da página-base medida na mesma "
        "execução e com os mesmos dados. *SQL*: soma dos tempos das consultas da página (uma "
        "requisição a mais, medida à parte); *CPU Python*: mediana do tempo de CPU deste "
        "processo por requisição (a parte do Python, que não conta a espera pelo banco nem o "
        "tempo tomado por outros processos numa máquina ocupada).",
        "",
        "## Dados gerados",
        "",
        "| CTRs | denúncias | geração | comando que reproduz os dados |",
        "|---:|---:|---:|---|",
    ]
    for g in generations:
        took = "reaproveitados" if g.reused else _seconds(g.seconds)
        lines.append(f"| {thousands(g.size)} | {thousands(g.reports)} | {took} | `{g.command}` |")
    lines += [
        "",
        "A geração inclui a remoção dos dados sintéticos anteriores, a verificação das chaves "
        "estrangeiras e `VACUUM ANALYZE` das tabelas (estado de um banco em uso, com o "
        "autovacuum em dia).",
    ]
    for module in benchmarks:
        mine = [r for r in results if r.benchmark == module.NAME]
        if not mine:
            continue
        lines += ["", f"## {module.TITLE}", ""]
        lines += [
            "| CTRs | página | HTML (bytes) | mediana | mín | máx | razão × base | consultas "
            "| SQL | CPU Python | comando |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        for r in mine:
            cmd = _bench_command(f"--sizes {r.size} --reports {r.reports} --seed {seed}")
            # A path is a GET unless the benchmark names the method (or a function it calls).
            what = f"GET {r.url}" if r.url.startswith("/") else r.url
            lines.append(
                f"| {thousands(r.size)} | {r.label}<br>`{what}` | {thousands(r.html_bytes)} "
                f"| {_seconds(r.stats.median)} | {_seconds(r.stats.min)} "
                f"| {_seconds(r.stats.max)} | {thousands(r.ratio or 0, 2)} | {r.queries} "
                f"| {_seconds(r.sql_seconds)} | {_seconds(r.stats.cpu_median)} | {cmd} |"
            )
        verdict = getattr(module, "verdict", None)
        if verdict:
            lines += ["", verdict(mine)]
    largest = max((r.size for r in results), default=0)
    composed = [r for r in results if r.size == largest and r.parts]
    if composed:
        lines += [
            "",
            f"## Do que é feito o HTML ({thousands(largest)} CTRs)",
            "",
            "Bytes de cada parte das páginas do Núcleo (seletores do formulário, camadas "
            "GeoJSON embutidas pelo folium, funções de estilo por feição, o resto):",
        ]
        for r in composed:
            lines += ["", f"**{r.label}** — {thousands(r.html_bytes)} bytes", ""]
            lines += ["| parte | bytes | % |", "|---|---:|---:|"]
            for name, n in r.parts:
                share = thousands(100 * n / r.html_bytes, 1) if r.html_bytes else "0"
                lines.append(f"| {name} | {thousands(n)} | {share} |")
    if plans:
        total = sum(p.seconds for p in plans)
        lines += [
            "",
            f"## Perfil das consultas ({thousands(largest)} CTRs)",
            "",
            f"As {len(plans)} consultas de “{plans[0].label}” (a página do Núcleo que mais "
            f"gasta em SQL: {_seconds(total)} ao todo), da mais lenta para a mais rápida:",
            "",
            "| # | tempo | consulta (início) |",
            "|---:|---:|---|",
        ]
        for i, plan in enumerate(plans, start=1):
            head = " ".join(plan.sql.split())[:140].replace("|", "\\|")
            lines.append(f"| {i} | {_seconds(plan.seconds)} | `{head}…` |")
        for i, plan in enumerate(plans, start=1):
            if not plan.plan:
                continue
            lines += [
                "",
                f"### {i}. {_seconds(plan.seconds)} na página",
                "",
                "```sql",
                plan.sql.strip(),
                "```",
                "",
                "`EXPLAIN (ANALYZE, BUFFERS)`, logo depois da medição (cache aquecido):",
                "",
                "```",
                plan.plan,
                "```",
            ]
    return "\n".join(lines)


def write(path: Path, generated: str, begin: str = BEGIN, end: str = END) -> None:
    """Put `generated` between the markers (a benchmark with a section of its own passes
    its own), keeping everything else in the file."""
    text = path.read_text() if path.exists() else TEMPLATE
    if begin not in text or end not in text:
        text = text.rstrip() + "\n\n" + begin + "\n" + end + "\n"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{head}{begin}\n{generated.strip()}\n{end}{tail}")


def command_line(module: str, argv: list[str] | None) -> str:
    """How this run was started: `python -m <module>` and its arguments."""
    args = sys.argv[1:] if argv is None else argv
    return f"python -m {module} {' '.join(shlex.quote(a) for a in args)}".strip()


def publish(
    text: str, output: Path, no_write: bool, say, begin: str = BEGIN, end: str = END
) -> None:
    """Print the section (`--no-write`) or put it between its markers in `output`."""
    if no_write:
        print(text)
    else:
        write(output, text, begin, end)
        say(f"Resultados escritos em {output}")
