"""Send the outbox's due webhooks and e-mails: one pass, or `--loop` as a daemon."""

from __future__ import annotations

import os
import time

from django.core.management.base import BaseCommand
from django.db import close_old_connections

from webhooks import delivery


class Command(BaseCommand):
    help = (
        "Envia os webhooks e e-mails pendentes (uma passada; --loop repete). Vários processos "
        "podem rodar ao mesmo tempo: cada entrega é reservada com SKIP LOCKED."
    )

    def add_arguments(self, parser):
        parser.add_argument("--loop", action="store_true", help="repete, como serviço")
        parser.add_argument(
            "--sleep", type=float, default=2.0, help="pausa entre passadas sem nada (s)"
        )
        parser.add_argument("--limit", type=int, default=100, help="entregas por passada")
        parser.add_argument("--timeout", type=float, default=None, help="limite por envio (s)")
        parser.add_argument(
            "--parent",
            type=int,
            default=None,
            help="com --loop, para quando o processo PID terminar (scripts/start.sh)",
        )

    def handle(self, *args, loop=False, sleep=2.0, limit=100, timeout=None, parent=None, **options):
        while True:
            if parent is not None and not _alive(parent):
                return
            if loop:
                # A daemon outlives its connection (a restarted database): a fresh one when
                # the old one is unusable, as each request of the site gets.
                close_old_connections()
            done = delivery.deliver_due(limit=limit, timeout=timeout)
            if done or not loop:
                summary = ", ".join(f"{k}: {v}" for k, v in sorted(done.items())) or "nada"
                self.stdout.write(f"Entregas: {summary}")
            if not loop:
                return
            if not done:
                time.sleep(sleep)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
