"""A municipality's law in a page or an e-mail: `{% load letterhead %}`, then
`{{ letterhead|cite:"art. 9 p.ú. I" }}` gives "Lei Municipal nº 3.978/2007, art. 9 p.ú. I" beside
that law, and the municipality's own law (or that it is not on record) anywhere else: never
another municipality's law (config.letterhead)."""

from django import template

from config.letterhead import PLATFORM

register = template.Library()


@register.filter
def cite(letterhead, article: str) -> str:
    return (letterhead or PLATFORM).cite(article)


@register.filter
def according_to(letterhead) -> str:
    """ "conforme a Lei Municipal nº 3.978/2007 de Guaratinguetá/SP"; on a page of no one
    municipality, the municipalities' laws generically."""
    return (letterhead or PLATFORM).according_to
