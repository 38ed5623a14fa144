"""The benchmarks' municipal users: the Núcleo's role in every municipality of the data, so
that each figure measures the page as a Núcleo user of the municipality it reads
(roles are per municipality)."""

from __future__ import annotations


def nucleo_everywhere(user) -> None:
    from jurisdiction.models import Role, StaffRole
    from pev_network.models import Municipality

    StaffRole.objects.bulk_create(
        [
            StaffRole(user=user, municipality_id=pk, role=Role.NUCLEO)
            for pk in Municipality.objects.values_list("pk", flat=True)
        ],
        ignore_conflicts=True,
    )
