"""Who applies each penalty, as the frameworks' data (issue 25 point 1; Lei 3.978/2007 art. 35:
"As penalidades serão aplicados pelo Secretário Municipal de Serviços Urbanos"), and the fine
of a record applied apart from the record where the framework gives it to the authority.

Records drawn up before: their fine was imposed by the record, so it stays applied when they
were drawn up (no author: the platform did not ask for one then)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import F

import fiscalization.models.frameworks

PENALTIES = ("FINE", "EMBARGO", "SEIZURE", "SUSPENSION", "REVOCATION")
# ibge_code: (who applies the fine, the citation)
FINE = {
    "3518404": (
        "AUTHORITY",
        "Lei 3.978/2007 art. 35 (“As penalidades … serão aplicados pelo Secretário Municipal "
        "de Serviços Urbanos”): a multa (art. 25 I) e as demais penalidades (art. 25 II-V); o "
        "fiscal lavra o auto e propõe a multa (art. 22 III, art. 36)",
    ),
    "3515707": (
        "RECORD",
        "Lei 3.190/2013 art. 11 e 13 (“a penalidade imposta” pelo auto): a multa é imposta no "
        "auto; as demais penalidades, pela autoridade",
    ),
    "3304557": (
        "RECORD",
        "Rio de Janeiro art. 149 (os autos “só poderão ser cancelados ou terem suas "
        "importâncias reduzidas”): a multa é imposta no auto; as demais penalidades, pelo "
        "órgão municipal competente",
    ),
}


def fill(apps, schema_editor):
    Framework = apps.get_model("fiscalization", "PenaltyFramework")
    for framework in Framework.objects.all():
        fine, citation = FINE.get(framework.ibge_code, FINE["3518404"])
        framework.applied_by = {**dict.fromkeys(PENALTIES, "AUTHORITY"), "FINE": fine}
        framework.citations = {**framework.citations, "applied_by": citation}
        framework.save(update_fields=["applied_by", "citations"])
    Record = apps.get_model("fiscalization", "InfractionRecord")
    Record.objects.filter(fine_applied_at__isnull=True).update(fine_applied_at=F("drawn_up_at"))


class Migration(migrations.Migration):
    dependencies = [
        ("fiscalization", "0013_authorship"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="penaltyframework",
            name="applied_by",
            field=models.JSONField(
                default=fiscalization.models.frameworks.authority_applies_all,
                help_text="Para a multa do auto (FINE) e cada penalidade: AUTHORITY (a "
                "autoridade decide sobre o auto) ou RECORD (o próprio auto a impõe).",
                verbose_name="quem aplica cada penalidade",
            ),
        ),
        migrations.AddField(
            model_name="infractionrecord",
            name="fine_applied_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="multa aplicada em"),
        ),
        migrations.AddField(
            model_name="infractionrecord",
            name="fine_applied_as",
            field=models.CharField(
                blank=True, max_length=120, verbose_name="multa aplicada na qualidade de"
            ),
        ),
        migrations.AddField(
            model_name="infractionrecord",
            name="fine_applied_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
                verbose_name="multa aplicada por",
            ),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
