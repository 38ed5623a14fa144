"""Send the outbox's due webhooks and e-mails once, by hand. The service that sends them all
the time is the worker (`manage.py worker`, jobs.runner)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from webhooks import delivery


class Command(BaseCommand):
    help = (
        "Envia uma vez os webhooks e e-mails pendentes (o serviço contínuo é o worker: "
        "manage.py worker). Vários processos podem rodar ao mesmo tempo: cada entrega é "
        "reservada com SKIP LOCKED."
    )

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=100, help="entregas por passada")
        parser.add_argument("--timeout", type=float, default=None, help="limite por envio (s)")

    def handle(self, *args, limit=100, timeout=None, **options):
        done = delivery.deliver_due(limit=limit, timeout=timeout)
        summary = ", ".join(f"{k}: {v}" for k, v in sorted(done.items())) or "nada"
        self.stdout.write(f"Entregas: {summary}")
