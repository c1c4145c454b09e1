# gunicorn settings for Annolab; every value can be overridden from the environment.
import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count() * 2 + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "2"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
accesslog = os.environ.get("GUNICORN_ACCESSLOG", "-")
errorlog = "-"
max_requests = 2000
max_requests_jitter = 200
