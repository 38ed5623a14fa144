"""Decimal fields of the admin read a decimal comma too ("2,5", "-22,799585").

Every ModelAdmin copies django.contrib.admin.options.FORMFIELD_FOR_DBFIELD_DEFAULTS when it is
registered; each of our admin modules imports this one first, so their DecimalFields become
config.br_forms.BRDecimalField (text input, comma or point, Portuguese error message).
"""

from django.contrib.admin import options
from django.db import models

from config.br_forms import BRDecimalField

options.FORMFIELD_FOR_DBFIELD_DEFAULTS[models.DecimalField] = {"form_class": BRDecimalField}
