"""The municipal roles were three Django groups that saw every municipality (ctr.roles before
issue 24). Each member becomes that role's holder in the municipality the deployment served:
the default one (CTR_DEFAULT_MUNICIPALITY), or, when it is not loaded, each municipality with a
receiving facility. The groups go; backwards, they come back with their members and the
authority's two permissions."""

from django.conf import settings
from django.db import migrations

GROUP_ROLES = {
    "Núcleo Permanente de Gestão": "nucleo",
    "Fiscalização": "fiscal",
    "Autoridade": "authority",
}
AUTHORITY_PERMISSIONS = (
    ("fiscalization", "apply_penalty"),
    ("fiscalization", "decide_appeal"),
)


def served_municipalities(Municipality):
    default = Municipality.objects.filter(ibge_code=settings.DEFAULT_MUNICIPALITY_IBGE)
    if default.exists():
        return list(default)
    return list(Municipality.objects.filter(facilities__isnull=False).distinct())


def forward(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Municipality = apps.get_model("pev_network", "Municipality")
    StaffRole = apps.get_model("jurisdiction", "StaffRole")
    municipalities = served_municipalities(Municipality)
    for name, role in GROUP_ROLES.items():
        group = Group.objects.filter(name=name).first()
        if group is None:
            continue
        for user in group.user_set.all():
            for municipality in municipalities:
                StaffRole.objects.get_or_create(user=user, municipality=municipality, role=role)
        group.delete()


def backward(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    StaffRole = apps.get_model("jurisdiction", "StaffRole")
    for name, role in GROUP_ROLES.items():
        holders = StaffRole.objects.filter(role=role).values_list("user_id", flat=True)
        if not holders:
            continue
        group, _ = Group.objects.get_or_create(name=name)
        group.user_set.add(*set(holders))
        if role == "authority":
            for app_label, codename in AUTHORITY_PERMISSIONS:
                permission = Permission.objects.filter(
                    content_type__app_label=app_label, codename=codename
                ).first()
                if permission is not None:
                    group.permissions.add(permission)
    StaffRole.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("jurisdiction", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(forward, backward)]
