"""The CTR's refusals: config.errors.DomainError subclasses with Portuguese messages, raised by
the services (issue, the lifecycle's actions, the corrections) and translated by config.errors."""

from __future__ import annotations

from config.errors import DomainError

from . import rules


class CTRError(DomainError):
    """An operation on a CTR refused by the catalogue or the lifecycle."""


class RuleViolation(CTRError):
    """One or more rules of the catalogue were broken; `findings` lists every one."""

    status = 422
    code = "rules"

    def __init__(self, findings: list[rules.Finding]):
        errors = [f for f in findings if f.severity == rules.Severity.ERROR]
        super().__init__(f"O CTR viola {len(errors)} regra(s) do catálogo.")
        self.findings = findings

    def problem_errors(self) -> list[dict]:
        return [f.as_dict() for f in self.findings if f.severity == rules.Severity.ERROR]


class TransitionNotAllowed(CTRError):
    status = 409
    code = "transition"


class NotAllowed(CTRError):
    status = 403
    code = "forbidden"


class CorrectionError(CTRError):
    code = "correction"


class CorrectionConflict(CorrectionError):
    """Not now: the CTR is not received, a correction is already open, or this one was decided."""

    status = 409
    code = "correction_conflict"


class CorrectionOverStock(CorrectionError):
    """The corrected values would leave a facility with less of a class than already left it
    on onward CTRs or in processing (art. 3 III): the correction is not applied, nothing is
    written; the onward CTRs are corrected or cancelled first, or the correction refused."""

    status = 409
    code = "correction_over_stock"
