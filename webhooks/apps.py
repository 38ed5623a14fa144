from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks e avisos por e-mail"

    def ready(self):
        # The outbox hears ctr and fiscalization through their signals, inside the event's
        # transaction (ctr and fiscalization never import webhooks).
        from ctr import signals as ctr_signals
        from fiscalization import signals as fiscalization_signals

        from . import emails, outbox

        ctr_signals.event_recorded.connect(outbox.on_event_recorded, dispatch_uid="webhooks")
        ctr_signals.event_recorded.connect(emails.on_event_recorded, dispatch_uid="webhook-mail")
        ctr_signals.ctrs_imported.connect(outbox.on_ctrs_imported, dispatch_uid="webhooks")
        fiscalization_signals.report_status_changed.connect(
            emails.on_report_status_changed, dispatch_uid="webhook-mail"
        )
