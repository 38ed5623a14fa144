"""The access log: one row per page or document that showed someone's personal data."""

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.utils import timezone


class AccessLog(models.Model):
    """Append-only (the database refuses UPDATE and DELETE, migration 0002). No personal data
    of the person whose record was opened is copied here: the object is referred to by type and
    id, and by a label that is a document number (CTR, protocol, case), never a name or CPF.
    The client's address is kept only as a keyed hash (the same one the rate limits use)."""

    at = models.DateTimeField("quando", default=timezone.now, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        related_name="+",
        verbose_name="quem",
    )
    username = models.CharField("usuário", max_length=150)
    content_type = models.ForeignKey(
        ContentType, on_delete=models.PROTECT, null=True, verbose_name="tipo de registro"
    )
    object_id = models.CharField("id do registro", max_length=64, blank=True)
    object_label = models.CharField("registro", max_length=120, blank=True)
    purpose = models.CharField("finalidade (página)", max_length=80)
    method = models.CharField("método", max_length=10, blank=True)
    path = models.CharField("endereço", max_length=300, blank=True)
    client_hash = models.CharField("cliente (hash do IP)", max_length=64, blank=True)

    class Meta:
        verbose_name = "acesso a dados pessoais"
        verbose_name_plural = "acessos a dados pessoais"
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["content_type", "object_id", "at"])]

    def __str__(self) -> str:
        return f"{self.username} — {self.object_label or self.object_id} ({self.purpose})"
