"""The periodic jobs: their due times in São Paulo, at most one run per due
time however many schedulers queue it, each run recorded with its counts or its error, the
worker's and the scheduler's heartbeats, the runs read-only in the admin."""

from __future__ import annotations

import datetime
import io
import threading

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection

from ctr import idempotency
from jobs import health, runner, schedule
from jobs.models import JobRun, RunStatus
from tests.clock import FROZEN_NOW
from tests.ctr_world import build_world

SP = schedule.SAO_PAULO


def sp(*args) -> datetime.datetime:
    return datetime.datetime(*args, tzinfo=SP)


def test_a_daily_job_before_its_hour_is_due_since_yesterday():
    assert schedule.Daily(5).last_due(sp(2026, 3, 10, 4, 59)) == sp(2026, 3, 9, 5, 0)
    assert schedule.Daily(5).last_due(sp(2026, 3, 10, 5, 0)) == sp(2026, 3, 10, 5, 0)


def test_the_hour_is_sao_paulos_not_utc():
    # 07:30 UTC is 04:30 in São Paulo (UTC-3): the 05:00 run is still yesterday's.
    now = datetime.datetime(2026, 3, 10, 7, 30, tzinfo=datetime.UTC)
    assert schedule.Daily(5).last_due(now) == sp(2026, 3, 9, 5, 0)
    assert schedule.Hourly(15).last_due(now) == sp(2026, 3, 10, 4, 15)


def test_the_schedule_declares_the_four_jobs_and_the_override_is_explicit():
    names = {job.name for job in schedule.JOBS}
    assert names == {
        "enforcement_deadlines",
        "purge_idempotency_keys",
        "unconfirmed_ctrs",
        "open_ctr_alerts",
    }
    overridden = {
        job.name: job.when for job in schedule.jobs({"CTR_JOBS_EVERY_SECONDS": "open_ctr_alerts=3"})
    }
    assert overridden["open_ctr_alerts"] == schedule.Every(3)
    assert overridden["enforcement_deadlines"] == schedule.Daily(5, 0)


@pytest.mark.django_db(transaction=True)
def test_two_schedulers_at_the_same_due_time_queue_one_run_per_job():
    now = FROZEN_NOW
    start = threading.Barrier(2)
    queued: list[list[str]] = []

    def scheduler():
        try:
            start.wait(timeout=10)
            queued.append(runner.enqueue_due(now))
        finally:
            connection.close()

    threads = [threading.Thread(target=scheduler) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    # Every job whose latest due time is within MAX_DELAY of `now`, once in all.
    due = [
        job.name for job in schedule.jobs() if now - job.when.last_due(now) <= job.when.max_delay
    ]
    assert due, "the hourly jobs are due within the hour at any time"
    assert sorted(queued[0] + queued[1]) == sorted(due)
    runs = list(JobRun.objects.values_list("job", "due_at"))
    assert sorted(job for job, _ in runs) == sorted(due)
    # And the worker, asked again and again, runs each once.
    while runner.run_next(now) is not None:
        pass
    assert runner.run_next(now) is None
    assert JobRun.objects.filter(status=RunStatus.DONE).count() == len(due)


@pytest.mark.django_db
def test_a_due_time_older_than_the_delay_is_skipped():
    # 18:00 in São Paulo: the 05:00 enforcement run is 13 hours late, not queued on return.
    queued = runner.enqueue_due(sp(2026, 3, 10, 18, 0))
    assert "enforcement_deadlines" not in queued
    assert "open_ctr_alerts" in queued  # 18:00, due now


@pytest.mark.django_db
def test_a_daily_run_missed_by_a_few_hours_is_caught_up():
    # 09:00: the scheduler was down at 05:00 and came back; the day's run is queued.
    queued = runner.enqueue_due(sp(2026, 3, 10, 9, 0))
    assert "enforcement_deadlines" in queued


@pytest.mark.django_db
def test_a_run_records_when_and_what_the_service_did(frozen_today):
    world = build_world()
    old = FROZEN_NOW - datetime.timedelta(hours=idempotency.lifetime_hours() + 1)
    for key in ("a", "b"):
        idempotency.claim(world.alfa_user.pk, key, "POST", "/api/v1/ctrs/", "f", old)
    idempotency.claim(world.alfa_user.pk, "fresh", "POST", "/api/v1/ctrs/", "f", FROZEN_NOW)
    JobRun.objects.create(job="purge_idempotency_keys", due_at=FROZEN_NOW, queued_at=FROZEN_NOW)
    run = runner.run_next(FROZEN_NOW)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE
    assert run.summary == {"chaves_apagadas": 2}
    assert run.started_at == FROZEN_NOW and run.finished_at >= run.started_at
    assert run.error == ""


@pytest.mark.django_db
def test_open_ctr_alerts_counts_per_municipality_without_personal_data(frozen_today):
    from tests.ctr_world import issue_hours_ago

    world = build_world()
    hours = world.town.parameters_on(FROZEN_NOW.date()).open_ctr_alert_hours
    issue_hours_ago(world, hours + 2)
    issue_hours_ago(world, 1)
    summary = schedule.open_ctr_alerts(FROZEN_NOW)
    assert summary == {"ctrs_em_aberto": 1, "por_municipio": {world.town.ibge_code: 1}}


@pytest.mark.django_db
def test_each_run_is_one_json_log_line_with_its_counts(frozen_today, json_lines):
    JobRun.objects.create(job="purge_idempotency_keys", due_at=FROZEN_NOW, queued_at=FROZEN_NOW)
    JobRun.objects.create(
        job="retired_job", due_at=FROZEN_NOW + datetime.timedelta(minutes=1), queued_at=FROZEN_NOW
    )
    done, failed = runner.run_next(FROZEN_NOW), runner.run_next(FROZEN_NOW)
    first, second = [line for line in json_lines() if line["event"] == "job"]
    assert (first["job"], first["outcome"], first["run"]) == (
        "purge_idempotency_keys",
        "ok",
        done.pk,
    )
    assert first["chaves_apagadas"] == 0 and first["job_id"]
    assert (second["job"], second["outcome"], second["run"]) == ("retired_job", "erro", failed.pk)


@pytest.mark.django_db
def test_a_failed_run_records_its_error_and_the_worker_goes_on(frozen_today):
    # A run of a job the schedule no longer has (renamed in a deploy): it fails, recorded.
    JobRun.objects.create(job="retired_job", due_at=FROZEN_NOW, queued_at=FROZEN_NOW)
    JobRun.objects.create(
        job="purge_idempotency_keys",
        due_at=FROZEN_NOW + datetime.timedelta(minutes=1),
        queued_at=FROZEN_NOW,
    )
    failed = runner.run_next(FROZEN_NOW)
    assert failed.status == RunStatus.FAILED and "retired_job" in failed.error
    assert failed.finished_at is not None
    after = runner.run_next(FROZEN_NOW)
    assert after.job == "purge_idempotency_keys" and after.status == RunStatus.DONE


# Transactional: the loop drops an unusable connection as a daemon must, and a connection inside
# the test's atomic block looks so to Django.
@pytest.mark.django_db(transaction=True)
def test_last_seen_tells_when_the_worker_and_the_scheduler_beat():
    assert health.last_seen() == {"worker": None, "scheduler": None}
    call_command("worker", rounds=1, pause=0, stdout=io.StringIO())
    seen = health.last_seen()
    assert seen["worker"] is not None and seen["scheduler"] is None
    call_command("scheduler", rounds=1, tick=0, stdout=io.StringIO())
    assert health.last_seen()["scheduler"] is not None
    assert call_command("jobs_seen", "worker", stdout=io.StringIO()) is None
    with pytest.raises(CommandError, match="sem sinal de vida"):
        call_command("jobs_seen", "worker", within=-1, stdout=io.StringIO())


@pytest.mark.django_db
def test_the_runs_are_read_only_in_the_admin_for_superusers(client):
    run = JobRun.objects.create(
        job="open_ctr_alerts", due_at=FROZEN_NOW, queued_at=FROZEN_NOW, summary={"n": 1}
    )
    admin = get_user_model().objects.create_superuser("raiz", "raiz@example.org", "x")
    client.force_login(admin)
    listing = client.get("/admin/jobs/jobrun/")
    assert listing.status_code == 200
    assert "open_ctr_alerts" in listing.content.decode()
    assert client.get(f"/admin/jobs/jobrun/{run.pk}/change/").status_code == 200
    assert client.get("/admin/jobs/jobrun/add/").status_code == 403
    assert client.post(f"/admin/jobs/jobrun/{run.pk}/delete/", {"post": "yes"}).status_code == 403
    assert JobRun.objects.filter(pk=run.pk).exists()


@pytest.mark.django_db
def test_municipal_staff_do_not_see_the_runs(client):
    """Platform-level: a Núcleo of one municipality, admin access or not, sees no run."""
    world = build_world()
    JobRun.objects.create(job="open_ctr_alerts", due_at=FROZEN_NOW, queued_at=FROZEN_NOW)
    world.nucleo.is_staff = True
    world.nucleo.save(update_fields=["is_staff"])
    client.force_login(world.nucleo)
    assert client.get("/admin/jobs/jobrun/").status_code in (302, 403)
    index = client.get("/admin/")
    assert "jobrun" not in index.content.decode()
