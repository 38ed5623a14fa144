"""Drop four indexes of ctr_ctr that no query needs, each paid on every CTR inserted (the bulk
import writes 100k at a time: docs/performance.md, P1).

- municipality_id, transporter_id and destination_facility_id alone: the unique
  (municipality_id, year, sequence), (transporter_id, created_at DESC) and
  (destination_facility_id, status) indexes lead with the same column and serve the same
  lookups (the foreign keys' PROTECT checks, roles.visible_ctrs, the maps' aggregates);
- number varchar_pattern_ops (Django's `_like` index of a unique CharField): it serves only
  LIKE 'prefix%'; lookups by number use the unique index, and `number__icontains` (upper LIKE
  '%…%') can use neither.
"""

import django.db.models.deletion
from django.db import migrations, models

# The indexes by the names Django gave them in 0001_initial. DROP INDEX only: AlterField by
# itself would also drop and re-add each foreign key, validating every CTR again under lock.
FK_INDEXES = {
    "destination_facility": ("ctr_ctr_destination_facility_id_3f9aee11", "destination_facility_id"),
    "municipality": ("ctr_ctr_municipality_id_73dde776", "municipality_id"),
    "transporter": ("ctr_ctr_transporter_id_c0f8ffc8", "transporter_id"),
}
TARGETS = {
    "destination_facility": ("pev_network.receivingfacility", "área de destino"),
    "municipality": ("pev_network.municipality", "município"),
    "transporter": ("ctr.transporter", "transportador"),
}


def _unindexed(name: str) -> migrations.SeparateDatabaseAndState:
    index, column = FK_INDEXES[name]
    to, verbose_name = TARGETS[name]
    return migrations.SeparateDatabaseAndState(
        state_operations=[
            migrations.AlterField(
                model_name="ctr",
                name=name,
                field=models.ForeignKey(
                    db_index=False,
                    on_delete=django.db.models.deletion.PROTECT,
                    related_name="ctrs",
                    to=to,
                    verbose_name=verbose_name,
                ),
            )
        ],
        database_operations=[
            migrations.RunSQL(
                f"DROP INDEX IF EXISTS {index}",
                reverse_sql=f"CREATE INDEX IF NOT EXISTS {index} ON ctr_ctr ({column})",
            )
        ],
    )


class Migration(migrations.Migration):
    dependencies = [
        ("ctr", "0003_historical_times"),
        ("pev_network", "0003_received_volume_tolerance"),
    ]

    operations = [
        *(_unindexed(name) for name in FK_INDEXES),
        # Django keeps no state for the `_like` index: plain SQL, with the way back.
        migrations.RunSQL(
            "DROP INDEX IF EXISTS ctr_ctr_number_aafdc17f_like",
            reverse_sql="CREATE INDEX IF NOT EXISTS ctr_ctr_number_aafdc17f_like "
            "ON ctr_ctr (number varchar_pattern_ops)",
        ),
    ]
