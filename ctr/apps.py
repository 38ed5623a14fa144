from django.apps import AppConfig


class CtrConfig(AppConfig):
    name = "ctr"
    verbose_name = "Controle de Transporte de Resíduos"

    def ready(self):
        # CTRs issued/received/refused and findings, for /metrics (config/metrics.py).
        from . import metrics

        metrics.connect()
