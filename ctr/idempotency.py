"""Safe retries: the `Idempotency-Key` request header (IETF draft "The Idempotency-Key HTTP
Header Field"), for the API operations that change a CTR (issue, receive, refuse, cancel).

A phone on a weak signal sends again what it is not sure arrived. With a key, the first request
runs and its response is stored; a retry with the same key, by the same user, to the same
method and path, with the same body gets that response back, byte for byte (same status, same
CTR, same number), marked `Idempotent-Replayed: true`, and nothing runs again.

Semantics (docs/api.md, "Repetição segura"):

- **Scope**: one key per user (`IdempotencyKey`, unique on (user, key)); one user's key never
  replays another's response. The key is compared with the method, the path and the body.
- **Another body** (or another operation) with a used key: 422, nothing runs.
- **Malformed key** (empty, longer than 255 characters, or anything but visible ASCII; the
  draft's quoted form `"abc"` is the key `abc`): 400, nothing runs or is stored.
- **A retry while the first request is running** waits for it (it queues on the row the first
  one inserted: a database lock, so it holds across gunicorn's processes) and then replays its
  response. It waits at most the request's statement timeout
  (settings.CTR_REQUEST_STATEMENT_TIMEOUT_MS, 15 s by default); then 409 with Retry-After.
- **What is stored**: every response of the operation with a status below 500 except 429:
  the 201 or 200, and the refusals (400 of the fields, 403, 404, 409 of the CTR's state, 422 of
  the rules), since the same request would be refused again: the client sends a corrected body
  with a new key. Not stored (the key stays free, a retry runs again): 5xx and a 429 (passing
  conditions), and the answers about the key itself or that come before the operation runs
  (401, a body that cannot be read, 400/409/422 of this module).
- **Lifetime**: at least settings.CTR_IDEMPOTENCY_KEY_HOURS (24 by default). A key older than
  that is free again (its row is taken over on the next use); `manage.py
  purge_idempotency_keys` deletes the old rows (daily, by the index on `created_at`).

Why it cannot leave a CTR without its key, or a key without its response: the key's row is
inserted, the operation runs and the response is written onto the row in ONE transaction (the
services' own `atomic` blocks become savepoints inside it). A process that dies anywhere in
between leaves nothing: PostgreSQL rolls the whole transaction back, the CTR and the key
together, and a retry waiting on the row then inserts it itself and runs the operation. A
refusal (a raised DomainError) rolls back to a savepoint around the operation, so what it
wrote goes and its response is stored. A 5xx rolls everything back.

Cost on the issue path: one indexed `INSERT … ON CONFLICT` before the operation and one
`UPDATE` by primary key after it (plus the savepoint); a replay is the INSERT and one indexed
SELECT. The header is an ordinary request header: the session path (the offline service worker
posts with the session's CSRF token, same origin) and the token path take it alike, and no
CORS configuration is involved (the API is same-origin only).
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import re

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.http import HttpResponse, QueryDict
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from config.api_errors import PROBLEM_CONTENT_TYPE, TITLES
from config.middleware import is_statement_timeout, statement_timeout_ms

from .models import IdempotencyKey

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
DEFAULT_HOURS = 24
RETRY_AFTER_IN_FLIGHT = 2  # seconds: the first request usually ends well within that

# Visible ASCII and the space: what a header may carry and a person can read back.
KEY_CHARACTERS = re.compile(r"[\x20-\x7e]+")
# The draft's form: a Structured Field string, "…" with \" and \\ escaped.
QUOTED = re.compile(r'"((?:[^"\\]|\\["\\])*)"')
ESCAPE = re.compile(r'\\(["\\])')

TABLE = IdempotencyKey._meta.db_table
CLAIM_SQL = f"""
    INSERT INTO {TABLE} (user_id, key, method, path, fingerprint, created_at, status,
                         content_type, body)
    VALUES (%s, %s, %s, %s, %s, %s, NULL, '', ''::bytea)
    ON CONFLICT (user_id, key) DO UPDATE
    SET method = EXCLUDED.method, path = EXCLUDED.path, fingerprint = EXCLUDED.fingerprint,
        created_at = EXCLUDED.created_at, status = NULL, content_type = '', body = ''::bytea
    WHERE {TABLE}.created_at < %s
    RETURNING id
"""
# ON CONFLICT waits for an uncommitted row of the same key (the first request still running)
# until its transaction ends; DO UPDATE … WHERE takes over an expired row, and otherwise
# leaves the live row locked and unchanged: then no row comes back, and the SELECT below (a
# new statement, so a new snapshot under READ COMMITTED) sees the committed first response.
EARLIER_SQL = f"""
    SELECT method, path, fingerprint, status, content_type, body
    FROM {TABLE} WHERE user_id = %s AND key = %s
"""
STORE_SQL = f"UPDATE {TABLE} SET status = %s, content_type = %s, body = %s WHERE id = %s"

HEADER_PARAMETER = OpenApiParameter(
    HEADER,
    {"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH},
    OpenApiParameter.HEADER,
    required=False,
    description=(
        "Repetição segura (docs/api.md): uma chave única por operação (um UUID, por exemplo), "
        "até 255 caracteres ASCII visíveis. Repetida pelo mesmo usuário com o mesmo corpo, "
        "devolve a primeira resposta (mesmo status, mesmo corpo, cabeçalho "
        f"`{REPLAYED_HEADER}: true`) sem executar de novo; com outro corpo, 422; enquanto a "
        f"primeira ainda executa, espera por ela (409 depois do tempo limite). Guardada por "
        f"{DEFAULT_HOURS} horas no mínimo."
    ),
)


class InFlight(Exception):
    """The first request with the key is still running after the wait."""


class MalformedKey(Exception):
    """The header's value cannot be a key: the message says why, in Portuguese."""


def idempotent(action):
    """Decorate an API view method (the outermost decorator) so that it honours
    `Idempotency-Key`; without the header it runs as before."""

    @functools.wraps(action)
    def wrapper(view, request, *args, **kwargs):
        raw = request.headers.get(HEADER)
        if raw is None or not request.user.is_authenticated:
            return action(view, request, *args, **kwargs)
        try:
            key = parse_key(raw)
        except MalformedKey as exc:
            return problem(400, str(exc), request)
        # Reads (and so parses) the body first: one that cannot be read is refused as without
        # a key, and the key stays free.
        fingerprint = body_fingerprint(request.data)
        now = timezone.now()
        try:
            with transaction.atomic():
                record = claim(request.user.pk, key, request.method, request.path, fingerprint, now)
                if record is not None:
                    response = run(view, action, request, args, kwargs)
                    if stored(response.status_code):
                        store(record, response)
                    else:
                        transaction.set_rollback(True)  # the key stays free for a retry
                    return response
                earlier = first_response(request.user.pk, key)
        except InFlight:
            return in_flight(request)
        return replay(request, earlier, fingerprint)

    return extend_schema(parameters=[HEADER_PARAMETER])(wrapper)


def parse_key(raw: str) -> str:
    """The key in the header's value; MalformedKey says what is wrong with it."""
    value = raw.strip()
    quoted = QUOTED.fullmatch(value)
    if quoted:
        value = ESCAPE.sub(r"\1", quoted.group(1))
    if not value.strip():
        raise MalformedKey(
            f"O cabeçalho {HEADER} está vazio: envie uma chave (um UUID, por exemplo)."
        )
    if len(value) > MAX_KEY_LENGTH:
        raise MalformedKey(
            f"O cabeçalho {HEADER} tem {len(value)} caracteres; o máximo é {MAX_KEY_LENGTH}."
        )
    if not KEY_CHARACTERS.fullmatch(value):
        raise MalformedKey(
            f"O cabeçalho {HEADER} só pode ter letras, números e sinais ASCII visíveis "
            "(sem acentos nem caracteres de controle)."
        )
    return value


def body_fingerprint(data) -> str:
    """SHA-256 of the body as parsed: the same JSON with its keys in another order or other
    spacing is the same body; another value is another body."""
    if isinstance(data, QueryDict):
        data = {name: values for name, values in data.lists()}
    canonical = json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def claim(user_id: int, key: str, method: str, path: str, fingerprint: str, now) -> int | None:
    """Insert the key's row (locked until the transaction ends) and return its id, or None when
    a live row of an earlier request exists: that request has finished, its response is there.
    Waits while the earlier request runs; InFlight when it runs past the statement timeout."""
    cutoff = now - datetime.timedelta(hours=lifetime_hours())
    try:
        with connection.cursor() as cursor:
            cursor.execute(CLAIM_SQL, [user_id, key, method, path, fingerprint, now, cutoff])
            row = cursor.fetchone()
    except DatabaseError as exc:
        if is_statement_timeout(exc):
            raise InFlight from exc
        raise
    return row[0] if row else None


def run(view, action, request, args, kwargs):
    """The operation's response, rendered (what is stored is what the client gets). A refusal
    rolls its own writes back (the savepoint) and is answered as DRF answers it.

    The savepoint is not released when the operation succeeds: the key's UPDATE and the COMMIT
    that follow end it as well, and a RELEASE would be one more round trip on every issue."""
    savepoint = transaction.savepoint()
    try:
        response = action(view, request, *args, **kwargs)
    except Exception as exc:  # DRF's handler answers its own and re-raises anything else
        try:
            transaction.savepoint_rollback(savepoint)
        except DatabaseError:
            raise exc from None  # the connection is lost: a 5xx, the whole transaction goes
        # Back at the savepoint taken before the operation: the transaction is usable again
        # (Django's documented use of set_rollback(False)).
        transaction.set_rollback(False)
        response = view.handle_exception(exc)
    response = view.finalize_response(request, response, *args, **kwargs)
    response.render()
    return response


def stored(status: int) -> bool:
    """A response the same request would get again (see the module's docstring)."""
    return status < 500 and status != 429


def store(record: int, response) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            STORE_SQL,
            [response.status_code, response.get("Content-Type", ""), response.content, record],
        )


def first_response(user_id: int, key: str) -> tuple | None:
    with connection.cursor() as cursor:
        cursor.execute(EARLIER_SQL, [user_id, key])
        return cursor.fetchone()


def replay(request, earlier: tuple | None, fingerprint: str):
    """The stored response, or the 422 of a key used for another request."""
    if earlier is None or earlier[3] is None:  # not expected: the row is locked until commit
        return in_flight(request)
    method, path, earlier_fingerprint, status, content_type, body = earlier
    if (method, path) != (request.method, request.path):
        return problem(
            422,
            f"A chave {HEADER} já foi usada em outra operação ({method} {path}): use uma chave "
            "nova para cada operação.",
            request,
            title="Chave de idempotência já usada",
            code="idempotency_key_reused",
        )
    if earlier_fingerprint != fingerprint:
        return problem(
            422,
            f"A chave {HEADER} já foi usada com outro corpo nesta operação: repita o corpo "
            "original para obter a primeira resposta, ou use uma chave nova.",
            request,
            title="Chave de idempotência já usada",
            code="idempotency_key_reused",
        )
    response = HttpResponse(bytes(body), status=status, content_type=content_type)
    response[REPLAYED_HEADER] = "true"
    return response


def in_flight(request):
    seconds = statement_timeout_ms() / 1000
    response = problem(
        409,
        f"A primeira requisição com esta chave {HEADER} ainda está em andamento (esperamos "
        f"{seconds:g} s): tente de novo em instantes, com a mesma chave.",
        request,
        code="idempotency_key_in_flight",
    )
    response["Retry-After"] = str(RETRY_AFTER_IN_FLIGHT)
    return response


def problem(
    status: int,
    detail: str,
    request=None,
    *,
    title: str | None = None,
    code: str = "invalid_idempotency_key",
) -> Response:
    """A problem+json answer about the key (RFC 9457), naming the header as the field."""
    body = {
        "type": "about:blank",
        "title": title or TITLES.get(status, "Erro"),
        "status": status,
        "detail": detail,
        "code": code,
        "errors": [{"campo": HEADER, "mensagem": detail}],
    }
    if request is not None:
        body["instance"] = request.get_full_path()
    return Response(body, status=status, content_type=PROBLEM_CONTENT_TYPE)


def lifetime_hours() -> int:
    return max(DEFAULT_HOURS, int(getattr(settings, "CTR_IDEMPOTENCY_KEY_HOURS", DEFAULT_HOURS)))


def purge(now=None, hours: int | None = None, dry_run: bool = False) -> int:
    """Delete the keys older than their lifetime (by the index on created_at); how many."""
    hours = max(DEFAULT_HOURS, hours or lifetime_hours())
    cutoff = (now or timezone.now()) - datetime.timedelta(hours=hours)
    old = IdempotencyKey.objects.filter(created_at__lt=cutoff)
    if dry_run:
        return old.count()
    return old.delete()[0]


# --- the schema ------------------------------------------------------------------------------

KEY_RESPONSES = {
    "400": f"{HEADER} malformada (vazia, com mais de {MAX_KEY_LENGTH} caracteres ou fora do "
    "ASCII visível)",
    "409": f"a primeira requisição com esta {HEADER} ainda está em andamento (Retry-After)",
    "422": f"{HEADER} já usada com outro corpo ou em outra operação",
}


def document_idempotency_key(result, generator, request, public):
    """drf-spectacular postprocessing hook: every operation that takes Idempotency-Key declares
    the 400, 409 and 422 about the key (added to the operation's own description of the code)
    and the Idempotent-Replayed header of a replay on its successful responses."""
    problem_content = {PROBLEM_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}
    replayed = {
        REPLAYED_HEADER: {
            "schema": {"type": "string", "enum": ["true"]},
            "description": f"presente numa repetição com a mesma {HEADER}: esta é a resposta "
            "guardada da primeira requisição",
        }
    }
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict) or not any(
                p.get("in") == "header" and p.get("name") == HEADER
                for p in operation.get("parameters", [])
            ):
                continue
            responses = operation.setdefault("responses", {})
            for code, why in KEY_RESPONSES.items():
                if code in responses:
                    responses[code]["description"] += f"; ou {why}"
                else:
                    responses[code] = {
                        "description": f"{TITLES[int(code)]}: {why}",
                        "content": problem_content,
                    }
            for code, response in responses.items():
                if code.startswith("2"):
                    response.setdefault("headers", {}).update(replayed)
    return result
