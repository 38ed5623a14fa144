"""Load the CTR demo (ctr/demo.py) on top of `manage.py load_demo`; idempotent."""

import time

from django.core.management.base import BaseCommand, CommandError

from ctr import demo


class Command(BaseCommand):
    help = (
        "Carrega transportadores, veículos, equipamentos, geradores, obras e algumas centenas "
        "de CTRs de demonstração (fictícios); numa segunda vez, só restaura as contas."
    )

    def handle(self, *args, **options):
        started = time.monotonic()
        try:
            result = demo.load()
        except ValueError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(result.summary())
        if options["verbosity"] > 1:
            self.stdout.write(f"Tempo: {time.monotonic() - started:.1f} s.")
