"""The CTR's domain signals: how the apps above ctr (webhooks, e-mail) hear of what happened
to a CTR without ctr importing them.

Both are sent inside the transaction that writes the event, so a receiver that writes (an
outbox row) commits or rolls back with it: no event is lost when the process dies after the
commit, none is announced that was rolled back."""

from django.dispatch import Signal

# One CTREvent recorded (issue, receive, refuse, cancel, correction, confirmation of
# departure) through ctr.closing.record_event: kwargs `event` (the CTREvent, its `ctr`
# loaded).
event_recorded = Signal()

# An issue's CTREvent about to be written with its CTR in one statement (services.issue,
# ctr/issue_writes.py), before event_recorded: kwargs `event` (its `ctr` built, without an id
# yet) and `ctr_id` (the SQL that gives the CTR's id inside that statement). A receiver that
# writes its rows in the same round trip returns (sql, params): one INSERT with positional
# parameters, run as one more CTE of the statement; it then leaves that event alone in
# event_recorded. It returns None to write in event_recorded, as for any other event.
issue_writing = Signal()

# The CSV import issued a chunk of CTRs (ctr.bulk, set-based: no CTREvent objects in Python,
# up to tens of thousands at once). kwargs: `cursor` (the import's, inside its transaction),
# `table` (a temporary table whose column `id` holds the new CTRs' ids), `actor_id`, `at`.
# A receiver writes its rows set-based too: INSERT … SELECT … FROM {table}.
ctrs_imported = Signal()
