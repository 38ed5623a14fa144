"""Keyset pagination for lists that grow with every load issued (docs/performance.md, P5)."""

from __future__ import annotations

from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination

from .api_errors import InvalidParameter


class NewestFirstCursorPagination(CursorPagination):
    """Newest first, one page after another through the `next` link.

    A page-number list counts every matching row and skips the rows of the earlier pages: at a
    million CTRs a city-sized bbox matches tens of thousands of them and the COUNT alone took
    40-65 ms. A cursor (the creation time of the last row seen) costs the same on every page,
    and a CTR issued while a client walks the pages does not shift what it reads next."""

    ordering = ("-created_at", "-pk")
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 500
    page_size_query_description = "Itens por página (padrão 100, no máximo 500)."
    cursor_query_description = (
        "Posição na lista: use o link `next` (ou `previous`) da resposta anterior."
    )

    def decode_cursor(self, request):
        try:
            return super().decode_cursor(request)
        except NotFound:
            raise InvalidParameter(
                self.cursor_query_param,
                "Cursor de paginação inválido: use o link “next” ou “previous” de uma resposta "
                "anterior, sem alterá-lo.",
            ) from None
