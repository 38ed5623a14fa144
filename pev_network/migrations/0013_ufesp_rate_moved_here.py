"""The UFESP by year gets one home below every app that reads it (issue 25 point 9): the
fiscalization's UfespRate moves here, state only; its table (fiscalization_ufesprate) stays."""

import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("pev_network", "0012_municipality_accepted_destinations")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="UfespRate",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "unit",
                            models.CharField(
                                choices=[
                                    ("UFESP", "UFESP"),
                                    (
                                        "UFIR_RIO",
                                        "UFIR-RJ (valores convertidos pela Lei Municipal "
                                        "3.145/2000)",
                                    ),
                                ],
                                default="UFESP",
                                max_length=8,
                                verbose_name="unidade",
                            ),
                        ),
                        ("year", models.PositiveSmallIntegerField(verbose_name="ano")),
                        (
                            "value_brl",
                            models.DecimalField(
                                decimal_places=4,
                                max_digits=10,
                                validators=[django.core.validators.MinValueValidator(0)],
                                verbose_name="valor (R$)",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "valor de unidade fiscal",
                        "verbose_name_plural": "valores das unidades fiscais",
                        "db_table": "fiscalization_ufesprate",
                        "ordering": ["unit", "-year"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("unit", "year"), name="fiscal_unit_value_per_year"
                            )
                        ],
                    },
                )
            ],
            database_operations=[],
        )
    ]
