from django.apps import AppConfig


class BwsConfig(AppConfig):
    name = "bws"
    verbose_name = "Best-Worst Scaling"

    def ready(self):
        from celery.signals import worker_ready
        from django.contrib.auth.signals import user_logged_out

        from . import services

        def scores_after_logout(sender, request, user, **kwargs):
            if user is not None:
                services.end_session(user)

        def catch_up_on_start(sender, **kwargs):
            services.schedule_dirty_projects()

        user_logged_out.connect(scores_after_logout, weak=False, dispatch_uid="bws-logout")
        worker_ready.connect(catch_up_on_start, weak=False, dispatch_uid="bws-worker-ready")
