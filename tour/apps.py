from django.apps import AppConfig


class TourConfig(AppConfig):
    """The guided tour (`manage.py tour`, docs/tour.md): it walks every role's journey through
    the demonstration in a headless browser, so it sits above every app."""

    name = "tour"
    verbose_name = "Visita guiada"
