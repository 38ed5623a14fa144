"""Issue 24 point 6: each municipality's waste law, printed on its documents and e-mails.
Guaratinguetá's (IBGE 3518404) is filled in; the others stay empty until they are told (their
documents then say so, never citing another municipality's law)."""

from django.db import migrations, models

# A copy, not an import: a migration keeps meaning what it meant when it was written.
KNOWN_WASTE_LAWS = {"3518404": "Lei Municipal nº 3.978/2007"}


def fill_known_laws(apps, schema_editor):
    Municipality = apps.get_model("pev_network", "Municipality")
    for ibge_code, law in KNOWN_WASTE_LAWS.items():
        Municipality.objects.filter(ibge_code=ibge_code, waste_law="").update(waste_law=law)


class Migration(migrations.Migration):
    dependencies = [
        ("pev_network", "0010_travel_time"),
    ]

    operations = [
        migrations.AddField(
            model_name="municipality",
            name="waste_law",
            field=models.CharField(
                blank=True,
                default="",
                help_text="Como a lei é citada nos documentos e e-mails do município, por exemplo “Lei Municipal nº 3.978/2007”. Vazio: os documentos dizem que a lei ainda não foi informada.",
                max_length=200,
                verbose_name="lei municipal de resíduos",
            ),
        ),
        # Backwards: nothing to undo, the field goes with the step above.
        migrations.RunPython(fill_known_laws, migrations.RunPython.noop),
    ]
