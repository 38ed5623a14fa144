"""The scheduler process (Procfile: scheduler): queues each periodic job at its due time
(jobs.schedule), once per due time however many schedulers run."""

from django.core.management.base import BaseCommand

from jobs import runner, schedule


class Command(BaseCommand):
    help = (
        "Agendador: enfileira as tarefas periódicas no horário (America/Sao_Paulo); o worker "
        "as executa. Dois agendadores ao mesmo tempo enfileiram cada horário uma vez só."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tick", type=float, default=5.0, help="intervalo entre voltas (s)")
        parser.add_argument("--rounds", type=int, default=None, help="para após N voltas")
        parser.add_argument(
            "--parent", type=int, default=None, help="para quando o processo PID terminar"
        )
        parser.add_argument("--list", action="store_true", help="só mostra o agendamento")

    def handle(self, *args, tick, rounds, parent, **options):
        if options["list"]:
            for job in schedule.jobs():
                self.stdout.write(f"{job.name}\t{job.when}\t{job.description}")
            return
        self.stdout.write("Agendador iniciado.")

        def tick_once():
            for name in runner.scheduler_tick():
                self.stdout.write(f"Enfileirada: {name}")
            return False  # always pause: the next due time is at least a tick away

        runner.loop("scheduler", tick_once, tick, parent=parent, rounds=rounds)
