"""The runs of the periodic jobs and the heartbeats of the worker and the scheduler.

Platform-level, not scoped to a municipality: a job works across every municipality of the
deployment, and what a run records is counts (no names, no CPF/CNPJ, e-mail or phone), so the
admin shows the runs to superusers only (jobs.admin)."""

from __future__ import annotations

from django.db import models


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Na fila"
    RUNNING = "running", "Em execução"
    DONE = "done", "Concluída"
    FAILED = "failed", "Falhou"


class JobRun(models.Model):
    """One due time of one job. The unique (job, due_at) is what makes a job run at most once
    per due time, however many schedulers try to queue it (jobs.runner.enqueue_due)."""

    job = models.CharField("tarefa", max_length=64)
    due_at = models.DateTimeField("horário previsto")
    status = models.CharField(
        "situação", max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED
    )
    queued_at = models.DateTimeField("enfileirada em")
    started_at = models.DateTimeField("iniciada em", null=True, blank=True)
    finished_at = models.DateTimeField("terminada em", null=True, blank=True)
    # What the service returned: counts only (jobs.schedule's functions return them).
    summary = models.JSONField("resultado", default=dict, blank=True)
    error = models.TextField("erro", blank=True, default="")

    class Meta:
        verbose_name = "execução de tarefa"
        verbose_name_plural = "execuções de tarefas"
        ordering = ["-due_at", "job"]
        constraints = [
            models.UniqueConstraint(fields=["job", "due_at"], name="jobrun_once_per_due_time")
        ]
        indexes = [
            # The worker's claim: the oldest queued run.
            models.Index(
                fields=["due_at"],
                name="jobrun_queued_idx",
                condition=models.Q(status="queued"),
            )
        ]

    def __str__(self) -> str:
        return f"{self.job} @ {self.due_at:%Y-%m-%d %H:%M}"


class Heartbeat(models.Model):
    """A worker or scheduler process saying it is alive (jobs.health.last_seen)."""

    process = models.CharField("processo", max_length=200, primary_key=True)
    role = models.CharField("papel", max_length=16)
    last_seen = models.DateTimeField("visto por último")

    class Meta:
        verbose_name = "sinal de vida"
        verbose_name_plural = "sinais de vida"
        indexes = [models.Index(fields=["role", "-last_seen"], name="heartbeat_role_seen_idx")]

    def __str__(self) -> str:
        return self.process
