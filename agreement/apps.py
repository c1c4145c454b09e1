from django.apps import AppConfig


class AgreementConfig(AppConfig):
    name = "agreement"
    verbose_name = "Agreement"

    def ready(self):
        # Receivers import models, which the app registry must have loaded first.
        from projects import events

        from . import receivers

        events.answers_settled.connect(
            receivers.update_report, weak=False, dispatch_uid="agreement-settled"
        )
