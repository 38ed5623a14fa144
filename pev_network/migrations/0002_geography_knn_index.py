from django.db import migrations


class Migration(migrations.Migration):
    """Expression index on area::geography.

    Nearest-facility queries order by `area::geography <-> point::geography` so that the
    distance is in metres on the spheroid; only an index on that same expression lets the
    planner walk it in distance order (KNN) instead of sorting every facility.
    """

    dependencies = [("pev_network", "0001_initial")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX pev_facility_area_geog_idx ON pev_network_receivingfacility "
            "USING gist ((area::geography));",
            "DROP INDEX IF EXISTS pev_facility_area_geog_idx;",
        ),
    ]
