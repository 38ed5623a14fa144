"""Model instances from one SELECT of fixed text, as the ORM would build them.

A hot path's reads (one CTR's issue, a token's user) joined into one statement whose text is
built once: no ORM query compiled per request (most of those requests' Python time).
Each model's columns get an alias; the row's values go through each field's own
converters (geometries from EWKB, JSON, …) into Model.from_db, with the same deferred fields
the ORM query had.
"""

from __future__ import annotations

from django.db import connection
from django.db.models import Model


class Columns:
    """A model's columns under an alias in one SELECT, and the instance built from them."""

    def __init__(self, model: type[Model], alias: str, deferred: tuple[str, ...] = ()):
        self.model = model
        self.alias = alias
        self.fields = [f for f in model._meta.concrete_fields if f.name not in deferred]
        self.names = [f.attname for f in self.fields]
        self._converters = None

    def sql(self) -> str:
        """The select list: geometries as EWKB (as the ORM selects them), each column named
        alias__column so that the lateral subqueries do not clash."""
        parts = []
        for f in self.fields:
            column = f'{self.alias}."{f.column}"'
            if getattr(f, "geom_type", None):
                column += "::bytea"
            parts.append(f'{column} AS "{self.alias}__{f.column}"')
        return ", ".join(parts)

    def inner(self, table_alias: str) -> str:
        """The columns inside the lateral subquery (before they get their outer names)."""
        return ", ".join(f'{table_alias}."{f.column}"' for f in self.fields)

    def converters(self):
        converters = self._converters
        if converters is None:
            # Built whole, then published: a gunicorn worker serves several requests at once in
            # threads, and one that read the list while another thread was filling it got a
            # list shorter than the row (a 500 on a freshly started worker's first issues).
            converters = []
            for f in self.fields:
                col = f.get_col(self.alias)
                found = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
                converters.append((found, col))
            self._converters = converters
        return converters

    def build(self, values: tuple):
        """The instance, or None when the lateral found no row (its primary key is NULL)."""
        if values[self.names.index(self.model._meta.pk.attname)] is None:
            return None
        converted = []
        for value, (converters, col) in zip(values, self.converters(), strict=True):
            for converter in converters:
                value = converter(value, col, connection)
            converted.append(value)
        return self.model.from_db(connection.alias, self.names, converted)

    def __len__(self) -> int:
        return len(self.fields)


def parts_of(parts, row: tuple) -> list:
    """The instances of `parts` (Columns, in select order) from one row; None for a part
    whose LEFT JOIN found nothing."""
    built, start = [], 0
    for part in parts:
        built.append(part.build(row[start : start + len(part)]))
        start += len(part)
    return built
