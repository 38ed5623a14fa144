"""The first password of a municipal staff account: a link to set it, sent to the person.

Whoever creates the account (the consortium's IT bringing a municipality in, nucleo.onboarding)
never chooses nor sees the password: the acts of the Núcleo, the inspectors and the authority
are signed by the person who holds the role (Lei 3.978/2007 art. 35-36: the record names who
drew it up), and a password that passed through someone else's terminal, chat or paper would
not say who acted. The link is Django's password-reset token: it expires after
PASSWORD_RESET_TIMEOUT and stops working once used (it hashes the password and the last
sign-in), so it can be printed for the IT to hand over when the e-mail does not arrive
without becoming a password; a new one is sent by `manage.py send_password_link`."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from config import mail
from config.br import br_datetime

SUBJECT = "CTR: defina a sua senha de acesso"


@dataclass(frozen=True)
class PasswordLink:
    url: str
    expires: datetime.datetime

    @property
    def expires_text(self) -> str:
        return br_datetime(self.expires)


def password_link(user) -> PasswordLink:
    """A link that lets `user` choose its password, once, until it expires."""
    path = reverse(
        "jurisdiction:set-password",
        kwargs={
            "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
            "token": default_token_generator.make_token(user),
        },
    )
    expires = timezone.now() + datetime.timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT)
    return PasswordLink(mail.absolute(path), expires)


def send_password_link(user, why: str) -> PasswordLink:
    """E-mail `user` a link to set its password (after the current transaction commits: a
    rolled-back operation, a dry run, mails no one). `why` says, in a sentence, what the
    account is for ("Você foi cadastrado(a) no Núcleo … de Aparecida/SP")."""
    link = password_link(user)
    mail.send(
        [user.email],
        SUBJECT,
        "jurisdiction/mail/password_link.txt",
        {"why": why, "username": user.get_username(), "link": link},
    )
    return link
