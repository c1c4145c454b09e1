from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"
    verbose_name = "Projects"

    def ready(self):
        from annotation import receivers
        from projects import events

        events.answers_settled.connect(
            receivers.keep_answer_file, weak=False, dispatch_uid="projects-answer-file"
        )
