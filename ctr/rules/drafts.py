"""What the rules checked at issue read about a CTR: CTRDraft, its waste lines and, for an
onward CTR, its origin facility's stock per class."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.gis.geos import Point

from pev_network.models import Municipality, MunicipalParameters, ReceivingFacility

from ..models import Equipment, Generator, Transporter, TransporterLicence, Vehicle, Worksite


@dataclass
class WasteLine:
    waste_class: str
    volume_m3: Decimal
    description: str = ""


@dataclass(frozen=True)
class OriginStock:
    """A class at the origin facility of an onward CTR: its stock at the end of the day, what
    it received of it up to then, and how far sorting may change the volume (in %)."""

    stock_m3: Decimal
    received_m3: Decimal
    tolerance_pct: Decimal

    @property
    def allowed_m3(self) -> Decimal:
        return self.stock_m3 + self.received_m3 * self.tolerance_pct / 100


@dataclass
class CTRDraft:
    """Everything the rules read about a CTR, resolved beforehand (spatial facts in PostGIS).
    ctr.bulk resolves the same facts for a set of rows into ctr_bulk_fact."""

    transport_date: datetime.date
    transporter: Transporter
    origin: Point
    destination: Point
    waste: list[WasteLine]
    generator: Generator | None = None
    vehicle: Vehicle | None = None
    vehicle_plate: str = ""
    equipment: Equipment | None = None
    equipment_code: str = ""
    worksite_is_large_generator: bool = False
    plan_transporter_ids: set[int] = field(default_factory=set)
    plan_facility_ids: set[int] = field(default_factory=set)
    municipality: Municipality | None = None
    # The parameters in force on the transport date: the municipality's, and the facility's
    # municipality's (ctr.issue_reads reads both in the one statement).
    parameters: MunicipalParameters | None = None
    facility_parameters: MunicipalParameters | None = None
    # The transporter's licence in the CTR's municipality (any status), None without one
    # (TRANSPORTER_NOT_LICENSED, TRANSPORTER_SUSPENDED).
    licence: TransporterLicence | None = None
    requested_facility: ReceivingFacility | None = None
    facility: ReceivingFacility | None = None
    facility_licensed: bool = False
    # The facility lies in the CTR's municipality or in one it lists in
    # Municipality.accepted_destinations (DESTINATION_OUTSIDE_AGREEMENT).
    destination_agreed: bool = True
    recycling_area_available: bool = False
    # An onward CTR (sorted waste leaving a facility, art. 3 III): the facility, its license on
    # the day, whether the origin point is inside it, and its stock per class at the end of
    # the day with the sorting tolerance (ctr.custody.stock).
    origin_facility: ReceivingFacility | None = None
    origin_facility_licensed: bool = False
    origin_in_facility: bool = True
    origin_stock: dict[str, OriginStock] = field(default_factory=dict)
    # The registered worksite the CTR leaves from (ORIGIN_OUTSIDE_WORKSITE): found by id or
    # by generator and address, None when it has no registration; whether the origin lies
    # within it, and the GPS tolerance around it (its municipality's).
    registered_worksite: Worksite | None = None
    origin_in_worksite: bool = True
    worksite_tolerance_m: Decimal = Decimal(0)
    # ctr/offline.sync_facts: a CTR kept on the driver's phone offline,
    # its number, the hours from its departure to its arrival here, and the limit.
    provisional_number: str = ""
    provisional_hours: Decimal = Decimal(0)
    provisional_late: bool = False
    provisional_max_hours: int = 0

    def shipped_by_class(self) -> dict[str, Decimal]:
        shipped: dict[str, Decimal] = {}
        for line in self.waste:
            shipped[line.waste_class] = shipped.get(line.waste_class, Decimal("0")) + line.volume_m3
        return shipped

    @property
    def total_volume(self) -> Decimal:
        return sum((line.volume_m3 for line in self.waste), Decimal("0"))

    @property
    def small_volume_limit(self) -> Decimal:
        # A PEV is the municipality's own public equipment: its municipality's limit applies,
        # as in force on the transport date (Lei 3.978/2007 art. 12 §3).
        for parameters in (self.facility_parameters, self.parameters):
            if parameters is not None:
                return parameters.small_volume_limit_m3
        return MunicipalParameters._meta.get_field("small_volume_limit_m3").default
