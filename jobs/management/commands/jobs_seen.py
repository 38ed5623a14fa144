"""The healthcheck of the worker's and the scheduler's containers: exit 0 when the role was
seen within --within seconds (jobs.health.last_seen), 1 otherwise."""

import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from jobs import health


class Command(BaseCommand):
    help = "Verifica se o worker ou o agendador deu sinal de vida há pouco (código de saída)."

    def add_arguments(self, parser):
        parser.add_argument("role", choices=health.ROLES)
        parser.add_argument("--within", type=int, default=120, help="segundos (padrão: 120)")

    def handle(self, *args, role, within, **options):
        seen = health.last_seen()[role]
        if seen is None or timezone.now() - seen > datetime.timedelta(seconds=within):
            raise CommandError(f"{role}: sem sinal de vida nos últimos {within} s.")
        self.stdout.write(f"{role}: visto em {seen.isoformat()}")
