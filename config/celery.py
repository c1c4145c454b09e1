"""The Celery app: Redis when REDIS_URL is set, an embedded file broker otherwise."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# One BLAS thread per process: parallelism comes from worker processes, and BLAS threads
# spinning on every core would steal CPU from the web processes on the same machine.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

app = Celery("annolab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
