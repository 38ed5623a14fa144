"""Request parsers of the API: DRF's, with limits and Portuguese errors.

DRF's JSONParser answers a malformed body with an English "JSON parse error - …", accepts NaN
and Infinity (not JSON), lets Python's int() refuse a 5,000-digit number in English, and lets a
body of 100,000 nested `[` raise RecursionError (a 500). This one says in Portuguese what is
wrong and where (line, column), and refuses all of these with 400.
"""

from __future__ import annotations

import json

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from config.br import br_number

# An integer with more digits than this is no quantity nor id of ours (bigint has 19).
MAX_INTEGER_DIGITS = 30
PREFIX = "JSON inválido"

# json's messages (CPython's json.decoder and _json), in Portuguese.
JSON_MESSAGES = {
    "Expecting value": "esperava um valor (objeto, lista, texto entre aspas, número, true, "
    "false ou null)",
    "Expecting property name enclosed in double quotes": "esperava o nome de um campo entre "
    "aspas duplas",
    "Expecting ':' delimiter": "esperava ':' depois do nome do campo",
    "Expecting ',' delimiter": "esperava ',' entre os itens",
    "Unterminated string starting at": "texto sem as aspas de fechamento",
    "Invalid control character at": "caractere de controle dentro de um texto (escreva-o "
    "escapado, como \\n, \\t ou \\u0001)",
    "Invalid \\escape": "sequência de escape inválida dentro de um texto",
    "Invalid \\uXXXX escape": "escape \\u inválido (use \\u seguido de 4 dígitos hexadecimais)",
    "Extra data": "há conteúdo depois do fim do JSON",
    "Illegal trailing comma before end of object": "vírgula sobrando antes do fim do objeto",
    "Illegal trailing comma before end of array": "vírgula sobrando antes do fim da lista",
    "Unexpected UTF-8 BOM (decode using utf-8-sig)": "o texto começa com um BOM",
}


class _Refused(ValueError):
    """A value json can parse but we do not take; the message is already Portuguese."""


def _refuse_constant(name: str):
    raise _Refused(
        f"{name} não é um número JSON válido; envie um número finito (ou null, se o campo permitir)"
    )


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INTEGER_DIGITS:
        raise _Refused(
            f"número inteiro com {br_number(digits)} algarismos; o limite é {MAX_INTEGER_DIGITS}"
        )
    return int(text)


def _where(exc: json.JSONDecodeError) -> str:
    return f"linha {exc.lineno}, coluna {exc.colno} (caractere {exc.pos + 1})"


def describe_json_error(exc: json.JSONDecodeError) -> str:
    reason = JSON_MESSAGES.get(exc.msg, "sintaxe inválida")
    return f"{PREFIX}: {reason}, na {_where(exc)}."


def parse_json_text(raw: bytes, encoding: str = "utf-8"):
    """The parsed JSON of `raw`; ParseError with a Portuguese detail otherwise."""
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ParseError(
            f"{PREFIX}: o corpo não está codificado em {encoding.upper()} (byte "
            f"0x{raw[exc.start]:02x} na posição {exc.start + 1}); envie o texto em UTF-8.",
            code="parse_error",
        ) from None
    text = text.removeprefix("\ufeff")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_int=_bounded_int)
    except _Refused as exc:
        raise ParseError(f"{PREFIX}: {exc}.", code="parse_error") from None
    except json.JSONDecodeError as exc:
        raise ParseError(describe_json_error(exc), code="parse_error") from None
    except RecursionError:
        raise ParseError(
            f"{PREFIX}: listas ou objetos aninhados em profundidade excessiva; "
            "envie uma estrutura mais rasa.",
            code="parse_error",
        ) from None
    except ValueError as exc:  # anything else json or int() refuses
        raise ParseError(f"{PREFIX}: valor não permitido ({exc}).", code="parse_error") from None


def _encoding(parser_context) -> str:
    try:
        return parsers.get_encoding(parser_context or {})
    except ParseError:
        request = (parser_context or {}).get("request")
        content_type = getattr(request, "content_type", "") if request is not None else ""
        raise ParseError(
            f"Conjunto de caracteres não suportado no cabeçalho Content-Type "
            f"({content_type[:100]}): use charset=utf-8.",
            code="parse_error",
        ) from None


class JSONParser(parsers.JSONParser):
    """DRF's JSONParser: refuses NaN, Infinity and integers past MAX_INTEGER_DIGITS digits,
    survives any nesting, and explains each refusal in Portuguese."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = _encoding(parser_context)
        raw = stream.read() if stream is not None else b""
        if isinstance(raw, str):
            raw = raw.encode(encoding)
        return parse_json_text(raw, encoding)
