from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"
    verbose_name = "Projects"

    def ready(self) -> None:
        # A saved project forgets its cached page language (projects.language).
        from projects import language  # noqa: F401
