"""The art. 23 table becomes the municipality's data (issue 13, point 1).

Each line belongs to a municipality, is valid from a day, and is provisional until the
municipality confirms its amount by an act of its own. The lines seeded by 0003 hold amounts no
law gives: they go to Guaratinguetá (Lei 3.978/2007 is its law), inactive and provisional. Every
existing line is provisional (none recorded the act that gives its amount). Records keep
pointing at the lines they used, and their items now freeze the line's code, legal reference and
description next to the fine they already froze.

A fresh database has no municipality yet (municipalities are imported after migrating): there
the seeded lines, which nothing uses, are removed; the same lines ship as a CSV for the
municipality to import and confirm (fixtures/tabela_infracoes_lei_3978_2007.csv).
"""

import datetime

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

GUARATINGUETA = "3518404"
# Lei 3.978/2007 is of 9 November 2007: no line of its table is older.
LAW_DATE = datetime.date(2007, 11, 9)
SEEDED = [f"INF-{n:02d}" for n in range(1, 13)]
NOTE = (
    "Linha semeada pela migração 0003 com valor provisório: a tabela de multas do art. 23 da "
    "Lei 3.978/2007 não consta do texto publicado. Inativa e provisória até o município "
    "confirmar o valor por ato próprio (admin ou importação CSV)."
)


def assign(apps, schema_editor):
    # Check the foreign keys now: deferred checks left pending would stop the ALTER TABLEs
    # that follow in this transaction ("pending trigger events").
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    entry_model = apps.get_model("fiscalization", "PenaltyTableEntry")
    item_model = apps.get_model("fiscalization", "InfractionItem")
    municipality_model = apps.get_model("pev_network", "Municipality")
    town = municipality_model.objects.filter(ibge_code=GUARATINGUETA).first()
    for entry in entry_model.objects.all():
        owner = town
        if owner is None:
            # Only a record can use a line, and a record's case has a municipality.
            item = item_model.objects.filter(entry=entry).select_related("record__case").first()
            if item is None:
                entry.delete()
                continue
            owner = item.record.case.municipality
        entry.municipality = owner
        entry.valid_from = LAW_DATE
        entry.status = "PROVISIONAL"
        if entry.code in SEEDED:
            entry.active = False
            entry.note = NOTE
        entry.save()
    # The items freeze what the line said when the record was drawn up (nothing changed it
    # since: the fine was already frozen, the texts are copied as they are now).
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {item_model._meta.db_table} i SET code = e.code, "
            "legal_reference = e.legal_reference, description = e.description "
            f"FROM {entry_model._meta.db_table} e WHERE e.id = i.entry_id"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("fiscalization", "0008_delivery_attempts"),
        ("pev_network", "0003_received_volume_tolerance"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="infractionitem",
            options={
                "ordering": ["code"],
                "verbose_name": "infração do auto",
                "verbose_name_plural": "infrações do auto",
            },
        ),
        migrations.AlterModelOptions(
            name="penaltytableentry",
            options={
                "ordering": ["municipality", "code", "-valid_from"],
                "verbose_name": "linha da tabela de infrações",
                "verbose_name_plural": "tabela de infrações (art. 23)",
            },
        ),
        migrations.AlterField(
            model_name="penaltytableentry",
            name="code",
            field=models.CharField(max_length=20, verbose_name="código"),
        ),
        migrations.AlterField(
            model_name="penaltytableentry",
            name="active",
            field=models.BooleanField(default=True, verbose_name="ativa"),
        ),
        migrations.AddField(
            model_name="penaltytableentry",
            name="municipality",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="pev_network.municipality",
                verbose_name="município",
            ),
        ),
        migrations.AddField(
            model_name="penaltytableentry",
            name="valid_from",
            field=models.DateField(null=True, verbose_name="vigente desde"),
        ),
        migrations.AddField(
            model_name="penaltytableentry",
            name="valid_until",
            field=models.DateField(blank=True, null=True, verbose_name="vigente até"),
        ),
        migrations.AddField(
            model_name="penaltytableentry",
            name="status",
            field=models.CharField(
                choices=[
                    ("PROVISIONAL", "Provisória (não confirmada pelo município)"),
                    ("CONFIRMED", "Confirmada pelo município"),
                ],
                default="PROVISIONAL",
                max_length=12,
                verbose_name="situação",
            ),
        ),
        migrations.AddField(
            model_name="penaltytableentry",
            name="confirmed_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
                verbose_name="confirmada por",
            ),
        ),
        migrations.AddField(
            model_name="penaltytableentry",
            name="confirmed_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="confirmada em"),
        ),
        migrations.AddField(
            model_name="penaltytableentry",
            name="confirming_act",
            field=models.CharField(
                blank=True,
                help_text="A norma municipal que dá a multa desta linha, ex.: “Decreto nº 1.234/2026”.",
                max_length=200,
                verbose_name="ato que fixa o valor",
            ),
        ),
        migrations.AddField(
            model_name="infractionitem",
            name="code",
            field=models.CharField(default="", max_length=20, verbose_name="código"),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="infractionitem",
            name="legal_reference",
            field=models.CharField(default="", max_length=120, verbose_name="fundamento legal"),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="infractionitem",
            name="description",
            field=models.CharField(default="", max_length=400, verbose_name="infração"),
            preserve_default=False,
        ),
        migrations.RunPython(assign, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="penaltytableentry",
            name="municipality",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="pev_network.municipality",
                verbose_name="município",
            ),
        ),
        migrations.AlterField(
            model_name="penaltytableentry",
            name="valid_from",
            field=models.DateField(verbose_name="vigente desde"),
        ),
        migrations.AddConstraint(
            model_name="penaltytableentry",
            constraint=models.UniqueConstraint(
                fields=("municipality", "code", "valid_from"), name="penalty_entry_unique_code"
            ),
        ),
        migrations.AddConstraint(
            model_name="penaltytableentry",
            constraint=models.CheckConstraint(
                condition=models.Q(("valid_until__isnull", True))
                | models.Q(("valid_until__gte", models.F("valid_from"))),
                name="penalty_entry_period_ordered",
                violation_error_message="A vigência termina antes de começar.",
            ),
        ),
        migrations.AddConstraint(
            model_name="penaltytableentry",
            constraint=models.CheckConstraint(
                condition=models.Q(("status", "PROVISIONAL"))
                | models.Q(
                    ("confirmed_at__isnull", False), models.Q(("confirming_act", ""), _negated=True)
                ),
                name="penalty_entry_confirmed_by_an_act",
                violation_error_message="Uma linha confirmada diz quando e por qual ato.",
            ),
        ),
    ]
