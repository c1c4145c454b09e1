from django.apps import AppConfig


class LabsConfig(AppConfig):
    name = "labs"
    verbose_name = "Labs and accounts"

    def ready(self):
        # Connects the account receivers (a module of receivers, loaded for its effect).
        from . import signals  # noqa: F401
