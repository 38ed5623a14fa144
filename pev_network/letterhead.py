"""A municipality's letterhead (config.letterhead): its city hall and its waste law, for the
printed documents and the e-mails that belong to it."""

from __future__ import annotations

from config.letterhead import PLATFORM, Letterhead

from .models import CATALOGUE_LAW_IBGE, KNOWN_WASTE_LAWS, Municipality


def letterhead_of(municipality: Municipality | None) -> Letterhead:
    """The letterhead of `municipality`; the platform's own without one. The article numbers
    the platform prints are Lei 3.978/2007's (the rule catalogue's model): they go beside that
    law only, as Guaratinguetá cites it, never beside another municipality's."""
    if municipality is None:
        return PLATFORM
    law = " ".join((municipality.waste_law or "").split())
    catalogue_law = (
        municipality.ibge_code == CATALOGUE_LAW_IBGE and law == KNOWN_WASTE_LAWS[CATALOGUE_LAW_IBGE]
    )
    return Letterhead(
        municipality=f"{municipality.name}/{municipality.uf}", law=law, cites_articles=catalogue_law
    )


def letterheads(municipality_ids) -> dict[int, Letterhead]:
    """The letterheads of these municipalities by id, in one query (without the boundaries)."""
    ids = {pk for pk in municipality_ids if pk is not None}
    rows = Municipality.objects.defer("boundary").filter(pk__in=ids) if ids else []
    return {m.pk: letterhead_of(m) for m in rows}


def letterhead_by_id(municipality_id: int | None) -> Letterhead:
    """The letterhead of the municipality of this id; the platform's without one."""
    return letterheads([municipality_id]).get(municipality_id, PLATFORM)


def common_letterhead(municipality_ids) -> Letterhead:
    """The letterhead of what belongs to one municipality (a generator's CTRs, a certificate's
    loads); the platform's when it spans several, or none."""
    ids = {pk for pk in municipality_ids if pk is not None}
    return letterhead_by_id(ids.pop()) if len(ids) == 1 else PLATFORM
