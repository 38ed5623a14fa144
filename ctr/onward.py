"""Who may issue an onward CTR from a facility (its operator, or the municipality for its own
PEV), to which transporters it may hand the load, and where the CTR leaves when it does not
say. ctr.services.issue_onward issues it."""

from __future__ import annotations

import datetime

from django.contrib.gis.geos import Point
from django.db.models import OuterRef, QuerySet, Subquery

from jurisdiction.scope import jurisdiction_of
from pev_network.models import FacilityKind, ReceivingFacility

from . import lifecycle, roles
from .errors import CTRError, NotAllowed
from .models import CTRAction, Transporter, TransporterLicence


def onward_origin(user, facility_id: int | None) -> ReceivingFacility:
    """The facility an onward CTR leaves, when `user` may issue from it: its operator, or the
    municipality for its own PEV collection (art. 6)."""
    found = onward_origins(user, [facility_id] if facility_id is not None else [])
    origin = found.get(facility_id) if facility_id is not None else None
    if origin is None:
        raise unknown_origin(facility_id)
    if isinstance(origin, CTRError):
        raise origin
    return origin


def onward_origins(user, facility_ids) -> dict[int, ReceivingFacility | CTRError]:
    """onward_origin for many facilities in one query (the CSV import's rows): each existing
    facility, or the refusal `user` gets for it (NotAllowed); unknown ids are left out."""
    operated = roles.facility_of(user)
    # The municipality's own PEVs: its staff acting there, no other's.
    acting = jurisdiction_of(user)
    found: dict[int, ReceivingFacility | CTRError] = {}
    for facility in ReceivingFacility.objects.filter(pk__in=set(facility_ids)):
        if (operated is not None and operated.pk == facility.pk) or (
            facility.kind == FacilityKind.PEV and acting.acts(facility.municipality_id)
        ):
            found[facility.pk] = facility
        else:
            refusal = lifecycle.row(CTRAction.ISSUE).onward_refusal
            found[facility.pk] = NotAllowed(
                refusal.format(facility=facility.name), field="origin_facility"
            )
    return found


def unknown_origin(facility_id: int | None) -> CTRError:
    return CTRError(
        f"A área de origem {facility_id} não existe.", "facility_unknown", "origin_facility"
    )


def carriers_on(day: datetime.date, municipality_id: int | None) -> QuerySet:
    """The transporters an operator may hand sorted waste to on `day`, from a facility in the
    municipality: licensed there (art. 13), the licence neither suspended nor revoked (art. 25
    IV-V), and not a generator carrying its own waste (art. 12 §4: it may carry nothing
    else). Each with `licence_number`, its licence there. The rules check the transport day
    again."""
    if municipality_id is None:
        return Transporter.objects.none()
    licence = TransporterLicence.objects.in_force_on(day).filter(
        transporter=OuterRef("pk"), municipality_id=municipality_id
    )
    return (
        Transporter.objects.filter(is_self_generator=False)
        .annotate(licence_number=Subquery(licence.values("number")[:1]))
        .filter(licence_number__isnull=False)
        .order_by("name", "pk")
    )


def default_onward_origin(facility: ReceivingFacility) -> Point:
    """Where an onward CTR leaves when it does not say: a point inside the facility's area
    (GEOS here, for the CSV import too, so that both paths store the same point)."""
    return facility.area.point_on_surface
