"""API errors as RFC 9457 problem details (application/problem+json), in Portuguese."""

from __future__ import annotations

import contextlib
import re

from django.http import Http404
from django.utils import translation
from rest_framework.exceptions import (
    APIException,
    ErrorDetail,
    NotFound,
    Throttled,
    ValidationError,
)
from rest_framework.response import Response
from rest_framework.views import exception_handler

from .errors import DomainError

PROBLEM_CONTENT_TYPE = "application/problem+json"

TITLES = {
    400: "Requisição inválida",
    401: "Autenticação necessária",
    403: "Acesso negado",
    404: "Não encontrado",
    405: "Método não permitido",
    406: "Formato não aceito",
    415: "Tipo de conteúdo não suportado",
    409: "Conflito com a situação atual",
    413: "Conteúdo grande demais",
    422: "Regras do CTR violadas",
    429: "Muitas requisições",
}


# DRF's own messages that reach clients, by error code: (English text, ours). A message is
# replaced when it is DRF's English text or DRF's pt_BR translation of it ({name} matches
# anything and is carried over), so the detail is Portuguese whatever the request's language;
# a detail written by us under the same code is left alone.
DRF_MESSAGES: dict[str, list[tuple[str, str]]] = {
    "null": [
        (
            "No data provided",
            "Nenhum dado enviado: o corpo da requisição deve ser um objeto JSON, não null.",
        ),
    ],
    "parse_error": [
        ("Malformed request.", "Requisição malformada: não foi possível ler o corpo enviado."),
        (
            'Unsupported charset "{charset}" in request Content-Type header.',
            "Conjunto de caracteres “{charset}” não suportado no cabeçalho Content-Type: use "
            "charset=utf-8.",
        ),
        (
            "Multipart form parse error - {reason}",
            "Formulário multipart ilegível: confira o cabeçalho Content-Type (com o boundary) e "
            "o corpo enviado.",
        ),
        (
            "JSON parse error - {reason}",
            "JSON inválido: não foi possível ler o corpo enviado.",
        ),
    ],
    "not_authenticated": [
        (
            "Authentication credentials were not provided.",
            "Autenticação necessária: envie o cabeçalho “Authorization: Token <chave>” ou entre "
            "no sistema.",
        ),
    ],
    "authentication_failed": [
        ("Incorrect authentication credentials.", "Credenciais de autenticação incorretas."),
        ("Invalid token.", "Token inválido."),
        (
            "Invalid token header. No credentials provided.",
            "Cabeçalho Authorization incompleto: informe a chave depois de “Token”.",
        ),
        (
            "Invalid token header. Token string should not contain spaces.",
            "Cabeçalho Authorization inválido: a chave do token não pode conter espaços.",
        ),
        (
            "Invalid token header. Token string should not contain invalid characters.",
            "Token inválido.",
        ),
        ("User inactive or deleted.", "Usuário inativo ou removido."),
    ],
    "permission_denied": [
        (
            "You do not have permission to perform this action.",
            "Você não tem permissão para executar esta ação.",
        ),
        ("CSRF Failed: {reason}", "Verificação CSRF falhou: recarregue a página e tente de novo."),
    ],
    "method_not_allowed": [
        ('Method "{method}" not allowed.', "Método {method} não permitido neste endereço."),
    ],
    "unsupported_media_type": [
        (
            'Unsupported media type "{media_type}" in request.',
            "Tipo de conteúdo “{media_type}” não suportado: envie JSON (application/json) ou, "
            "com arquivos, multipart/form-data.",
        ),
    ],
    "not_acceptable": [
        (
            "Could not satisfy the request Accept header.",
            "Nenhum formato disponível atende ao cabeçalho Accept: peça application/json.",
        ),
    ],
    "not_found": [("Not found.", "O recurso pedido não existe.")],
    # Followed by " Expected available in N seconds.": see _throttled_detail.
    "throttled": [("Request was throttled.{wait}", "Muitas requisições.")],
}


def _pattern(template: str) -> re.Pattern:
    parts = re.split(r"\{(\w+)\}", template)
    regex = "".join(f"(?P<{part}>.*)" if i % 2 else re.escape(part) for i, part in enumerate(parts))
    return re.compile(regex, re.DOTALL)


_COMPILED: dict[tuple[str, str], list[tuple[re.Pattern, str]]] = {}


def _patterns(code: str) -> list[tuple[re.Pattern, str]]:
    """The English and the pt_BR form of each DRF message of `code` (per active language)."""
    key = (code, translation.get_language() or "")
    if key not in _COMPILED:
        compiled = []
        for english, ours in DRF_MESSAGES.get(code, []):
            # DRF translates the text before a placeholder it appends ("{wait}").
            head, placeholder, tail = english.partition("{wait}")
            forms = {english}
            for language in (None, "pt-br"):
                with translation.override(language) if language else contextlib.nullcontext():
                    forms.add(translation.gettext(head) + placeholder + tail)
            compiled.extend((_pattern(form), ours) for form in sorted(forms))
        _COMPILED[key] = compiled
    return _COMPILED[key]


def portuguese(message: str, code: str | None) -> str:
    """Our Portuguese text for one of DRF's stock messages; any other message unchanged."""
    if not code:
        return message
    for pattern, ours in _patterns(code):
        match = pattern.fullmatch(message.strip())
        if match:
            return ours.format(**match.groupdict())
    return message


def _throttled_detail(exc: Throttled) -> str:
    wait = exc.wait
    if wait is None:
        return "Muitas requisições: tente de novo mais tarde."
    seconds = max(1, int(wait))
    return f"Muitas requisições: tente de novo em {seconds} segundo{'s' if seconds > 1 else ''}."


class Problem(APIException):
    """A domain error already shaped for the client: status, Portuguese detail, error list."""

    def __init__(
        self, status_code: int, detail: str, errors: list[dict] | None = None, code: str = "invalid"
    ):
        super().__init__(detail, code)
        self.status_code = status_code
        self.errors = errors or []


class InvalidParameter(ValidationError):
    """A query parameter that cannot be used: says which one and why."""

    def __init__(self, parameter: str, message: str):
        super().__init__({parameter: [message]})


def flatten_errors(detail, prefix: str = "") -> list[dict]:
    """DRF error trees to a flat list of {campo, mensagem}."""
    if isinstance(detail, dict):
        out = []
        for key, value in detail.items():
            if isinstance(key, int) or str(key).isdigit():
                name = f"{prefix}[{key}]"  # a list item: waste[0].volume_m3
            else:
                name = f"{prefix}.{key}" if prefix else str(key)
            if key == "non_field_errors":
                name = prefix
            out.extend(flatten_errors(value, name))
        return out
    if isinstance(detail, list):
        out = []
        for index, value in enumerate(detail):
            if isinstance(value, dict | list):
                out.extend(flatten_errors(value, f"{prefix}[{index}]"))
            else:
                out.extend(flatten_errors(value, prefix))
        return out
    message = portuguese(str(detail), getattr(detail, "code", None))
    return [{"campo": prefix or None, "mensagem": message}]


def problem_from(error: DomainError) -> Problem:
    """A domain error as the API answers it: its status, its message, its fields."""
    problem = Problem(error.status, error.message, error.problem_errors(), error.code)
    retry_after = getattr(error, "retry_after", None)
    if retry_after is not None:
        problem.wait = retry_after  # DRF's handler turns `wait` into Retry-After
    return problem


def problem_exception_handler(exc, context):
    if isinstance(exc, DomainError):
        exc = problem_from(exc)
    response = exception_handler(exc, context)
    if response is None:
        return None
    code = response.status_code
    body = {
        "type": "about:blank",
        "title": TITLES.get(code, "Erro"),
        "status": code,
    }
    if isinstance(exc, Problem):
        body["title"] = TITLES.get(code, "Erro")
        body["detail"] = str(exc.detail)
        if exc.errors:
            body["errors"] = exc.errors
    elif isinstance(exc, ValidationError):
        errors = flatten_errors(exc.detail)
        body["detail"] = "; ".join(
            f"{e['campo']}: {e['mensagem']}" if e["campo"] else e["mensagem"] for e in errors
        )
        body["errors"] = errors
    elif isinstance(exc, APIException):
        detail = exc.detail
        if isinstance(detail, ErrorDetail):
            ours = portuguese(str(detail), detail.code)
            if isinstance(exc, Throttled) and ours != str(detail):
                ours = _throttled_detail(exc)
            body["detail"] = ours
        else:
            body["detail"] = str(detail)
    if isinstance(exc, Http404 | NotFound) and (
        str(body.get("detail")) in ("", str(NotFound.default_detail), "Not found.")
        # get_object_or_404's Http404: "No CTR matches the given query."
        or re.fullmatch(r"No \w+ matches the given query\.", str(body.get("detail")))
    ):
        body["detail"] = "O recurso pedido não existe."
    if context.get("request") is not None:
        body["instance"] = context["request"].get_full_path()
        # Here and not only in config.logs' middleware: a response kept for an Idempotency-Key
        # is replayed byte for byte, with the id of the request that did the work.
        request_id = getattr(context["request"], "request_id", None)
        if request_id:
            body["request_id"] = request_id
    return Response(
        body, status=code, headers=dict(response.headers.items()), content_type=PROBLEM_CONTENT_TYPE
    )


def document_unsupported_media_type(result, generator, request, public):
    """drf-spectacular postprocessing hook: every operation that reads a body can answer 415
    (DRF's parser negotiation, before the view runs: a body sent without a Content-Type, or
    with one we do not parse), so each declares it once here rather than in every view."""
    problem = {
        "description": f"{TITLES[415]}: envie application/json (ou multipart/form-data)",
        "content": {PROBLEM_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict) and "requestBody" in operation:
                operation.setdefault("responses", {}).setdefault("415", problem)
    return result
