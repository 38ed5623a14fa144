from django.apps import AppConfig


class CtrConfig(AppConfig):
    name = "ctr"
    verbose_name = "Controle de Transporte de Resíduos"
