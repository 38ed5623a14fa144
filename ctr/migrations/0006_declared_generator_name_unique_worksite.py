"""The generator's name as declared on each CTR, and one worksite per generator and address.

Existing CTRs take the name the registry holds (all that was recorded until now). Worksites
that duplicate one another (same generator, same address but for case and spacing: concurrent
issues made them, issue 11) are merged into the oldest before the unique index is built: their
CTRs and enforcement cases point to it, their PGRCC lists are added to its own, and it is a
large generator, with a permit, when any of them was."""

import django.db.models.functions.text
from django.db import migrations, models

KEY = "lower(regexp_replace(btrim(address), '\\s+', ' ', 'g'))"

MERGE_DUPLICATE_WORKSITES = f"""
CREATE TEMP TABLE ctr_worksite_merge ON COMMIT DROP AS
SELECT w.id AS dropped, k.kept
FROM ctr_worksite w
JOIN (
    SELECT generator_id, {KEY} AS key, min(id) AS kept
    FROM ctr_worksite GROUP BY 1, 2 HAVING count(*) > 1
) k ON k.generator_id = w.generator_id AND k.key = {KEY.replace("address", "w.address")}
WHERE w.id <> k.kept;

UPDATE ctr_ctr c SET worksite_id = m.kept FROM ctr_worksite_merge m WHERE c.worksite_id = m.dropped;

DO $$
BEGIN
    IF to_regclass('fiscalization_enforcementcase') IS NOT NULL THEN
        UPDATE fiscalization_enforcementcase c SET worksite_id = m.kept
        FROM ctr_worksite_merge m WHERE c.worksite_id = m.dropped;
    END IF;
END $$
;

INSERT INTO ctr_worksite_plan_transporters (worksite_id, transporter_id)
SELECT DISTINCT m.kept, p.transporter_id
FROM ctr_worksite_plan_transporters p JOIN ctr_worksite_merge m ON m.dropped = p.worksite_id
ON CONFLICT DO NOTHING;

INSERT INTO ctr_worksite_plan_facilities (worksite_id, receivingfacility_id)
SELECT DISTINCT m.kept, p.receivingfacility_id
FROM ctr_worksite_plan_facilities p JOIN ctr_worksite_merge m ON m.dropped = p.worksite_id
ON CONFLICT DO NOTHING;

UPDATE ctr_worksite w
SET is_large_generator = w.is_large_generator OR d.large,
    permit_number = CASE WHEN w.permit_number = '' THEN d.permit ELSE w.permit_number END
FROM (
    SELECT m.kept, bool_or(x.is_large_generator) AS large,
           coalesce(min(nullif(x.permit_number, '')), '') AS permit
    FROM ctr_worksite_merge m JOIN ctr_worksite x ON x.id = m.dropped
    GROUP BY m.kept
) d
WHERE w.id = d.kept;

DELETE FROM ctr_worksite_plan_transporters p USING ctr_worksite_merge m
WHERE p.worksite_id = m.dropped;
DELETE FROM ctr_worksite_plan_facilities p USING ctr_worksite_merge m
WHERE p.worksite_id = m.dropped;
DELETE FROM ctr_worksite w USING ctr_worksite_merge m WHERE w.id = m.dropped;

-- The foreign keys are checked at commit (deferred): check them now, or PostgreSQL refuses to
-- build the unique index on a table with pending trigger events.
SET CONSTRAINTS ALL IMMEDIATE
"""


class Migration(migrations.Migration):
    dependencies = [
        ("ctr", "0005_municipality_transporter_index"),
        ("pev_network", "0003_received_volume_tolerance"),
    ]

    operations = [
        migrations.AddField(
            model_name="ctr",
            name="generator_name",
            field=models.CharField(
                default="", max_length=200, verbose_name="nome do gerador (declarado)"
            ),
            preserve_default=False,
        ),
        migrations.RunSQL(
            "UPDATE ctr_ctr c SET generator_name = g.name FROM ctr_generator g "
            "WHERE g.id = c.generator_id",
            migrations.RunSQL.noop,
        ),
        migrations.RunSQL(
            [sql.strip() for sql in MERGE_DUPLICATE_WORKSITES.split(";\n\n") if sql.strip()],
            migrations.RunSQL.noop,
        ),
        migrations.AddConstraint(
            model_name="worksite",
            constraint=models.UniqueConstraint(
                models.F("generator"),
                django.db.models.functions.text.Lower(
                    models.Func(
                        django.db.models.functions.text.Trim(models.F("address")),
                        models.Value("\\s+"),
                        models.Value(" "),
                        models.Value("g"),
                        function="regexp_replace",
                    )
                ),
                name="worksite_generator_address_unique",
                violation_error_message="Este gerador já tem uma obra neste endereço.",
            ),
        ),
    ]
