"""Placeholder until the CTR demo lands: keeps `make run` working."""

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Carrega transportadores, obras e CTRs de demonstração."

    def handle(self, *args, **options):
        self.stdout.write("Demonstração de CTR ainda não disponível.")
