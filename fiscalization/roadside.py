"""Roadside check (art. 22 III: inspectors inspect vehicles, equipment and load): by plate, the
vehicle, its transporter's standing today in the inspector's municipality (its licence there,
art. 13, or that it has none) and the vehicle's open CTRs.

The vehicle is the one in front of the inspector, whatever municipality registered it; its
open CTRs are listed as the inspector sees them (its municipalities', by origin or
destination), and those of other municipalities only counted, so that a load under another
municipality's CTR is not taken for one without any."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.db.models import F
from django.utils import timezone

from ctr.alerts import with_hours_open
from ctr.documents import normalize_plate
from ctr.models import CTR, CTRStatus, LicenceStatus, Transporter, TransporterLicence, Vehicle
from jurisdiction.scope import jurisdiction_of
from pev_network.models import Municipality


class Verdict:
    """What the inspector reads first, from the most to the least serious."""

    UNKNOWN_VEHICLE = "UNKNOWN_VEHICLE"
    UNLICENSED = "UNLICENSED"  # no licence in the inspector's municipality
    REVOKED = "REVOKED"
    SUSPENDED = "SUSPENDED"
    EXPIRED = "EXPIRED"
    NOT_YET_VALID = "NOT_YET_VALID"
    INACTIVE_VEHICLE = "INACTIVE_VEHICLE"
    REGULAR = "REGULAR"


# Whether the vehicle may carry RCC today: only REGULAR may.
VERDICT_OK = {Verdict.REGULAR}


@dataclass(frozen=True)
class OpenCTR:
    number: str
    transport_date: datetime.date
    created_at: datetime.datetime
    facility_name: str
    facility_kind: str
    destination: tuple[float, float]
    origin: tuple[float, float]
    volume_m3: float
    hours_open: float
    alert_hours: int

    @property
    def overdue(self) -> bool:
        return self.hours_open > self.alert_hours

    def as_dict(self) -> dict:
        return {
            "number": self.number,
            "transport_date": self.transport_date.isoformat(),
            "issued_at": self.created_at.isoformat(),
            "destination_facility": {"name": self.facility_name, "kind": self.facility_kind},
            "destination": [round(self.destination[0], 6), round(self.destination[1], 6)],
            "origin": [round(self.origin[0], 6), round(self.origin[1], 6)],
            "volume_m3": self.volume_m3,
            # Negative while the transport day has not begun (a CTR issued for tomorrow).
            "hours_open": round(self.hours_open, 1),
            "overdue": self.overdue,
        }


@dataclass(frozen=True)
class RoadsideAnswer:
    plate: str
    day: datetime.date
    verdict: str
    vehicle: Vehicle | None
    transporter: Transporter | None
    open_ctrs: list[OpenCTR]
    # The municipality the inspector checks in (its current one) and the transporter's
    # licence there, None without one.
    municipality: Municipality | None = None
    licence: TransporterLicence | None = None
    # Open CTRs of the vehicle the inspector does not see: other municipalities'.
    open_elsewhere: int = 0

    @property
    def place(self) -> str:
        m = self.municipality
        return f"{m.name}/{m.uf}" if m is not None else "no município"

    @property
    def ok(self) -> bool:
        return self.verdict in VERDICT_OK

    @property
    def display_plate(self) -> str:
        return f"{self.plate[:3]}-{self.plate[3:]}"

    @property
    def headline(self) -> str:
        """The verdict in large letters, pt-BR."""
        licence = self.licence
        if self.verdict == Verdict.SUSPENDED:
            if licence and licence.suspended_until:
                return f"SUSPENSO até {licence.suspended_until:%d/%m}"
            return "SUSPENSO"
        return {
            Verdict.UNKNOWN_VEHICLE: "VEÍCULO NÃO CADASTRADO",
            Verdict.UNLICENSED: "SEM LICENÇA NO MUNICÍPIO",
            Verdict.REVOKED: "LICENÇA CASSADA",
            Verdict.EXPIRED: "LICENÇA VENCIDA",
            Verdict.NOT_YET_VALID: "LICENÇA AINDA NÃO VIGENTE",
            Verdict.INACTIVE_VEHICLE: "VEÍCULO DESATIVADO",
            Verdict.REGULAR: "REGULAR",
        }[self.verdict]

    @property
    def explanation(self) -> str:
        lic = self.licence
        place = self.place
        if self.verdict == Verdict.UNKNOWN_VEHICLE:
            return (
                "Nenhum transportador cadastrou este veículo: ele não pode transportar RCC "
                "nem volumosos no município (Lei 3.978/2007 art. 13)."
            )
        if self.verdict == Verdict.UNLICENSED:
            return (
                f"O transportador não tem licença em {place}: não pode transportar RCC nem "
                "volumosos com origem neste município (art. 13)."
            )
        if self.verdict == Verdict.REVOKED:
            return (
                f"Licença do transportador em {place} cassada desde "
                f"{lic.status_since:%d/%m/%Y} (art. 25 V)."
            )
        if self.verdict == Verdict.SUSPENDED:
            until = f" até {lic.suspended_until:%d/%m/%Y}" if lic.suspended_until else ""
            return (
                f"Transportador suspenso em {place} desde {lic.status_since:%d/%m/%Y}{until} "
                "(art. 25 IV): não pode transportar neste período."
            )
        if self.verdict == Verdict.EXPIRED:
            return (
                f"A licença do transportador em {place} venceu em {lic.valid_until:%d/%m/%Y} "
                "(art. 13)."
            )
        if self.verdict == Verdict.NOT_YET_VALID:
            return (
                f"A licença do transportador em {place} só vale a partir de "
                f"{lic.valid_from:%d/%m/%Y}."
            )
        if self.verdict == Verdict.INACTIVE_VEHICLE:
            return "O transportador desativou este veículo: ele não pode emitir CTR com ele."
        if lic is None:  # a generator carrying its own waste
            return (
                "Gerador que transporta os próprios resíduos: dispensado da licença "
                "(art. 12 §4), só pode levar resíduos seus."
            )
        until = f" até {lic.valid_until:%d/%m/%Y}" if lic.valid_until else ""
        return f"Licença em {place} válida{until}."

    def as_dict(self) -> dict:
        t = self.transporter
        return {
            "plate": self.plate,
            "day": self.day.isoformat(),
            "verdict": self.verdict,
            "headline": self.headline,
            "explanation": self.explanation,
            "vehicle": None
            if self.vehicle is None
            else {
                "plate": self.vehicle.plate,
                "description": self.vehicle.description,
                "active": self.vehicle.active,
            },
            "transporter": None
            if t is None
            else {
                "name": t.name,
                "document": t.document,
                "is_self_generator": t.is_self_generator,
                # Its licence in the municipality checked in (art. 13), null without one.
                "licence": licence_dict(self.licence, self.day),
            },
            "municipality": None
            if self.municipality is None
            else {"ibge_code": self.municipality.ibge_code, "name": self.place},
            "open_ctrs": [c.as_dict() for c in self.open_ctrs],
            "overdue_ctrs": sum(c.overdue for c in self.open_ctrs),
            "open_ctrs_elsewhere": self.open_elsewhere,
        }


def licence_dict(licence: TransporterLicence | None, day: datetime.date) -> dict | None:
    if licence is None:
        return None
    return {
        "number": licence.number,
        "valid": licence.is_valid_on(day),
        "restriction": licence.restricted_on(day),
        "valid_from": licence.valid_from.isoformat(),
        "valid_until": licence.valid_until.isoformat() if licence.valid_until else None,
        "status": licence.status,
        "status_since": licence.status_since.isoformat() if licence.status_since else None,
        "suspended_until": (
            licence.suspended_until.isoformat() if licence.suspended_until else None
        ),
    }


def verdict_for(
    vehicle: Vehicle | None, day: datetime.date, licence: TransporterLicence | None
) -> str:
    """`licence`: the transporter's in the municipality checked in (the rules read the one of
    the CTR's municipality, TRANSPORTER_NOT_LICENSED and TRANSPORTER_SUSPENDED)."""
    if vehicle is None:
        return Verdict.UNKNOWN_VEHICLE
    if licence is None:
        # Art. 12 §4: a generator carrying its own waste needs no licence.
        if not vehicle.transporter.is_self_generator:
            return Verdict.UNLICENSED
    else:
        restriction = licence.restricted_on(day)
        if restriction == LicenceStatus.REVOKED:
            return Verdict.REVOKED
        if restriction == LicenceStatus.SUSPENDED:
            return Verdict.SUSPENDED
        if not licence.is_valid_on(day):
            return Verdict.NOT_YET_VALID if licence.valid_from > day else Verdict.EXPIRED
    if not vehicle.active:
        return Verdict.INACTIVE_VEHICLE
    return Verdict.REGULAR


def open_ctrs(vehicle: Vehicle, now: datetime.datetime, user=None) -> list[OpenCTR]:
    """The vehicle's issued CTRs (not yet received, refused or cancelled) that `user` sees
    (given none, every one), the oldest first."""
    issued = CTR.objects.all() if user is None else CTR.objects.visible_to(user)
    queryset = with_hours_open(
        issued.filter(vehicle=vehicle, status=CTRStatus.ISSUED), now
    ).order_by("transport_date", "created_at")
    rows = queryset.values(
        "number",
        "transport_date",
        "created_at",
        "destination",
        "origin",
        "total_volume_m3",
        "hours_open",
        "alert_hours",
        facility_name=F("destination_facility__name"),
        facility_kind=F("destination_facility__kind"),
    )
    return [
        OpenCTR(
            number=r["number"],
            transport_date=r["transport_date"],
            created_at=r["created_at"],
            facility_name=r["facility_name"],
            facility_kind=r["facility_kind"],
            destination=r["destination"].coords,
            origin=r["origin"].coords,
            volume_m3=float(r["total_volume_m3"]),
            hours_open=float(r["hours_open"]),
            alert_hours=r["alert_hours"],
        )
        for r in rows
    ]


def check_plate(
    raw_plate: str,
    municipality_id: int | None = None,
    now: datetime.datetime | None = None,
    user=None,
) -> RoadsideAnswer:
    """The vehicle of the plate and its transporter's standing in the municipality the
    inspector checks in (`municipality_id`; given a `user`, its current one), and the open
    CTRs `user` sees (the others counted). Raise django.core.exceptions.ValidationError
    (pt-BR) when the plate is malformed."""
    if municipality_id is None and user is not None:
        municipality_id = jurisdiction_of(user).current_id
    plate = normalize_plate(raw_plate)
    now = now or timezone.now()
    day = timezone.localtime(now).date()
    vehicle = Vehicle.objects.select_related("transporter").filter(plate=plate).first()
    municipality = (
        Municipality.objects.defer("boundary").filter(pk=municipality_id).first()
        if municipality_id is not None
        else None
    )
    licence = vehicle.transporter.licence_in(municipality_id) if vehicle else None
    if licence is not None:
        licence.municipality = municipality
    listed = open_ctrs(vehicle, now, user) if vehicle else []
    elsewhere = 0
    if vehicle is not None and user is not None:
        every = CTR.objects.filter(vehicle=vehicle, status=CTRStatus.ISSUED).count()
        elsewhere = every - len(listed)
    return RoadsideAnswer(
        plate=plate,
        day=day,
        verdict=verdict_for(vehicle, day, licence),
        vehicle=vehicle,
        transporter=vehicle.transporter if vehicle else None,
        open_ctrs=listed,
        open_elsewhere=elsewhere,
        municipality=municipality,
        licence=licence,
    )
