"""Which municipality a public page is about: "Onde descartar?", "Denunciar",
the report follow-up and the verification pages serve every municipality of the platform.

The municipality comes from the page's own address (/m/<IBGE code>/onde-descartar/: a city
hall links its citizens there) or, without one, from the location the page is about (the point
searched or reported, pev_network's municipality_at), else the platform's default
(settings.DEFAULT_MUNICIPALITY_IBGE). An address naming a municipality the platform does not
serve (no boundary loaded) answers 404. The page shows the municipality's name, its network on
the map, and its letterhead in the footer (config.letterhead).

Public data only: a municipality's name, outline and licensed network are public; nothing
here reads a user's jurisdiction (DataScope.PUBLIC)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.gis.geos import Point
from django.http import Http404

from config.letterhead import PLATFORM, Letterhead
from pev_network import services as network
from pev_network.letterhead import letterhead_of
from pev_network.models import Municipality


def _municipalities():
    return Municipality.objects.defer("boundary")


def served(ibge: str) -> Municipality:
    """The municipality of the address; 404 for one the platform does not serve."""
    municipality = _municipalities().filter(ibge_code=ibge).first()
    if municipality is None:
        raise Http404("Município não atendido por esta plataforma.")
    return municipality


def default() -> Municipality | None:
    """The platform's default municipality, when its boundary is loaded."""
    code = settings.DEFAULT_MUNICIPALITY_IBGE
    return _municipalities().filter(ibge_code=code).first() if code else None


@dataclass(frozen=True)
class Place:
    """The municipality of a public page, and whether its address named it (`addressed`: the
    page's links then stay within the municipality's pages)."""

    municipality: Municipality | None
    addressed: bool = False

    @property
    def letterhead(self) -> Letterhead:
        return letterhead_of(self.municipality) if self.municipality else PLATFORM

    @property
    def ibge(self) -> str:
        return self.municipality.ibge_code if self.municipality else ""

    def context(self) -> dict:
        """What maps/base.html reads: the municipality (its name in the heading and the
        title), its letterhead (the footer) and, when addressed, its code for the links."""
        return {
            "page_municipality": self.municipality,
            "page_letterhead": self.letterhead,
            "page_ibge": self.ibge if self.addressed else "",
        }


def place(ibge: str | None = None, point: Point | None = None) -> Place:
    """The address's municipality (404 when not served); else the one at `point`; else the
    default (None when not even that one is loaded)."""
    if ibge:
        return Place(served(ibge), addressed=True)
    if point is not None:
        found = network.municipality_at(point)
        if found is not None:
            return Place(found)
    return Place(default())


def of(municipality: Municipality | None) -> Place:
    """The page of an object that belongs to a municipality (a report, a CTR)."""
    return Place(municipality) if municipality is not None else Place(None)


def choices() -> list[Municipality]:
    """The municipalities whose public pages the home page offers: those with a receiving
    network (a state has 645 boundaries, most of them with nothing to show), and the default."""
    code = settings.DEFAULT_MUNICIPALITY_IBGE
    with_network = _municipalities().filter(facilities__isnull=False).values("pk")
    return list(
        _municipalities()
        .filter(pk__in=with_network)
        .union(_municipalities().filter(ibge_code=code))
        .order_by("name", "uf")
    )
