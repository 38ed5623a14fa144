from django.apps import AppConfig


class JurisdictionConfig(AppConfig):
    name = "jurisdiction"
    verbose_name = "Municípios e papéis"
