"""What the enforcement forms are made of: date and time fields as the browser's pickers, and
StepForm, the page of a step of the procedure (its fields named as the service's parameters)."""

from __future__ import annotations

from django import forms
from django.utils import timezone

from ..enforcement.facts import case_of
from ..enforcement.terms import terms_of

DATETIME_FORMAT = "%Y-%m-%dT%H:%M"


class DateInput(forms.DateInput):
    input_type = "date"

    def __init__(self, attrs=None):
        super().__init__(attrs, format="%Y-%m-%d")


class DateTimeInput(forms.DateTimeInput):
    input_type = "datetime-local"

    def __init__(self, attrs=None):
        super().__init__(attrs, format=DATETIME_FORMAT)


def date_field(label: str, help_text: str = "", required: bool = True) -> forms.DateField:
    return forms.DateField(
        label=label,
        widget=DateInput(),
        help_text=help_text,
        required=required,
        initial=timezone.localdate if required else None,
    )


def datetime_field(label: str, help_text: str = "", required: bool = True) -> forms.DateTimeField:
    return forms.DateTimeField(
        label=label,
        widget=DateTimeInput(),
        input_formats=[DATETIME_FORMAT, "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S"],
        help_text=help_text,
        required=required,
        initial=lambda: timezone.localtime().replace(second=0, microsecond=0),
    )


class StepForm(forms.Form):
    """The page of a step of the procedure, about `subject` (the case, notice, record or
    penalty the step acts on): its fields, its title and lead, what the user is told after.

    The lead and the fields' help texts name the case's framework figures as `{hours}`,
    `{unit}`, `{appeal}`... (enforcement.terms.terms_of), so no page states a number the
    case's law does not give."""

    title = ""
    lead = ""
    submit = "Registrar"

    def __init__(self, data=None, *, subject, **kwargs):
        self.subject = subject
        super().__init__(data, **kwargs)
        self.terms = terms_of(case_of(subject).framework)
        for field in self.fields.values():
            if "{" in str(field.help_text):
                field.help_text = str(field.help_text).format(**self.terms)

    def heading(self) -> str:
        return self.title

    def intro(self) -> str:
        return self.lead.format(**self.terms)

    def notes(self) -> list[str]:
        return []

    def legal(self, default: str) -> str:
        return default

    def arguments(self) -> dict:
        """The service's keyword arguments, after the subject."""
        return dict(self.cleaned_data)

    def done(self, result) -> str:
        """The message after the service returned `result`."""
        raise NotImplementedError


class DateOnlyForm(StepForm):
    on = date_field("Data")
