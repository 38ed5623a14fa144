"""E-mail the CTRs whose generator did not confirm the departure in the municipality's hours:
the Núcleo and the generator's users, each CTR once."""

from django.core.management.base import BaseCommand, CommandError

from generators import confirmation
from pev_network.models import Municipality


class Command(BaseCommand):
    help = (
        "Avisa por e-mail o Núcleo e os usuários do gerador dos CTRs sem a confirmação de saída "
        "do gerador além do prazo do município (cada CTR uma vez)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--municipality", default="", help="código IBGE do município")
        parser.add_argument(
            "--dry-run", action="store_true", help="só lista: não envia nem registra nada"
        )

    def handle(self, *args, **options):
        ibge = options["municipality"].strip()
        if ibge and not Municipality.objects.filter(ibge_code=ibge).exists():
            raise CommandError(f"Município com código IBGE {ibge} não encontrado.")
        result = confirmation.notify_unconfirmed(ibge_code=ibge, dry_run=options["dry_run"])
        for ctr in result.ctrs:
            self.stdout.write(
                f"{ctr.number}\t{ctr.transport_date:%d/%m/%Y}\t"
                f"{int(ctr.hours_open)} h sem confirmação\t{ctr.transporter.name}"
            )
        if options["dry_run"]:
            self.stdout.write(f"{len(result.ctrs)} CTR(s) sem confirmação a avisar (simulação).")
        else:
            self.stdout.write(
                f"{len(result.ctrs)} CTR(s) sem confirmação avisados: {result.messages} "
                f"e-mail(s) para {result.recipients} destinatário(s)."
            )
