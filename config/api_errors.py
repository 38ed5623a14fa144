"""API errors as RFC 9457 problem details (application/problem+json), in Portuguese."""

from django.http import Http404
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler

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
    return [{"campo": prefix or None, "mensagem": str(detail)}]


def problem_exception_handler(exc, context):
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
        body["detail"] = str(exc.detail)
    if isinstance(exc, Http404 | NotFound) and str(body.get("detail")) in (
        "",
        str(NotFound.default_detail),
    ):
        body["detail"] = "O recurso pedido não existe."
    if context.get("request") is not None:
        body["instance"] = context["request"].get_full_path()
    return Response(
        body, status=code, headers=dict(response.headers.items()), content_type=PROBLEM_CONTENT_TYPE
    )
