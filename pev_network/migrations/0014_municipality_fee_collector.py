"""Issue 25 point 9: who collects the discharge fee (Lei 3.978/2007 art. 12 §3: "ao órgão
gestor - CODESG"). Guaratinguetá's is filled in; the others stay empty until they say."""

from django.db import migrations, models

# A copy, not an import: a migration keeps meaning what it meant when it was written.
KNOWN_FEE_COLLECTORS = {"3518404": "Companhia de Desenvolvimento de Guaratinguetá (CODESG)"}


def fill_known_collectors(apps, schema_editor):
    Municipality = apps.get_model("pev_network", "Municipality")
    for ibge_code, body in KNOWN_FEE_COLLECTORS.items():
        Municipality.objects.filter(ibge_code=ibge_code, fee_collector="").update(
            fee_collector=body
        )


class Migration(migrations.Migration):
    dependencies = [("pev_network", "0013_ufesp_rate_moved_here")]

    operations = [
        migrations.AddField(
            model_name="municipality",
            name="fee_collector",
            field=models.CharField(
                blank=True,
                default="",
                help_text="A quem o transportador recolhe a taxa de descarga de grande volume, por exemplo “Companhia de Desenvolvimento de Guaratinguetá (CODESG)” (Lei 3.978/2007 art. 12 §3). Vazio: o extrato diz que o órgão ainda não foi informado.",
                max_length=200,
                verbose_name="órgão que recolhe a taxa de descarga",
            ),
        ),
        migrations.RunPython(fill_known_collectors, migrations.RunPython.noop),
    ]
