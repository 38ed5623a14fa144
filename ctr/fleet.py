"""A transporter's fleet: registering a vehicle or an equipment.

The one place these rules live, for the pages and the API alike: the same input is refused with
the same Portuguese message wherever it comes from. Each registration is one transaction, and
touches only the transporter it is given (the caller's own).
"""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from config.errors import DomainError

from .documents import normalize_plate
from .models import Equipment, EquipmentKind, Transporter, Vehicle

# No skip or cart of the municipality carries more; a larger number is a typing slip.
MAX_CAPACITY = Decimal("100")


class FleetError(DomainError):
    """A vehicle or an equipment refused: nothing was written."""

    code = "fleet"


def add_vehicle(
    transporter: Transporter, plate: str, description: str = "", active: bool = True
) -> Vehicle:
    try:
        plate = normalize_plate(plate)
    except ValidationError as exc:
        raise FleetError(exc.messages[0], "invalid", "plate") from None
    taken = FleetError(f"A placa {plate} já está cadastrada.", "unique", "plate")
    # A plate is one vehicle's in the whole country, whichever transporter registered it.
    if Vehicle.objects.filter(plate=plate).exists():
        raise taken
    try:
        with transaction.atomic():
            return Vehicle.objects.create(
                transporter=transporter, plate=plate, description=description, active=active
            )
    except IntegrityError:  # registered by someone else since the check
        raise taken from None


def add_equipment(
    transporter: Transporter,
    code: str,
    nominal_capacity_m3: Decimal,
    kind: str = EquipmentKind.STATIONARY_SKIP,
    active: bool = True,
) -> Equipment:
    code = (code or "").strip().upper()
    if not code:
        raise FleetError("Informe o código do equipamento.", "required", "code")
    if kind not in EquipmentKind.values:
        raise FleetError(f"Tipo de equipamento desconhecido: {kind}.", "invalid_choice", "kind")
    if nominal_capacity_m3 <= 0:
        raise FleetError(
            "A capacidade deve ser maior que zero.", "min_value", "nominal_capacity_m3"
        )
    if nominal_capacity_m3 > MAX_CAPACITY:
        raise FleetError(
            f"A capacidade deve ser no máximo {MAX_CAPACITY} m³.",
            "max_value",
            "nominal_capacity_m3",
        )
    taken = FleetError(f"O equipamento {code} já está cadastrado.", "unique", "code")
    # The code is painted on the skip: unique within one transporter, not across them.
    if Equipment.objects.filter(transporter=transporter, code=code).exists():
        raise taken
    try:
        with transaction.atomic():
            return Equipment.objects.create(
                transporter=transporter,
                code=code,
                kind=kind,
                nominal_capacity_m3=nominal_capacity_m3,
                active=active,
            )
    except IntegrityError:  # registered by another request since the check
        raise taken from None
