"""The municipality in a public page's address: /m/<IBGE code>/…, the seven
digits of the IBGE code (3518404 is Guaratinguetá). Registered as `ibge` on import: the URL
modules that use it import this module."""

from django.urls import register_converter


class IbgeConverter:
    regex = r"\d{7}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value) -> str:
        return str(value)


register_converter(IbgeConverter, "ibge")

# The prefix of a municipality's public pages: /m/3518404/onde-descartar/.
PREFIX = "m/<ibge:ibge>/"
