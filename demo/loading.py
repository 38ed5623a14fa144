"""The whole demonstration in its order: the network first (boundaries, facilities, bacias, the
admin account, the UFESP), then the CTRs on it, the generator's side on the CTRs' worksites,
and the fiscalization on the CTRs' transporters. Each part is idempotent on its own, so a
second load restores the accounts and duplicates nothing."""

from __future__ import annotations

from collections.abc import Iterator

from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from . import ctrs, fiscalization, generators, network

BOUNDARIES = (
    "municipio_3518404_guaratingueta.geojson",
    "municipio_3550308_sao_paulo.geojson",
    # Guaratinguetá's neighbour, whose CTRs use its landfill.
    "municipio_3502507_aparecida.geojson",
)


def load_network() -> str:
    """The real boundaries, the fictitious network and bacias, the consortium, the admin
    account and the UFESP of the years the demo uses; returns the summary."""
    fixtures = settings.BASE_DIR / "fixtures"
    for name in BOUNDARIES:
        call_command("import_municipalities", str(fixtures / name), verbosity=0)
    call_command("import_facilities", str(fixtures / "demo_network.geojson"), verbosity=0)
    network.renew_demo_licenses(timezone.localdate())
    basins = network.load_basins(fixtures / "demo_bacias.geojson")
    network.ensure_consortium()
    accounts = network.ensure_demo_accounts()
    invented = network.ensure_ufesp(timezone.localdate())
    lines = [
        f"Demonstração carregada: {basins} bacias; contas: {', '.join(accounts)} "
        "(senhas no README)."
    ]
    if invented:
        years = ", ".join(str(y) for y in invented)
        lines.append(
            f"UFESP de {years}: valor de demonstração (o último publicado, repetido); "
            "cadastre o valor oficial em “Valores das unidades fiscais”."
        )
    return "\n".join(lines)


def load_ctrs() -> str:
    return ctrs.load().summary()


def load_generators() -> str:
    return generators.load().summary()


def load_fiscalization() -> str:
    return fiscalization.load().summary()


PARTS = (load_network, load_ctrs, load_generators, load_fiscalization)


def load() -> Iterator[str]:
    """Load every part in order, yielding each part's summary as it is done (each part is its
    own transaction, as it was when each had its command)."""
    for part in PARTS:
        yield part()
