from celery.signals import worker_ready
from django.apps import AppConfig

from projects import events


class BwsConfig(AppConfig):
    name = "bws"
    verbose_name = "Best-Worst Scaling"

    def ready(self):
        # The receivers use the models, which the app registry loads only after this module.
        from . import receivers

        wiring = [
            (events.project_planned, receivers.check_design_budget, "bws-plan"),
            (events.project_built, receivers.build_project_tuples, "bws-build"),
            (events.answers_changed, receivers.schedule_scoring, "bws-answers"),
            (events.session_ended, receivers.score_after_session, "bws-session"),
            (events.queue_served, receivers.design_ahead, "bws-queue"),
            (events.units_coming, receivers.batch_coming, "bws-coming"),
            (worker_ready, receivers.catch_up_on_start, "bws-worker-ready"),
        ]
        for signal, receiver, uid in wiring:
            signal.connect(receiver, weak=False, dispatch_uid=uid)
