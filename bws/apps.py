from django.apps import AppConfig


class BwsConfig(AppConfig):
    name = "bws"
    verbose_name = "Best-Worst Scaling"
