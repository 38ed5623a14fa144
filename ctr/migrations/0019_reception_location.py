import django.contrib.gis.db.models.fields
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("ctr", "0018_corrections"),
    ]

    operations = [
        migrations.AddField(
            model_name="ctr",
            name="received_location",
            field=django.contrib.gis.db.models.fields.PointField(
                blank=True,
                null=True,
                spatial_index=False,
                srid=4326,
                verbose_name="local do recebimento",
            ),
        ),
    ]
