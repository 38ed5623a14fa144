"""API token authentication: DRF's, refusing a malformed key before it reaches the database."""

from __future__ import annotations

import functools
import re

from django.db import connection
from rest_framework import authentication, exceptions

from config.rows import Columns, parts_of

# DRF's keys are 40 hexadecimal characters (binascii.hexlify of 20 random bytes); the column
# holds 40 characters. Letters and digits only: a NUL byte would make psycopg2 raise ValueError
# (a 500), and no other character can be part of a key anyway.
TOKEN_KEY = re.compile(r"[0-9A-Za-z]{40}")
INVALID_TOKEN = "Token inválido."


class TokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <40 letters or digits>`; anything else is a 401 in Portuguese."""

    def authenticate(self, request):
        auth = authentication.get_authorization_header(request).split()
        if not auth or auth[0].lower() != self.keyword.lower().encode():
            return None
        if len(auth) == 1:
            raise exceptions.AuthenticationFailed(
                "Cabeçalho Authorization incompleto: informe a chave depois de “Token”."
            )
        if len(auth) > 2:
            raise exceptions.AuthenticationFailed(
                "Cabeçalho Authorization inválido: a chave do token não pode conter espaços."
            )
        try:
            key = auth[1].decode("ascii")
        except UnicodeError:
            raise exceptions.AuthenticationFailed(INVALID_TOKEN) from None
        if not TOKEN_KEY.fullmatch(key):
            raise exceptions.AuthenticationFailed(INVALID_TOKEN)
        return self.authenticate_credentials(key)

    def authenticate_credentials(self, key):
        # Whom the user acts for comes along (ctr.roles.membership reads it): every API call
        # of a transporter or an operator needs it, and it was two more queries. One SELECT of
        # fixed text (the ORM's select_related query, built on every request, was most of the
        # authentication's time).
        token = token_with_user(key)
        if token is None:
            raise exceptions.AuthenticationFailed(INVALID_TOKEN)
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("Usuário inativo ou removido.")
        return (token.user, token)


@functools.cache
def _token_parts():
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    # The models reached through the user's relations, by name, as the select_related this
    # replaces named them: config sits below the apps and imports none of them.
    user_model = get_user_model()
    membership_rel = user_model._meta.get_field("membership")
    Membership = membership_rel.related_model
    Transporter = Membership._meta.get_field("transporter").related_model
    ReceivingFacility = Membership._meta.get_field("facility").related_model
    parts = (
        Columns(Token, "t"),
        Columns(user_model, "u"),
        Columns(Membership, "m"),
        Columns(Transporter, "tr"),
        # The facility's polygon is never read for whom the user acts.
        Columns(ReceivingFacility, "f", deferred=("area",)),
    )
    table = {part.alias: part.model._meta.db_table for part in parts}
    sql = (
        f"SELECT {', '.join(part.sql() for part in parts)} FROM {table['t']} t "
        f"JOIN {table['u']} u ON u.id = t.user_id "
        f"LEFT JOIN {table['m']} m ON m.user_id = u.id "
        f"LEFT JOIN {table['tr']} tr ON tr.id = m.transporter_id "
        f"LEFT JOIN {table['f']} f ON f.id = m.facility_id "
        "WHERE t.key = %s"
    )
    return parts, sql, membership_rel


def token_with_user(key: str):
    """The Token of `key` with its user, the user's membership (or None) and the membership's
    transporter and facility loaded, as Token.objects.select_related("user",
    "user__membership__transporter", "user__membership__facility") loads them; None when no
    token has the key."""
    parts, sql, membership_rel = _token_parts()
    with connection.cursor() as cursor:
        cursor.execute(sql, [key])
        row = cursor.fetchone()
    if row is None:
        return None
    token, user, membership, transporter, facility = parts_of(parts, row)
    token.user = user
    membership_rel.set_cached_value(user, membership)  # None: user.membership raises
    if membership is not None:
        membership.user = user
        membership.transporter = transporter
        membership.facility = facility
    return token
