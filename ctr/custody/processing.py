"""The facility's own recycling and reuse: the operator records volume that leaves its stock
without an onward CTR, within what the stock allows (ctr.custody.stock_limits)."""

from __future__ import annotations

import datetime
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from config.br import br_date
from pev_network.models import ReceivingFacility, WasteClass

from .. import roles, rules
from ..errors import CTRError, NotAllowed
from ..models import OnSiteProcessing, ProcessingKind
from .stock_limits import later_shortfall, lock_facility, origin_stock

# m³ in one record: a day's production of a large recycling plant stays well below this.
MAX_PROCESSING_M3 = Decimal("10000")


def require_facility_operator(user, facility: ReceivingFacility) -> None:
    """Only the facility's operator records what it recycled or reused itself: the Núcleo
    reads the stock, it does not write it."""
    operated = roles.facility_of(user)
    if operated is None or operated.pk != facility.pk:
        raise NotAllowed(f"Só um operador da área “{facility.name}” registra o seu beneficiamento.")


def record_processing(
    user,
    facility: ReceivingFacility,
    waste_class: str,
    volume_m3: Decimal,
    day: datetime.date,
    kind: str,
    note: str = "",
) -> OnSiteProcessing:
    """The operator records volume recycled or reused at its facility: it leaves the stock
    (ctr.custody.stock) without an onward CTR."""
    require_facility_operator(user, facility)
    if volume_m3 <= 0:
        raise CTRError("O volume beneficiado deve ser maior que zero.", field="volume_m3")
    if volume_m3 > MAX_PROCESSING_M3:
        raise CTRError(
            f"O volume beneficiado de um registro vai até {rules.fmt(MAX_PROCESSING_M3)} m³.",
            field="volume_m3",
        )
    if waste_class not in WasteClass.values:
        raise CTRError(f"Classe desconhecida: {waste_class}.", field="waste_class")
    if kind not in ProcessingKind.values:
        raise CTRError(
            "Informe a destinação: agregado reciclado produzido ou material reutilizado.",
            field="kind",
        )
    if day > timezone.localdate():
        raise CTRError("A data do beneficiamento não pode ser posterior a hoje.", field="day")
    with transaction.atomic():
        lock_facility(facility)
        available = origin_stock(facility, day).get(waste_class)
        if available is None or volume_m3 > available.allowed_m3:
            allowed = available.allowed_m3 if available else Decimal("0")
            raise CTRError(
                f"A área “{facility.name}” não tem {rules.fmt(volume_m3)} m³ de "
                f"{rules.waste_name(waste_class)} em estoque em {br_date(day)} (pode beneficiar "
                f"até {rules.fmt(allowed.quantize(Decimal('0.001')))} m³).",
                "over_stock",
                "volume_m3",
                status=422,
            )
        later = later_shortfall(facility, waste_class, day, volume_m3)
        if later is not None:
            outflow, allowed = later
            raise CTRError(
                f"A área “{facility.name}” não pode beneficiar {rules.fmt(volume_m3)} m³ de "
                f"{rules.waste_name(waste_class)} em {br_date(day)}: até "
                f"{br_date(outflow.day)} já saíram dela {rules.fmt(outflow.out_to_date)} m³ "
                "dessa classe, e com este beneficiamento essas saídas passariam do estoque "
                f"mais a tolerância de triagem (pode beneficiar "
                f"até {rules.fmt(max(allowed, Decimal(0)).quantize(Decimal('0.001')))} m³ "
                f"em {br_date(day)}).",
                "over_stock",
                "volume_m3",
                status=422,
            )
        return OnSiteProcessing.objects.create(
            facility=facility,
            waste_class=waste_class,
            volume_m3=volume_m3,
            day=day,
            kind=kind,
            note=note,
            recorded_by=user,
        )
