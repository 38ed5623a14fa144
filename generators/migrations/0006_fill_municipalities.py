"""Issue 24: the rows that had no municipality get the one they belong to.

- Worksites created on the fly by a CTR (ctr.services.worksite_for, ctr/bulk.py, synthetic/)
  had none: each gets the municipality whose boundary covers its location (the subdivided
  pieces, as pev_network.services.municipality_id_at looks a point up; the whole boundary where
  a municipality has no pieces). One whose permit number another worksite of that municipality
  holds keeps none (worksite_permit_unique; CTR-made worksites have no permit).
- A generator's self-registration: the municipality of the Núcleo member who decided it, when
  that person holds roles in one municipality only; otherwise the municipality the deployment
  served (CTR_DEFAULT_MUNICIPALITY, as jurisdiction 0002 placed the staff), or the only one
  with a Núcleo.
- An invitation: a transporter's, the municipality of the latest CTR on which it carried for
  the generator; the Núcleo's, as a registration, from the person who sent it.

What cannot be placed stays empty (the platform's administrator sees it). Backwards: the
registrations and invitations lose their municipality again (0005 drops the column); the
worksites keep theirs, which is true of them whatever the schema."""

from django.conf import settings
from django.db import migrations

WORKSITES_SQL = """
WITH placed AS (
    SELECT w.id,
           COALESCE(
               (SELECT p.municipality_id FROM pev_network_municipalitypiece p
                WHERE ST_Intersects(p.geom, w.location)
                ORDER BY p.municipality_id LIMIT 1),
               (SELECT m.id FROM pev_network_municipality m
                WHERE ST_Intersects(m.boundary, w.location)
                  AND NOT EXISTS (SELECT 1 FROM pev_network_municipalitypiece p
                                  WHERE p.municipality_id = m.id)
                ORDER BY m.id LIMIT 1)
           ) AS municipality_id
    FROM ctr_worksite w
    WHERE w.municipality_id IS NULL
)
UPDATE ctr_worksite w SET municipality_id = placed.municipality_id
FROM placed
WHERE w.id = placed.id AND placed.municipality_id IS NOT NULL
  AND (w.permit_number = '' OR NOT EXISTS (
      SELECT 1 FROM ctr_worksite o
      WHERE o.municipality_id = placed.municipality_id AND o.permit_number = w.permit_number
  ))
"""


def _fallback(Municipality, StaffRole):
    """The municipality the deployment served, or the only one with a Núcleo, or None."""
    default = (
        Municipality.objects.filter(ibge_code=settings.DEFAULT_MUNICIPALITY_IBGE)
        .values_list("pk", flat=True)
        .first()
    )
    if default is not None:
        return default
    with_nucleo = set(
        StaffRole.objects.filter(role="nucleo").values_list("municipality_id", flat=True)
    )
    return with_nucleo.pop() if len(with_nucleo) == 1 else None


def _of_person(StaffRole, user_id):
    """The one municipality where the person holds roles, or None."""
    if user_id is None:
        return None
    held = set(StaffRole.objects.filter(user_id=user_id).values_list("municipality_id", flat=True))
    return held.pop() if len(held) == 1 else None


def forward(apps, schema_editor):
    Municipality = apps.get_model("pev_network", "Municipality")
    StaffRole = apps.get_model("jurisdiction", "StaffRole")
    CTR = apps.get_model("ctr", "CTR")
    Registration = apps.get_model("generators", "GeneratorRegistration")
    Invitation = apps.get_model("generators", "GeneratorInvitation")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(WORKSITES_SQL)
    fallback = _fallback(Municipality, StaffRole)
    for registration in Registration.objects.filter(municipality__isnull=True):
        chosen = _of_person(StaffRole, registration.decided_by_id) or fallback
        if chosen is not None:
            registration.municipality_id = chosen
            registration.save(update_fields=["municipality"])
    for invitation in Invitation.objects.filter(municipality__isnull=True):
        if invitation.transporter_id is not None:
            chosen = (
                CTR.objects.filter(
                    transporter_id=invitation.transporter_id,
                    generator_id=invitation.generator_id,
                )
                .order_by("-created_at", "-pk")
                .values_list("municipality_id", flat=True)
                .first()
            )
        else:
            chosen = _of_person(StaffRole, invitation.invited_by_id) or fallback
        if chosen is not None:
            invitation.municipality_id = chosen
            invitation.save(update_fields=["municipality"])


def backward(apps, schema_editor):
    apps.get_model("generators", "GeneratorRegistration").objects.update(municipality=None)
    apps.get_model("generators", "GeneratorInvitation").objects.update(municipality=None)


class Migration(migrations.Migration):
    dependencies = [
        ("generators", "0005_registration_invitation_municipality"),
        ("jurisdiction", "0002_roles_from_groups"),
    ]

    operations = [migrations.RunPython(forward, backward)]
