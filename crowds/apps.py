from django.apps import AppConfig


class CrowdsConfig(AppConfig):
    name = "crowds"
    verbose_name = "Crowd studies"

    def ready(self):
        # The app registry must be ready before these modules (they import models).
        from annotation import people
        from projects import events

        from . import attention_checks, gold, participants, turns

        people.register(
            is_participant=turns.is_participant,
            take_turn=turns.take_turn,
            withholds_work=gold.withholds_work,
            units_planned=attention_checks.units_planned,
            training_first=gold.training_blocks_work,
            screening_failure=gold.screening_failure,
            next_page=participants.page_after_answer,
            attention_check=lambda project, user: attention_checks.pick_attention_check(
                project=project, user=user
            ),
        )
        events.units_built.connect(
            gold.store_gold_receiver, weak=False, dispatch_uid="crowds-gold-units"
        )
