"""Load the generator's demo (generators/demo.py) on top of `manage.py load_ctr_demo`;
idempotent."""

from django.core.management.base import BaseCommand, CommandError

from generators import demo


class Command(BaseCommand):
    help = (
        "Cria a conta de demonstração do gerador (gerador, pela Construtora Horizonte fictícia) "
        "e um cadastro de gerador aguardando o Núcleo; rode depois de load_ctr_demo. Numa "
        "segunda vez, só restaura a senha da conta."
    )

    def handle(self, *args, **options):
        try:
            result = demo.load()
        except ValueError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(result.summary())
