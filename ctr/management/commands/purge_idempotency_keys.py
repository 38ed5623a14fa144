"""Delete the Idempotency-Key records past their lifetime (ctr/idempotency.py): run daily."""

from django.core.management.base import BaseCommand, CommandError

from ctr import idempotency


class Command(BaseCommand):
    help = (
        "Apaga as chaves Idempotency-Key (e as respostas guardadas) mais antigas que o prazo "
        f"(CTR_IDEMPOTENCY_KEY_HOURS, no mínimo {idempotency.DEFAULT_HOURS} horas)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--hours",
            type=int,
            help="apaga as chaves com mais horas que isto (padrão: CTR_IDEMPOTENCY_KEY_HOURS)",
        )
        parser.add_argument("--dry-run", action="store_true", help="só conta as chaves, sem apagar")

    def handle(self, *args, **options):
        hours = options["hours"]
        if hours is not None and hours < idempotency.DEFAULT_HOURS:
            raise CommandError(
                f"--hours deve ser ao menos {idempotency.DEFAULT_HOURS}: a API promete guardar "
                "cada chave por esse tempo."
            )
        hours = hours or idempotency.lifetime_hours()
        count = idempotency.purge(hours=hours, dry_run=options["dry_run"])
        if options["dry_run"]:
            self.stdout.write(f"{count} chave(s) com mais de {hours} h seriam apagadas.")
        else:
            self.stdout.write(f"{count} chave(s) com mais de {hours} h apagadas.")
