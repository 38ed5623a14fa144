"""Fiscalization's domain signals: how the apps above it (webhooks' e-mail to the citizen) hear
that a dumping report changed status, without fiscalization importing them.

Sent inside the transaction that writes the change, so a receiver's outbox row commits or rolls
back with it."""

from django.dispatch import Signal

# A dumping report moved from one status to another (fiscalization.intake.change_status and
# merge_duplicate): kwargs `report`, `from_status`, `to_status`, `at`.
report_status_changed = Signal()
