"""API token authentication: DRF's, refusing a malformed key before it reaches the database."""

from __future__ import annotations

import re

from rest_framework import authentication, exceptions

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
        model = self.get_model()
        try:
            # Whom the user acts for comes along (ctr.roles.membership reads it): every API
            # call of a transporter or an operator needs it, and it was two more queries.
            token = (
                model.objects.select_related(
                    "user",
                    "user__membership__transporter",
                    "user__membership__facility",
                )
                .defer("user__membership__facility__area")
                .get(key=key)
            )
        except model.DoesNotExist:
            raise exceptions.AuthenticationFailed(INVALID_TOKEN) from None
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("Usuário inativo ou removido.")
        return (token.user, token)
