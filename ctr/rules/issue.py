"""The rules checked at issue of a CTR from a worksite: the transporter's licence, the origin,
the destination and its licence, the waste classes and volumes, the vehicle and equipment, the
generator's plan and registered worksite. Each with the SQL of ctr.bulk."""

from __future__ import annotations

from pev_network.models import FacilityKind, WasteClass, licensed_sql

from ..models import (
    PROHIBITED_CLASSES,
    LicenceStatus,
    TransporterLicence,
    licence_restriction_sql,
    licence_valid_sql,
)
from .catalogue import Message, Severity, breach, place_name, rule
from .drafts import CTRDraft

# --- the catalogue -----------------------------------------------------------------------
# In the SQL: `r` the staged row, `f` its facts (Message); ROWS and FACTS are their FROMs.

ROWS = "ctr_bulk_row r"
FACTS = "ctr_bulk_fact f JOIN ctr_bulk_row r ON r.line = f.line"
# Each waste line of the row, `w.c` its class and `w.i` its position from 1.
WASTE_LINES = "CROSS JOIN LATERAL unnest(r.classes) WITH ORDINALITY w(c, i)"
WASTE_FIELD = "(w.i - 1)::int AS sub, 'waste[' || (w.i - 1) || '].class' AS field"


# The transporter's licence in the CTR's municipality (the origin's), on the transport date:
# the check reads CTRDraft.licence (ctr.services.licence_in), the SQL the licence whose id
# ctr.bulk found for each row's municipality (f.licence_id, NULL without one) and its
# municipality's name (f.municipality_label). Validity and restriction are
# TransporterLicence.is_valid_on / restricted_on, in SQL licence_valid_sql /
# licence_restriction_sql (ctr.models: written once).
LICENCE_VALID_SQL = licence_valid_sql("l", "r.transport_date")


@rule(
    "TRANSPORTER_NOT_LICENSED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 13",
    "Transportador licenciado no município do CTR, com licença válida na data do transporte",
    messages={
        "other_generator": Message(
            "Gerador que transporta os próprios resíduos só pode emitir CTR dos seus "
            "resíduos (art. 12 §4): o gerador informado é outro.",
            sql=f"""
            SELECT r.line, 0 AS sub, 'generator' AS field
            FROM {FACTS}
            WHERE %(self_generator)s AND f.generator_document <> %(document)s
            """,
        ),
        "unlicensed": Message(
            "O transportador não tem licença em {municipality} na data do transporte ({day:date}).",
            sql=f"""
            SELECT r.line, 0 AS sub, 'transport_date' AS field,
                   f.municipality_label AS municipality, r.transport_date AS day
            FROM {FACTS}
            WHERE NOT %(self_generator)s AND f.municipality_id IS NOT NULL
              AND f.licence_id IS NULL
            """,
        ),
        "not_valid": Message(
            "A licença {licence} do transportador em {municipality} não é válida em "
            "{day:date} (válida de {valid_from:date} a {valid_until:date}).",
            sql=f"""
            SELECT r.line, 0 AS sub, 'transport_date' AS field, l.number AS licence,
                   f.municipality_label AS municipality, r.transport_date AS day,
                   l.valid_from, l.valid_until
            FROM {FACTS} JOIN {TransporterLicence._meta.db_table} l ON l.id = f.licence_id
            WHERE NOT %(self_generator)s AND NOT {LICENCE_VALID_SQL}
            """,
        ),
    },
)
def transporter_not_licensed(ctr: CTRDraft):
    """O transportador deve ser licenciado (cadastrado) pelo município do CTR, o da origem,
    com licença válida na data do transporte; a licença de outro município não vale aqui. O
    gerador que transporta os próprios resíduos dispensa o licenciamento (art. 12 §4), mas só
    pode levar resíduos seus."""
    transporter = ctr.transporter
    if transporter.is_self_generator:
        if ctr.generator is not None and ctr.generator.document != transporter.document:
            yield breach("generator", "other_generator")
        return
    if ctr.municipality is None:
        return  # no municipality, no licence to read: ORIGIN_OUTSIDE_MUNICIPALITY refuses it
    licence = ctr.licence
    if licence is None:
        yield breach(
            "transport_date",
            "unlicensed",
            municipality=place_name(ctr.municipality),
            day=ctr.transport_date,
        )
    elif not licence.is_valid_on(ctr.transport_date):
        yield breach(
            "transport_date",
            "not_valid",
            licence=licence.number,
            municipality=place_name(ctr.municipality),
            day=ctr.transport_date,
            valid_from=licence.valid_from,
            valid_until=licence.valid_until,
        )


# TransporterLicence.restricted_on(r.transport_date) of the row's licence, in SQL.
RESTRICTION_SQL = licence_restriction_sql("l", "r.transport_date")
LICENCE_FACTS = f"{FACTS} JOIN {TransporterLicence._meta.db_table} l ON l.id = f.licence_id"


@rule(
    "TRANSPORTER_SUSPENDED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 25 IV-V, art. 34",
    "Licença do transportador no município do CTR não suspensa nem cassada na data do transporte",
    messages={
        "suspended_until": Message(
            "O transportador está suspenso em {municipality} desde {since:date} até {until:date}.",
            sql=f"""
            SELECT r.line, 0 AS sub, NULL::text AS field, f.municipality_label AS municipality,
                   l.status_since AS since, l.suspended_until AS until
            FROM {LICENCE_FACTS}
            WHERE {RESTRICTION_SQL} = '{LicenceStatus.SUSPENDED.value}'
              AND l.suspended_until IS NOT NULL
            """,
        ),
        "suspended": Message(
            "O transportador está suspenso em {municipality} desde {since:date}.",
            sql=f"""
            SELECT r.line, 0 AS sub, NULL::text AS field, f.municipality_label AS municipality,
                   l.status_since AS since
            FROM {LICENCE_FACTS}
            WHERE {RESTRICTION_SQL} = '{LicenceStatus.SUSPENDED.value}'
              AND l.suspended_until IS NULL
            """,
        ),
        "revoked": Message(
            "A licença do transportador em {municipality} foi cassada em {since:date}.",
            sql=f"""
            SELECT r.line, 0 AS sub, NULL::text AS field, f.municipality_label AS municipality,
                   l.status_since AS since
            FROM {LICENCE_FACTS}
            WHERE {RESTRICTION_SQL} = '{LicenceStatus.REVOKED.value}'
            """,
        ),
    },
)
def transporter_suspended(ctr: CTRDraft):
    """Um transportador suspenso ou cassado não pode transportar no município que o suspendeu
    ou cassou; a suspensão em um município não impede os CTRs de outro."""
    licence = ctr.licence
    if licence is None:
        return
    status = licence.restricted_on(ctr.transport_date)
    if status is None:
        return
    place = place_name(ctr.municipality)
    if status == LicenceStatus.SUSPENDED:
        until = licence.suspended_until
        yield breach(
            None,
            "suspended_until" if until else "suspended",
            municipality=place,
            since=licence.status_since,
            until=until,
        )
    else:
        yield breach(None, "revoked", municipality=place, since=licence.status_since)


@rule(
    "ORIGIN_OUTSIDE_MUNICIPALITY",
    Severity.ERROR,
    "Lei 3.978/2007 art. 2",
    "Origem dentro do limite de um município atendido",
    message=Message(
        "A origem {origin:point} não está dentro de nenhum município atendido pela plataforma.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'origin' AS field, r.origin
        FROM {FACTS}
        WHERE f.municipality_id IS NULL
        """,
    ),
)
def origin_outside_municipality(ctr: CTRDraft):
    """A origem (a obra ou imóvel) deve estar dentro do limite do município; é ele que define o
    município do CTR."""
    if ctr.municipality is None:
        yield breach("origin", origin=ctr.origin)


@rule(
    "DESTINATION_OUTSIDE_FACILITY",
    Severity.ERROR,
    "Lei 3.978/2007 art. 13 p.ú., art. 2 §1 VI",
    "Ponto de descarga dentro do polígono da área de destino (com a tolerância do GPS)",
    messages={
        "requested": Message(
            "O ponto de descarga {destination:point} não está dentro da área “{facility}” "
            "informada como destino."
        ),
        "anywhere": Message(
            "O ponto de descarga {destination:point} não está dentro de nenhuma área de "
            "recebimento da rede."
        ),
    },
    # One scan for both messages.
    sql=f"""
    SELECT r.line, 0 AS sub, 'destination' AS field,
           CASE WHEN f.requested_id IS NOT NULL THEN 'requested' ELSE 'anywhere' END AS variant,
           r.destination, f.requested_name AS facility
    FROM {FACTS}
    WHERE f.facility_id IS NULL
    """,
)
def destination_outside_facility(ctr: CTRDraft):
    """O resíduo só pode ser descarregado dentro de uma área da rede; o ponto de descarga deve
    estar dentro do polígono da área, admitida a tolerância de GPS do município."""
    if ctr.facility is not None:
        return
    if ctr.requested_facility is not None:
        yield breach(
            "destination",
            "requested",
            destination=ctr.destination,
            facility=ctr.requested_facility.name,
        )
    else:
        yield breach("destination", "anywhere", destination=ctr.destination)


@rule(
    "FACILITY_NOT_LICENSED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 14 §1",
    "Área de destino com licença válida na data do transporte",
    message=Message(
        "A área “{facility}” não tem licença válida em {day:date}.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'destination_facility' AS field,
               f.facility_name AS facility, r.transport_date AS day
        FROM {FACTS}
        WHERE f.facility_id IS NOT NULL AND NOT f.licensed
        """,
    ),
)
def facility_not_licensed(ctr: CTRDraft):
    """Os receptores devem ser licenciados: a licença da área de destino deve valer na data do
    transporte."""
    if ctr.facility is not None and not ctr.facility_licensed:
        yield breach("destination_facility", facility=ctr.facility.name, day=ctr.transport_date)


@rule(
    "DESTINATION_OUTSIDE_AGREEMENT",
    Severity.ERROR,
    "Lei 3.978/2007 art. 2 caput, art. 4 §2 II",
    "Área de destino no município do CTR ou em um município cujas áreas ele aceita "
    "(consórcio ou convênio)",
    message=Message(
        "A área “{facility}” fica em {place}, que não está entre os municípios cujas áreas "
        "recebem os CTRs de {municipality} (consórcio ou convênio).",
        sql=f"""
        SELECT r.line, 0 AS sub, 'destination_facility' AS field,
               f.facility_name AS facility, f.facility_place AS place,
               f.municipality_label AS municipality
        FROM {FACTS}
        WHERE f.facility_id IS NOT NULL AND NOT f.destination_agreed
        """,
    ),
)
def destination_outside_agreement(ctr: CTRDraft):
    """Os resíduos gerados no município devem ir às áreas do seu plano (art. 2 caput, art. 4
    §2 II): as do próprio município ou as de um município com que ele tem consórcio ou
    convênio (a lista "municípios cujas áreas recebem os CTRs deste"). Uma área licenciada
    em outro município, fora dessa lista, não faz parte da rede do município de origem."""
    # An error, not a warning: art. 2 caput says "devem ser destinados às áreas previstas no
    # art. 4º", the network of the municipality's own plan; a licence elsewhere (art. 14 §1,
    # FACILITY_NOT_LICENSED) does not put an area in it, an agreement does (docs/legal.md).
    if ctr.facility is not None and not ctr.destination_agreed:
        yield breach(
            "destination_facility",
            facility=ctr.facility.name,
            place=place_name(ctr.facility.municipality),
            municipality=place_name(ctr.municipality),
        )


@rule(
    "CLASS_NOT_ACCEPTED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 3 II-IV, art. 18",
    "Toda classe de resíduo do CTR é aceita pela área de destino",
    message=Message(
        "A área “{facility}” ({kind:kind}) não recebe {waste:class}; aceita: {accepted:classes}.",
        sql=f"""
        SELECT r.line, {WASTE_FIELD}, f.facility_name AS facility, f.facility_kind AS kind,
               w.c AS waste, f.accepted_classes AS accepted
        FROM {FACTS} {WASTE_LINES}
        WHERE f.facility_id IS NOT NULL AND NOT (w.c = ANY(%(prohibited)s))
          AND NOT (w.c = ANY(f.accepted_classes))
        """,
    ),
)
def class_not_accepted(ctr: CTRDraft):
    """Cada área recebe só as classes para que foi licenciada: aterro de RCC e área de
    reciclagem, só classe A."""
    facility = ctr.facility
    if facility is None:
        return
    for index, line in enumerate(ctr.waste):
        if line.waste_class in PROHIBITED_CLASSES:
            continue
        if line.waste_class not in facility.accepted_classes:
            yield breach(
                f"waste[{index}].class",
                facility=facility.name,
                kind=facility.kind,
                waste=line.waste_class,
                accepted=facility.accepted_classes,
            )


@rule(
    "PROHIBITED_WASTE",
    Severity.ERROR,
    "Lei 3.978/2007 art. 7, art. 14 §6",
    "Sem resíduo domiciliar, industrial ou de serviço de saúde",
    message=Message(
        "{waste:class} não pode ser levado à rede de recebimento de RCC e volumosos.",
        sql=f"""
        SELECT r.line, {WASTE_FIELD}, w.c AS waste
        FROM {ROWS} {WASTE_LINES}
        WHERE w.c = ANY(%(prohibited)s)
        """,
    ),
)
def prohibited_waste(ctr: CTRDraft):
    """A rede não recebe resíduos domiciliares não inertes, industriais nem de serviços de saúde."""
    for index, line in enumerate(ctr.waste):
        if line.waste_class in PROHIBITED_CLASSES:
            yield breach(f"waste[{index}].class", waste=line.waste_class)


@rule(
    "LARGE_VOLUME_AT_PEV",
    Severity.ERROR,
    "Lei 3.978/2007 art. 12 §1-2",
    "PEV recebe no máximo o limite de pequeno volume (1 m³) por descarga",
    message=Message(
        "O PEV “{facility}” recebe até {volume_limit:decimal} m³ por descarga; o CTR declara "
        "{total:decimal} m³. Grandes volumes vão para ATT, área de reciclagem ou aterro de RCC.",
        sql=f"""
        SELECT f.line, 0 AS sub, 'waste' AS field, f.facility_name AS facility,
               f.small_volume_limit AS volume_limit, f.total
        FROM ctr_bulk_fact f
        WHERE f.facility_kind = '{FacilityKind.PEV.value}' AND f.total > f.small_volume_limit
        """,
    ),
)
def large_volume_at_pev(ctr: CTRDraft):
    """Um PEV recebe só pequenos volumes: até o limite do município (1 m³) por descarga;
    grandes volumes vão para a rede de ATT, reciclagem e aterro."""
    facility = ctr.facility
    if facility is not None and facility.kind == FacilityKind.PEV:
        limit = ctr.small_volume_limit
        if ctr.total_volume > limit:
            yield breach(
                "waste", facility=facility.name, volume_limit=limit, total=ctr.total_volume
            )


@rule(
    "OVER_EQUIPMENT_CAPACITY",
    Severity.ERROR,
    "Lei 3.978/2007 art. 12 §4 II",
    "Volume declarado não excede a capacidade nominal do equipamento",
    message=Message(
        "O volume declarado ({total:decimal} m³) excede a capacidade nominal do equipamento "
        "{equipment} ({capacity:decimal} m³).",
        sql="""
        SELECT f.line, 0 AS sub, 'waste' AS field, f.total, f.equipment_db_code AS equipment,
               f.equipment_capacity AS capacity
        FROM ctr_bulk_fact f
        WHERE f.equipment_id IS NOT NULL AND f.total > f.equipment_capacity
        """,
    ),
)
def over_equipment_capacity(ctr: CTRDraft):
    """A caçamba só pode ser usada até o seu nível original: sem chapas que aumentem a
    capacidade."""
    equipment = ctr.equipment
    if equipment is not None and ctr.total_volume > equipment.nominal_capacity_m3:
        yield breach(
            "waste",
            total=ctr.total_volume,
            equipment=equipment.code,
            capacity=equipment.nominal_capacity_m3,
        )


# Lei 3.978/2007 art. 13 (transporters "devem ser cadastrados") and art. 22 II (inspectors
# "vistoriar os veículos cadastrados para o transporte"): the truck is in the registration.
@rule(
    "VEHICLE_NOT_REGISTERED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 13, art. 22 II",
    "Veículo cadastrado pelo transportador",
    message=Message(
        "O veículo de placa {plate} não está no cadastro deste transportador.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'vehicle_plate' AS field,
               CASE WHEN r.vehicle_plate = '' THEN '(vazia)' ELSE r.vehicle_plate END AS plate
        FROM {FACTS}
        WHERE f.vehicle_id IS NULL
        """,
    ),
)
def vehicle_not_registered(ctr: CTRDraft):
    """O veículo (a placa) deve estar no cadastro do transportador, ativo: são os veículos
    cadastrados para o transporte que a fiscalização vistoria."""
    if ctr.vehicle is None:
        yield breach("vehicle_plate", plate=ctr.vehicle_plate or "(vazia)")


# Lei 3.978/2007 art. 13 and art. 22 II ("os equipamentos acondicionadores de resíduos"; art. 3
# VII: caçambas and the like): the caçamba named is in the registration. No caçamba named is
# no breach: a truck's own body carries the load.
@rule(
    "EQUIPMENT_NOT_REGISTERED",
    Severity.ERROR,
    "Lei 3.978/2007 art. 13, art. 22 II",
    "Equipamento (caçamba) cadastrado pelo transportador",
    message=Message(
        "O equipamento {equipment} não está no cadastro deste transportador.",
        sql=f"""
        SELECT r.line, 0 AS sub, 'equipment_code' AS field, r.equipment_code AS equipment
        FROM {FACTS}
        WHERE f.equipment_id IS NULL AND r.equipment_code <> ''
        """,
    ),
)
def equipment_not_registered(ctr: CTRDraft):
    """O equipamento (a caçamba) indicado deve estar no cadastro do transportador, ativo."""
    if ctr.equipment is None and ctr.equipment_code:
        yield breach("equipment_code", equipment=ctr.equipment_code)


@rule(
    "NOT_IN_GENERATOR_PLAN",
    Severity.WARNING,
    "Lei 3.978/2007 art. 9 p.ú. I",
    "O PGRCC do grande gerador indica este transportador e este destino",
    # The worksite of a CSV row is its generator's at its address (ctr.services.build_draft,
    # by id or by generator and address); ctr_bulk_fact holds whether it is a large
    # generator's and whether its PGRCC in force (Worksite.plan_*) names the transporter and
    # the destination (bulk.RESOLVE_SQL).
    messages={
        "transporter": Message(
            "O PGRCC da obra não indica este transportador.",
            sql=f"""
            SELECT r.line, 0 AS sub, 'transporter' AS field
            FROM {FACTS}
            WHERE f.plan_large AND NOT f.plan_transporter
            """,
        ),
        "facility": Message(
            "O PGRCC da obra não indica “{facility}” como destino.",
            sql=f"""
            SELECT r.line, 0 AS sub, 'destination_facility' AS field, f.facility_name AS facility
            FROM {FACTS}
            WHERE f.plan_large AND f.facility_id IS NOT NULL AND NOT f.plan_facility
            """,
        ),
    },
)
def not_in_generator_plan(ctr: CTRDraft):
    """O grande gerador anuncia no seu Projeto de Gerenciamento os transportadores e destinos
    que usará."""
    if not ctr.worksite_is_large_generator:
        return
    if ctr.transporter.pk not in ctr.plan_transporter_ids:
        yield breach("transporter", "transporter")
    if ctr.facility is not None and ctr.facility.pk not in ctr.plan_facility_ids:
        yield breach("destination_facility", "facility", facility=ctr.facility.name)


@rule(
    "CLASS_A_TO_LANDFILL",
    Severity.WARNING,
    "Lei 3.978/2007 art. 18 p.ú.",
    "Classe A a aterro havendo área de reciclagem licenciada",
    message=Message(
        "Há área de reciclagem licenciada no município: o resíduo classe A deve ser "
        "prioritariamente reciclado.",
        # ctr.services.recycling_area_available, only for the rows it concerns.
        sql=f"""
        SELECT r.line, 0 AS sub, 'destination_facility' AS field
        FROM {FACTS}
        WHERE f.facility_kind = '{FacilityKind.LANDFILL.value}'
          AND '{WasteClass.A.value}' = ANY(r.classes)
          AND EXISTS (
            SELECT 1 FROM pev_network_receivingfacility rf
            WHERE rf.kind = '{FacilityKind.RECYCLING.value}'
              AND rf.municipality_id = f.municipality_id
              AND '{WasteClass.A.value}' = ANY(rf.accepted_classes)
              AND {licensed_sql("rf.id", "r.transport_date")}
          )
        """,
    ),
)
def class_a_to_landfill(ctr: CTRDraft):
    """O resíduo classe A deve ser prioritariamente reciclado; o aterro é para quando a
    reciclagem for inviável."""
    if (
        ctr.facility is not None
        and ctr.facility.kind == FacilityKind.LANDFILL
        and ctr.recycling_area_available
        and any(line.waste_class == WasteClass.A for line in ctr.waste)
    ):
        yield breach("destination_facility")


@rule(
    "ORIGIN_OUTSIDE_WORKSITE",
    Severity.WARNING,
    "Lei 3.978/2007 art. 3 VI, art. 13",
    "Origem do CTR dentro da obra cadastrada, com a tolerância do GPS",
    messages={
        "area": Message(
            "A origem {origin:point} fica fora da área cadastrada da obra “{worksite}”, além "
            "da tolerância de {tolerance:decimal} m do GPS."
        ),
        "point": Message(
            "A origem {origin:point} fica a mais de {tolerance:decimal} m do local cadastrado "
            "da obra “{worksite}”."
        ),
    },
    # ctr_bulk_worksite (bulk.RESOLVE_SQL): each row's registered worksite, found by generator
    # and address as ctr.services.find_worksite finds it, and whether the origin is within it.
    sql="""
    SELECT r.line, 0 AS sub, 'origin' AS field,
           CASE WHEN ws.has_area THEN 'area' ELSE 'point' END AS variant,
           r.origin, ws.address AS worksite, ws.tolerance
    FROM ctr_bulk_worksite ws JOIN ctr_bulk_row r ON r.line = ws.line
    WHERE NOT ws.origin_inside
    """,
)
def origin_outside_worksite(ctr: CTRDraft):
    """O CTR informa a origem dos resíduos (art. 3 VI): a carga de uma obra cadastrada pelo
    gerador parte de dentro dela, do contorno desenhado ou do ponto marcado, com a tolerância
    do GPS do município. É aviso, não erro: a lei não proíbe o transporte por isso, mas uma
    origem fora da obra pode ser resíduo de outro lugar sob o nome dela, e fica registrada
    para o Núcleo e a fiscalização (art. 13)."""
    site = ctr.registered_worksite
    if site is not None and not ctr.origin_in_worksite:
        yield breach(
            "origin",
            "area" if site.area is not None else "point",
            origin=ctr.origin,
            worksite=site.address,
            tolerance=ctr.worksite_tolerance_m,
        )
