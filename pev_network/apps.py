from django.apps import AppConfig


class PevNetworkConfig(AppConfig):
    name = "pev_network"
    verbose_name = "Rede de recebimento licenciada"
