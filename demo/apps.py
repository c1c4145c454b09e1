from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo's data (`manage.py load_demo`): the one app that uses all the others."""

    name = "demo"
    verbose_name = "Demo"
