"""The periodic jobs and when they are due, declared here (times in America/Sao_Paulo).

Each job is a plain function that calls the owning app's service and returns counts (what the
run did, stored in jobs.JobRun.summary: no names or documents). The management commands of the
same services stay as manual entry points.

CTR_JOBS_EVERY_SECONDS="job=seconds,…" makes the named jobs due every so many seconds instead:
for the tests of the production start, which cannot wait for 05:00; production leaves it unset.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
from collections.abc import Callable
from zoneinfo import ZoneInfo

from django.db.models import Count

from ctr import alerts

SAO_PAULO = ZoneInfo("America/Sao_Paulo")


@dataclasses.dataclass(frozen=True)
class Daily:
    """Every day at hour:minute in São Paulo."""

    hour: int
    minute: int = 0
    # A run missed by this much (the scheduler down) is skipped: the next day's comes.
    max_delay = datetime.timedelta(hours=12)

    def last_due(self, now: datetime.datetime) -> datetime.datetime:
        local = now.astimezone(SAO_PAULO)
        due = local.replace(hour=self.hour, minute=self.minute, second=0, microsecond=0)
        if due > local:
            due -= datetime.timedelta(days=1)
            # The same wall-clock time the day before (Brazil has had no DST since 2019).
            due = due.replace(hour=self.hour, minute=self.minute)
        return due

    def __str__(self) -> str:
        return f"todo dia às {self.hour:02d}:{self.minute:02d}"


@dataclasses.dataclass(frozen=True)
class Hourly:
    """Every hour at `minute`."""

    minute: int = 0
    max_delay = datetime.timedelta(hours=1)

    def last_due(self, now: datetime.datetime) -> datetime.datetime:
        local = now.astimezone(SAO_PAULO)
        due = local.replace(minute=self.minute, second=0, microsecond=0)
        if due > local:
            due -= datetime.timedelta(hours=1)
        return due

    def __str__(self) -> str:
        return f"de hora em hora, aos {self.minute:02d} minutos"


@dataclasses.dataclass(frozen=True)
class Every:
    """Every `seconds` seconds, counted from the Unix epoch (the same due times in every
    process). Test-only: CTR_JOBS_EVERY_SECONDS."""

    seconds: int
    max_delay = datetime.timedelta(hours=1)

    def last_due(self, now: datetime.datetime) -> datetime.datetime:
        stamp = int(now.timestamp()) // self.seconds * self.seconds
        return datetime.datetime.fromtimestamp(stamp, SAO_PAULO)

    def __str__(self) -> str:
        return f"a cada {self.seconds} s"


@dataclasses.dataclass(frozen=True)
class Job:
    name: str
    when: Daily | Hourly | Every
    run: Callable[[datetime.datetime], dict]
    description: str


# --- the job bodies: the owning apps' services, counts out ------------------------------------


def enforcement_deadlines(now: datetime.datetime) -> dict:
    """Facilities whose suspension ended get their licenses back (a license's status has no end
    date); the deadlines of the next 7 days counted, as `manage.py enforcement_deadlines`."""
    from fiscalization import deadlines, enforcement

    restored = enforcement.restore_ended_suspensions(deadlines.local_date(now))
    found = enforcement.expiring(now, 7, None)
    items = [item for section in found.values() for item in section]
    return {
        "licencas_restabelecidas": len(restored),
        "prazos": len(items),
        "vencidos": sum(1 for item in items if item.expired),
    }


def purge_idempotency_keys(now: datetime.datetime) -> dict:
    """Idempotency-Key records past their lifetime deleted (ctr.idempotency)."""
    from ctr import idempotency

    return {"chaves_apagadas": idempotency.purge(now=now, hours=idempotency.lifetime_hours())}


def unconfirmed_ctrs(now: datetime.datetime) -> dict:
    """The CTRs whose generator did not confirm the departure in time, e-mailed once each."""
    from generators import confirmation

    result = confirmation.notify_unconfirmed(now=now)
    return {
        "ctrs": len(result.ctrs),
        "emails": result.messages,
        "destinatarios": result.recipients,
    }


def open_ctr_alerts(now: datetime.datetime) -> dict:
    """Issued CTRs open past their municipality's alert hours (OPEN_TOO_LONG), counted per
    municipality (IBGE code): what the Núcleo's dashboard shows them from."""
    from ctr.models import CTR

    per_town = (
        alerts.overdue(CTR.objects.all(), now)
        .values("municipality__ibge_code")
        .annotate(n=Count("pk"))
        .order_by("municipality__ibge_code")
    )
    by_ibge = {row["municipality__ibge_code"]: row["n"] for row in per_town}
    return {"ctrs_em_aberto": sum(by_ibge.values()), "por_municipio": by_ibge}


JOBS = [
    Job(
        "enforcement_deadlines",
        Daily(5, 0),
        enforcement_deadlines,
        "Prazos da fiscalização; licenças com suspensão encerrada restabelecidas",
    ),
    Job(
        "purge_idempotency_keys",
        Daily(3, 30),
        purge_idempotency_keys,
        "Apaga as chaves Idempotency-Key vencidas",
    ),
    Job(
        "unconfirmed_ctrs",
        Hourly(15),
        unconfirmed_ctrs,
        "Avisa por e-mail os CTRs sem confirmação de saída do gerador",
    ),
    Job(
        "open_ctr_alerts",
        Hourly(0),
        open_ctr_alerts,
        "Conta os CTRs em aberto além do prazo de alerta, por município",
    ),
]


def overrides(environ=os.environ) -> dict[str, Every]:
    raw = environ.get("CTR_JOBS_EVERY_SECONDS", "")
    pairs = (item.split("=", 1) for item in raw.split(",") if "=" in item)
    return {name.strip(): Every(max(1, int(seconds))) for name, seconds in pairs}


def jobs(environ=os.environ) -> list[Job]:
    """The schedule in force: JOBS, with the test-only overrides applied."""
    every = overrides(environ)
    return [dataclasses.replace(job, when=every.get(job.name, job.when)) for job in JOBS]


def by_name(name: str) -> Job:
    for job in jobs():
        if job.name == name:
            return job
    raise KeyError(name)
