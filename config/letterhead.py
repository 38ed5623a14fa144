"""Who a printed document or an e-mail comes from: the municipality it belongs
to ("Prefeitura Municipal de Guaratinguetá/SP") and that municipality's waste law, or the
platform itself when it belongs to no one municipality.

The letterhead is plain text, built by pev_network.letterhead from a Municipality (config knows
no domain model); the PDF kit (config.pdf) and the e-mails (config.mail) print it. One rule
holds everywhere: a municipality's document never cites another municipality's law. A
municipality whose law is not on record says so; the article numbers the platform cites (those
of Lei 3.978/2007 of Guaratinguetá, the model of the rule catalogue) are printed only beside
that law itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from django.conf import settings

# A document of no one municipality, or one whose law is not on record, names the law thus.
GENERIC_LAW = "a lei municipal de resíduos da construção civil e volumosos"


def platform_name() -> str:
    return getattr(settings, "CTR_PLATFORM_NAME", "Plataforma CTR")


@dataclass(frozen=True)
class Letterhead:
    """`municipality` "Name/UF" ("" for the platform's own documents); `law` its waste law as
    cited ("Lei Municipal nº 3.978/2007", "" while not on record); `cites_articles` whether the
    article numbers the platform prints are that law's."""

    municipality: str = ""
    law: str = ""
    cites_articles: bool = False

    @property
    def issuer(self) -> str:
        """The first line of the letterhead: the city hall, or the platform."""
        if not self.municipality:
            return platform_name()
        return f"Prefeitura Municipal de {self.municipality}"

    @property
    def law_text(self) -> str:
        """The law in a sentence: "Lei Municipal nº 3.978/2007 de Guaratinguetá/SP"; honest
        when the municipality's law is not on record, generic without a municipality."""
        if not self.municipality:
            return GENERIC_LAW
        if not self.law:
            return f"{GENERIC_LAW} de {self.municipality} (ainda não informada na plataforma)"
        return f"{self.law} de {self.municipality}"

    @property
    def according_to(self) -> str:
        """ "conforme a Lei Municipal nº 3.978/2007 de Guaratinguetá/SP": the page footer's and
        the e-mail signature's phrase; the municipalities' laws, generically, without one."""
        if not self.municipality:
            return f"conforme {GENERIC_LAW} de cada município atendido"
        if not self.law:
            return f"conforme {self.law_text}"
        return f"conforme a {self.law_text}"

    def cite(self, article: str) -> str:
        """A short citation for a parenthesis: the law and the article where the article is
        that law's, else the law alone (never another law's article number)."""
        if self.cites_articles and self.law:
            return f"{self.law}, {article}"
        if self.law:
            return self.law_text
        return f"lei municipal de {self.municipality}" if self.municipality else "lei municipal"

    def legal_basis(self, provisions: Sequence[tuple[str, str]]) -> str:
        """The 'Base legal' paragraph of a document: each provision as (article, what it says).
        Beside the law whose articles they are, "art. 3 VI (o CTR acompanha cada carga)";
        beside another law, or none on record, what they say only."""
        if self.cites_articles and self.law:
            items = [f"{article} ({says})" for article, says in provisions]
            return f"Base legal: {self.law_text}, {_join(items)}."
        says = "; ".join(says for _, says in provisions)
        return f"Base legal: {self.law_text}: {says}."

    def as_dict(self) -> dict:
        """For a row that keeps it as JSON (the webhooks' outbox)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> Letterhead:
        data = data or {}
        return cls(
            municipality=str(data.get("municipality", "")),
            law=str(data.get("law", "")),
            cites_articles=bool(data.get("cites_articles", False)),
        )


# The platform's own: a document of no one municipality (a certificate spanning several).
PLATFORM = Letterhead()


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " e " + items[-1]
