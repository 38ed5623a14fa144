"""Who acts for which municipality: the municipal roles, granted per municipality.

One deployment serves many municipalities (a consortium, a state). A person of the Núcleo
Permanente de Gestão, the Fiscalização or the authority of art. 35 holds that role in one
municipality, and may hold roles in several (a consortium's staff); an auditor of the state or
of a consortium reads the municipalities it is granted and acts on none. What a person sees and
does stops at the municipalities of its roles (jurisdiction.scope)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.gis.db import models
from django.utils import timezone

# Named, not imported: jurisdiction sits below the apps whose rows it scopes, pev_network's
# municipalities and facilities among them (docs/architecture.md).
MUNICIPALITY = "pev_network.Municipality"


class Role(models.TextChoices):
    # Lei 3.978/2007 art. 4 §2 V, art. 15, art. 20: plans and reads everything of its own town.
    NUCLEO = "nucleo", "Núcleo Permanente de Gestão"
    # Art. 21-24, 36: inspects and draws up the records in its own town.
    FISCAL = "fiscal", "Fiscalização"
    # Art. 35: the Secretário Municipal de Serviços Urbanos applies the penalties.
    AUTHORITY = "authority", "Autoridade (aplica penalidades, art. 35)"
    # Not in the law: the state's or a consortium's audit reads and never acts.
    AUDITOR = "auditor", "Auditoria do estado ou do consórcio (somente leitura)"


# The roles that act for the municipality (every role but the auditor's).
ACTING_ROLES = frozenset({Role.NUCLEO, Role.FISCAL, Role.AUTHORITY})


class StaffRole(models.Model):
    """A person's role in one municipality."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="staff_roles",
        verbose_name="pessoa",
        # The unique (user, municipality, role) index starts with user_id.
        db_index=False,
    )
    municipality = models.ForeignKey(
        MUNICIPALITY,
        on_delete=models.CASCADE,
        related_name="staff_roles",
        verbose_name="município",
        db_index=False,
    )
    role = models.CharField("papel", max_length=10, choices=Role.choices)
    granted_at = models.DateTimeField("concedido em", default=timezone.now)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="concedido por",
    )

    class Meta:
        verbose_name = "papel municipal"
        verbose_name_plural = "papéis municipais"
        ordering = ["municipality__name", "role"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "municipality", "role"],
                name="staff_role_unique",
                violation_error_message="Esta pessoa já tem este papel neste município.",
            )
        ]
        # "The Núcleo of this municipality" (its e-mails, the onboarding's first account).
        indexes = [models.Index(fields=["municipality", "role"], name="staff_role_municipality")]

    def __str__(self) -> str:
        return f"{self.user} — {self.get_role_display()} em {self.municipality}"


class CurrentMunicipality(models.Model):
    """The municipality a person with several picked to work in, remembered across sessions
    (jurisdiction.views.choose): the lists, dashboards and maps show that one."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="current_municipality",
        verbose_name="pessoa",
    )
    municipality = models.ForeignKey(
        MUNICIPALITY, on_delete=models.CASCADE, related_name="+", verbose_name="município"
    )

    class Meta:
        verbose_name = "município atual"
        verbose_name_plural = "municípios atuais"

    def __str__(self) -> str:
        return f"{self.user}: {self.municipality}"
