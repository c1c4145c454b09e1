from django.apps import AppConfig


class AgreementConfig(AppConfig):
    name = "agreement"
    verbose_name = "Agreement"

    def ready(self):
        from projects import events

        from . import receivers

        events.answers_settled.connect(
            receivers.update_report, weak=False, dispatch_uid="agreement-settled"
        )
