from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self):
        # Receivers import models, which the app registry must have loaded first.
        from projects import events
        from projects import selectors as project_selectors

        from . import receivers, selectors

        events.answers_settled.connect(
            receivers.keep_answer_file, weak=False, dispatch_uid="projects-answer-file"
        )
        events.member_removed.connect(
            receivers.release_removed_member, weak=False, dispatch_uid="annotation-release"
        )
        project_selectors.register_person_progress(selectors.my_progress)
