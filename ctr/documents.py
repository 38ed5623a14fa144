"""Brazilian documents and plates: normalisation and validation (check digits via localflavor)."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from localflavor.br.validators import BRCNPJValidator, BRCPFValidator

# Old format ABC1234 and Mercosul ABC1D23.
PLATE_RE = re.compile(r"^[A-Z]{3}[0-9][A-Z0-9][0-9]{2}$")


def digits(value: str) -> str:
    return re.sub(r"\D", "", value or "")


def normalize_document(value: str) -> str:
    """CPF or CNPJ as digits only, validated; raises ValidationError in Portuguese."""
    raw = digits(value)
    if len(raw) == 11:
        try:
            BRCPFValidator()(raw)
        except ValidationError:
            raise ValidationError(
                f"CPF inválido: {value} (dígitos verificadores não conferem)."
            ) from None
        return raw
    if len(raw) == 14:
        try:
            BRCNPJValidator()(raw)
        except ValidationError:
            raise ValidationError(
                f"CNPJ inválido: {value} (dígitos verificadores não conferem)."
            ) from None
        if raw == raw[0] * 14:
            raise ValidationError(f"CNPJ inválido: {value}.")
        return raw
    raise ValidationError(
        f"Documento inválido: {value!s}; informe um CPF (11) ou CNPJ (14 dígitos)."
    )


def document_kind(document: str) -> str:
    return "CPF" if len(digits(document)) == 11 else "CNPJ"


def format_document(document: str) -> str:
    d = digits(document)
    if len(d) == 11:
        return f"{d[:3]}.{d[3:6]}.{d[6:9]}-{d[9:]}"
    if len(d) == 14:
        return f"{d[:2]}.{d[2:5]}.{d[5:8]}/{d[8:12]}-{d[12:]}"
    return document


def mask_document(document: str) -> str:
    """LGPD: a CPF shows only its middle digits (***.456.789-**); a CNPJ is public."""
    d = digits(document)
    if len(d) == 11:
        return f"***.{d[3:6]}.{d[6:9]}-**"
    return format_document(document)


def public_person_name(name: str, document: str) -> str:
    """LGPD: a natural person (CPF) is shown by first name and initials ("Maria O."); a
    company (CNPJ) by its full name, which is public in the CNPJ registry."""
    if document_kind(document) == "CNPJ":
        return name
    particles = {"da", "das", "de", "di", "do", "dos", "du", "e", "d'"}
    words = name.split()
    if not words:
        return ""
    # The first letter of each later name: "(fictícia)" gives "F.", not "(.".
    letters = [
        next((c for c in w if c.isalpha()), "") for w in words[1:] if w.lower() not in particles
    ]
    return " ".join([words[0], *(f"{letter.upper()}." for letter in letters if letter)])


def normalize_plate(value: str) -> str:
    plate = re.sub(r"[\s-]", "", (value or "").upper())
    if not PLATE_RE.match(plate):
        raise ValidationError(
            f"Placa inválida: {value!s}; use o formato antigo (ABC-1234) ou Mercosul (ABC1D23)."
        )
    return plate


def validate_document(value: str) -> None:
    normalize_document(value)


def validate_plate(value: str) -> None:
    normalize_plate(value)
