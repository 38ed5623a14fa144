"""The transporter, fleet and user a benchmark issues CTRs as (bench database only).

Imported lazily by the benchmarks, after Django is set up for the bench database.
"""

from __future__ import annotations

import datetime
from decimal import Decimal


def bench_transporter(
    registration: str,
    name: str,
    document: str,
    plates: tuple[str, ...],
    equipment: tuple[tuple[str, str], ...],
    username: str,
):
    """Create (or find) a transporter licensed in every municipality (the benchmarks issue
    CTRs from the whole state; art. 13: a licence per municipality, numbered
    `<registration>-<IBGE>`) with its vehicles and equipment (code, capacity m³) and a user
    acting for it; returns (transporter, user)."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from ctr.models import Equipment, Membership, Transporter, TransporterLicence, Vehicle
    from pev_network.models import Municipality

    today = timezone.localdate()
    transporter, _ = Transporter.objects.get_or_create(document=document, defaults={"name": name})
    TransporterLicence.objects.bulk_create(
        [
            TransporterLicence(
                transporter=transporter,
                municipality_id=pk,
                number=f"{registration}-{ibge_code}",
                valid_from=today - datetime.timedelta(days=3 * 365),
                valid_until=today + datetime.timedelta(days=365),
            )
            for pk, ibge_code in Municipality.objects.values_list("pk", "ibge_code")
        ],
        ignore_conflicts=True,
    )
    for plate in plates:
        Vehicle.objects.get_or_create(plate=plate, defaults={"transporter": transporter})
    for code, capacity in equipment:
        Equipment.objects.get_or_create(
            transporter=transporter, code=code, defaults={"nominal_capacity_m3": Decimal(capacity)}
        )
    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    Membership.objects.get_or_create(user=user, defaults={"transporter": transporter})
    return transporter, user
