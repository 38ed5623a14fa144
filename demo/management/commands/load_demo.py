"""Load the whole demonstration (demo/loading.py); idempotent."""

import time

from django.core.management.base import BaseCommand, CommandError

from demo import loading


class Command(BaseCommand):
    help = (
        "Carrega toda a demonstração: limites reais, rede fictícia, contas, transportadores, "
        "obras e algumas centenas de CTRs, o lado do gerador, denúncias e processos de "
        "fiscalização (tudo fictício); numa segunda vez, só restaura as contas."
    )

    def handle(self, *args, **options):
        started = time.monotonic()
        try:
            for summary in loading.load():
                self.stdout.write(summary)
        except ValueError as error:
            raise CommandError(str(error)) from error
        if options["verbosity"] > 1:
            self.stdout.write(f"Tempo: {time.monotonic() - started:.1f} s.")
