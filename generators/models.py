"""The generator's side (Lei 3.978/2007 art. 9): the waste management plan of a large
generator's worksite (PGRCC), its versions and the Núcleo's decisions on them.

The worksite itself, its generator and the plan in force that the rules read
(`Worksite.plan_transporters`, `Worksite.plan_facilities`) belong to ctr; a plan the Núcleo
approves is copied there (generators.plans)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from ctr.documents import validate_document
from ctr.models import (
    CTR,
    DestinationCertificate,
    Generator,
    Transporter,
    Worksite,
    membership_of,
)
from jurisdiction.scope import ScopedQuerySet, scoped
from pev_network.models import Municipality, ReceivingFacility, WasteClass


class OfWorksiteQuerySet(ScopedQuerySet):
    """A worksite's plans and declarations: its municipality's (the Núcleo that decides them),
    and its generator's own people (who write and ask for them)."""

    municipality_path = "worksite__municipality"

    def side_q(self, user) -> Q | None:
        member = membership_of(user)
        if member is None or not member.generator_id:
            return None
        return Q(worksite__generator_id=member.generator_id)


class PlanStatus(models.TextChoices):
    DRAFT = "draft", "em elaboração"
    SUBMITTED = "submitted", "enviado ao Núcleo"
    CHANGES_REQUESTED = "changes", "devolvido para ajustes"
    APPROVED = "approved", "aprovado"
    # An approved plan replaced by a newer approved version.
    SUPERSEDED = "superseded", "substituído"


class WastePlan(models.Model):
    """One version of a worksite's PGRCC (art. 9 caput and p.ú. I): the volumes it expects by
    class and the licensed transporters and destinations it announces. The generator writes
    and submits it; the Núcleo approves it or returns it for changes. At most one version of a
    worksite is approved at a time."""

    worksite = models.ForeignKey(
        Worksite, on_delete=models.CASCADE, related_name="plans", verbose_name="obra"
    )
    version = models.PositiveIntegerField("versão")
    status = models.CharField(
        "situação", max_length=12, choices=PlanStatus.choices, default=PlanStatus.DRAFT
    )
    transporters = models.ManyToManyField(
        Transporter, blank=True, related_name="+", verbose_name="transportadores"
    )
    facilities = models.ManyToManyField(
        ReceivingFacility, blank=True, related_name="+", verbose_name="destinos"
    )
    created_at = models.DateTimeField("criado em", default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        related_name="+",
        verbose_name="criado por",
    )
    submitted_at = models.DateTimeField("enviado em", null=True, blank=True)
    decided_at = models.DateTimeField("decidido em", null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="decidido por",
    )
    decision_note = models.TextField("parecer do Núcleo", blank=True)

    objects = OfWorksiteQuerySet.as_manager()

    class Meta:
        verbose_name = "PGRCC"
        verbose_name_plural = "PGRCCs"
        ordering = ["worksite", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["worksite", "version"], name="wasteplan_worksite_version_unique"
            ),
            models.UniqueConstraint(
                fields=["worksite"],
                condition=Q(status=PlanStatus.APPROVED),
                name="wasteplan_one_approved",
            ),
        ]

    def __str__(self) -> str:
        return f"PGRCC v{self.version} – {self.worksite}"


class PlannedVolume(models.Model):
    """The volume a plan expects of one waste class over the whole work."""

    plan = models.ForeignKey(
        WastePlan, on_delete=models.CASCADE, related_name="volumes", verbose_name="PGRCC"
    )
    waste_class = models.CharField("classe", max_length=12, choices=WasteClass.choices)
    volume_m3 = models.DecimalField("volume previsto (m³)", max_digits=12, decimal_places=2)

    objects = scoped(via="plan")

    class Meta:
        verbose_name = "volume previsto"
        verbose_name_plural = "volumes previstos"
        ordering = ["plan", "waste_class"]
        constraints = [
            models.UniqueConstraint(
                fields=["plan", "waste_class"], name="plannedvolume_plan_class_unique"
            ),
            models.CheckConstraint(
                condition=Q(volume_m3__gte=0), name="plannedvolume_not_negative"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_waste_class_display()}: {self.volume_m3} m³"


class PlanAction(models.TextChoices):
    CREATED = "created", "criado"
    EDITED = "edited", "alterado"
    SUBMITTED = "submitted", "enviado ao Núcleo"
    CHANGES_REQUESTED = "changes", "devolvido para ajustes"
    APPROVED = "approved", "aprovado"
    SUPERSEDED = "superseded", "substituído por nova versão"


class WastePlanEvent(models.Model):
    """The plan's history, append-only: who did what, when, with the note and the data at the
    time (volumes, transporters, destinations)."""

    plan = models.ForeignKey(
        WastePlan, on_delete=models.PROTECT, related_name="events", verbose_name="PGRCC"
    )
    at = models.DateTimeField("quando", default=timezone.now)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        related_name="+",
        verbose_name="quem",
    )
    action = models.CharField("ação", max_length=12, choices=PlanAction.choices)
    note = models.TextField("observação", blank=True)
    data = models.JSONField("dados", default=dict, blank=True)

    objects = scoped(via="plan")

    class Meta:
        verbose_name = "evento do PGRCC"
        verbose_name_plural = "eventos do PGRCC"
        ordering = ["at", "pk"]

    def __str__(self) -> str:
        return f"{self.plan}: {self.get_action_display()}"


# --- accounts: invitations and self-registrations (generators.accounts) -----------------------


class InvitationQuerySet(ScopedQuerySet):
    """An invitation is its municipality's: the Núcleo's that sent it, or the one of
    the CTR on which the inviting transporter carried for the generator. The transporter sees
    the invitations it sent."""

    def side_q(self, user) -> Q | None:
        member = membership_of(user)
        if member is None or not member.transporter_id:
            return None
        return Q(transporter_id=member.transporter_id)


class GeneratorInvitation(models.Model):
    """An invitation to open a generator's account, sent by e-mail: by the Núcleo (any
    generator) or by a transporter for a generator it carried for (art. 13 p.ú.: it owes that
    generator the proof of destination). The link carries a single-use token; only its SHA-256
    is stored, so the table alone opens no account."""

    generator = models.ForeignKey(
        Generator, on_delete=models.CASCADE, related_name="invitations", verbose_name="gerador"
    )
    email = models.EmailField("e-mail")
    token_hash = models.CharField("hash do token", max_length=64, unique=True, editable=False)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="convidado por",
    )
    # The transporter the invitation was sent for; empty when the Núcleo sent it.
    transporter = models.ForeignKey(
        Transporter,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="transportador",
    )
    # Whose it is: the municipality of the Núcleo that sent it, or of the CTR on
    # which the transporter carried for the generator. Empty only on an invitation the data
    # migration could not place (generators 0006): the platform's administrator sees it.
    municipality = models.ForeignKey(
        Municipality,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="município",
        db_index=False,  # generatorinv_municipality_idx starts with it
    )
    created_at = models.DateTimeField("enviado em", default=timezone.now)
    expires_at = models.DateTimeField("válido até")
    accepted_at = models.DateTimeField("aceito em", null=True, blank=True)
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="conta criada",
    )

    objects = InvitationQuerySet.as_manager()

    class Meta:
        verbose_name = "convite de gerador"
        verbose_name_plural = "convites de geradores"
        ordering = ["-created_at", "-pk"]
        # The Núcleo's list: its municipality's, newest first.
        indexes = [
            models.Index(
                fields=["municipality", "-created_at"], name="generatorinv_municipality_idx"
            )
        ]

    def __str__(self) -> str:
        return f"Convite {self.pk} – {self.generator}"

    def state(self, now=None) -> str:
        """accepted, expired or pending."""
        if self.accepted_at is not None:
            return "accepted"
        return "expired" if (now or timezone.now()) >= self.expires_at else "pending"


class RegistrationStatus(models.TextChoices):
    PENDING = "pending", "aguardando o Núcleo"
    CONFIRMED = "confirmed", "confirmado"
    REFUSED = "refused", "recusado"


class RegistrationQuerySet(ScopedQuerySet):
    """A registration is the municipality's whose Núcleo confirms it (the one the generator
    chose); the person who sent it sees its own."""

    def side_q(self, user) -> Q | None:
        return Q(user_id=user.pk)


class GeneratorRegistration(models.Model):
    """A generator's self-registration (/gerador/cadastro/): the account exists from the start,
    without a Membership, so it acts for no one (it sees what any signed-in user without a role
    sees) until the Núcleo confirms it. Confirmation links it to the generator of that CPF/CNPJ,
    created from the registration when there is none (an existing one keeps its name).

    The generator chooses the municipality whose Núcleo confirms it, among those the platform
    serves: only that municipality's staff see it and decide it."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="generator_registration",
        verbose_name="conta",
    )
    name = models.CharField("nome", max_length=200)
    document = models.CharField("CPF/CNPJ", max_length=14, validators=[validate_document])
    email = models.EmailField("e-mail")
    # Empty only on a registration the data migration could not place (generators 0006): the
    # platform's administrator sees it; a new one always names it.
    municipality = models.ForeignKey(
        Municipality,
        on_delete=models.PROTECT,
        null=True,
        related_name="+",
        verbose_name="município",
        db_index=False,  # generatorreg_municipality_idx starts with it
    )
    status = models.CharField(
        "situação",
        max_length=10,
        choices=RegistrationStatus.choices,
        default=RegistrationStatus.PENDING,
    )
    created_at = models.DateTimeField("enviado em", default=timezone.now)
    decided_at = models.DateTimeField("decidido em", null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="decidido por",
    )
    reason = models.TextField("motivo da recusa", blank=True)
    generator = models.ForeignKey(
        Generator,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="registrations",
        verbose_name="gerador",
    )

    objects = RegistrationQuerySet.as_manager()

    class Meta:
        verbose_name = "cadastro de gerador"
        verbose_name_plural = "cadastros de geradores"
        ordering = ["created_at", "pk"]
        # The Núcleo's queue: its municipality's, by status, oldest first.
        indexes = [
            models.Index(
                fields=["municipality", "status", "created_at"],
                name="generatorreg_municipality_idx",
            )
        ]
        constraints = [
            models.CheckConstraint(
                condition=~Q(status=RegistrationStatus.CONFIRMED) | Q(generator__isnull=False),
                name="generatorregistration_confirmed_generator",
            ),
            models.CheckConstraint(
                condition=~Q(status=RegistrationStatus.REFUSED) | ~Q(reason=""),
                name="generatorregistration_refused_reason",
            ),
        ]

    def __str__(self) -> str:
        return f"Cadastro {self.pk} ({self.get_status_display()})"


# --- the generator's CTRs: the Núcleo told of an unconfirmed departure (portal) ---


class UnconfirmedDepartureNotice(models.Model):
    """A CTR whose departure its generator did not confirm in time, e-mailed to the Núcleo and
    the generator's users (manage.py unconfirmed_ctrs): one row per CTR, so that each is
    mailed once however often the command runs. Written in the transaction that sends."""

    ctr = models.OneToOneField(
        CTR,
        on_delete=models.PROTECT,
        primary_key=True,
        related_name="+",
        verbose_name="CTR",
    )
    mailed_at = models.DateTimeField("enviado em", default=timezone.now)
    recipients = models.PositiveIntegerField("destinatários", default=0)

    objects = scoped(via="ctr")

    class Meta:
        verbose_name = "aviso de CTR sem confirmação do gerador"
        verbose_name_plural = "avisos de CTR sem confirmação do gerador"

    def __str__(self) -> str:
        return f"{self.ctr_id}: {self.mailed_at:%d/%m/%Y %H:%M}"


# --- the Habite-se destination declaration (generators.declarations) ---------------------------


class DeclarationStatus(models.TextChoices):
    REQUESTED = "requested", "em análise"
    ISSUED = "issued", "emitida"
    REFUSED = "refused", "recusada"


class HabiteSeDeclaration(models.Model):
    """The declaration of the correct transport, sorting and destination of a finished work's
    waste that the Habite-se asks for (Lei 3.978/2007 art. 9 p.ú. II): the generator asks for
    it when the work ends; the Núcleo issues it (only when every load was received and, where
    it went through an ATT or PEV, destined) or refuses it with its reasons.

    Once issued it holds its facts as they were (`content`, their SHA-256 in `digest`), its own
    verification code, and the Certificado de Destinação Final issued at the same moment
    (`certificate`, ctr.custody.certificates): the chain of custody behind it. Never edited after
    the decision: a paper in someone's hands points to it. A refused request stays as history;
    the generator may ask again."""

    worksite = models.ForeignKey(
        Worksite, on_delete=models.PROTECT, related_name="declarations", verbose_name="obra"
    )
    status = models.CharField(
        "situação",
        max_length=10,
        choices=DeclarationStatus.choices,
        default=DeclarationStatus.REQUESTED,
    )
    ended_on = models.DateField("término da obra")
    note = models.TextField("observação do gerador", blank=True)
    requested_at = models.DateTimeField("pedida em", default=timezone.now)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="pedida por",
    )
    decided_at = models.DateTimeField("decidida em", null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="decidida por",
    )
    reasons = models.TextField("motivos da recusa", blank=True)
    code = models.CharField(
        "código de verificação", max_length=20, unique=True, null=True, blank=True
    )
    certificate = models.ForeignKey(
        DestinationCertificate,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="certificado de destinação final",
    )
    content = models.JSONField("conteúdo emitido", null=True, blank=True)
    digest = models.CharField("resumo do conteúdo (SHA-256)", max_length=64, blank=True)

    objects = OfWorksiteQuerySet.as_manager()

    class Meta:
        verbose_name = "declaração de destinação (Habite-se)"
        verbose_name_plural = "declarações de destinação (Habite-se)"
        ordering = ["-requested_at", "-pk"]
        constraints = [
            # One request at a time, and one declaration per work: two Núcleo users deciding
            # at once, or a generator asking twice, end with one row.
            models.UniqueConstraint(
                fields=["worksite"],
                condition=Q(status=DeclarationStatus.REQUESTED),
                name="declaration_one_open",
            ),
            models.UniqueConstraint(
                fields=["worksite"],
                condition=Q(status=DeclarationStatus.ISSUED),
                name="declaration_one_issued",
            ),
            models.CheckConstraint(
                condition=~Q(status=DeclarationStatus.ISSUED)
                | (
                    Q(code__isnull=False, certificate__isnull=False, content__isnull=False)
                    & ~Q(digest="")
                ),
                name="declaration_issued_complete",
            ),
            models.CheckConstraint(
                condition=~Q(status=DeclarationStatus.REFUSED) | ~Q(reasons=""),
                name="declaration_refused_has_reasons",
            ),
        ]

    def __str__(self) -> str:
        return self.code or f"Pedido de Habite-se nº {self.pk} – {self.worksite}"
