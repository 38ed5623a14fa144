"""UfespRate moved to pev_network (issue 25 point 9): the fee (ctr) and the fines read one
UFESP by year. State only: the table stays where it is, now pev_network's."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("fiscalization", "0013_authorship"),
        ("pev_network", "0013_ufesp_rate_moved_here"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="UfespRate")],
            database_operations=[],
        )
    ]
