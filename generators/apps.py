from django.apps import AppConfig


class GeneratorsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "generators"
    verbose_name = "Geradores, PGRCC e Habite-se"
