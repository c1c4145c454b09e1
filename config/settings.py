"""Annolab settings, read from the environment (see platform/annolab.env.example)."""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


DEBUG = env_bool("DEBUG", False)
# With DEBUG off the site signs sessions, CSRF tokens and password-reset links with a key
# of its own or does not start (platform/DEPLOY.md, "Production settings"). pytest sets
# PYTEST_VERSION itself before it loads settings: test runs get a key for tests only.
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY and DEBUG:
    SECRET_KEY = "annolab-insecure-key-for-debug-only"
elif not SECRET_KEY and "PYTEST_VERSION" in os.environ:
    SECRET_KEY = "annolab-insecure-key-for-test-runs-only"
elif not SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY is not set. With DEBUG off Annolab needs a secret key of its own: set "
        "SECRET_KEY in the environment to a long random string, e.g. the output of "
        "`python -c 'import secrets; print(secrets.token_urlsafe(50))'` "
        "(platform/annolab.env.example, platform/DEPLOY.md). For local work `make demo` "
        "keeps a generated key in var/secret_key, or set DEBUG=1."
    )
elif SECRET_KEY.startswith("change-me") and not DEBUG:
    raise ImproperlyConfigured(
        "SECRET_KEY is still the placeholder of platform/annolab.env.example: "
        "replace it with a long random string."
    )
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "knox",
    "axes",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "projects",
    "annotation",
    "labs",
    "crowds",
    "bws",
    "agreement",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The browser's language (Accept-Language), then the project's own `language:` on its
    # annotator and participant pages (projects/language.py).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # A participant session opens its own study's pages only (crowds/participants.py).
    "crowds.participants.ParticipantScope",
    "projects.language.ProjectLanguage",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, so it turns a locked-out login into its refusal (labs/login_protection.py).
    "axes.middleware.AxesMiddleware",
]
# Server-Timing header with app / cpu / db time per request (config/timing.py)
SERVER_TIMING = env_bool("SERVER_TIMING", False)
if SERVER_TIMING:
    MIDDLEWARE.insert(0, "config.timing.ServerTimingMiddleware")

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
        # A pooled connection that died (database restart) is replaced before use, not failed.
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Concurrent web + worker writers on one file: wait for the lock instead of failing.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # Tests use a file too: an in-memory shared-cache database fails concurrent writers with
    # "table is locked" instead of waiting, and the queue is tested under concurrency.
    # One file per test process, so concurrent test runs in one checkout do not collide.
    DATABASES["default"]["TEST"] = {
        "NAME": str(BASE_DIR / "var" / f"test-db-{os.getpid()}.sqlite3")
    }
    (BASE_DIR / "var").mkdir(exist_ok=True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
# The languages of the annotator and participant pages (catalogues in locale/); manager
# pages have English only. Arabic is written right to left.
LANGUAGES = [
    ("en", "English"),
    ("de", "Deutsch"),
    ("pt", "Português"),
    ("it", "Italiano"),
    ("es", "Español"),
    ("fr", "Français"),
    ("ar", "العربية"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "config.storage.StaticStorage"
            if not DEBUG and env_bool("STATIC_MANIFEST", False)
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
# Serve static files from the apps and static/ directly as well, so a site runs before
# collectstatic (local demo, tests); production still collects them into STATIC_ROOT.
WHITENOISE_USE_FINDERS = True
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "var" / "media"))
# Uploaded configs and data files of projects created on the web live here.
PROJECT_FILES_ROOT = Path(os.environ.get("PROJECT_FILES_ROOT", MEDIA_ROOT / "projects"))
# The proxy's internal location for PROJECT_FILES_ROOT (platform/nginx/annolab.conf): set,
# a media file is sent by the proxy after the site's access check (X-Accel-Redirect).
PROJECT_FILES_ACCEL_REDIRECT = os.environ.get("PROJECT_FILES_ACCEL_REDIRECT", "")
# Request and upload sizes: see "Trust boundaries: limits" below.

EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "annolab@localhost")

REDIS_URL = os.environ.get("REDIS_URL", "")
CELERY_DATA_DIR = Path(os.environ.get("CELERY_DATA_DIR", BASE_DIR / "var" / "celery"))
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    # Publishing must fail fast when Redis is down: annotators never wait on the broker.
    # A message a worker took and never acknowledged (its worker died) returns to its
    # queue after visibility_timeout; nothing holds a message longer (no long countdowns:
    # the session gap is waited for by the catch-up, not by a delayed message).
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "socket_timeout": 2,
        "socket_connect_timeout": 2,
        "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "300")),
    }
    CELERY_REDIS_SOCKET_TIMEOUT = 2
    CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = 2
    CELERY_BROKER_CONNECTION_TIMEOUT = 2
    CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"retry_policy": {"max_retries": 1}}
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
        }
    }
else:
    # Embedded default: a broker kept in files, so one worker process runs with no server.
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_DATA_DIR / "queue"),
        "data_folder_out": str(CELERY_DATA_DIR / "queue"),
        "processed_folder": str(CELERY_DATA_DIR / "processed"),
        "store_processed": False,
        "control_folder": str(CELERY_DATA_DIR / "control"),
    }
    CELERY_RESULT_BACKEND = f"file://{CELERY_DATA_DIR / 'results'}"
    for _sub in ("queue", "processed", "results", "control"):
        (CELERY_DATA_DIR / _sub).mkdir(parents=True, exist_ok=True)
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
# Results live in the database (ScoreRun, AgreementReport); a task that returns something a
# caller waits for says so itself. Without result subscriptions, queuing never waits on Redis.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = TIME_ZONE
# Scoring runs and agreement reports (the heavy numeric work) go to the "scoring" queue,
# served by a worker of their own under a CPU quota (platform/systemd); everything else
# stays on the default queue ("celery").
CELERY_TASK_ROUTES = {
    "bws.score_run": {"queue": "scoring"},
    "bws.design_batch": {"queue": "scoring"},  # fits the answers, then designs a batch
    "agreement.compute_report": {"queue": "scoring"},
}
# The catch-up: starts scoring once a session has ended, retries what the broker lost.
SCORING_CHECK_INTERVAL = float(os.environ.get("SCORING_CHECK_INTERVAL", "5"))
CELERY_BEAT_SCHEDULE = {
    "catch-up-scoring": {
        "task": "bws.catch_up",
        "schedule": SCORING_CHECK_INTERVAL,
        "options": {"expires": 4 * SCORING_CHECK_INTERVAL},
    },
}
CELERY_BEAT_SCHEDULE_FILENAME = str(BASE_DIR / "var" / "celerybeat-schedule")
# An annotation session ends when a project has had no answer for this many seconds.
SCORING_SESSION_GAP = float(os.environ.get("SCORING_SESSION_GAP", "20"))
# While answers keep coming (no gap), a run starts at most this many seconds after the
# oldest answer no run has read; a gap or a logout may start one sooner.
SCORING_MAX_STALENESS = float(os.environ.get("SCORING_MAX_STALENESS", "60"))
# Runs of one lab sent to the scoring queue at a time; the lab's other runs wait in the
# database, so another lab's run never queues behind a lab's backlog.
SCORING_LAB_SLOTS = int(os.environ.get("SCORING_LAB_SLOTS", "1"))
# Runs a project's managers may ask for per hour (beyond it: 429 with Retry-After); asking
# while the scheme has a run queued returns that run and counts nothing.
SCORING_MANUAL_RUNS_PER_HOUR = int(os.environ.get("SCORING_MANUAL_RUNS_PER_HOUR", "30"))
# Agreement reports a project's managers may have recomputed per hour (in the request: beyond
# it 429 with Retry-After).
AGREEMENT_MANUAL_RUNS_PER_HOUR = int(os.environ.get("AGREEMENT_MANUAL_RUNS_PER_HOUR", "30"))
# A run queued this long ago without starting is sent again (once per period).
SCORING_SCHEDULE_STALE = float(os.environ.get("SCORING_SCHEDULE_STALE", "120"))
# A run a worker started and lost (the worker died) is queued again when a worker starts,
# or by the catch-up once it has been "running" this long (the hard time limit + 60 s, set
# below); after SCORING_RUN_ATTEMPTS starts it is marked failed.
SCORING_RUN_ATTEMPTS = int(os.environ.get("SCORING_RUN_ATTEMPTS", "3"))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "labs.token_auth.TokenAuthentication",  # knox, one query less per call
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "projects.pagination.Pages",
    "PAGE_SIZE": 100,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # Every 4xx answers {"detail": ..., "errors": {field: [...]}} (projects/api_errors.py).
    "EXCEPTION_HANDLER": "projects.api_errors.api_exception_handler",
    # JSON bodies are checked for depth before parsing (projects/parsers.py).
    "DEFAULT_PARSER_CLASSES": [
        "projects.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Annolab API",
    "DESCRIPTION": "Projects, annotation queue, BWS scores and agreement reports. "
    "Version 1: every path starts with /api/v1/. Log in with POST /api/v1/auth/token/ and "
    "send the token as `Authorization: Token <token>`. Lists come in pages (`?page=`, "
    "`?page_size=` up to 1000). Every refusal (4xx) is a JSON object with `detail`, a "
    "sentence, and, when fields were refused, `errors`: the messages per field.",
    # Empty: the docs page would print it after the title; the paths carry the version.
    "VERSION": "",
    # Operations grouped under these headings, in this order (tags= on the API views).
    "TAGS": [
        {"name": "Auth", "description": "API tokens: log in, list and revoke them."},
        {"name": "Projects", "description": "Projects you may see, with role and progress."},
        {"name": "Queue", "description": "Reserve the next unit to annotate."},
        {"name": "Answers", "description": "Submit answers and list them."},
        {"name": "Scores", "description": "Best-worst scores of a scheme; re-scoring."},
        {"name": "Runs", "description": "Scoring runs, to poll until they finish."},
        {"name": "Agreement", "description": "Inter-annotator agreement reports."},
        {"name": "Labs", "description": "Labs, their admins and members."},
        {"name": "Members", "description": "A project's members and their roles."},
        {"name": "Items", "description": "A project's items and best-worst tuples."},
        {"name": "Export", "description": "A project's answers as a JSON Lines, CSV or TSV file."},
        {"name": "Quality", "description": "Annotator quality; leaving annotators out."},
        {"name": "Participants", "description": "A project's participant link and participants."},
    ],
    "SERVE_INCLUDE_SCHEMA": False,
    # The docs pages' scripts come from the sidecar package, served by the site itself.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Samples open to the fields of a page's results, not folded to [{…}].
    "REDOC_UI_SETTINGS": {"jsonSampleExpandLevel": 4},
}

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
if env_bool("SECURE_COOKIES", False):
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True

# --- Trust boundaries: limits on what users control (platform/DEPLOY.md, "Limits") ---
# Answers, on every submit path (projects/validation.py), and API request bodies
# (projects/parsers.py).
ANSWER_MAX_TEXT_LENGTH = int(os.environ.get("ANSWER_MAX_TEXT_LENGTH", "10000"))
ANSWER_MAX_OBJECTS = int(os.environ.get("ANSWER_MAX_OBJECTS", "1000"))
ANSWER_MAX_DEPTH = int(os.environ.get("ANSWER_MAX_DEPTH", "20"))
ANSWER_MAX_BYTES = int(os.environ.get("ANSWER_MAX_BYTES", str(1024 * 1024)))
REQUEST_MAX_JSON_DEPTH = int(os.environ.get("REQUEST_MAX_JSON_DEPTH", "32"))
REQUEST_MAX_JSON_BYTES = int(os.environ.get("REQUEST_MAX_JSON_BYTES", str(4 * 1024 * 1024)))
# Project configs and data files (projects/configuration/, projects/limits.py), checked
# at import before anything is allocated or stored. Defaults suit one 2-core, 24 GiB host.
CONFIG_MAX_BYTES = int(os.environ.get("CONFIG_MAX_BYTES", str(256 * 1024)))
CONFIG_MAX_YAML_NODES = int(os.environ.get("CONFIG_MAX_YAML_NODES", "20000"))
PROJECT_MAX_ITEMS = int(os.environ.get("PROJECT_MAX_ITEMS", "100000"))
# Tuples (and queue units) a design may hold: a web upload builds them within the request,
# about 40 s for 200,000 on this host (benchmarks/RESULTS.md, "Limits"; GUNICORN_TIMEOUT).
PROJECT_MAX_TUPLES = int(os.environ.get("PROJECT_MAX_TUPLES", "250000"))
DESIGN_MAX_APPEARANCES = int(os.environ.get("DESIGN_MAX_APPEARANCES", "100"))
DESIGN_MAX_MEMORY_MB = int(os.environ.get("DESIGN_MAX_MEMORY_MB", "1024"))
SCORING_MAX_BOOTSTRAP_ITERATIONS = int(os.environ.get("SCORING_MAX_BOOTSTRAP_ITERATIONS", "5000"))
SCORING_MAX_MEMORY_MB = int(os.environ.get("SCORING_MAX_MEMORY_MB", "4096"))
LIKERT_MAX_SIZE = int(os.environ.get("LIKERT_MAX_SIZE", "101"))
QUEUE_MAX_LEASE_MINUTES = int(os.environ.get("QUEUE_MAX_LEASE_MINUTES", "10080"))
UPLOAD_MAX_FILE_MB = int(os.environ.get("UPLOAD_MAX_FILE_MB", "50"))
UPLOAD_MAX_TOTAL_MB = int(os.environ.get("UPLOAD_MAX_TOTAL_MB", "100"))
# Media files (audio, video, point clouds) a config names by relative path, copied into the
# project's folder at import (projects/media.py); each point cloud is decoded there once.
PROJECT_MEDIA_MAX_FILE_MB = int(os.environ.get("PROJECT_MEDIA_MAX_FILE_MB", "200"))
PROJECT_MEDIA_MAX_TOTAL_MB = int(os.environ.get("PROJECT_MEDIA_MAX_TOTAL_MB", "2048"))
PROJECT_MEDIA_MAX_FILES = int(os.environ.get("PROJECT_MEDIA_MAX_FILES", "10000"))
# Points kept for the viewer when a cloud is decoded at import; larger clouds are evenly
# thinned (a change applies to clouds decoded later: `manage.py prepare_points --again`).
POINT_CLOUD_MAX_POINTS = int(os.environ.get("POINT_CLOUD_MAX_POINTS", "300000"))
# Django's own: non-file request data read into memory, file parts kept in memory before
# they spill to a temporary file, and files per request.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("REQUEST_MAX_FORM_BYTES", str(5 * 1024 * 1024)))
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FILES = int(os.environ.get("UPLOAD_MAX_FILES", "50"))
# Every multipart upload stops at UPLOAD_MAX_FILE_MB per file and UPLOAD_MAX_TOTAL_MB in all.
FILE_UPLOAD_HANDLERS = [
    "projects.uploads.LimitedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
# Background tasks: a soft limit (the task marks its run failed and stops), then a hard one
# (the worker process is killed and replaced).
CELERY_TASK_SOFT_TIME_LIMIT = int(os.environ.get("CELERY_TASK_SOFT_TIME_LIMIT", "1800"))
CELERY_TASK_TIME_LIMIT = int(os.environ.get("CELERY_TASK_TIME_LIMIT", "1860"))
SCORING_RUN_TIMEOUT = float(os.environ.get("SCORING_RUN_TIMEOUT", str(CELERY_TASK_TIME_LIMIT + 60)))

# --- Trust boundaries: login protection (platform/DEPLOY.md, "Login protection") ---
# Every login path (web, admin, API token) goes through django.contrib.auth.authenticate,
# where django-axes refuses locked-out attempts. Its counters live in the database, so
# every process shares them and logins work while Redis is down.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Proxies in front of the site that append the address they saw to X-Forwarded-For.
# 0: the header is ignored and the client is the connection's address (REMOTE_ADDR).
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "0"))
# Failed logins per account (from any address), and per address (over any accounts),
# counted until LOGIN_COOLOFF_MINUTES pass without a new failure.
LOGIN_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "10"))
LOGIN_ADDRESS_FAILURE_LIMIT = int(os.environ.get("LOGIN_ADDRESS_FAILURE_LIMIT", "50"))
LOGIN_COOLOFF_MINUTES = int(os.environ.get("LOGIN_COOLOFF_MINUTES", "15"))
AXES_HANDLER = "labs.login_protection.LoginFailureHandler"
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_FAILURE_LIMIT = "labs.login_protection.account_failure_limit"
AXES_COOLOFF_TIME = "labs.login_protection.cool_off"
AXES_CLIENT_IP_CALLABLE = "labs.login_protection.client_address"
AXES_LOCKOUT_CALLABLE = "labs.login_protection.lockout_response"
# Attempts refused during a lockout are not counted: they neither extend the lock nor
# push the address towards its limit (so one locked account does not lock its neighbours).
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# A success must not clear the address's failures (a sprayer would log in to an account
# of their own between guesses).
AXES_RESET_ON_SUCCESS = False
AXES_VERBOSE = False
# Password-reset e-mails per address and per e-mail address within the window.
PASSWORD_RESET_ADDRESS_LIMIT = int(os.environ.get("PASSWORD_RESET_ADDRESS_LIMIT", "10"))
PASSWORD_RESET_EMAIL_LIMIT = int(os.environ.get("PASSWORD_RESET_EMAIL_LIMIT", "3"))
PASSWORD_RESET_WINDOW_MINUTES = int(os.environ.get("PASSWORD_RESET_WINDOW_MINUTES", "60"))
# New participants one client address may make through the participant links
# (crowds/entry_rate.py): a count per window, e.g. "30/10m"; "0/1m" turns it off.
PARTICIPANT_ENTRY_RATE = os.environ.get("PARTICIPANT_ENTRY_RATE", "30/10m")
# How long an invite link (projects/invites.py) lets the invited person set a password.
INVITE_TIMEOUT_DAYS = int(os.environ.get("INVITE_TIMEOUT_DAYS", "7"))
# API tokens (django-rest-knox): sent as `Authorization: Token <key>`, stored hashed,
# valid for API_TOKEN_TTL_HOURS; their owner lists and revokes them.
API_TOKEN_TTL_HOURS = float(os.environ.get("API_TOKEN_TTL_HOURS", "720"))
API_TOKENS_PER_USER = int(os.environ.get("API_TOKENS_PER_USER", "100"))
REST_KNOX = {
    "TOKEN_TTL": timedelta(hours=API_TOKEN_TTL_HOURS),
    "AUTH_HEADER_PREFIX": "Token",
}

# --- Trust boundaries: production settings (platform/DEPLOY.md, "Production settings") ---
# platform/annolab.env.example is the production environment: under it
# `manage.py check --deploy --fail-level WARNING` is clean (.ci/run checks that).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# Behind a TLS-terminating proxy: the header it sets to "https" (and removes from what
# clients send), e.g. X-Forwarded-Proto. Then request.is_secure() holds and links such as
# password-reset links are https. Unset: no header is trusted.
if os.environ.get("SECURE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = (
        "HTTP_" + os.environ["SECURE_PROXY_SSL_HEADER"].strip().upper().replace("-", "_"),
        "https",
    )
# Content-Security-Policy on every response (django-csp): scripts and styles only from the
# site's own static files, no inline script or style. Media (video of segment schemes) may
# come from any https host a project's data names; it cannot run code.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "media-src": [SELF, "https:"],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
# The browsable API only while debugging: in production the API speaks JSON.
if not DEBUG:
    REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"] = ["rest_framework.renderers.JSONRenderer"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # Failed logins and lockouts are warnings; axes' per-request housekeeping is not news.
    "loggers": {"axes": {"level": "WARNING"}},
}
