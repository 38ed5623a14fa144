"""The worker process (Procfile: worker): the outbox's webhooks and e-mails and the queued
runs of the periodic jobs (jobs.runner)."""

from django.core.management.base import BaseCommand

from jobs import runner


class Command(BaseCommand):
    help = (
        "Processo de trabalho: envia os webhooks e e-mails pendentes e executa as tarefas "
        "agendadas enfileiradas. Vários podem rodar ao mesmo tempo (SKIP LOCKED)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--pause", type=float, default=1.0, help="pausa após uma volta sem nada (s)"
        )
        parser.add_argument("--limit", type=int, default=100, help="entregas por volta")
        parser.add_argument("--rounds", type=int, default=None, help="para após N voltas")
        parser.add_argument(
            "--parent", type=int, default=None, help="para quando o processo PID terminar"
        )

    def handle(self, *args, pause, limit, rounds, parent, **options):
        self.stdout.write("Worker iniciado.")
        runner.loop(
            "worker", lambda: runner.worker_tick(limit), pause, parent=parent, rounds=rounds
        )
