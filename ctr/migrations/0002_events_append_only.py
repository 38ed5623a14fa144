from django.db import migrations


class Migration(migrations.Migration):
    """The CTR's history is kept forever: the database itself refuses UPDATE and DELETE of its
    rows, whatever the application tries. TRUNCATE (table owner only) is left to the owner:
    the test framework empties tables that way between browser tests."""

    dependencies = [("ctr", "0001_initial")]

    operations = [
        migrations.RunSQL(
            """
            CREATE FUNCTION ctr_event_append_only() RETURNS trigger AS $$
            BEGIN
                RAISE EXCEPTION 'ctr_ctrevent é somente inclusão: % não é permitido', TG_OP
                    USING ERRCODE = 'insufficient_privilege';
            END;
            $$ LANGUAGE plpgsql;
            CREATE TRIGGER ctr_event_no_update_delete
                BEFORE UPDATE OR DELETE ON ctr_ctrevent
                FOR EACH ROW EXECUTE FUNCTION ctr_event_append_only();
            """,
            """
            DROP TRIGGER IF EXISTS ctr_event_no_update_delete ON ctr_ctrevent;
            DROP FUNCTION IF EXISTS ctr_event_append_only();
            """,
        ),
    ]
