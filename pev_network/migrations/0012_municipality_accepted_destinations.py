"""Issue 24 point 5: the municipalities whose areas a municipality's CTRs may use (a
consortium's shared landfill or ATT; rule DESTINATION_OUTSIDE_AGREEMENT)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('pev_network', '0011_municipality_waste_law'),
    ]

    operations = [
        migrations.AddField(
            model_name='municipality',
            name='accepted_destinations',
            field=models.ManyToManyField(blank=True, help_text='Consórcio ou convênio: os CTRs com origem neste município podem ter como destino as áreas licenciadas destes municípios (Lei 3.978/2007 art. 2 e art. 4 §2 II). As áreas do próprio município valem sempre.', related_name='destination_for', to='pev_network.municipality', verbose_name='municípios cujas áreas recebem os CTRs deste'),
        ),
    ]
