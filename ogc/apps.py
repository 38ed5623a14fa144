from django.apps import AppConfig


class OgcConfig(AppConfig):
    name = "ogc"
    verbose_name = "OGC API – Features"
