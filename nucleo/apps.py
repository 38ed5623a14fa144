from django.apps import AppConfig


class NucleoConfig(AppConfig):
    """The Núcleo Permanente de Gestão's pages: the dashboard, the management map and the
    exports. Its maps are built with the maps library."""

    name = "nucleo"
    verbose_name = "Núcleo Permanente de Gestão"
