"""E-mail through Django's mail framework, from templates: one place that builds the message
(subject without personal data, plain text body, absolute links, the signature of the
municipality it belongs to) and sends it."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.template.loader import render_to_string

from .letterhead import PLATFORM, Letterhead

SERVICE = "CTR — Controle de Transporte de Resíduos"


def absolute(path: str) -> str:
    """A link for an e-mail: the site's address (CTR_SITE_URL) plus the path."""
    return settings.SITE_URL + path


def signature(letterhead: Letterhead) -> str:
    """The lines every e-mail ends with: the city hall it comes from, the
    service and its law, the site. Without a municipality, the platform's."""
    lines = ["—"]
    if letterhead.municipality:
        phrase = letterhead.according_to
        lines += [letterhead.issuer, SERVICE, phrase[:1].upper() + phrase[1:]]
    else:
        lines.append(SERVICE)
    lines.append(settings.SITE_URL)
    return "\n".join(lines) + "\n"


def send(
    to: Iterable[str],
    subject: str,
    template: str,
    context: dict | None = None,
    letterhead: Letterhead = PLATFORM,
) -> int:
    """Send the text of `template` (rendered with `context`, `site_url` and `letterhead`),
    signed by `letterhead` (the municipality the message belongs to), to `to`, after the
    current transaction commits, so a rolled-back operation mails no one. The subject must
    carry no personal data (names, documents, addresses): it is what a shared inbox, a
    notification on a locked phone or a mail server's log shows. Returns the number of
    recipients."""
    message = build(to, subject, template, context, letterhead)
    if message is None:
        return 0
    # robust: a mail server that is down is logged, it does not undo or fail the operation.
    transaction.on_commit(message.send, robust=True)
    return len(message.to)


def build(
    to: Iterable[str],
    subject: str,
    template: str,
    context: dict | None = None,
    letterhead: Letterhead = PLATFORM,
) -> EmailMessage | None:
    """The message `send` sends, for a caller that sends it itself and must know whether the
    server took it (the webhooks outbox retries an e-mail the server refused). None without
    recipients."""
    recipients = sorted({address for address in to if address})
    if not recipients:
        return None
    body = render_to_string(
        template, {"site_url": settings.SITE_URL, "letterhead": letterhead, **(context or {})}
    )
    body = body.rstrip("\n") + "\n\n" + signature(letterhead)
    return EmailMessage(subject=subject, body=body, to=recipients)
