"""The cancellation of an embargo records the requirements the offender met and their date
(Lei 3.978/2007 art. 31 sole §; issue 25 point 4)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("fiscalization", "0014_who_applies_each_penalty")]

    operations = [
        migrations.AddField(
            model_name="penalty",
            name="requirements_met",
            field=models.TextField(
                blank=True, default="", verbose_name="exigências cumpridas (art. 31 p.ú.)"
            ),
        ),
        migrations.AddField(
            model_name="penalty",
            name="requirements_met_on",
            field=models.DateField(blank=True, null=True, verbose_name="exigências cumpridas em"),
        ),
    ]
