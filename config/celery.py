"""The Celery app: Redis when REDIS_URL is set, an embedded file broker otherwise."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("annolab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
