"""Load the fiscalization demo (fiscalization/demo.py) on top of `manage.py load_demo` and
`manage.py load_ctr_demo`; idempotent."""

import time

from django.core.management.base import BaseCommand, CommandError

from fiscalization import demo


class Command(BaseCommand):
    help = (
        "Carrega denúncias de descarte irregular (com pontos críticos) e processos de "
        "fiscalização de demonstração (fictícios); numa segunda vez, não duplica nada."
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
