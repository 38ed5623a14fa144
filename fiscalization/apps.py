from django.apps import AppConfig


class FiscalizationConfig(AppConfig):
    name = "fiscalization"
    verbose_name = "Fiscalização"
