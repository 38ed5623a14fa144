"""CTR templates ("CTR Modelo"): a transporter's repeated load saved once
and issued again with the day and the volumes to confirm. Plain functions, one transaction
each, raising TemplateError (a DomainError) in Portuguese with nothing written.

A template is a declaration kept for later, not a checked CTR: issue() turns it into the same
IssueRequest the form and the API build, and ctr.services.issue checks every rule of the day
(a facility whose license expired since, a vehicle deactivated), exactly as for any CTR."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.gis.geos import Point
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.db.models.functions import Lower, Trim
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils import timezone

from config.errors import DomainError
from pev_network.models import ReceivingFacility

from .. import rules, services
from ..models import CTR, CTRTemplate, CTRWasteClass, Equipment, Transporter, Vehicle

MAX_WASTE_LINES = 20


class TemplateError(DomainError):
    status = 400
    code = "template"


class TemplateNameTaken(TemplateError):
    status = 409
    code = "template_name_taken"


@dataclass
class TemplateData:
    """What a template declares: a CTR's load without its day."""

    name: str
    generator: services.GeneratorData
    worksite: services.WorksiteData  # its location is the origin, as on the issue form
    destination: Point
    waste: list[rules.WasteLine]
    vehicle_plate: str = ""
    equipment_code: str = ""
    destination_facility_id: int | None = None


def of(transporter: Transporter) -> QuerySet:
    """The transporter's templates: every user of the transporter sees them, nobody else."""
    return (
        CTRTemplate.objects.filter(transporter=transporter)
        .select_related("vehicle", "equipment", "destination_facility")
        .defer("destination_facility__area")
        .order_by(Lower("name"), "pk")
    )


def _vehicle(transporter: Transporter, plate: str) -> Vehicle:
    vehicle = Vehicle.objects.filter(transporter=transporter, plate=plate).first()
    if vehicle is None:
        raise TemplateError(
            f"O veículo de placa “{plate}” não é da sua frota.", "vehicle_unknown", "vehicle_plate"
        )
    return vehicle


def _equipment(transporter: Transporter, code: str) -> Equipment | None:
    if not code:
        return None
    equipment = Equipment.objects.filter(transporter=transporter, code=code).first()
    if equipment is None:
        raise TemplateError(
            f"O equipamento “{code}” não é da sua frota.", "equipment_unknown", "equipment_code"
        )
    return equipment


def _facility(pk: int | None) -> ReceivingFacility | None:
    if pk is None:
        return None
    facility = ReceivingFacility.objects.defer("area").filter(pk=pk).first()
    if facility is None:
        raise TemplateError(
            f"A área de destino {pk} não existe.", "facility_unknown", "destination_facility"
        )
    return facility


def _waste_json(lines: list[rules.WasteLine]) -> list[dict]:
    if not lines:
        raise TemplateError("Informe ao menos um resíduo: classe e volume.", "no_waste", "waste")
    if len(lines) > MAX_WASTE_LINES:
        raise TemplateError(
            f"No máximo {MAX_WASTE_LINES} resíduos por modelo.", "too_many_lines", "waste"
        )
    for index, line in enumerate(lines):
        if line.waste_class not in CTRWasteClass.values:
            raise TemplateError(
                f"Resíduo {index + 1}: classe “{line.waste_class}” desconhecida.",
                "waste_class",
                f"waste[{index}].class",
            )
        if line.volume_m3 <= 0:
            raise TemplateError(
                f"Resíduo {index + 1}: o volume deve ser maior que zero.",
                "waste_volume",
                f"waste[{index}].volume_m3",
            )
    return [
        {
            "class": line.waste_class,
            "volume_m3": str(line.volume_m3),
            "description": line.description,
        }
        for line in lines
    ]


def waste_lines(template: CTRTemplate) -> list[rules.WasteLine]:
    return [
        rules.WasteLine(line["class"], Decimal(line["volume_m3"]), line.get("description", ""))
        for line in template.waste
    ]


def _name(transporter: Transporter, name: str, template: CTRTemplate | None) -> str:
    name = " ".join(name.split())
    if not name:
        raise TemplateError("Informe o nome do modelo.", "template_name", "name")
    taken = CTRTemplate.objects.alias(key=Lower(Trim("name"))).filter(
        transporter=transporter, key=name.casefold()
    )
    if template is not None:
        taken = taken.exclude(pk=template.pk)
    if taken.exists():
        raise name_taken(name)
    return name


def name_taken(name: str) -> TemplateNameTaken:
    return TemplateNameTaken(
        f"Já existe um modelo chamado “{name}”. Escolha outro nome.", field="name"
    )


def save(
    transporter: Transporter,
    user,
    data: TemplateData,
    template: CTRTemplate | None = None,
) -> CTRTemplate:
    """Create a template, or replace every field of `template` (the transporter's own)."""
    if template is not None and template.transporter_id != transporter.pk:
        raise TemplateError("Modelo de outro transportador.", "forbidden", status=404)
    if not data.worksite.address.strip():
        raise TemplateError("Informe o endereço da obra.", "worksite", "worksite")
    fields = {
        "name": _name(transporter, data.name, template),
        "generator_name": data.generator.name.strip(),
        "generator_document": data.generator.document,
        "worksite_address": data.worksite.address.strip(),
        "worksite_neighbourhood": data.worksite.neighbourhood.strip(),
        "origin": data.worksite.location,
        "destination": data.destination,
        "destination_facility": _facility(data.destination_facility_id),
        "vehicle": _vehicle(transporter, data.vehicle_plate),
        "equipment": _equipment(transporter, data.equipment_code),
        "waste": _waste_json(data.waste),
        "updated_at": timezone.now(),
    }
    if template is None:
        template = CTRTemplate(transporter=transporter, created_by=user)
    for name, value in fields.items():
        setattr(template, name, value)
    try:
        with transaction.atomic():
            template.save()
    except IntegrityError:
        # Two saves of one name at once: the unique index let one through.
        raise name_taken(fields["name"]) from None
    return template


def data_of_ctr(ctr: CTR, name: str) -> TemplateData:
    """What a CTR declared, as a template named `name`."""
    if ctr.origin_facility_id is not None or ctr.worksite is None:
        raise TemplateError(
            "Só um CTR que sai de uma obra vira modelo (este não tem endereço de obra).",
            "template_from_ctr",
        )
    return TemplateData(
        name=name,
        generator=services.GeneratorData(ctr.generator_name, ctr.generator.document),
        worksite=services.WorksiteData(
            ctr.worksite.address, ctr.origin, ctr.worksite.neighbourhood
        ),
        destination=ctr.destination,
        destination_facility_id=ctr.destination_facility_id,
        vehicle_plate=ctr.vehicle.plate if ctr.vehicle else "",
        equipment_code=ctr.equipment.code if ctr.equipment else "",
        waste=[
            rules.WasteLine(w.waste_class, w.volume_m3, w.description)
            for w in ctr.waste.order_by("pk")
        ],
    )


def from_ctr(ctr: CTR, user, name: str) -> CTRTemplate:
    """Save one of the transporter's CTRs as a template ("salvar como modelo")."""
    return save(ctr.transporter, user, data_of_ctr(ctr, name))


def delete(template: CTRTemplate) -> None:
    template.delete()


def issue_request(
    template: CTRTemplate,
    transport_date: datetime.date,
    volumes: list[Decimal] | None = None,
) -> services.IssueRequest:
    """The IssueRequest of a template on a day, with the volumes confirmed (one per waste
    line, in order; the template's when None)."""
    lines = waste_lines(template)
    if volumes is not None:
        if len(volumes) != len(lines):
            raise TemplateError(
                f"Informe {len(lines)} volume(s), um por resíduo do modelo, na ordem.",
                "volumes",
                "volumes",
            )
        for index, volume in enumerate(volumes):
            if not volume > 0:
                raise TemplateError(
                    f"Volume {index + 1}: deve ser maior que zero.",
                    "volumes",
                    f"volumes[{index}]",
                )
        lines = [
            rules.WasteLine(line.waste_class, volume, line.description)
            for line, volume in zip(lines, volumes, strict=True)
        ]
    return services.IssueRequest(
        transport_date=transport_date,
        vehicle_plate=template.vehicle.plate if template.vehicle else "",
        equipment_code=template.equipment.code if template.equipment else "",
        origin=template.origin,
        destination=template.destination,
        waste=lines,
        generator=services.GeneratorData(template.generator_name, template.generator_document),
        worksite=services.WorksiteData(
            template.worksite_address, template.origin, template.worksite_neighbourhood
        ),
        destination_facility_id=template.destination_facility_id,
    )


def issue(
    template: CTRTemplate,
    user,
    transport_date: datetime.date,
    volumes: list[Decimal] | None = None,
) -> CTR:
    """Issue a CTR from a template: re-validated against every rule, like any CTR."""
    return services.issue(
        template.transporter, user, issue_request(template, transport_date, volumes)
    )


def form_initial(template: CTRTemplate) -> tuple[dict, list[dict]]:
    """The issue form's (ctr.forms.CTRForm) initial data and its waste lines' from a
    template: the form is the one of every CTR, filled in."""
    initial = {
        "vehicle": template.vehicle_id,
        "equipment": template.equipment_id,
        "generator_name": template.generator_name,
        "generator_document": template.generator_document,
        "worksite_address": template.worksite_address,
        "worksite_neighbourhood": template.worksite_neighbourhood,
        "origin_lat": _degrees(template.origin.y),
        "origin_lon": _degrees(template.origin.x),
        "destination_lat": _degrees(template.destination.y),
        "destination_lon": _degrees(template.destination.x),
        "destination_facility": template.destination_facility_id,
    }
    waste = [
        {
            "waste_class": line.waste_class,
            "volume_m3": line.volume_m3,
            "description": line.description,
        }
        for line in waste_lines(template)
    ]
    return initial, waste


def _degrees(value: float) -> Decimal:
    return Decimal(f"{value:.6f}")


def requested(transporter: Transporter, pk) -> tuple[CTRTemplate | None, dict, list | None]:
    """The template an issue form was opened from (its ?modelo=), with the form's initial
    data; (None, {}, None) without one. Another transporter's, or none such: 404."""
    if pk is None:
        return None, {}, None
    if not str(pk).isdigit():
        raise Http404("Modelo não encontrado.")
    template = get_object_or_404(of(transporter), pk=int(pk))
    return template, *form_initial(template)
