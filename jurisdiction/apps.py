from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class JurisdictionConfig(AppConfig):
    name = "jurisdiction"
    verbose_name = "Municípios e papéis"
    default = True


class ScopedAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with the scoped site as the default one (jurisdiction.admin_site)."""

    default = False
    default_site = "jurisdiction.admin_site.ScopedAdminSite"
