from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "jobs"
    verbose_name = "Tarefas agendadas"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # The worker and the scheduler in /readyz, their runs in /metrics (docs/operations.md,
        # "Saúde, métricas e logs"); config imports no app, so the app adds them.
        from django.conf import settings

        from config import health, metrics

        from .health import last_seen, runs_families

        minutes = settings.CTR_READY_PROCESS_SEEN_MINUTES
        for role, what in (("worker", "O worker"), ("scheduler", "O agendador")):
            if not any(check.name == role for check in health.READINESS_CHECKS):
                seen = health.seen_within(what, lambda role=role: last_seen()[role], minutes)
                health.READINESS_CHECKS.append(health.Check(role, seen))
        if runs_families not in metrics.SCRAPE_TIME_FAMILIES:
            metrics.SCRAPE_TIME_FAMILIES.append(runs_families)
