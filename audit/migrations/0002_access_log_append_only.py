from django.db import migrations


class Migration(migrations.Migration):
    """The access log is evidence: like the CTR's history (ctr 0002), the database refuses
    UPDATE and DELETE of its rows. TRUNCATE is left to the table owner (the test framework)."""

    dependencies = [("audit", "0001_initial")]

    operations = [
        migrations.RunSQL(
            """
            CREATE FUNCTION audit_access_log_append_only() RETURNS trigger AS $$
            BEGIN
                RAISE EXCEPTION 'audit_accesslog é somente inclusão: % não é permitido', TG_OP
                    USING ERRCODE = 'insufficient_privilege';
            END;
            $$ LANGUAGE plpgsql;
            CREATE TRIGGER audit_access_log_no_update_delete
                BEFORE UPDATE OR DELETE ON audit_accesslog
                FOR EACH ROW EXECUTE FUNCTION audit_access_log_append_only();
            """,
            """
            DROP TRIGGER IF EXISTS audit_access_log_no_update_delete ON audit_accesslog;
            DROP FUNCTION IF EXISTS audit_access_log_append_only();
            """,
        ),
    ]
