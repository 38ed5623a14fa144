"""AppConfigs of third-party apps, renamed for the admin's Portuguese sidebar."""

from axes.apps import AppConfig as BaseAxesConfig


class AxesConfig(BaseAxesConfig):
    verbose_name = "Bloqueio de login (django-axes)"
