"""Issue 24 point 4: a transporter holds a licence in each municipality that licensed it.

Each transporter's one registration (number, municipality, validity, status, suspension)
becomes its licence in that municipality, with nothing lost; then the fields leave the
transporter. Backwards, each transporter's first licence (the one the registration became)
goes back into the fields; a transporter without any licence, or two first licences with
the same number (numbers were unique across the platform), cannot be written back, and the
migration says so and stops (tests/ctr/test_licence_migration.py).

The registration's fields become nullable before the data moves, so that going back can add
them to rows that already exist and fill them before they are NOT NULL again.
"""

import django.db.models.deletion
from django.db import migrations, models
from django.db.migrations.exceptions import IrreversibleError

FORWARD_SQL = """
INSERT INTO ctr_transporterlicence
    (transporter_id, municipality_id, number, valid_from, valid_until, status, status_since,
     suspended_until)
SELECT id, municipality_id, registration_number, valid_from, valid_until, status,
       status_since, suspended_until
FROM ctr_transporter
ORDER BY id
"""

# Each transporter's first licence (lowest id: the registration it came from).
FIRST_LICENCE = """
SELECT DISTINCT ON (transporter_id) *
FROM ctr_transporterlicence
ORDER BY transporter_id, id
"""

BACKWARD_SQL = f"""
UPDATE ctr_transporter t
SET registration_number = l.number, municipality_id = l.municipality_id,
    valid_from = l.valid_from, valid_until = l.valid_until, status = l.status,
    status_since = l.status_since, suspended_until = l.suspended_until
FROM ({FIRST_LICENCE}) l
WHERE l.transporter_id = t.id
"""


def licences_from_registrations(apps, schema_editor):
    schema_editor.execute(FORWARD_SQL)


def registrations_from_licences(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.document FROM ctr_transporter t WHERE NOT EXISTS "
            "(SELECT 1 FROM ctr_transporterlicence l WHERE l.transporter_id = t.id) ORDER BY t.id"
        )
        unlicensed = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            f"SELECT number FROM ({FIRST_LICENCE}) l GROUP BY number HAVING count(*) > 1 "
            "ORDER BY number"
        )
        repeated = [row[0] for row in cursor.fetchall()]
    if unlicensed or repeated:
        problems = []
        if unlicensed:
            problems.append(
                "transporters without a licence, so no registration to write back: "
                + ", ".join(unlicensed)
            )
        if repeated:
            problems.append(
                "licence numbers that would repeat as registration numbers (unique): "
                + ", ".join(repeated)
            )
        raise IrreversibleError(
            "ctr 0020 cannot go back: " + "; ".join(problems) + "."
        )
    schema_editor.execute(BACKWARD_SQL)


class Migration(migrations.Migration):
    dependencies = [
        ("ctr", "0019_reception_location"),
        ("pev_network", "0010_travel_time"),
    ]

    operations = [
        migrations.CreateModel(
            name="TransporterLicence",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("number", models.CharField(max_length=40, verbose_name="número da licença")),
                ("valid_from", models.DateField(verbose_name="válida desde")),
                (
                    "valid_until",
                    models.DateField(blank=True, null=True, verbose_name="válida até"),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("ACTIVE", "Ativa"),
                            ("SUSPENDED", "Suspensa"),
                            ("REVOKED", "Cassada"),
                        ],
                        default="ACTIVE",
                        max_length=10,
                        verbose_name="situação",
                    ),
                ),
                (
                    "status_since",
                    models.DateField(
                        blank=True,
                        help_text="Data em que a suspensão ou cassação passou a valer.",
                        null=True,
                        verbose_name="situação desde",
                    ),
                ),
                (
                    "suspended_until",
                    models.DateField(
                        blank=True,
                        help_text="Último dia da suspensão (vazio: até ser levantada).",
                        null=True,
                        verbose_name="suspensa até",
                    ),
                ),
                (
                    "municipality",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="transporter_licences",
                        to="pev_network.municipality",
                        verbose_name="município",
                    ),
                ),
                (
                    "transporter",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="licences",
                        to="ctr.transporter",
                        verbose_name="transportador",
                    ),
                ),
            ],
            options={
                "verbose_name": "licença de transportador",
                "verbose_name_plural": "licenças de transportadores",
                "ordering": ["municipality_id", "transporter_id"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("transporter", "municipality"),
                        name="transporter_licence_one_per_municipality",
                        violation_error_message="O transportador já tem licença neste município.",
                    ),
                    models.UniqueConstraint(
                        fields=("municipality", "number"),
                        name="transporter_licence_number_unique",
                        violation_error_message=(
                            "Já existe uma licença com este número no município."
                        ),
                    ),
                ],
            },
        ),
        # Nullable first: going back adds them to existing rows, fills them, then restores
        # NOT NULL (the reverse of these).
        migrations.AlterField(
            model_name="transporter",
            name="registration_number",
            field=models.CharField(
                max_length=40, null=True, unique=True, verbose_name="número do cadastro"
            ),
        ),
        migrations.AlterField(
            model_name="transporter",
            name="municipality",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="transporters",
                to="pev_network.municipality",
                verbose_name="município",
            ),
        ),
        migrations.AlterField(
            model_name="transporter",
            name="valid_from",
            field=models.DateField(null=True, verbose_name="cadastro válido desde"),
        ),
        migrations.RunPython(licences_from_registrations, registrations_from_licences),
        migrations.RemoveField(model_name="transporter", name="municipality"),
        migrations.RemoveField(model_name="transporter", name="registration_number"),
        migrations.RemoveField(model_name="transporter", name="status"),
        migrations.RemoveField(model_name="transporter", name="status_since"),
        migrations.RemoveField(model_name="transporter", name="suspended_until"),
        migrations.RemoveField(model_name="transporter", name="valid_from"),
        migrations.RemoveField(model_name="transporter", name="valid_until"),
    ]
