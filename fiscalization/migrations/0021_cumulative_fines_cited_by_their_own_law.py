"""Issue 25 point 2: the sum of a record's fines cited Lei 3.978/2007 art. 30 §3 on every
municipality's record. The citation becomes the framework's (`citations["cumulative_fines"]`),
given only where the law says so: Guaratinguetá's ("As multas devem ser aplicadas
cumulativamente quando o infrator cometer simultaneamente duas ou mais infrações")."""

from django.db import migrations

GUARATINGUETA = "3518404"
KEY = "cumulative_fines"
CITATION = "Lei 3.978/2007 art. 30 §3"


def cite(apps, schema_editor):
    Framework = apps.get_model("fiscalization", "PenaltyFramework")
    for framework in Framework.objects.filter(ibge_code=GUARATINGUETA):
        framework.citations = {**framework.citations, KEY: CITATION}
        framework.save(update_fields=["citations"])


def uncite(apps, schema_editor):
    Framework = apps.get_model("fiscalization", "PenaltyFramework")
    for framework in Framework.objects.all():
        if KEY in framework.citations:
            framework.citations = {k: v for k, v in framework.citations.items() if k != KEY}
            framework.save(update_fields=["citations"])


class Migration(migrations.Migration):
    dependencies = [("fiscalization", "0020_framework_fine_lines_and_yearly_index_update")]

    operations = [migrations.RunPython(cite, uncite)]
