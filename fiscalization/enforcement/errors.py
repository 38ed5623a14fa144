"""The error of the enforcement procedure."""

from config.errors import DomainError


class EnforcementError(DomainError):
    """A step of the enforcement procedure refused."""
