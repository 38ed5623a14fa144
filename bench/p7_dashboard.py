"""P7: the Núcleo's dashboard (`/nucleo/`) on the demo, against the CTR
list page (`/transportador/ctrs/`, the transporter's), both through `django.test.Client` in
this process (middleware, views, SQL, templates; no network; HTTPS), signed in as the demo's
`nucleo` and `transportador`, DEBUG off. The dashboard is the heaviest page a person opens
every day: its key figures, nine sections and the menu's counts; the CTR list is the
everyday page whose time users already know.

Target: the dashboard ≤ 1 s (p50) on the demo; the ratio to the CTR list is reported beside it
(it is the figure that stays meaningful on a slower or faster machine).

`python -m bench.p7_dashboard [--requests 30] [--no-write]`, on a database of its own
(``ctr_bench_p7`` beside ``ctr_bench``, or ``BENCH_P7_DATABASE_URL``) where the demo is loaded
(the four `load_*demo` commands, as `make run`); the figures go to their own section of
docs/performance.md (between the ``p7:`` markers)."""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

from . import machine
from .p2_http import say

BENCH_DB = "ctr_bench_p7"
ROOT = Path(__file__).resolve().parent.parent
BEGIN = (
    "<!-- p7:begin — gerado por `python -m bench.p7_dashboard`; não edite entre estes "
    "marcadores -->"
)
END = "<!-- p7:end -->"
DEFAULT_REQUESTS = 30
MAX_DASHBOARD_S = 1.0
PAGES = (
    ("Painel do Núcleo", "nucleo", "/nucleo/"),
    ("Lista de CTRs do transportador", "transportador", "/transportador/ctrs/"),
)


def load_demo() -> None:
    from django.core.management import call_command

    call_command("load_demo", stdout=io.StringIO())


def timed(username: str, path: str, requests: int) -> list[float]:
    """Seconds of each GET (the first, warming caches, left out)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    seconds = []
    for _ in range(requests + 1):
        start = time.perf_counter()
        response = client.get(path, secure=True)  # DEBUG off: HTTPS only
        seconds.append(time.perf_counter() - start)
        if response.status_code != 200:
            raise SystemExit(f"{path} respondeu {response.status_code} para {username}")
    return seconds[1:]


def render(rows: list[tuple[str, str, list[float]]], described: dict, when: str, command: str):
    p50 = {path: statistics.median(times) for _label, path, times in rows}
    dashboard, listing = p50["/nucleo/"], p50["/transportador/ctrs/"]
    lines = [
        "## Painel do Núcleo contra a lista de CTRs, na demonstração (P7)",
        "",
        f"Medido em {when} com `{command}`.",
        "",
        "| página | requisições | p50 (ms) | p95 (ms) |",
        "|---|---:|---:|---:|",
    ]
    for label, path, times in rows:
        p95 = statistics.quantiles(times, n=20)[-1]
        lines.append(
            f"| {label} (`{path}`) | {len(times)} | {p50[path] * 1000:.0f} | {p95 * 1000:.0f} |"
        )
    within = "dentro" if dashboard <= MAX_DASHBOARD_S else "fora"
    lines += [
        "",
        f"Painel ÷ lista de CTRs (p50): **{dashboard / listing:.1f} ×**; painel p50 "
        f"{dashboard * 1000:.0f} ms: {within} da meta de {MAX_DASHBOARD_S:.0f} s.",
        "",
        "Máquina: " + "; ".join(f"{k}: {v}" for k, v in described.items()) + ".",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from .database import own_database

    parser = argparse.ArgumentParser(
        prog="python -m bench.p7_dashboard",
        description="Mede o painel do Núcleo contra a lista de CTRs na demonstração; escreve "
        "a seção P7 de docs/performance.md.",
    )
    parser.add_argument("--requests", type=int, default=DEFAULT_REQUESTS)
    parser.add_argument(
        "--output", type=Path, default=ROOT / "docs" / "performance.md", help="o relatório"
    )
    parser.add_argument("--no-write", action="store_true", help="só imprime, não escreve")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.requests < 2:
        parser.error("--requests deve ser ao menos 2")
    load_at_start = machine.load()
    if own_database("BENCH_P7_DATABASE_URL", BENCH_DB, "P7", say) is None:
        return 2
    from django.utils import timezone

    from . import report

    say("Carregando a demonstração…")
    load_demo()
    rows = []
    for label, username, path in PAGES:
        say(f"{label}: {args.requests} requisições")
        rows.append((label, path, timed(username, path, args.requests)))
    text = render(
        rows,
        machine.describe(load_at_start),
        timezone.localtime().strftime("%Y-%m-%d %H:%M %Z"),
        report.command_line("bench.p7_dashboard", argv),
    )
    report.publish(text, args.output, args.no_write, say, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
