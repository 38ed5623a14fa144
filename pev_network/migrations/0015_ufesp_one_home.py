"""The UFESP's one home is UfespRate, by year (issue 25 point 9): a municipality's undated
`ufesp_value`/`ufesp_year` go. Forward, a value a municipality registered for a year the table
lacks is kept there; backward, each municipality gets the latest year's value again."""

from django.db import migrations


def keep_values(apps, schema_editor):
    Municipality = apps.get_model("pev_network", "Municipality")
    UfespRate = apps.get_model("pev_network", "UfespRate")
    for value, year in Municipality.objects.values_list("ufesp_value", "ufesp_year").distinct():
        UfespRate.objects.get_or_create(unit="UFESP", year=year, defaults={"value_brl": value})


def restore_values(apps, schema_editor):
    Municipality = apps.get_model("pev_network", "Municipality")
    UfespRate = apps.get_model("pev_network", "UfespRate")
    latest = UfespRate.objects.filter(unit="UFESP").order_by("-year").first()
    if latest is not None:
        Municipality.objects.update(ufesp_value=latest.value_brl, ufesp_year=latest.year)


class Migration(migrations.Migration):
    dependencies = [
        ("pev_network", "0014_municipality_fee_collector"),
        # The table the values go to is created by fiscalization's migrations.
        ("fiscalization", "0014_ufesp_rate_moved_to_pev_network"),
    ]

    operations = [
        migrations.RunPython(keep_values, restore_values),
        migrations.RemoveField(model_name="municipality", name="ufesp_value"),
        migrations.RemoveField(model_name="municipality", name="ufesp_year"),
    ]
