"""The phone pages, measured: Lighthouse in its mobile profile on the pages
each role opens, against the production configuration.

`python -m bench.pages [--only /nucleo/] [--no-write] [--reports DIR]`, run by `make bench`, on
a database of its own (``ctr_bench_pages`` beside ``ctr_bench``, or
``BENCH_PAGES_DATABASE_URL``) where the demonstration is loaded (the four `load_*demo`
commands, as `make run`), so that each role's pages have real content. What runs:

- gunicorn with deploy/gunicorn.conf.py (bench/production.py's Production, without the worker),
  DEBUG off, static files hashed by `collectstatic` and served by WhiteNoise, HTML compressed
  (config.middleware.CompressedTextMiddleware), behind an HTTPS proxy (each request carries
  `X-Forwarded-Proto: https`); with CSP's upgrade-insecure-requests off (there is no TLS on
  127.0.0.1 for the browser to upgrade to);
- a tile server on 127.0.0.1 answering every base-map tile with one small PNG (the machine's
  network is closed; in production the tiles come from the tile provider's CDN);
- Lighthouse (package.json devDependencies, pinned) driving Debian's Chromium headless, mobile
  form factor and Lighthouse's default simulated throttling (Lantern: a slow 4G and a 4× slower
  CPU, computed from one unthrottled load); signed in by a session created here, server-side,
  whose cookie goes in `--extra-headers`.

Goals: performance ≥ 95, cumulative layout shift ≤ 0.05, largest contentful paint
≤ 2.0 s, accessibility 100, on every page. The table and, for a page that misses a goal, what
Lighthouse shows of why (its LCP element and phases, the render-blocking resources, the
elements that shifted) go to their own section of docs/performance.md (the ``pages:``
markers)."""

from __future__ import annotations

import argparse
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from config.br import br_number

from . import machine
from .p2_http import say

BENCH_DB = "ctr_bench_pages"
ROOT = Path(__file__).resolve().parent.parent
LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"
CHROME = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
# The machine's network is closed: without these Chromium waits on connections to Google.
CHROME_FLAGS = (
    "--headless=new --no-sandbox --disable-gpu --disable-background-networking "
    "--disable-component-update --disable-sync --no-first-run"
)
CATEGORIES = "performance,accessibility,best-practices"
LIGHTHOUSE_SECONDS = 240
DEFAULT_RUNS = 3
BEGIN = (
    "<!-- pages:begin — gerado por `python -m bench.pages`; não edite entre estes marcadores -->"
)
END = "<!-- pages:end -->"

# The goals on a phone.
MIN_PERFORMANCE = 95
MAX_CLS = 0.05
MAX_LCP_S = 2.0
MIN_ACCESSIBILITY = 100

# (page, role shown in the table, demo user or None for a visitor, path)
PAGES = (
    ("Início", "visitante", None, "/"),
    ("Onde descartar", "visitante", None, "/onde-descartar/"),
    ("Denunciar descarte", "visitante", None, "/denunciar/"),
    ("Verificar CTR", "visitante", None, "/verificar/"),
    ("Meus CTRs", "transportador", "transportador", "/transportador/ctrs/"),
    ("Emitir CTR", "transportador", "transportador", "/transportador/ctrs/novo/"),
    ("Recebimentos", "operador da ATT", "operador", "/recebimentos/"),
    ("Área do gerador", "gerador", "gerador", "/gerador/"),
    ("Painel do Núcleo", "Núcleo", "nucleo", "/nucleo/"),
    ("Mapa do Núcleo", "Núcleo", "nucleo", "/nucleo/mapa/"),
    ("Fiscalização", "fiscal", "fiscal", "/fiscalizacao/"),
)


@dataclass
class Measure:
    """One page's Lighthouse figures (scores 0–100, seconds, bytes) and, for the notes, what
    it says of why."""

    label: str
    role: str
    path: str
    performance: int
    accessibility: int
    best_practices: int
    lcp_s: float
    cls: float
    tbt_ms: float
    bytes: int
    lcp_element: str = ""
    lcp_phases: dict = field(default_factory=dict)
    blocking: list = field(default_factory=list)  # (url, wasted ms)
    shifts: list = field(default_factory=list)  # (element, score)
    failed: list = field(default_factory=list)  # accessibility/best-practice audits failed
    spread: tuple[int, int] | None = None  # the lowest and highest performance of the runs

    def missed(self) -> list[str]:
        """The goals this page misses, in words."""
        out = []
        if self.performance < MIN_PERFORMANCE:
            out.append(f"desempenho {self.performance} < {MIN_PERFORMANCE}")
        if self.cls > MAX_CLS:
            out.append(f"CLS {br_number(self.cls, 3)} > {br_number(MAX_CLS, 2)}")
        if self.lcp_s > MAX_LCP_S:
            out.append(f"LCP {br_number(self.lcp_s, 1)} s > {br_number(MAX_LCP_S, 1)} s")
        if self.accessibility < MIN_ACCESSIBILITY:
            out.append(f"acessibilidade {self.accessibility} < {MIN_ACCESSIBILITY}")
        return out


# --- what Lighthouse reports -------------------------------------------------------------------


def _score(report: dict, category: str) -> int:
    score = report["categories"][category]["score"]
    return round((score or 0) * 100)


def _items(report: dict, audit: str) -> list[dict]:
    details = report["audits"].get(audit, {}).get("details") or {}
    return details.get("items") or []


def _node(item: dict) -> str:
    node = item.get("node") or {}
    return node.get("selector") or node.get("snippet") or ""


def parse_report(report: dict, label: str, role: str, path: str) -> Measure:
    """A Measure from Lighthouse's JSON report (`--output=json`)."""
    audits = report["audits"]
    lcp_items = _items(report, "largest-contentful-paint-element")
    element, phases = "", {}
    for table in lcp_items:  # Lighthouse 12: a list of two tables (element, phases)
        for row in table.get("items", []) if "items" in table else [table]:
            if row.get("node"):
                element = _node(row)
            elif "phase" in row:
                phases[row["phase"]] = row.get("timing", 0)
    shifts = [(_node(i), i.get("score", 0)) for i in _items(report, "layout-shifts")]
    blocking = [
        (i.get("url", ""), i.get("wastedMs", 0))
        for i in _items(report, "render-blocking-resources")
    ]
    failed = []
    for category in ("accessibility", "best-practices"):
        for ref in report["categories"][category]["auditRefs"]:
            audit = audits.get(ref["id"], {})
            if ref.get("weight") and audit.get("score") is not None and audit["score"] < 1:
                failed.append(f"{ref['id']}")
    return Measure(
        label=label,
        role=role,
        path=path,
        performance=_score(report, "performance"),
        accessibility=_score(report, "accessibility"),
        best_practices=_score(report, "best-practices"),
        lcp_s=audits["largest-contentful-paint"]["numericValue"] / 1000,
        cls=audits["cumulative-layout-shift"]["numericValue"],
        tbt_ms=audits["total-blocking-time"]["numericValue"],
        bytes=int(audits["total-byte-weight"]["numericValue"]),
        lcp_element=element,
        lcp_phases=phases,
        blocking=blocking,
        shifts=shifts,
        failed=failed,
    )


def lighthouse(url: str, headers: dict[str, str], keep: Path | None = None) -> dict:
    """Lighthouse's JSON report of `url` (mobile, simulated throttling: its defaults)."""
    env = {**os.environ, "CHROME_PATH": CHROME}
    command = [
        str(LIGHTHOUSE),
        url,
        "--output=json",
        "--output-path=stdout",
        "--quiet",
        f"--only-categories={CATEGORIES}",
        f"--chrome-flags={CHROME_FLAGS}",
        f"--extra-headers={json.dumps(headers)}",
    ]
    # A session of its own: on a timeout or an interrupt Lighthouse and the Chromium it
    # launched go together (killing the node process alone leaves Chromium behind).
    process = subprocess.Popen(
        command, env=env, cwd=ROOT, text=True, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        stdout, stderr = process.communicate(timeout=LIGHTHOUSE_SECONDS)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if process.returncode != 0:
        raise RuntimeError(f"Lighthouse falhou em {url}:\n{stderr[-3000:]}")
    report = json.loads(stdout)
    if report.get("runtimeError"):
        raise RuntimeError(f"Lighthouse em {url}: {report['runtimeError']}")
    if keep:
        name = url.split("//", 1)[1].split("/", 1)[1].strip("/").replace("/", "_") or "inicio"
        (keep / f"{name}.json").write_text(stdout)
    return report


# --- the servers -------------------------------------------------------------------------------


def _tile_png() -> bytes:
    """A 256×256 light grey PNG: what every tile request gets."""
    raw = b"".join(b"\x00" + b"\xe5\xe5\xe5" * 256 for _ in range(256))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    header = (256).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


class TileServer:
    """Base-map tiles on 127.0.0.1 and a free port, each cached for a day as a CDN's."""

    def __init__(self):
        png = _tile_png()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(png)))
                self.send_header("Cache-Control", "public, max-age=86400")
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                self.wfile.write(png)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/{{z}}/{{x}}/{{y}}.png"

    def __enter__(self) -> TileServer:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def session_cookie(username: str) -> str:
    """A session of `username`, created server-side (the database's session store, which
    gunicorn reads): the value of the session cookie."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    return client.cookies["sessionid"].value


def production_env(static_root: str, tile_url: str) -> dict[str, str]:
    from . import production

    return {
        **production.production_env(static_root),
        # No TLS on 127.0.0.1: CSP's upgrade-insecure-requests would send Chromium to https.
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "CTR_MAP_TILE_URL": tile_url,
        "WEB_CONCURRENCY": "2",
        "GUNICORN_ACCESS_LOG": "0",
    }


def attempt(run, *args, tries: int = 3):
    """Lighthouse again when it fails to trace a load (it says so: "Something went wrong with
    recording the trace… (NO_NAVSTART)", once in ~30 runs here); the last failure stands."""
    for n in range(tries):
        try:
            return run(*args)
        except RuntimeError as exc:
            if n == tries - 1:
                raise
            say(f"  {str(exc).splitlines()[-1][:160]}: de novo")
    raise AssertionError("unreachable")


def median_run(runs: list[Measure]) -> Measure:
    """The run in the middle by performance score (then LCP), as Lighthouse's own
    computeMedianRun picks one: a single run of a loaded machine varies by several points.
    The run carries the lowest and highest scores seen."""
    ordered = sorted(runs, key=lambda m: (m.performance, -m.lcp_s))
    chosen = ordered[(len(ordered) - 1) // 2]
    chosen.spread = (ordered[0].performance, ordered[-1].performance) if len(runs) > 1 else None
    return chosen


def measure(
    pages, env: dict[str, str], keep: Path | None = None, on_page=None, runs: int = 1
) -> tuple[list[Measure], str]:
    """Lighthouse `runs` times on each of `pages` (PAGES' rows) against gunicorn started with
    `env`: the median run of each page, and the server's command line."""
    from .production import Production

    cookies = {user: session_cookie(user) for _l, _r, user, _p in pages if user}
    out = []
    with Production(env, worker=False) as production:
        base = f"http://127.0.0.1:{production.port}"
        for label, role, user, path in pages:
            headers = {"X-Forwarded-Proto": "https"}
            if user:
                headers["Cookie"] = f"sessionid={cookies[user]}"
            tries = []
            for n in range(runs):
                say(f"Lighthouse: {label} ({role}) {path} [{n + 1}/{runs}]")
                report = attempt(lighthouse, base + path, headers, keep)
                tries.append(parse_report(report, label, role, path))
                if on_page:
                    on_page(tries[-1])
            out.append(median_run(tries))
        command = production.command.split(";")[0]
    return out, command


# --- the report --------------------------------------------------------------------------------


def row(m: Measure) -> str:
    from .report import thousands

    goals = "atingidas" if not m.missed() else "**não**: " + "; ".join(m.missed())
    spread = f" ({m.spread[0]}–{m.spread[1]})" if m.spread else ""
    return (
        f"| {m.label} (`{m.path}`) | {m.role} | {m.performance}{spread} | {m.accessibility} "
        f"| {m.best_practices} | {br_number(m.lcp_s, 2)} s | {br_number(m.cls, 3)} "
        f"| {m.tbt_ms:.0f} ms | {thousands(m.bytes)} | {goals} |"
    )


def notes(m: Measure) -> list[str]:
    """Why a page misses a goal, from its trace: the LCP element and the time in each of its
    phases, what blocked the first render, what shifted."""
    lines = [f"- **{m.label}** (`{m.path}`, {m.role}): {'; '.join(m.missed())}."]
    if m.lcp_element:
        phases = ", ".join(f"{k} {v:.0f} ms" for k, v in m.lcp_phases.items())
        lines.append(f"  LCP: `{m.lcp_element}`" + (f" ({phases})" if phases else "") + ".")
    if m.blocking:
        shown = ", ".join(f"`{u.split('/static/')[-1]}` ({ms:.0f} ms)" for u, ms in m.blocking)
        lines.append(f"  Bloqueiam a primeira pintura: {shown}.")
    if m.shifts:
        shown = ", ".join(f"`{el or '?'}` ({br_number(s, 3)})" for el, s in m.shifts[:5])
        lines.append(f"  Deslocamentos: {shown}.")
    if m.failed:
        lines.append(f"  Auditorias falhas: {', '.join(m.failed)}.")
    return lines


def render(
    measures: list[Measure], described: dict, when: str, command: str, server: str, runs: int = 1
):
    each = (
        f"Cada página medida {runs} vezes; a tabela mostra a execução mediana pelo desempenho "
        "(como o `computeMedianRun` do Lighthouse), com o menor e o maior desempenho entre "
        "parênteses. "
        if runs > 1
        else ""
    )
    lines = [
        "## Páginas no celular, medidas pelo Lighthouse (issue 27, ponto 1)",
        "",
        f"Medido em {when} com `{command}`: Lighthouse {lighthouse_version()} no perfil de "
        "celular e com a limitação simulada padrão (Lantern: 4G lento e CPU 4 × mais lenta, "
        "calculados de um carregamento sem limitação), Chromium do Debian sem interface; o "
        f"servidor em produção (`{server}`, 2 workers, `DEBUG` desligado, estáticos com hash "
        "servidos pelo WhiteNoise, HTML comprimido) na demonstração, com a sessão de cada "
        f"papel. {each}Metas em cada página: desempenho ≥ 95, CLS ≤ 0,05, LCP ≤ 2,0 s, "
        "acessibilidade 100.",
        "",
        "| página | papel | desempenho | acessibilidade | boas práticas | LCP | CLS | TBT "
        "| bytes | metas |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    lines += [row(m) for m in measures]
    met = sum(1 for m in measures if not m.missed())
    lines += ["", f"Metas atingidas em {met} de {len(measures)} páginas."]
    missing = [m for m in measures if m.missed()]
    if missing:
        lines += ["", "O que o traço mostra nas páginas fora da meta:", ""]
        for m in missing:
            lines += notes(m)
    lines += [
        "",
        "Máquina: " + "; ".join(f"{k}: {v}" for k, v in described.items()) + ".",
    ]
    return "\n".join(lines)


def lighthouse_version() -> str:
    package = ROOT / "node_modules" / "lighthouse" / "package.json"
    try:
        return json.loads(package.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "?"


def ensure_lighthouse() -> None:
    """Lighthouse is a dev dependency: `make run` installs only the browser libraries (npm ci
    --omit=dev); the benchmark installs the rest from the lockfile when it is missing."""
    if LIGHTHOUSE.exists():
        return
    say("Instalando o Lighthouse (package-lock.json, npm ci)…")
    subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=ROOT,
        check=True,
    )


def load_demo() -> None:
    from .p7_dashboard import load_demo as load

    load()


def main(argv: list[str] | None = None) -> int:
    from .database import own_database

    parser = argparse.ArgumentParser(
        prog="python -m bench.pages",
        description="Roda o Lighthouse (celular) nas páginas de cada papel, com o servidor em "
        "produção e a demonstração; escreve a seção das páginas em docs/performance.md.",
    )
    parser.add_argument(
        "--only", action="append", default=[], help="só este caminho (pode repetir)"
    )
    parser.add_argument(
        "--output", type=Path, default=ROOT / "docs" / "performance.md", help="o relatório"
    )
    parser.add_argument("--reports", type=Path, help="guarda aqui o JSON de cada página")
    parser.add_argument(
        "--runs",
        type=int,
        default=DEFAULT_RUNS,
        help=f"execuções por página (padrão {DEFAULT_RUNS})",
    )
    parser.add_argument("--no-write", action="store_true", help="só imprime, não escreve")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    pages = [p for p in PAGES if not args.only or p[3] in args.only]
    if not pages:
        parser.error("nenhuma página com esse caminho")
    if args.runs < 1:
        parser.error("--runs deve ser ao menos 1")
    if not Path(CHROME).exists():
        print(f"Falta o Chromium em {CHROME} (apt-get install chromium).", file=sys.stderr)
        return 2
    ensure_lighthouse()
    load_at_start = machine.load()
    if own_database("BENCH_PAGES_DATABASE_URL", BENCH_DB, "de páginas", say) is None:
        return 2
    from django.utils import timezone

    from . import report

    say("Carregando a demonstração…")
    load_demo()
    if args.reports:
        args.reports.mkdir(parents=True, exist_ok=True)
    static = tempfile.mkdtemp(prefix="ctr-pages-static-")
    try:
        with TileServer() as tiles:
            env = production_env(static, tiles.url)
            subprocess.run(
                [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
                cwd=ROOT,
                env=env,
                check=True,
            )
            started = time.perf_counter()
            measures, server = measure(
                pages,
                env,
                args.reports,
                on_page=lambda m: say(
                    f"  desempenho {m.performance}, acessibilidade {m.accessibility}, "
                    f"LCP {m.lcp_s:.2f} s, CLS {m.cls:.3f}, TBT {m.tbt_ms:.0f} ms"
                ),
                runs=args.runs,
            )
            say(f"{len(measures)} páginas em {time.perf_counter() - started:.0f} s")
    finally:
        shutil.rmtree(static, ignore_errors=True)
    text = render(
        measures,
        machine.describe(load_at_start),
        timezone.localtime().strftime("%Y-%m-%d %H:%M %Z"),
        report.command_line("bench.pages", argv),
        server,
        args.runs,
    )
    report.publish(text, args.output, args.no_write, say, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
