from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Registro de acessos a dados pessoais (LGPD)"
    default_auto_field = "django.db.models.BigAutoField"
