# gunicorn settings for Annolab; every value can be overridden from the environment.
import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count() * 2 + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "2"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
accesslog = os.environ.get("GUNICORN_ACCESSLOG", "-")
errorlog = "-"
# Behind nginx (platform/nginx/annolab.conf), which opens a connection per request and
# keeps the browsers' connections itself: gunicorn's keep-alive matters only without it.
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "2"))
# Each worker is replaced after max_requests plus a random share of max_requests_jitter
# requests (so the workers do not all restart at once); a worker told to stop finishes the
# requests it holds within graceful_timeout seconds before it is killed.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "2000"))
max_requests_jitter = int(os.environ.get("GUNICORN_MAX_REQUESTS_JITTER", "400"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "30"))
