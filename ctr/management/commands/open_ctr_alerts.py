"""List CTRs open longer than their municipality's alert hours (OPEN_TOO_LONG, art. 2 §1)."""

from django.core.management.base import BaseCommand

from ctr.models import CTR

from ... import alerts


class Command(BaseCommand):
    help = "Lista os CTRs emitidos e não recebidos além do prazo de alerta do município."

    def add_arguments(self, parser):
        parser.add_argument("--municipality", help="código IBGE do município")

    def handle(self, *args, **options):
        queryset = CTR.objects.select_related("transporter", "destination_facility", "vehicle")
        if options["municipality"]:
            queryset = queryset.filter(municipality__ibge_code=options["municipality"])
        overdue = list(alerts.overdue(queryset).order_by("created_at"))
        for ctr in overdue:
            self.stdout.write(
                f"{ctr.number}\t{ctr.transport_date:%d/%m/%Y}\taberto há {int(ctr.hours_open)} h "
                f"(prazo {ctr.alert_hours} h)\t{ctr.transporter.name}\t{ctr.vehicle}\t"
                f"destino: {ctr.destination_facility.name}"
            )
        self.stdout.write(f"{len(overdue)} CTR(s) em aberto além do prazo.")
