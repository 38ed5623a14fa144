"""The CTR's domain signals: how the apps above ctr (webhooks, e-mail) hear of what happened
to a CTR without ctr importing them.

Both are sent inside the transaction that writes the event, so a receiver that writes (an
outbox row) commits or rolls back with it: no event is lost when the process dies after the
commit, none is announced that was rolled back."""

from django.dispatch import Signal

# One CTREvent recorded (issue, receive, refuse, cancel, correction, confirmation of
# departure) through ctr.services.record_event: kwargs `event` (the CTREvent, its `ctr`
# loaded).
event_recorded = Signal()

# The CSV import issued a chunk of CTRs (ctr.bulk, set-based: no CTREvent objects in Python,
# up to tens of thousands at once). kwargs: `cursor` (the import's, inside its transaction),
# `table` (a temporary table whose column `id` holds the new CTRs' ids), `actor_id`, `at`.
# A receiver writes its rows set-based too: INSERT … SELECT … FROM {table}.
ctrs_imported = Signal()
