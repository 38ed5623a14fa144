import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("fiscalization", "0011_load_penalty_frameworks")]

    operations = [
        migrations.AlterField(
            model_name="enforcementcase",
            name="framework",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="cases",
                to="fiscalization.penaltyframework",
                verbose_name="regime de penalidades",
            ),
        ),
    ]
