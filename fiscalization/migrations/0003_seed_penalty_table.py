from decimal import Decimal

from django.db import migrations

NOTE = (
    "Valor provisório: a tabela de multas do art. 23 da Lei 3.978/2007 não consta do texto "
    "publicado. Cada linha decorre de uma obrigação da própria lei; confirme descrição e valor "
    "com a legislação municipal antes de autuar."
)
P, R, D, T, F = "PROPERTY", "REPRESENTATIVE", "DRIVER", "TRANSPORT_DIRECTOR", "FACILITY"
ENTRIES = [
    ("INF-01", "art. 2 §1", "Dispor RCC ou volumosos em local proibido (bota-fora, encosta, "
     "corpo d’água, lote vago, passeio ou via pública, área não licenciada ou protegida)",
     "100", [P, R, D, T]),
    ("INF-02", "art. 13", "Transportar RCC ou volumosos sem cadastro de transportador", "50",
     [D, T]),
    ("INF-03", "art. 13 p.ú.", "Destinar resíduos a área não licenciada ou não comprovar a "
     "destinação ao contratante", "80", [D, T]),
    ("INF-04", "art. 3 VI, art. 13 p.ú.", "Transportar carga sem o CTR correspondente", "30",
     [D, T]),
    ("INF-05", "art. 12 §4 II", "Usar chapas ou dispositivos que elevem a capacidade "
     "volumétrica da caçamba", "20", [P, R, D, T]),
    ("INF-06", "art. 12 §4 I", "Usar caçamba ou equipamento de coleta para resíduos que não "
     "sejam RCC ou volumosos", "20", [P, R]),
    ("INF-07", "art. 7", "Descarregar no PEV resíduos domiciliares não inertes, industriais ou "
     "de serviços de saúde", "50", [P, D, T]),
    ("INF-08", "art. 12 §1-2", "Descarregar no PEV mais de 1 m³ por descarga", "30", [P, D, T]),
    ("INF-09", "art. 14 §1", "Operar área de recepção de resíduos sem licença", "150", [F]),
    ("INF-10", "art. 14 §6", "Receber em área de recepção resíduos domiciliares, industriais ou "
     "de serviços de saúde", "100", [F]),
    ("INF-11", "art. 9", "Grande gerador sem Projeto de Gerenciamento de Resíduos ou com "
     "transportador ou destino não licenciado", "100", [P, R]),
    ("INF-12", "art. 14 §5, art. 18", "Deixar de triar integralmente os resíduos recebidos", "50",
     [F]),
]  # fmt: skip
# UFESP values published by the São Paulo state finance department (reais).
UFESP = [(2023, "34.26"), (2024, "35.36"), (2025, "37.02")]


def seed(apps, schema_editor):
    seed_table(apps)
    seed_ufesp(apps)


def seed_table(apps):
    # The table's schema of migration 0002; 0009 gives each line a municipality.
    entry_model = apps.get_model("fiscalization", "PenaltyTableEntry")
    for code, reference, description, fine, roles in ENTRIES:
        entry_model.objects.update_or_create(
            code=code,
            defaults={
                "legal_reference": f"Lei 3.978/2007 {reference}",
                "description": description,
                "fine_ufesp": Decimal(fine),
                "offender_roles": roles,
                "note": NOTE,
            },
        )


def seed_ufesp(apps):
    """The UFESP values (idempotent: tests that flushed the database run it again)."""
    rate_model = apps.get_model("fiscalization", "UfespRate")
    for year, value in UFESP:
        rate_model.objects.update_or_create(year=year, defaults={"value_brl": Decimal(value)})


class Migration(migrations.Migration):
    dependencies = [("fiscalization", "0002_enforcement_and_photos")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
