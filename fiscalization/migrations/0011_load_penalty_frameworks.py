"""The three penalty frameworks of fixtures/penalty_frameworks.json, and every existing case
governed by the default one (Guaratinguetá, Lei 3.978/2007): the procedure the cases were
opened under. Records keep their fines; a recidivist record drawn up before frameworks had its
fine doubled once (art. 30), which its frozen factor now says."""

import json
from pathlib import Path

from django.db import migrations

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "penalty_frameworks.json"


def load(apps, schema_editor):
    Framework = apps.get_model("fiscalization", "PenaltyFramework")
    known = {f.name for f in Framework._meta.get_fields()}
    for row in json.loads(FIXTURE.read_text(encoding="utf-8")):
        fields = {k: v for k, v in row["fields"].items() if k in known}
        if fields.get("payment_days") is None:
            # Not null until 0019 (Rio de Janeiro's law sets no payment deadline), which
            # reloads the shipped figure; a placeholder until then, never used by a case.
            fields["payment_days"], fields["payment_day_count"] = 0, "CALENDAR"
            fields["payment_from"] = fields.get("payment_from") or "RECEIPT"
        Framework.objects.update_or_create(
            ibge_code=fields["ibge_code"], valid_from=fields["valid_from"], defaults=fields
        )
    # Guaratinguetá's: the cases that existed then were all of Guaratinguetá (the fixture no
    # longer marks it as a default, issue 25).
    default = Framework.objects.get(ibge_code="3518404")
    apps.get_model("fiscalization", "EnforcementCase").objects.filter(
        framework__isnull=True
    ).update(framework=default)
    Record = apps.get_model("fiscalization", "InfractionRecord")
    Record.objects.filter(recidivist=True).update(recidivism_factor=2, earlier_records=1)


def unload(apps, schema_editor):
    apps.get_model("fiscalization", "EnforcementCase").objects.update(framework=None)
    apps.get_model("fiscalization", "PenaltyFramework").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("fiscalization", "0010_penalty_frameworks")]

    operations = [migrations.RunPython(load, unload)]
