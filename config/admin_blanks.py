"""The admin's blank choices in Portuguese (no "---------" in any select).

Django's admin offers "---------" as the blank choice of a foreign key (ModelChoiceField's
default `empty_label`), of a field with choices (`BLANK_CHOICE_DASH`) and of the actions select
(`ModelAdmin.get_action_choices`). `BlankChoices` says instead what choosing nothing is: on a
required field, that something must be chosen; on an optional one, that it stays blank. Through
the hooks Django gives every ModelAdmin and inline (`formfield_for_foreignkey`,
`formfield_for_choice_field`, `get_action_choices`), mixed into every admin by the project's
admin site (jurisdiction.admin_site), never by changing Django's constants.
"""

from __future__ import annotations

CHOOSE = "Selecione…"  # a required field: nothing chosen yet
LEFT_BLANK = "— em branco —"  # an optional field: choosing it leaves the field empty


def blank_label(db_field) -> str:
    return LEFT_BLANK if db_field.blank else CHOOSE


class BlankChoices:
    """A ModelAdmin or InlineModelAdmin whose selects' blank choice is in Portuguese."""

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        # The radio buttons (radio_fields) keep Django's own "Nenhum".
        if db_field.name not in self.radio_fields:
            kwargs.setdefault("empty_label", blank_label(db_field))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_choice_field(self, db_field, request, **kwargs):
        if db_field.name not in self.radio_fields and "choices" not in kwargs:
            # Offered when Django offers one (django.db.models.Field.formfield).
            include_blank = db_field.blank or not (db_field.has_default() or "initial" in kwargs)
            kwargs["choices"] = db_field.get_choices(
                include_blank=include_blank, blank_choice=[("", blank_label(db_field))]
            )
        return super().formfield_for_choice_field(db_field, request, **kwargs)

    def get_action_choices(self, request, default_choices=(("", CHOOSE),)):
        return super().get_action_choices(request, list(default_choices))
