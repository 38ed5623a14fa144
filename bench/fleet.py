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
    """Create (or find) a registered transporter with its vehicles and equipment (code,
    capacity m³) and a user acting for it; returns (transporter, user)."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from ctr.models import Equipment, Membership, Transporter, Vehicle
    from pev_network.models import Municipality

    today = timezone.localdate()
    home = Municipality.objects.defer("boundary").order_by("pk").first()
    transporter, _ = Transporter.objects.get_or_create(
        registration_number=registration,
        defaults={
            "name": name,
            "document": document,
            "municipality": home,
            "valid_from": today - datetime.timedelta(days=3 * 365),
            "valid_until": today + datetime.timedelta(days=365),
        },
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
