"""Lists that sort by their columns: a whitelisted `?ordem=` parameter (`numero`, `-numero`…)
mapped to fixed ORM fields, never the user's text into order_by. The order always ends on the
primary key, so that a page boundary falls in the same place on every request."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import QueryDict

PARAM = "ordem"
PAGE_PARAMS = ("pagina", "page")


@dataclass(frozen=True)
class Column:
    key: str  # the value of ?ordem= (Portuguese, as the user sees it in the address bar)
    label: str
    fields: tuple[str, ...]  # the ascending order; descending flips every field
    first_desc: bool = False  # dates and volumes: the first click shows the largest first


@dataclass(frozen=True)
class Header:
    label: str
    query: str  # the query string of the link (filters kept, page reset)
    active: bool
    descending: bool
    aria_sort: str  # "ascending", "descending" or "none"


class ListOrder:
    def __init__(self, columns: list[Column], default: str, tiebreak: str = "pk"):
        self.columns = {column.key: column for column in columns}
        self.default = default
        self.tiebreak = tiebreak

    def parse(self, params: QueryDict) -> tuple[str, bool]:
        """(column key, descending) from ?ordem=, or the default for anything unknown."""
        value = (params.get(PARAM) or "").strip()
        key = value.removeprefix("-")
        if key not in self.columns:
            value = self.default
            key = value.removeprefix("-")
        return key, value.startswith("-")

    def fields(self, key: str, descending: bool) -> list[str]:
        sign = "-" if descending else ""
        fields = [sign + field for field in self.columns[key].fields]
        fields.append(sign + self.tiebreak)
        return fields

    def apply(self, queryset, params: QueryDict):
        key, descending = self.parse(params)
        return queryset.order_by(*self.fields(key, descending))

    def headers(self, params: QueryDict) -> dict[str, Header]:
        """One header per column, by key, each linking to this list ordered by it (the active
        one to the other direction), keeping every filter and going back to page one."""
        current, descending = self.parse(params)
        headers = {}
        for key, column in self.columns.items():
            active = key == current
            next_desc = not descending if active else column.first_desc
            query = params.copy()
            for name in PAGE_PARAMS:
                query.pop(name, None)
            query[PARAM] = ("-" if next_desc else "") + key
            headers[key] = Header(
                label=column.label,
                query=query.urlencode(),
                active=active,
                descending=active and descending,
                aria_sort=("descending" if descending else "ascending") if active else "none",
            )
        return headers
