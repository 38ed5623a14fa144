"""Whether a message a user gets is Portuguese: a Portuguese word or accent, and none of the
English defaults of Django, DRF, Python, GEOS and GDAL (tests/config/test_bad_input_corpus.py
and the other tests of Portuguese messages)."""

import re

PORTUGUESE = re.compile(
    r"[ãõçáéíóúâêôà]|\b(não|informe|use|arquivo|campo|deve|limite|fora|número|página|"
    r"requisição|obrigatóri[oa]s?|inválid[oa]s?|permitid[oa]s?|escolha|linha|coluna|"
    r"esperava|recebi|recebeu|lista|itens)\b",
    re.IGNORECASE,
)
# Defaults of Django, DRF, Python, GEOS and GDAL that must not reach a user untranslated.
ENGLISH = (
    "JSON parse error",
    "This field",
    "Traceback",
    "Expecting ",
    "Exceeds the limit",
    "Internal Server Error",
    "Self-intersection",
    "Invalid ",
    "invalid literal",
    "is not a valid",
    "Not a valid",
    "must be",
    "may not",
    "is required",
    "Ensure this",
    "out of range",
    "codec can't",
    "No data provided",
    "control character",
)


def assert_portuguese(message: str, english_allowed: bool = False) -> None:
    assert message.strip(), "resposta sem mensagem"
    assert PORTUGUESE.search(message), f"mensagem não parece português: {message[:300]!r}"
    if not english_allowed:
        found = [marker for marker in ENGLISH if marker in message]
        assert not found, f"texto em inglês {found} na mensagem: {message[:300]!r}"
