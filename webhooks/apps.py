from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks e avisos por e-mail"

    def ready(self):
        # The outbox hears ctr and fiscalization through their signals, inside the event's
        # transaction (ctr and fiscalization never import webhooks).
        from config import health, metrics
        from ctr import signals as ctr_signals
        from fiscalization import signals as fiscalization_signals

        from . import emails, outbox
        from .health import check_outbox, outbox_families

        ctr_signals.event_recorded.connect(outbox.on_event_recorded, dispatch_uid="webhooks")
        ctr_signals.issue_writing.connect(outbox.on_issue_writing, dispatch_uid="webhooks")
        ctr_signals.event_recorded.connect(emails.on_event_recorded, dispatch_uid="webhook-mail")
        ctr_signals.ctrs_imported.connect(outbox.on_ctrs_imported, dispatch_uid="webhooks")
        fiscalization_signals.report_status_changed.connect(
            emails.on_report_status_changed, dispatch_uid="webhook-mail"
        )
        # The outbox in /readyz and /metrics (docs/operations.md, "Saúde, métricas e logs").
        if not any(check.name == "outbox" for check in health.READINESS_CHECKS):
            health.READINESS_CHECKS.append(health.Check("outbox", check_outbox))
        if outbox_families not in metrics.SCRAPE_TIME_FAMILIES:
            metrics.SCRAPE_TIME_FAMILIES.append(outbox_families)
