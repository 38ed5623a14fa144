"""The demos' cast (demo/ctrs.py, demo/fiscalization.py): fictitious transporters, persons,
companies and streets, with valid, fictitious documents (check digits computed)."""

from __future__ import annotations

from dataclasses import dataclass

from ctr.models import EquipmentKind

# --- valid, fictitious documents ------------------------------------------------------------


def _check_digit(digits: str, weights: list[int]) -> str:
    remainder = sum(int(d) * w for d, w in zip(digits, weights, strict=True)) % 11
    return "0" if remainder < 2 else str(11 - remainder)


def cpf(base: str) -> str:
    """The 11-digit CPF of a 9-digit base, check digits computed."""
    first = _check_digit(base, list(range(10, 1, -1)))
    return base + first + _check_digit(base + first, list(range(11, 1, -1)))


def cnpj(base: str) -> str:
    """The 14-digit CNPJ of a 12-digit base (root + branch), check digits computed."""
    weights = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    first = _check_digit(base, weights)
    return base + first + _check_digit(base + first, [6, *weights])


# --- the cast -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TransporterSpec:
    key: str
    username: str
    name: str
    document: str
    registration: str
    vehicles: tuple[tuple[str, str, str], ...]  # plate, description, use (skip/tipper/small)
    equipment: tuple[tuple[str, str, str], ...]  # code, kind, capacity m³
    weight: float  # share of the loads


TRANSPORTERS = (
    TransporterSpec(
        "A",
        "transportador",
        "Caçambas Vale Exemplo Ltda. (fictícia)",
        cnpj("424242420001"),
        "DEMO-TR-0001",
        (
            ("DEM1A23", "Caminhão poliguindaste (fictício)", "skip"),
            ("DEM4567", "Caminhão basculante (fictício)", "tipper"),
            ("DEM2B34", "Caminhonete com carroceria (fictícia)", "small"),
        ),
        (
            ("CV-03", EquipmentKind.STATIONARY_SKIP, "3"),
            ("CV-04", EquipmentKind.STATIONARY_SKIP, "4"),
            ("CV-05", EquipmentKind.STATIONARY_SKIP, "5"),
            ("BV-10", EquipmentKind.TIPPER, "10"),
        ),
        0.55,
    ),
    TransporterSpec(
        "B",
        "transportador2",
        "Entulho Rápido Modelo ME (fictícia)",
        cnpj("515151510001"),
        "DEMO-TR-0002",
        (
            ("EXE3C45", "Caminhão poliguindaste (fictício)", "skip"),
            ("EXE8901", "Caminhonete com carroceria (fictícia)", "small"),
        ),
        (
            ("CE-04", EquipmentKind.STATIONARY_SKIP, "4"),
            ("CE-05", EquipmentKind.STATIONARY_SKIP, "5"),
        ),
        0.30,
    ),
    # Suspended five days ago for 15 days (art. 25 IV): its CTRs stop the day before.
    TransporterSpec(
        "C",
        "transportador3",
        "Remoções Paraíba Ilustrativa Ltda. (fictícia, suspensa)",
        cnpj("606060600001"),
        "DEMO-TR-0003",
        (("FIC5D67", "Caminhão poliguindaste (fictício)", "skip"),),
        (("CF-04", EquipmentKind.STATIONARY_SKIP, "4"),),
        0.15,
    ),
)

PERSONS = (
    ("Maria Exemplo da Silva (fictícia)", cpf("100200300")),
    ("João Fictício Pereira (fictício)", cpf("200300400")),
    ("Ana Demonstração Souza (fictícia)", cpf("300400500")),
    ("Carlos Exemplo Ramos (fictício)", cpf("400500600")),
    ("Luíza Modelo Andrade (fictícia)", cpf("500600700")),
    ("Pedro Ilustrativo Costa (fictício)", cpf("600700800")),
    ("Beatriz Amostra Lima (fictícia)", cpf("700800900")),
    ("Rafael Hipotético Nunes (fictício)", cpf("800900100")),
)
# name, CNPJ, number of worksites, index of the worksite that is a large generator (or None)
COMPANIES = (
    ("Construtora Horizonte Exemplo Ltda. (fictícia)", cnpj("717171710001"), 2, 0),
    ("Incorporadora Vale Modelo S.A. (fictícia)", cnpj("828282820001"), 1, 0),
    ("Reformas Exemplo & Cia. ME (fictícia)", cnpj("939393930001"), 4, None),
    ("Condomínio Edifício Fictício", cnpj("313131310001"), 1, None),
    ("Mercado Bom Preço Exemplo Ltda. (fictícia)", cnpj("252525250001"), 1, None),
)
STREETS = (
    "Rua Imaginária das Acácias",
    "Rua Fictícia dos Ipês",
    "Avenida Exemplo do Vale",
    "Rua Modelo São Benedito",
    "Travessa Ilustrativa das Flores",
    "Rua Hipotética da Estação",
    "Avenida Fictícia Paraíba",
    "Rua Exemplo dos Romeiros",
    "Rua Amostra do Rosário",
    "Alameda Fictícia das Palmeiras",
)
