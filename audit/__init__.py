"""Who saw whose personal data (LGPD, art. 37: record of processing operations).

Views that show personal data to a user (CPF, names, contacts, photos of a dumping report) call
`audit.record(request, obj, purpose)`; the rows are append-only in the database.
"""


def record(request, obj, purpose: str):
    """See audit.services.record (imported here lazily: this package loads before models)."""
    from .services import record as record_access

    return record_access(request, obj, purpose)
