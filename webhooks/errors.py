"""The webhooks' refusals: a config.errors.DomainError, in Portuguese, with a code."""

from config.errors import DomainError


class WebhookError(DomainError):
    code = "webhook"
