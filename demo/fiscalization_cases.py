"""The fiscalization demo's cases (demo/fiscalization.py): a notice delivered by hand and
repaired in time; a notice expired unrepaired and a signed record of two table entries
(cumulative); a recidivist (an earlier record of the same person, paid) whose record is
doubled; a record under appeal; a notice still running; and the suspension that explains why
the CTR demo's third transporter is suspended."""

from __future__ import annotations

import datetime

from ctr.models import Generator, LicenceStatus, TransporterLicence
from fiscalization import deadlines, enforcement
from fiscalization.enforcement import OffenderData
from fiscalization.models import DeliveryMethod, InfractionRecord, OffenderRole
from pev_network.models import Municipality

from .cast import TRANSPORTERS, cnpj, cpf
from .fiscalization_loader import C, Loader, S, offset

SUSPENDED_TRANSPORTER = next(s for s in TRANSPORTERS if s.key == "C")
OLD_CASE_DAYS = 200  # the recidivist's first record was paid about this long ago

# --- people (fictitious documents, check digits computed) -------------------------------------

# A carroceiro without registration, caught dumping: only this demo uses his CPF, so his case
# tells whether the demo is loaded.
CLANDESTINE = ("Sebastião Carroceiro Fictício (fictício)", cpf("901902903"))
RECIDIVIST = ("Rafael Hipotético Nunes (fictício)", cpf("800900100"))  # a CTR demo generator
APPELLANT = ("Construtora Horizonte Exemplo Ltda. (fictícia)", cnpj("717171710001"))
REPAIRER = ("Mercado Bom Preço Exemplo Ltda. (fictícia)", cnpj("252525250001"))
NOTIFIED = ("Reformas Exemplo & Cia. ME (fictícia)", cnpj("939393930001"))


def _generator(name_document: tuple[str, str], role: str, address: str) -> OffenderData:
    name, document = name_document
    return OffenderData(
        name=name,
        document=document,
        role=role,
        address=address,
        generator=Generator.objects.filter(document=document).first(),
    )


# --- the plan: cases --------------------------------------------------------------------------


def payment_day(today: datetime.date) -> datetime.date:
    """About OLD_CASE_DAYS ago: the demo carries that year's UFESP (demo.network.
    ensure_ufesp), in which the payment is made (art. 36)."""
    return today - datetime.timedelta(days=OLD_CASE_DAYS)


def plan_repaired(ld: Loader) -> None:
    """Notice by hand, damage repaired in time: the case ends without penalty (art. 27)."""
    at = ld.day(17, 8, 20)
    ld.report(
        "market",
        at,
        ld.free_point(),
        C.PUBLIC_AREA,
        "contact",
        [(ld.day(16, 9, 50), S.CONFIRMED, "Vistoria: caixas e móveis do mercado.")],
        description="Caixas, prateleiras velhas e restos de reforma do mercado "
        "deixados na calçada da Rua Amostra do Rosário.",
    )
    offender = _generator(REPAIRER, OffenderRole.PROPERTY, "Rua Amostra do Rosário, 480")
    ld.open_case(
        "repaired",
        ld.day(16, 10, 0),
        offender,
        "Restos de reforma (prateleiras, madeira e caixas, cerca de 2 m³) deixados no "
        "passeio público em frente ao estabelecimento (art. 2º, § 1º).",
        report="market",
    )
    issued = ld.day(16, 10, 20)
    ld.notice(
        "repaired",
        issued,
        DeliveryMethod.HAND,
        "Remover o material do passeio e destiná-lo a área licenciada, com CTR.",
        issued,
    )
    repaired = ld.day(15, 16, 30)
    ld.add(
        repaired,
        lambda: enforcement.mark_repaired(ld.notices["repaired"], repaired, by=ld.inspector),
    )
    ld.plans["market"].moves.append(
        (
            repaired + datetime.timedelta(minutes=40),
            S.CLEANED,
            "Removido pelo responsável no prazo da notificação.",
        )
    )


def plan_clandestine(ld: Loader) -> None:
    """Notice expired unrepaired, then a signed record of two entries (art. 30 §3)."""
    offender = OffenderData(
        name=CLANDESTINE[0],
        document=CLANDESTINE[1],
        role=OffenderRole.DRIVER,
        address="Travessa Ilustrativa das Flores, 77",
    )
    opened = ld.day(24, 15, 20)
    ld.open_case(
        "clandestine",
        opened,
        offender,
        "Flagrante de descarga de entulho de reforma em lote vago, transportado em "
        "carroça por condutor sem cadastro de transportador (art. 13).",
        report="lot-flagrant",
    )
    issued = opened + datetime.timedelta(minutes=10)
    ld.notice(
        "clandestine",
        issued,
        DeliveryMethod.HAND,
        "Recolher o entulho descarregado no lote e levá-lo a um PEV ou ATT licenciado.",
        issued,
    )
    ld.record("clandestine", ld.day(20, 9, 0), ("INF-01", "INF-02"), DeliveryMethod.HAND)


def plan_recidivist(ld: Loader, paid_on: datetime.date) -> None:
    """A first record, the damage repaired and the fine paid; a new infraction later: no
    notice, the fine doubled (art. 30)."""
    offender = _generator(RECIDIVIST, OffenderRole.PROPERTY, "Rua Hipotética da Estação, 310")
    at = ld.day(7, 18, 0)
    location = ld.free_point()
    ld.report(
        "recidivist",
        at,
        location,
        C.PUBLIC_AREA,
        "anonymous",
        [(ld.day(6, 9, 35), S.CONFIRMED, "Mesmo imóvel do auto pago no ano passado.")],
        description="De novo entulho de reforma na calçada da Rua Hipotética da "
        "Estação, em frente ao nº 310.",
    )
    opened = ld.on(paid_on - datetime.timedelta(days=20), 9, 10)
    ld.open_case(
        "first",
        opened,
        offender,
        "Entulho de reforma (cerca de 3 m³) lançado no passeio público em frente ao "
        "imóvel (art. 2º, § 1º).",
        location=offset(location.x, location.y, 8, 5),
    )
    issued = opened + datetime.timedelta(minutes=20)
    ld.notice(
        "first", issued, DeliveryMethod.HAND, "Remover o entulho do passeio em 72 horas.", issued
    )
    ld.record(
        "first", issued + datetime.timedelta(days=3, hours=2), ("INF-01",), DeliveryMethod.HAND
    )
    # The damage repaired after the record: paying alone would not close the case (art. 30 §2).
    repaired = ld.on(paid_on - datetime.timedelta(days=2), 15)
    ld.add(
        repaired,
        lambda: enforcement.register_repair(ld.records["first"], repaired, by=ld.inspector),
    )
    ld.add(
        ld.on(paid_on, 11),
        # Paid exactly what was due, under the treasury's guia (art. 36: "guia própria").
        lambda: enforcement.register_payment(
            ld.records["first"], paid_on, guide=f"DAM {paid_on.year}/000184", by=ld.inspector
        ),
    )
    ld.open_case(
        "recidivist",
        ld.day(6, 9, 40),
        offender,
        "Nova disposição de entulho no passeio em frente ao mesmo imóvel.",
        report="recidivist",
    )
    ld.record(
        "recidivist",
        ld.day(6, 10, 30),
        ("INF-01",),
        DeliveryMethod.HAND,
        "O infrator recusou-se a assinar; cópia entregue em mãos na presença de testemunha.",
        applied_after=None,  # in the authority's queue
    )


def plan_appeal(ld: Loader) -> None:
    """Notice and record by mail (AR), an appeal filed in time and not yet decided."""
    at = ld.day(40, 11, 0)
    ld.report(
        "appeal",
        at,
        ld.free_point(),
        C.PROTECTED_AREA,
        "contact",
        [(ld.day(38, 9, 50), S.CONFIRMED, "Terra e entulho da obra vizinha.")],
        description="Terra e entulho de obra lançados na área verde protegida do "
        "loteamento, ao lado da obra da construtora.",
    )
    offender = _generator(APPELLANT, OffenderRole.PROPERTY, "Avenida Exemplo do Vale, 1200")
    ld.open_case(
        "appeal",
        ld.day(38, 10, 0),
        offender,
        "Terra e entulho da obra lançados em área verde protegida (art. 2º, § 1º, VII).",
        report="appeal",
    )
    ld.notice(
        "appeal",
        ld.day(38, 11, 0),
        DeliveryMethod.MAIL,
        "Retirar o material da área verde e recompor o terreno.",
        ld.day(35, 12, 0),
    )
    ld.record(
        "appeal",
        ld.day(30, 10, 0),
        ("INF-01",),
        DeliveryMethod.MAIL,
        "Responsável pela obra ausente no local; auto enviado por carta com aviso de recebimento.",
    )
    delivered = ld.day(27, 12, 0)
    ld.add(
        delivered,
        lambda: enforcement.register_record_delivery(
            ld.records["appeal"], delivered, by=ld.inspector
        ),
    )
    filed = ld.today - datetime.timedelta(days=14)
    ld.add(
        ld.on(filed, 15),
        lambda: enforcement.file_appeal(
            ld.records["appeal"],
            filed,
            "A construtora alega que o material foi deixado por terceiros e junta os CTRs "
            "de todas as cargas da obra no período.",
            by=ld.inspector,
        ),
    )


def plan_running_notice(ld: Loader) -> None:
    """A notice delivered yesterday: the 72 hours are still running."""
    ld.report(
        "running",
        ld.day(3, 7, 30),
        ld.free_point(),
        C.VACANT_LOT,
        "anonymous",
        [(ld.day(1, 9, 45), S.CONFIRMED, "Sacos de entulho de uma reforma ao lado.")],
    )
    offender = _generator(NOTIFIED, OffenderRole.PROPERTY, "Rua Fictícia dos Ipês, 95")
    ld.open_case(
        "running",
        ld.day(1, 10, 0),
        offender,
        "Sacos de entulho da reforma em andamento deixados no lote vago vizinho.",
        report="running",
    )
    issued = ld.day(1, 10, 20)
    ld.notice(
        "running",
        issued,
        DeliveryMethod.HAND,
        "Recolher os sacos de entulho e contratar caçamba ou levá-los ao PEV.",
        issued,
    )


def suspended_transporter(town: Municipality) -> tuple[TransporterLicence, int] | None:
    """The CTR demo's suspended transporter's licence in the town and the days of its
    suspension, when it is suspended for at most the town's framework's days (15) as the CTR
    demo leaves it."""
    licence = (
        TransporterLicence.objects.select_related("transporter", "municipality")
        .filter(transporter__document=SUSPENDED_TRANSPORTER.document, municipality=town)
        .first()
    )
    if (
        licence is None
        or licence.status != LicenceStatus.SUSPENDED
        or licence.status_since is None
        or licence.suspended_until is None
    ):
        return None
    days = deadlines.suspension_days(licence.status_since, licence.suspended_until)
    longest = enforcement.framework_in_force(town, licence.status_since).suspension_max_days
    if not 1 <= days <= longest:
        return None
    return licence, days


def _suspend(record: InfractionRecord, licence: TransporterLicence, days: int, by) -> None:
    """apply_suspension, for a transporter the CTR demo already left suspended in the town.

    The service refuses to suspend a licence already suspended that day, and the CTR demo
    sets the status itself. So the status is set back to ACTIVE and the service suspends it
    again, in this transaction: it writes the same status, start and end, checked below."""
    kept = (licence.status, licence.status_since, licence.suspended_until)
    TransporterLicence.objects.filter(pk=licence.pk).update(
        status=LicenceStatus.ACTIVE, status_since=None, suspended_until=None
    )
    enforcement.apply_suspension(
        record,
        licence.status_since,
        days,
        "Suspensão das atividades de transporte de RCC (art. 25, IV).",
        by=by,
    )
    licence.refresh_from_db()
    if (licence.status, licence.status_since, licence.suspended_until) != kept:
        raise ValueError("A suspensão não coincide com a do transportador da demonstração.")


def plan_suspension(ld: Loader, found: tuple[TransporterLicence, int]) -> None:
    """Why the CTR demo's third transporter is suspended: a caçamba unloaded on a slope,
    notice expired, record, and the suspension from the day the CTR demo says."""
    licence, days = found
    transporter = licence.transporter
    start = licence.status_since
    offender = OffenderData(
        name=transporter.name,
        document=transporter.document,
        role=OffenderRole.TRANSPORT_DIRECTOR,
        address="Avenida Fictícia Paraíba, 2000",
        transporter=transporter,
    )
    opened = ld.on(start - datetime.timedelta(days=12), 9, 30)
    ld.open_case(
        "suspension",
        opened,
        offender,
        "Caçamba CF-04, no veículo FIC5D67, descarregada na encosta sem CTR e fora de "
        "área licenciada (art. 2º, § 1º, II; art. 13).",
        report="slope-caught",
    )
    issued = opened + datetime.timedelta(minutes=30)
    ld.notice(
        "suspension",
        issued,
        DeliveryMethod.HAND,
        "Remover o entulho da encosta e destiná-lo a área licenciada.",
        issued,
    )
    drawn = ld.on(start - datetime.timedelta(days=8), 10)
    ld.record("suspension", drawn, ("INF-01", "INF-04"), DeliveryMethod.HAND)
    ld.add(
        drawn + datetime.timedelta(minutes=30),
        lambda: _suspend(ld.records["suspension"], licence, days, ld.authority),
    )
