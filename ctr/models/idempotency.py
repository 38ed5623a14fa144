"""The API's idempotency keys (ctr/idempotency.py)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.gis.db import models
from django.utils import timezone


class IdempotencyKey(models.Model):
    """A client's `Idempotency-Key` and the first response to it (ctr/idempotency.py).

    Inserted before the operation runs and completed (`status`, `body`) in the operation's own
    transaction, so a committed key always has its response and a committed operation always
    has its key. One key per user: another user's key never replays this one."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        # The unique (user, key) index starts with user_id: a second index only costs writes.
        db_index=False,
    )
    key = models.CharField("chave", max_length=255)
    method = models.CharField("método", max_length=10)
    path = models.CharField("caminho", max_length=300)
    fingerprint = models.CharField("resumo do corpo (SHA-256)", max_length=64)
    created_at = models.DateTimeField("recebida em", default=timezone.now)
    # Null only inside the first request's transaction: never seen committed.
    status = models.PositiveSmallIntegerField("status da resposta", null=True)
    content_type = models.CharField("tipo da resposta", max_length=100, blank=True)
    body = models.BinaryField("corpo da resposta", default=b"")

    class Meta:
        verbose_name = "chave de idempotência"
        verbose_name_plural = "chaves de idempotência"
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_per_user"),
        ]
        # The purge deletes by age (manage.py purge_idempotency_keys).
        indexes = [models.Index(fields=["created_at"], name="idempotency_key_created")]

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({self.key})"
