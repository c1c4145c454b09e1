from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"
    verbose_name = "Projects"

    def ready(self):
        from . import signals  # noqa: F401  (connects the account receivers)
