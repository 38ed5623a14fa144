"""The error of the enforcement procedure."""

from config.errors import DomainError


class EnforcementError(DomainError):
    """A step of the enforcement procedure refused."""


class AuthorityRequired(EnforcementError):
    """A step only the authority may take (art. 35), asked by someone else."""

    status = 403
    code = "authority"
