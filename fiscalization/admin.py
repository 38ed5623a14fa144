from . import admin_enforcement, admin_reports  # noqa: F401 (registrations)
