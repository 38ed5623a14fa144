from config import admin_numbers  # noqa: F401 (decimal comma in every DecimalField)

from . import admin_enforcement, admin_frameworks, admin_reports  # noqa: F401 (registrations)
