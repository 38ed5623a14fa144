"""The scheduler and the worker (`manage.py scheduler`, `manage.py worker`): a small design of
our own on PostgreSQL, since procrastinate needs psycopg 3, whose mere presence makes Django
switch drivers under the bulk CSV import (psycopg2's copy_expert, ctr.bulk); README, Produção.

- The scheduler queues each job's latest due time: an INSERT … ON CONFLICT DO NOTHING on the
  unique (job, due_at), so two schedulers queue it once. A due time older than its schedule's
  max_delay (12 h for a daily job, 1 h for an hourly one) is skipped: a scheduler down for
  days does not run them all at once on its return, the next due time comes.
- The worker claims the oldest queued run (FOR UPDATE SKIP LOCKED), marks it running, calls
  the job and records its counts or its error; between runs it sends the outbox's due
  webhooks and e-mails (webhooks.delivery: its rows are written in the transaction of the
  event they report, so a worker that was down finds them on its return).
- Both write a heartbeat (jobs.health.last_seen)."""

from __future__ import annotations

import datetime
import logging
import os
import socket
import time
import traceback

from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from config.logs import job_run
from webhooks import delivery

from . import schedule
from .models import Heartbeat, JobRun, RunStatus

log = logging.getLogger(__name__)

# Heartbeats older than this are deleted by the scheduler (restarted processes leave theirs).
HEARTBEAT_KEPT = datetime.timedelta(days=7)
ERROR_KEPT = 4000  # characters of a failed run's traceback
# A heartbeat at most this often: the worker's rounds come every second when idle.
HEARTBEAT_SECONDS = 10.0


def process_name(role: str) -> str:
    return f"{role}@{socket.gethostname()}:{os.getpid()}"


def beat(role: str, now: datetime.datetime | None = None) -> None:
    now = now or timezone.now()
    Heartbeat.objects.update_or_create(
        process=process_name(role), defaults={"role": role, "last_seen": now}
    )


def enqueue_due(now: datetime.datetime | None = None) -> list[str]:
    """Queue every job's latest due time not queued yet. The jobs this call queued."""
    now = now or timezone.now()
    queued = []
    for job in schedule.jobs():
        due = job.when.last_due(now)
        if now - due > job.when.max_delay:
            continue
        with connection.cursor() as cursor:
            # ON CONFLICT on the unique (job, due_at): one row per due time, whoever asks.
            cursor.execute(
                "INSERT INTO jobs_jobrun (job, due_at, status, queued_at, summary, error) "
                "VALUES (%s, %s, %s, %s, '{}'::jsonb, '') "
                "ON CONFLICT (job, due_at) DO NOTHING RETURNING id",
                [job.name, due, RunStatus.QUEUED, now],
            )
            if cursor.fetchone():
                queued.append(job.name)
    return queued


def _claim(now: datetime.datetime) -> JobRun | None:
    with transaction.atomic():
        run = (
            JobRun.objects.select_for_update(skip_locked=True)
            .filter(status=RunStatus.QUEUED)
            .order_by("due_at", "pk")
            .first()
        )
        if run is None:
            return None
        run.status = RunStatus.RUNNING
        run.started_at = now
        run.save(update_fields=["status", "started_at"])
        return run


def run_next(now: datetime.datetime | None = None) -> JobRun | None:
    """Claim the oldest queued run, run it, record how it ended. None when none is queued."""
    run = _claim(now or timezone.now())
    if run is None:
        return None
    try:
        # One log line per run (config/logs.py): the job, its own id, outcome, duration and
        # the counts it returned (never personal data: the jobs return counts).
        with job_run(run.job, run=run.pk, due_at=run.due_at.isoformat()) as line:
            job = schedule.by_name(run.job)
            summary = job.run(run.started_at)
            line.update(summary)
    except Exception as error:  # noqa: BLE001 (any failure of a job is recorded, not fatal)
        run.status = RunStatus.FAILED
        run.error = "".join(traceback.format_exception(error))[-ERROR_KEPT:]
    else:
        run.status = RunStatus.DONE
        run.summary = summary
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "summary", "error", "finished_at"])
    return run


def scheduler_tick(now: datetime.datetime | None = None) -> list[str]:
    """One round of the scheduler: the due jobs queued (the names queued now)."""
    now = now or timezone.now()
    Heartbeat.objects.filter(last_seen__lt=now - HEARTBEAT_KEPT).delete()
    return enqueue_due(now)


def worker_tick(limit: int = 100) -> bool:
    """One round of the worker: the outbox's due deliveries, one queued job. Whether it did
    anything (the loop pauses only when not)."""
    sent = delivery.deliver_due(limit=limit)
    ran = run_next()
    return bool(sent) or ran is not None


def loop(
    role: str, tick, pause: float, parent: int | None = None, rounds: int | None = None
) -> None:
    """Call `tick` until stopped (SIGTERM/SIGINT), the `parent` process is gone, or `rounds`
    rounds are done, with a heartbeat of `role` every HEARTBEAT_SECONDS; pause `pause` seconds
    after a round that did nothing."""
    done = 0
    last_beat = None
    while rounds is None or done < rounds:
        if parent is not None and not alive(parent):
            return
        # A daemon outlives its connection (a restarted database): a fresh one when the old
        # one is unusable, as each request of the site gets.
        close_old_connections()
        if last_beat is None or time.monotonic() - last_beat >= HEARTBEAT_SECONDS:
            beat(role)
            last_beat = time.monotonic()
        busy = tick()
        done += 1
        if not busy:
            time.sleep(pause)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
