"""The CTR document (Lei 3.978/2007 art. 3 VI, art. 13 p.ú.): one per load, its waste lines,
its number's sequence and its append-only history."""

from __future__ import annotations

from django.conf import settings
from django.contrib.gis.db import models
from django.db.models import Q
from django.utils import timezone

from jurisdiction.scope import ScopedQuerySet, scoped
from pev_network.models import (
    FacilityKind,
    Municipality,
    MunicipalParameters,
    ReceivingFacility,
    WasteClass,
)

from .fleet import Equipment, Vehicle
from .parties import Generator, Transporter, membership_of
from .worksites import Worksite


class CTRWasteClass(models.TextChoices):
    """What a CTR line may declare: the network's classes, and the prohibited kinds so that a
    declaration of them is refused by rule (art. 7, art. 14 §6) rather than by the parser."""

    A = "A", WasteClass.A.label
    B = "B", WasteClass.B.label
    C = "C", WasteClass.C.label
    D = "D", WasteClass.D.label
    VOLUMOSO = "VOLUMOSO", WasteClass.VOLUMOSO.label
    DOMICILIAR = "DOMICILIAR", "Resíduo domiciliar não inerte (proibido)"
    INDUSTRIAL = "INDUSTRIAL", "Resíduo industrial (proibido)"
    SAUDE = "SAUDE", "Resíduo de serviço de saúde (proibido)"


PROHIBITED_CLASSES = {CTRWasteClass.DOMICILIAR, CTRWasteClass.INDUSTRIAL, CTRWasteClass.SAUDE}


class CTRStatus(models.TextChoices):
    ISSUED = "issued", "Emitido"
    RECEIVED = "received", "Recebido"
    REFUSED = "refused", "Recusado"
    CANCELLED = "cancelled", "Cancelado"


def generator_ctrs_q(generator_id: int) -> Q:
    """The CTRs of a generator (art. 3 VIII-IX): those that name it, and those of its
    worksites whoever declared them. An onward CTR names a facility's operator as its
    generator (FacilityOperator, art. 3 VIII: the sorted waste is the operator's), so the
    operator's generator account sees those too. A subquery, not a join: the worksite's
    generator must not multiply or reorder the rows of a list."""
    return Q(generator_id=generator_id) | Q(
        worksite_id__in=Worksite.objects.filter(generator_id=generator_id).values("pk")
    )


def crossed_into(municipality_id: int | None, facility_municipality_id: int | None):
    """CTR.crossing_into: the destination facility's municipality when it is another."""
    if facility_municipality_id is None or facility_municipality_id == municipality_id:
        return None
    return facility_municipality_id


# The same in SQL, for the set-based paths (ctr/bulk/, synthetic/): {0} the CTR's
# municipality, {1} its destination facility's.
CROSSING_INTO_SQL = "CASE WHEN {1} <> {0} THEN {1} END"


class CTRQuerySet(ScopedQuerySet):
    def municipal_q(self, ids) -> Q:
        """A CTR is its origin's municipality's (the number says so); the municipality of its
        destination facility sees it too (a consortium's shared landfill):
        the loads that arrive at its facilities, not the rest of the other's data. Two index
        scans OR-ed, never a join nor a subquery: the municipality's CTRs and those crossing
        into it (CTR.crossing_into, its own partial index). With the facilities' ids in a
        subquery, PostgreSQL could use no index for that branch nor estimate it: a small
        municipality's newest CTRs were looked for by walking every CTR of the state, newest
        first, and its count read the whole table (docs/performance.md)."""
        ids = list(ids)
        return Q(municipality_id__in=ids) | Q(crossing_into_id__in=ids)

    def side_q(self, user) -> Q | None:
        """A transporter's users see its own CTRs, a facility's operators those destined to it
        and those leaving it (onward CTRs), a generator's those that name it or its worksites
        (read only: it issues, receives and cancels nothing)."""
        member = membership_of(user)
        if member is None:
            return None
        if member.transporter_id:
            return Q(transporter_id=member.transporter_id)
        if member.facility_id:
            return Q(destination_facility_id=member.facility_id) | Q(
                origin_facility_id=member.facility_id
            )
        if member.generator_id:
            return generator_ctrs_q(member.generator_id)
        return None


class CTR(models.Model):
    """Controle de Transporte de Resíduos: one per load (art. 3 VI, art. 13 sole §)."""

    Status = CTRStatus

    number = models.CharField("número", max_length=32, unique=True)
    # No single-column indexes on municipality, transporter and destination_facility: the
    # (municipality, year, sequence), (transporter, -created_at) and (destination_facility,
    # status) indexes lead with them, and each index is paid on every insert (ctr/bulk/).
    municipality = models.ForeignKey(
        Municipality,
        on_delete=models.PROTECT,
        related_name="ctrs",
        verbose_name="município",
        db_index=False,
    )
    year = models.PositiveSmallIntegerField("ano")
    sequence = models.PositiveIntegerField("sequência")
    transporter = models.ForeignKey(
        Transporter,
        on_delete=models.PROTECT,
        related_name="ctrs",
        verbose_name="transportador",
        db_index=False,
    )
    vehicle = models.ForeignKey(
        Vehicle, on_delete=models.PROTECT, related_name="ctrs", verbose_name="veículo"
    )
    equipment = models.ForeignKey(
        Equipment,
        on_delete=models.PROTECT,
        related_name="ctrs",
        verbose_name="equipamento",
        null=True,
        blank=True,
    )
    generator = models.ForeignKey(
        Generator, on_delete=models.PROTECT, related_name="ctrs", verbose_name="gerador"
    )
    # The name as the transporter declared it on this CTR: the document records what was
    # declared, even when the registry knows the CPF/CNPJ under another name.
    generator_name = models.CharField("nome do gerador (declarado)", max_length=200)
    worksite = models.ForeignKey(
        Worksite,
        on_delete=models.PROTECT,
        related_name="ctrs",
        verbose_name="obra",
        null=True,
        blank=True,
    )
    origin = models.PointField("origem", srid=4326, spatial_index=True)
    destination = models.PointField("ponto de descarga", srid=4326, spatial_index=True)
    # An onward CTR: sorted waste leaving the facility that received it (art. 3 III: the ATT
    # sorts "e posterior remoção para adequada disposição"); its origin is inside this area.
    origin_facility = models.ForeignKey(
        ReceivingFacility,
        on_delete=models.PROTECT,
        related_name="onward_ctrs",
        verbose_name="área de origem (CTR de saída)",
        null=True,
        blank=True,
        db_index=False,
    )
    destination_facility = models.ForeignKey(
        ReceivingFacility,
        on_delete=models.PROTECT,
        related_name="ctrs",
        verbose_name="área de destino",
        db_index=False,
    )
    # The municipality of the destination facility when it is not the CTR's own: a load across
    # the border, which that municipality sees too (CTRQuerySet.municipal_q);
    # NULL when the load stays home, as nearly every one does, so that its partial index holds
    # only the crossings and costs an insert nothing otherwise. Written on creation (save(),
    # the issue path; ctr/bulk/ and synthetic/ in their SQL, CROSSING_INTO_SQL) and kept by
    # the database when a facility moves to another municipality (migration ctr 0021).
    crossing_into = models.ForeignKey(
        Municipality,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="município de destino (outro)",
        null=True,
        blank=True,
        editable=False,
        db_index=False,
    )
    transport_date = models.DateField("data do transporte")
    total_volume_m3 = models.DecimalField("volume total (m³)", max_digits=8, decimal_places=3)
    status = models.CharField(
        "situação", max_length=10, choices=CTRStatus.choices, default=CTRStatus.ISSUED
    )
    findings = models.JSONField("constatações", default=list, blank=True)
    fee_ufesp = models.DecimalField("taxa (UFESP)", max_digits=6, decimal_places=2, default=0)
    received_volume_m3 = models.DecimalField(
        "volume recebido (m³)", max_digits=8, decimal_places=3, null=True, blank=True
    )
    closed_at = models.DateTimeField("encerrado em", null=True, blank=True)
    # Where the receiver's device was when it confirmed the load (browser
    # geolocation or the API's `location`), for the Núcleo's map of receptions given away from
    # the facility. No spatial index: it is read only by that map, filtered by transport date.
    received_location = models.PointField(
        "local do recebimento", srid=4326, null=True, blank=True, spatial_index=False
    )
    # A default, not auto_now_add: historical CTRs (imports, the demo) keep their real time.
    created_at = models.DateTimeField("emitido em", default=timezone.now, db_index=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="emitido por",
    )
    # The generator's confirmation of the load's departure, where the municipality asks for
    # it (Municipality.generator_confirmation_required; generators.confirmation).
    generator_confirmed_at = models.DateTimeField(
        "saída confirmada pelo gerador em", null=True, blank=True
    )
    # No index: nothing looks CTRs up by who confirmed them, and every index is paid on every
    # insert (ctr/bulk/); deleting a user (its PROTECT check) is rare.
    generator_confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="saída confirmada por",
        db_index=False,
    )
    # The offline provisional CTR (ctr/field/offline.py): the number the driver's
    # device gave the load while there was no connection, and when it left. db_default: the
    # set-based paths (ctr/bulk/, synthetic/) insert CTRs in SQL and never have one.
    provisional_number = models.CharField(
        "número provisório", max_length=20, blank=True, default="", db_default=""
    )
    provisional_departure_at = models.DateTimeField("saída (CTR provisório)", null=True, blank=True)

    objects = CTRQuerySet.as_manager()

    class Meta:
        verbose_name = "CTR"
        verbose_name_plural = "CTRs"
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["municipality", "year", "sequence"], name="ctr_sequence_unique"
            ),
            models.CheckConstraint(condition=Q(total_volume_m3__gt=0), name="ctr_volume_positive"),
            # One device number is one load of the transporter (a retry
            # of the sync must not issue it twice).
            models.UniqueConstraint(
                fields=["transporter", "provisional_number"],
                condition=~Q(provisional_number=""),
                name="ctr_provisional_number_unique",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "transport_date"]),
            models.Index(fields=["transporter", "-created_at"]),
            models.Index(fields=["destination_facility", "status"]),
            # The stock of a facility reads its onward CTRs (ctr/custody/stock.py): few CTRs are.
            models.Index(
                fields=["origin_facility", "status"],
                name="ctr_onward_origin",
                condition=Q(origin_facility__isnull=False),
            ),
            # "Which transporters carried from this municipality" (the Núcleo's filter form,
            # nucleo/forms.py) and "has this municipality any CTR": answered from the
            # index alone. Without it the planner walked each transporter's CTRs: 1.4 s for
            # São Paulo at a million CTRs, against 2 ms with it (docs/performance.md).
            models.Index(
                fields=["municipality", "transporter"], name="ctr_municipality_transporter"
            ),
            # The loads crossing into a municipality (CTRQuerySet.municipal_q's second branch);
            # the first is answered by the two indexes above that lead with the municipality.
            models.Index(
                fields=["crossing_into"],
                name="ctr_crossing_into",
                condition=Q(crossing_into__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return self.number

    def save(self, *args, **kwargs):
        if self._state.adding:
            self.set_crossing_into()
        super().save(*args, **kwargs)

    def set_crossing_into(self) -> None:
        """What save() sets on a new CTR (also the issue path's own INSERT, issue_writes)."""
        if self.destination_facility_id is not None:
            # The facility the issue path resolved is already loaded: no query.
            self.crossing_into_id = crossed_into(
                self.municipality_id, self.destination_facility.municipality_id
            )

    @property
    def declared_generator_name(self) -> str:
        """The generator's name as this CTR declares it (what the documents print); CTRs
        stored without one (before the field, or by hand) show the registry's."""
        return self.generator_name or self.generator.name

    def parameters(self) -> MunicipalParameters:
        """The municipality's parameters in force on the transport date: every rule, alert and
        fee judges the CTR by its own day's set, whenever it is checked (at issue, at
        reception, on a correction)."""
        return self.municipality.parameters_on(self.transport_date)

    @property
    def is_large_volume(self) -> bool:
        # Lei 3.978/2007 art. 12 §3: the limit of the transport date's set.
        return self.total_volume_m3 > self.parameters().small_volume_limit_m3

    @property
    def goes_to_pev(self) -> bool:
        return self.destination_facility.kind == FacilityKind.PEV

    @property
    def is_onward(self) -> bool:
        return self.origin_facility_id is not None


class CTRWaste(models.Model):
    ctr = models.ForeignKey(CTR, on_delete=models.CASCADE, related_name="waste", verbose_name="CTR")
    waste_class = models.CharField("classe", max_length=12, choices=CTRWasteClass.choices)
    volume_m3 = models.DecimalField("volume (m³)", max_digits=8, decimal_places=3)
    description = models.CharField("descrição", max_length=300, blank=True)

    objects = scoped(via="ctr")

    class Meta:
        verbose_name = "resíduo do CTR"
        verbose_name_plural = "resíduos do CTR"
        constraints = [
            models.CheckConstraint(condition=Q(volume_m3__gt=0), name="ctr_waste_volume_positive")
        ]


class NumberSequence(models.Model):
    """Last CTR number given per municipality and year. Incremented inside the issuing
    transaction (INSERT … ON CONFLICT DO UPDATE … RETURNING), so a failed issue rolls its
    number back and concurrent issues queue on the row: no gaps, no duplicates."""

    municipality = models.ForeignKey(Municipality, on_delete=models.CASCADE)
    year = models.PositiveSmallIntegerField()
    last_value = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["municipality", "year"], name="ctr_number_seq_unique")
        ]


class CTRAction(models.TextChoices):
    ISSUE = "issue", "Emissão"
    RECEIVE = "receive", "Recebimento"
    REFUSE = "refuse", "Recusa"
    CANCEL = "cancel", "Cancelamento"
    # The generator confirms the load left its worksite (generators.confirmation): the status
    # does not change.
    CONFIRM_DEPARTURE = "confirm_departure", "Confirmação do gerador"
    # A correction after reception: proposed by the transporter or the receiver,
    # decided by the counterpart or, when they disagree, by the Núcleo. The status does not
    # change; an approved correction changes the CTR's values, the event keeps the originals.
    CORRECTION_PROPOSED = "correction_proposed", "Correção proposta"
    CORRECTION_APPROVED = "correction_approved", "Correção aprovada"
    CORRECTION_REFUSED = "correction_refused", "Correção recusada"
    # A refused correction sent to the Núcleo (ctr/field/corrections.py).
    CORRECTION_ESCALATED = "correction_escalated", "Correção enviada ao Núcleo"


class CTREvent(models.Model):
    """Append-only history of a CTR; the database refuses UPDATE and DELETE (migration)."""

    ctr = models.ForeignKey(
        CTR, on_delete=models.PROTECT, related_name="events", verbose_name="CTR"
    )
    at = models.DateTimeField("quando", default=timezone.now)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name="quem"
    )
    action = models.CharField("ação", max_length=20, choices=CTRAction.choices)
    from_status = models.CharField("de", max_length=10, blank=True, choices=CTRStatus.choices)
    to_status = models.CharField("para", max_length=10, choices=CTRStatus.choices)
    data = models.JSONField("dados", default=dict, blank=True)

    objects = scoped(via="ctr")

    class Meta:
        verbose_name = "evento do CTR"
        verbose_name_plural = "eventos do CTR"
        ordering = ["at", "pk"]
