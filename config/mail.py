"""E-mail through Django's mail framework, from templates: one place that builds the message
(subject without personal data, plain text body, absolute links) and sends it."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.template.loader import render_to_string


def absolute(path: str) -> str:
    """A link for an e-mail: the site's address (CTR_SITE_URL) plus the path."""
    return settings.SITE_URL + path


def send(to: Iterable[str], subject: str, template: str, context: dict | None = None) -> int:
    """Send the text of `template` (rendered with `context` and `site_url`) to `to`, after the
    current transaction commits, so a rolled-back operation mails no one. The subject must
    carry no personal data (names, documents, addresses): it is what a shared inbox, a
    notification on a locked phone or a mail server's log shows. Returns the number of
    recipients."""
    message = build(to, subject, template, context)
    if message is None:
        return 0
    # robust: a mail server that is down is logged, it does not undo or fail the operation.
    transaction.on_commit(message.send, robust=True)
    return len(message.to)


def build(
    to: Iterable[str], subject: str, template: str, context: dict | None = None
) -> EmailMessage | None:
    """The message `send` sends, for a caller that sends it itself and must know whether the
    server took it (the webhooks outbox retries an e-mail the server refused). None without
    recipients."""
    recipients = sorted({address for address in to if address})
    if not recipients:
        return None
    body = render_to_string(template, {"site_url": settings.SITE_URL, **(context or {})})
    return EmailMessage(subject=subject, body=body, to=recipients)
