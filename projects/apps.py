from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"
    verbose_name = "Projects"

    def ready(self):
        from . import (
            events,
            receivers,
            signals,  # noqa: F401  (connects the account receivers)
        )

        events.answers_settled.connect(
            receivers.keep_answer_file, weak=False, dispatch_uid="projects-answer-file"
        )
