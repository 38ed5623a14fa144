"""The Certificado de Destinação Final as issued (ctr/custody/certificates.py) and the verification
codes of the public documents."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.gis.db import models
from django.utils import timezone

from .parties import Generator, Transporter
from .worksites import Worksite

# The verification code's letters: no 0/O, 1/I/L or U/V to misread on paper (as the dumping
# reports' protocols).
CERTIFICATE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
# The Habite-se declaration's codes (generators.declarations), HAB-XXXX-XXXX-XXXX: here, below
# generators, so that /verificar/ reads them without importing the app above ctr.
DECLARATION_CODE_PREFIX = "HAB"


def new_verification_code(prefix: str) -> str:
    """PREFIX-XXXX-XXXX-XXXX: 30^12 codes, unguessable, so that nobody walks through the public
    pages of other people's documents (the certificate's CDF, the Habite-se declaration's)."""
    code = "".join(secrets.choice(CERTIFICATE_ALPHABET) for _ in range(12))
    return f"{prefix}-{code[:4]}-{code[4:8]}-{code[8:]}"


def new_certificate_code() -> str:
    return new_verification_code("CDF")


class DestinationCertificate(models.Model):
    """A Certificado de Destinação Final as issued (ctr/custody/certificates.py, Lei 3.978/2007
    art. 9 p.ú. II and art. 13 p.ú.): what it said, about whom, when, by whom. `content` holds the
    certificate's facts as they were; `digest` is their SHA-256, so issuing again while nothing
    changed gives back the same certificate (the same code), and the public page can tell a
    certificate whose chain changed since. Never edited nor deleted: a paper in someone's hands
    points to it."""

    code = models.CharField("código de verificação", max_length=20, unique=True)
    digest = models.CharField("resumo do conteúdo (SHA-256)", max_length=64, unique=True)
    worksite = models.ForeignKey(
        Worksite, on_delete=models.PROTECT, null=True, related_name="+", verbose_name="obra"
    )
    generator = models.ForeignKey(
        Generator, on_delete=models.PROTECT, related_name="+", verbose_name="gerador"
    )
    date_from = models.DateField("período desde", null=True)
    date_to = models.DateField("período até", null=True)
    # Set when only this transporter's CTRs are covered (the transporter proves the
    # destination of the loads it carried, art. 13 p.ú.).
    transporter = models.ForeignKey(
        Transporter, on_delete=models.PROTECT, null=True, related_name="+"
    )
    content = models.JSONField("conteúdo emitido")
    conclusive = models.BooleanField("conclusivo")
    issued_at = models.DateTimeField("emitido em", default=timezone.now)
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="emitido por",
    )

    class Meta:
        verbose_name = "certificado de destinação final"
        verbose_name_plural = "certificados de destinação final"

    def __str__(self) -> str:
        return self.code
