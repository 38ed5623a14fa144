"""Issue 24 point 10: the CTRs crossing into a municipality, on an index of their own.

A CTR is its origin's municipality's and, when its destination facility lies in another one,
that one's too (ctr.models.CTRQuerySet.municipal_q). With the destination's municipality found
through a subquery of the facilities, PostgreSQL could use no index for that branch of the OR:
a small municipality's list walked every CTR of the state, newest first, and its count read
the whole table (docs/performance.md). `crossing_into` holds the destination's municipality
when it is not the CTR's own (NULL otherwise, nearly always), with a partial index.

Forward: the existing CTRs get theirs from their facility. The database keeps it when a facility
moves to another municipality (a trigger, below): nothing outside the CTR table's own writers
(the issue path, ctr/bulk.py, synthetic/) has to know. Backwards: the column goes, with the
trigger (tests/ctr/test_crossing_into.py).
"""

import django.db.models.deletion
from django.db import migrations, models

FILL_SQL = """
UPDATE ctr_ctr c SET crossing_into_id = f.municipality_id
FROM pev_network_receivingfacility f
WHERE f.id = c.destination_facility_id AND f.municipality_id <> c.municipality_id
"""

# Row level, and only when the municipality changes (a facility's boundary redrawn, an import
# that corrects it): rare, and then its CTRs follow, as the subquery did.
TRIGGER_SQL = """
CREATE FUNCTION ctr_crossing_follows_facility() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE ctr_ctr SET crossing_into_id =
        CASE WHEN NEW.municipality_id <> municipality_id THEN NEW.municipality_id END
    WHERE destination_facility_id = NEW.id;
    RETURN NULL;
END $$;

CREATE TRIGGER ctr_crossing_follows_facility
    AFTER UPDATE OF municipality_id ON pev_network_receivingfacility
    FOR EACH ROW WHEN (OLD.municipality_id IS DISTINCT FROM NEW.municipality_id)
    EXECUTE FUNCTION ctr_crossing_follows_facility();
"""

DROP_TRIGGER_SQL = """
DROP TRIGGER ctr_crossing_follows_facility ON pev_network_receivingfacility;
DROP FUNCTION ctr_crossing_follows_facility();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("ctr", "0020_transporter_licences"),
        ("pev_network", "0012_municipality_accepted_destinations"),
    ]

    operations = [
        migrations.AddField(
            model_name="ctr",
            name="crossing_into",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="pev_network.municipality",
                verbose_name="município de destino (outro)",
            ),
        ),
        migrations.RunSQL(FILL_SQL, migrations.RunSQL.noop),
        migrations.AddIndex(
            model_name="ctr",
            index=models.Index(
                condition=models.Q(("crossing_into__isnull", False)),
                fields=["crossing_into"],
                name="ctr_crossing_into",
            ),
        ),
        migrations.RunSQL(TRIGGER_SQL, DROP_TRIGGER_SQL),
    ]
