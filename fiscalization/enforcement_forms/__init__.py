"""Forms of the inspectors' pages for the enforcement procedure: they parse, the services
(fiscalization.enforcement) decide.

A step's page (fiscalization.enforcement.actions names its form) is a StepForm: its fields are
named as the service's parameters, and it says what the page is about and what was done.

The parts: fields (the date pickers and StepForm), cases (opening and finding cases), notices
(the notice and the deliveries), records (the record, the fine applied, the appeal), payments
and penalties; STEP_FORMS finds a step's form by the name its row gives."""

from . import notices, payments, penalties, records
from .fields import StepForm

# The steps' table names each form as text (it sits below the forms, which call its services):
# the step pages look the name up here.
STEP_FORMS: dict[str, type[StepForm]] = {
    name: form
    for module in (notices, records, payments, penalties)
    for name, form in vars(module).items()
    if isinstance(form, type) and issubclass(form, StepForm) and form.__module__ == module.__name__
}
