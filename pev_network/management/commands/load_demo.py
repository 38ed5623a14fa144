"""Load the demo: real boundaries, the fictitious network and bacias, demo accounts."""

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.utils import timezone

from pev_network import demo


class Command(BaseCommand):
    help = (
        "Carrega os dados de demonstração (limites reais, rede fictícia, contas de demonstração)."
    )

    def handle(self, *args, **options):
        fixtures = settings.BASE_DIR / "fixtures"
        for name in (
            "municipio_3518404_guaratingueta.geojson",
            "municipio_3550308_sao_paulo.geojson",
            # Issue 24 point 9: Guaratinguetá's neighbour, whose CTRs use its landfill.
            "municipio_3502507_aparecida.geojson",
        ):
            call_command("import_municipalities", str(fixtures / name), verbosity=0)
        call_command("import_facilities", str(fixtures / "demo_network.geojson"), verbosity=0)
        demo.renew_demo_licenses(timezone.localdate())
        basins = demo.load_basins(fixtures / "demo_bacias.geojson")
        demo.ensure_consortium()
        accounts = demo.ensure_demo_accounts()
        invented = demo.ensure_ufesp(timezone.localdate())
        self.stdout.write(
            f"Demonstração carregada: {basins} bacias; contas: {', '.join(accounts)} "
            "(senhas no README)."
        )
        if invented:
            years = ", ".join(str(y) for y in invented)
            self.stdout.write(
                f"UFESP de {years}: valor de demonstração (o último publicado, repetido); "
                "cadastre o valor oficial em “Valores das unidades fiscais”."
            )
