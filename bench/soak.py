"""The soak: the production mode held at half its capacity for 10 minutes.

`python -m bench.soak [--minutes 10] [--no-write]`, run by `make bench` after the others, on
the bench database (ctr_bench; 10 000 synthetic CTRs generated when it has fewer, for the
payloads). What runs, as in production (Procfile):

- gunicorn with deploy/gunicorn.conf.py (its workers, threads, max_requests recycling), DEBUG
  off, hashed static files, behind an HTTPS proxy (`X-Forwarded-Proto: https`), on 127.0.0.1
  and a free port; and the worker (`manage.py worker`), each in a process group of its own;
- a local webhook receiver (a threaded http.server on a free port) where the soak's
  transporter has an endpoint for every CTR event: it counts each delivery by its event id
  (`X-CTR-Event-Id`) and checks its signature.

The run: a warm-up; the capacity (closed loop, 16 connections, issues over the API, `wrk`
as P2); the outbox drained; the lone client's p99 (one connection, closed loop, the soak's own
mix); then the soak: an open loop at half the capacity (a fixed arrival rate; each latency
counted from its slot, so a server falling behind is seen), issues and receptions of the CTRs
issued (by the destination's operator) in turn, so that each CTR fires two webhooks. The RSS
of gunicorn (master and workers) and of the worker is read from /proc at the start and the end
(and every 10 s). Midway the worker is killed (SIGKILL) while the receiver holds a delivery
in flight, and started again. At the end the outbox is drained and every event id written for
the endpoint is checked against what the receiver got.

Delivery is at least once, by design (webhooks/delivery.py): a row is sent inside the
transaction that claimed it, so a worker killed after the receiver got the request but before
the commit leaves the row due again, and the next worker sends it a second time, with the same
event id (receivers de-duplicate on it: docs/api.md). The report counts those duplicates and
says whether they are exactly the deliveries in flight at the kill.

The parts: bench/production.py (the processes), soak_load.py (the world and the clients),
soak_run.py (the receiver and the phases); here, the report and the command."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from . import machine
from .p2_http import CLIENTS, ms, say
from .production import ROOT, Production, production_env
from .soak_load import (
    CONNECTIONS,
    DOCUMENT,
    OPERATOR_PREFIX,
    USERNAME,
    Tally,
    bench_world,
    subscribe,
)
from .soak_run import (
    CAPACITY_SECONDS,
    LONE_SECONDS,
    RATE_SHARE,
    SAMPLE_SECONDS,
    Receiver,
    Soak,
    run,
)

BEGIN = "<!-- soak:begin — gerado por `python -m bench.soak`; não edite entre estes marcadores -->"
END = "<!-- soak:end -->"

DEFAULT_MINUTES = 10
SHOWN_SECONDS = 60  # the report's table shows one sample a minute
MIN_CTRS = 10_000  # synthetic CTRs the payloads are copied from
SEED = 42
# Goals of the soak; the p99 bound is the issue path's open loop's (bench/p2_http.py).
MAX_RSS_GROWTH = 0.10
MAX_P99_RATIO = 3.0

# --- the report --------------------------------------------------------------------------------


def mib(kib: int) -> str:
    return f"{kib / 1024:.0f} MiB"


def shown(samples: list) -> list:
    """The first sample of each minute, and the last."""
    kept, minute = [], -1
    for sample in samples:
        if int(sample[0] // SHOWN_SECONDS) > minute:
            kept.append(sample)
            minute = int(sample[0] // SHOWN_SECONDS)
    if samples and kept[-1] is not samples[-1]:
        kept.append(samples[-1])
    return kept


def minute_p99(load: Tally, at: float) -> str:
    """The requests whose slot fell in the minute from `at`, and their p99 ("—" if none)."""
    start = SHOWN_SECONDS * int(at // SHOWN_SECONDS)
    took = [x for t, x in load.series if start <= t < start + SHOWN_SECONDS]
    if not took:
        return "— | —"
    p99 = statistics.quantiles(took, n=100, method="inclusive")[98] if len(took) > 1 else took[0]
    return f"{len(took)} | {ms(p99)}"


def render(soak: Soak, described: dict, when: str, command: str) -> str:
    def yes(flag: bool) -> str:
        return "atingida" if flag else "**NÃO atingida**"

    def row(name: str, t: Tally, kind: str | None = None) -> str:
        n = t.count(kind) if kind else t.requests
        return (
            f"| {name} | {n} | {n / t.seconds if t.seconds else 0:.1f} | {ms(t.p(50, kind))} "
            f"| {ms(t.p(95, kind))} | {ms(t.p(99, kind))} |"
        )

    load, lone, kill = soak.load, soak.lone, soak.kill
    growth = {name: soak.growth(name) for name in ("gunicorn", "worker")}
    rss_peak = max(s["gunicorn"] for _, s, _ in soak.rss_samples)
    dup = sum(n - 1 for n in soak.duplicates.values())
    lines = [
        "## Soak: o modo de produção a meia capacidade (issue 26, item 10)",
        "",
        f"Medido em {when} com `{command}` ({soak.minutes:g} min de carga). Processos: "
        f"`{soak.command}` ({soak.workers} workers do gunicorn, da configuração de produção), "
        "`DEBUG=false`, contra o banco `ctr_bench`; um receptor de webhooks local (http.server "
        "com threads) onde o transportador do soak assina todos os eventos de CTR. A máquina "
        "é compartilhada (2 núcleos, outras tarefas rodando ao mesmo tempo): os números "
        "absolutos variam entre execuções; as razões são da mesma execução.",
        "",
        f"Capacidade medida na mesma execução: {soak.capacity.rps:.0f} emissões/s "
        f"(`{soak.capacity.tool}`, {CLIENTS} conexões, laço fechado, p99 "
        f"{ms(soak.capacity.p99)}); o soak chega a **{soak.rate:.1f} req/s** (laço aberto, "
        f"{100 * RATE_SHARE:.0f} %), emissões e recebimentos dos CTRs emitidos alternados, cada "
        f"latência contada desde o horário da requisição; atendidas {load.rps:.1f} req/s, em "
        f"{load.seconds:.0f} s ({load.late} requisições esperaram por uma das {CONNECTIONS} "
        "conexões livres: o servidor ficou para trás quando há muitas). Cada requisição numa "
        "conexão nova, como um proxy sem keep-alive com o gunicorn.",
        "",
        "| | requisições | req/s | p50 | p95 | p99 |",
        "|---|---:|---:|---:|---:|---:|",
        row("cliente só (laço fechado)", lone),
        row("soak: tudo", load),
        row("soak: emissões (`POST /api/v1/ctrs/`)", load, "issue"),
        row("soak: recebimentos (`POST …/receive/`)", load, "receive"),
        "",
        "| meta | medido | situação |",
        "|---|---|---|",
        f"| erros = 0 | {load.errors} de {load.requests} (cliente só: {lone.errors}) "
        f"| {yes(load.errors == 0)} |",
        f"| p99 do soak ÷ p99 do cliente só (referência ≤ {MAX_P99_RATIO:g} ×, a da issue 16) "
        f"| {soak.p99_ratio:.2f} × ({ms(load.p(99))} ÷ {ms(lone.p(99))}) "
        f"| {yes(soak.p99_ratio <= MAX_P99_RATIO)} |",
        f"| RSS do gunicorn (mestre + workers) estável (± {100 * MAX_RSS_GROWTH:.0f} %) "
        f"| {mib(soak.rss_start['gunicorn'])} → {mib(soak.rss_end['gunicorn'])} "
        f"({100 * growth['gunicorn']:+.1f} %; pico {mib(rss_peak)}) "
        f"| {yes(abs(growth['gunicorn']) <= MAX_RSS_GROWTH)} |",
        f"| RSS do worker estável (± {100 * MAX_RSS_GROWTH:.0f} %) "
        f"| {mib(soak.rss_start['worker'])} → {mib(soak.rss_end['worker'])} "
        f"({100 * growth['worker']:+.1f} %; o do fim é o worker reiniciado) "
        f"| {yes(abs(growth['worker']) <= MAX_RSS_GROWTH)} |",
        f"| nenhuma entrega perdida | {soak.missing} de {soak.expected} eventos sem entrega; "
        f"{soak.pending_after_drain} pendentes após esperar o outbox | "
        f"{yes(soak.missing == 0 and soak.pending_after_drain == 0)} |",
        f"| cada evento entregue exatamente uma vez | {soak.received} entregas para "
        f"{soak.expected} eventos: {len(soak.duplicates)} eventos recebidos mais de uma vez "
        f"({dup} entregas a mais), {soak.unexpected} desconhecidos | "
        f"{yes(not soak.duplicates and not soak.unexpected)} |",
        "",
        f"Assinaturas inválidas no receptor: {soak.bad_signatures}. Outbox do endpoint no fim: "
        + ", ".join(f"{k} {v}" for k, v in sorted(soak.outbox.items()))
        + ".",
        "",
        f"**O worker morto no meio de uma entrega.** Aos {kill.at:.0f} s o receptor segurou "
        f"uma entrega sem responder (evento `{kill.held or 'nenhum'}`), o worker (pid "
        f"{kill.pid}) levou SIGKILL com {kill.pending} entregas pendentes no outbox, e um novo "
        f"(pid {kill.restarted_pid}) assumiu. "
        + (
            "Nenhuma entrega se perdeu. "
            if soak.missing == 0
            else f"**{soak.missing} entregas se perderam.** "
        )
        + (
            "A entrega em curso foi recebida duas vezes, e só ela: o worker envia dentro da "
            "transação que reservou a linha (`webhooks/delivery.py`); morto antes do COMMIT, a "
            "transação é desfeita e a linha volta a ficar pendente, e o novo worker a envia de "
            "novo com o mesmo id de evento. A entrega é *pelo menos uma vez*, não exatamente "
            "uma vez: o receptor deve descartar um `X-CTR-Event-Id` já visto "
            "(`docs/operations.md`)."
            if soak.duplicates and soak.duplicates_explained
            else "Nenhuma entrega foi recebida duas vezes."
            if not soak.duplicates
            else "**Há duplicatas além da entrega em curso na morte do worker.**"
        ),
        "",
        f"Minuto a minuto: o RSS no início do minuto (lido a cada {SAMPLE_SECONDS} s), a "
        "carga da máquina (load average de 1 min, de todos os processos da máquina, não só "
        "destes) e o p99 das requisições cujo horário caiu naquele minuto. Os workers do "
        "gunicorn são reciclados a cada ~2 000 requisições (`max_requests` de "
        "`deploy/gunicorn.conf.py`): as quedas são reciclagens; somar o RSS conta mais de uma "
        "vez as páginas que os workers dividem com o mestre.",
        "",
        "| s | gunicorn | worker | carga | requisições do minuto | p99 do minuto |",
        "|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {t:.0f} | {mib(r['gunicorn'])} | {mib(r['worker'])} | {load1:.1f} | "
            + minute_p99(load, t)
            + " |"
            for t, r, load1 in shown(soak.rss_samples)
        ),
        "",
        "Máquina: " + "; ".join(f"{k}: {v}" for k, v in described.items()) + ".",
    ]
    return "\n".join(lines)


# --- the command -------------------------------------------------------------------------------


def ensure_data() -> None:
    from synthetic import generator as synthetic

    from .database import warm

    if synthetic.ensure_municipalities(say):
        say("Municípios carregados.")
    if synthetic.counts()["CTRs"] < MIN_CTRS:
        say(f"Gerando {MIN_CTRS} CTRs sintéticos (os payloads do soak são cópias deles)…")
        synthetic.reset()
        synthetic.generate(ctrs=MIN_CTRS, reports=0, seed=SEED)
    warm(say)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak",
        description="Mantém o modo de produção (gunicorn e worker) a meia capacidade, com "
        "emissões, recebimentos e webhooks para um receptor local; escreve a seção do soak "
        "em docs/performance.md.",
    )
    parser.add_argument("--minutes", type=float, default=DEFAULT_MINUTES, help="padrão: 10")
    # Tests and trials: the soak in seconds, the capacity and the lone client short.
    parser.add_argument("--seconds", type=float, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--output", type=Path, default=ROOT / "docs" / "performance.md", help="o relatório"
    )
    parser.add_argument("--no-write", action="store_true", help="só imprime, não escreve")
    args = parser.parse_args(argv)
    if (args.seconds if args.seconds is not None else args.minutes * 60) < 2:
        parser.error("o soak precisa de ao menos 2 s")
    return args


def main(argv: list[str] | None = None) -> int:
    from .database import open_bench

    args = parse(sys.argv[1:] if argv is None else argv)
    seconds = args.seconds if args.seconds is not None else args.minutes * 60
    load_at_start = machine.load()
    if open_bench(say) is None:
        return 2
    from django.utils import timezone

    from . import report
    from .p2_http import cleanup

    ensure_data()
    world, transporter, user = bench_world()
    usernames = (USERNAME, *(f"{OPERATOR_PREFIX}{f}" for f in world.operators))
    removed = cleanup(DOCUMENT, usernames)
    if removed:
        say(f"{removed} CTRs de um soak anterior removidos.")
    static = tempfile.mkdtemp(prefix="ctr-soak-static-")
    env = production_env(static)
    try:
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        with Receiver() as receiver:
            receiver.secret = subscribe(world, transporter, user, receiver.url)
            with Production(env) as production:
                short = args.seconds is not None
                soak = run(
                    production,
                    receiver,
                    world,
                    seconds,
                    capacity_seconds=min(CAPACITY_SECONDS, 5) if short else CAPACITY_SECONDS,
                    lone_seconds=min(LONE_SECONDS, 3) if short else LONE_SECONDS,
                )
    finally:
        shutil.rmtree(static, ignore_errors=True)
        say(f"{cleanup(DOCUMENT, usernames)} CTRs do soak removidos.")
    text = render(
        soak,
        machine.describe(load_at_start),
        timezone.localtime().strftime("%Y-%m-%d %H:%M %Z"),
        report.command_line("bench.soak", argv),
    )
    report.publish(text, args.output, args.no_write, say, BEGIN, END)
    ok = soak.missing == 0 and soak.pending_after_drain == 0 and soak.duplicates_explained
    return 0 if ok else 1


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
