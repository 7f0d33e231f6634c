"""Settings, read from environment variables (django-environ) and from `.env` in the project folder.

Development defaults are safe and self-contained: SQLite in the project folder,
Celery tasks run in-process. `make install` and `make run` write a git-ignored `.env` with a
generated SECRET_KEY and DEBUG=1 when there is none, so every README command works as written.
With DEBUG off the settings fail closed: a missing SECRET_KEY or ALLOWED_HOSTS stops start-up
instead of running insecurely, and serving without collected static files stops start-up too
(config/checks.py).
"""
import sys
import tempfile
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env(
    DEBUG=(bool, False),
    ALLOWED_HOSTS=(list, []),
    CELERY_BROKER_URL=(str, ""),
    HIT_TIMEOUT_MINUTES=(int, 60),
)
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env("DEBUG")
_DEV_SECRET = "dev-only-insecure-secret-key-change-me"
SECRET_KEY = env("SECRET_KEY", default=_DEV_SECRET if DEBUG else None)
if not SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
ALLOWED_HOSTS = env("ALLOWED_HOSTS") or (["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is off.")
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "config.apps.ProjectConfig",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "annotation",
    "evaluation",
    "prolific",
]

# The result families (evaluation/families/), as dotted paths to each family object, in the order pages and
# choices list them: a deployment adds a family from another installed package here (docs/architecture.md).
MTEVAL_RESULT_FAMILIES = [
    "evaluation.families.ranking.FAMILY",
    "evaluation.families.acceptance.FAMILY",
    "evaluation.families.direct_assessment.FAMILY",
    "evaluation.families.error_spans.FAMILY",
    "evaluation.families.pairwise.FAMILY",
    "evaluation.families.post_edit.FAMILY",
    "evaluation.families.reading_comprehension.FAMILY",
    "evaluation.families.reference_translation.FAMILY",
]

#: The annotation protocols, as dotted paths to a protocol object or a list of them (config/registry.py;
#: docs/architecture.md). The order is the order of the protocol choices; a deployment appends its own.
MTEVAL_PROTOCOLS = [
    "annotation.protocols.direct_assessment.PROTOCOLS",
    "annotation.protocols.error_spans.PROTOCOLS",
    "annotation.protocols.pairwise.PROTOCOLS",
    "annotation.protocols.ranking.PROTOCOLS",
    "annotation.protocols.post_edit.PROTOCOLS",
    "annotation.protocols.reading_comprehension.PROTOCOLS",
    "annotation.protocols.reference_translation.PROTOCOLS",
]

MIDDLEWARE = [
    "config.request_limits.LimitRequestBody",
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.AnnotatorFastPath",  # /api/hit/: only what the annotator API needs (see its docstring)
    "csp.middleware.CSPMiddleware",
    "config.middleware.RejectUnstorableText",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "OPTIONS": {
            # as APP_DIRS, then the screens inside protocol packages (annotation/views/screen_files.py) and the
            # results sections inside result-family packages (evaluation/views/family_files.py)
            "loaders": [("django.template.loaders.cached.Loader", [
                "django.template.loaders.filesystem.Loader",
                "django.template.loaders.app_directories.Loader",
                "annotation.views.screen_files.ProtocolTemplateLoader",
                "evaluation.views.family_files.FamilyTemplateLoader",
            ])],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
# Persistent connections: `runserver` serves every request on a new thread, and each thread opens
# its own connection; kept for 60 s they pile up on PostgreSQL (they close only when the garbage
# collector gets to the finished threads) until "too many clients already". Every other process
# here (gunicorn's workers, one thread each by config/gunicorn.conf.py; Celery; management commands)
# is one thread reusing one connection, where keeping it pays: a connection costs a round trip or
# more and judging_sql prepares its statements once per connection. So the default is 0 under
# runserver and 60 elsewhere; an explicit CONN_MAX_AGE always wins (docker-compose.yml sets 60). We
# detect the command rather than default to 0 everywhere so that a deployment that starts gunicorn
# without docker-compose keeps its persistent connections. `manage.py runserver`, `django-admin
# runserver` and `python -m django runserver` (and the autoreloader's child process) all have
# "runserver" as their first argument.
_RUNSERVER = sys.argv[1:2] == ["runserver"]
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=0 if _RUNSERVER else 60)
# A kept connection that died (PostgreSQL restarted, a proxy's idle timeout) is found by one cheap
# round trip at its first use in a request and replaced, instead of failing that request with a 500.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = env.bool("CONN_HEALTH_CHECKS", default=True)
# PostgreSQL's check asks the socket first and the server only when something waits there (config/postgres/base.py).
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["ENGINE"] = "config.postgres"
# A Celery worker's statistics read whole campaigns, and PostgreSQL would spread such a read over
# parallel processes of its own, outside the worker's CPU share (docker-compose `cpu_shares`, a
# cgroup, nice): on a small host, every core taken from the annotators for that moment. So the
# worker's connections read in their one backend unless WORKER_DB_PARALLEL_WORKERS says otherwise
# (benchmarks/README.md, "Session 11": beside a 1,000,000-judgment recompute, p99 10 s -> 1 s).
_CELERY_WORKER = "celery" in (Path(sys.argv[0]).name, Path(sys.argv[0]).parent.name) and "worker" in sys.argv[1:]
if _CELERY_WORKER and DATABASES["default"]["ENGINE"] == "config.postgres":
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _parallel = f"-c max_parallel_workers_per_gather={env.int('WORKER_DB_PARALLEL_WORKERS', default=0)}"
    _options["options"] = f"{_options.get('options', '')} {_parallel}".strip()
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Wait for a writer instead of failing at once when annotators submit together.
    # and take the write lock at BEGIN, so that two submissions to one HIT run one after the other.
    DATABASES["default"].setdefault("OPTIONS", {}).update(timeout=30, transaction_mode="IMMEDIATE")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "annotation.views.screen_files.ProtocolStaticFinder",  # the screens' scripts inside the protocol packages
]
# `collectstatic` writes here; with DEBUG off the pages name the hashed files listed in its
# staticfiles.json, and start-up stops with a message when it is missing (config/checks.py).
STATIC_ROOT = Path(env("STATIC_ROOT", default=str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = DEBUG

# Campaign media (docs/api.md §2.1, §8.5): the "media" storage, the file system under MEDIA_ROOT unless
# MEDIA_STORAGE=s3 (django-storages; boto3 must then be installed), and how the files reach the annotator.
MEDIA_ROOT = Path(env("MEDIA_ROOT", default=str(BASE_DIR / "media")))
MEDIA_STORAGE = env("MEDIA_STORAGE", default="filesystem")
STORAGES["media"] = {"BACKEND": "django.core.files.storage.FileSystemStorage",
                     "OPTIONS": {"location": str(MEDIA_ROOT), "base_url": None}}
if MEDIA_STORAGE == "s3":
    STORAGES["media"] = {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {
        "bucket_name": env("MEDIA_S3_BUCKET"), "endpoint_url": env("MEDIA_S3_ENDPOINT_URL", default=None),
        "region_name": env("MEDIA_S3_REGION", default=None), "default_acl": "private", "querystring_auth": True,
        "querystring_expire": env.int("MEDIA_SIGNED_URL_SECONDS", default=300), "file_overwrite": False}}
#: django (the view sends the file, with Range: development), x-accel-redirect (nginx), x-sendfile (Apache,
#: lighttpd) or signed-url (a redirect to the storage's short-lived signed URL, for S3).
MEDIA_SERVE = env("MEDIA_SERVE", default="django")
MEDIA_ACCEL_PREFIX = env("MEDIA_ACCEL_PREFIX", default="/protected-media/")
MEDIA_MAX_FILE_BYTES = env.int("MEDIA_MAX_FILE_BYTES", default=50 * 1024 * 1024)
MEDIA_MAX_BUNDLE_BYTES = env.int("MEDIA_MAX_BUNDLE_BYTES", default=500 * 1024 * 1024)
MEDIA_MAX_BUNDLE_ENTRIES = env.int("MEDIA_MAX_BUNDLE_ENTRIES", default=5000)
MEDIA_MAX_COMPRESSION_RATIO = env.int("MEDIA_MAX_COMPRESSION_RATIO", default=100)
MEDIA_FETCH_TIMEOUT = env.float("MEDIA_FETCH_TIMEOUT", default=20.0)
#: Remote media are fetched from public addresses only; networks listed here (CIDR) are allowed besides.
MEDIA_FETCH_ALLOWED_NETWORKS = env.list("MEDIA_FETCH_ALLOWED_NETWORKS", default=[])

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/annotate/"

if not DEBUG:
    # Production is served over HTTPS (behind a proxy that sets X-Forwarded-Proto); `manage.py check --deploy`
    # passes with these defaults. Each can be turned off through the environment, e.g. to try a build over HTTP.
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)

# Content-Security-Policy (django-csp): scripts and styles only from this site; inline style attributes are
# allowed (server-drawn charts and tables colour cells with them), inline scripts are not.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'", "https:"],
    },
}

# Uploads: form data up to 50 MB; files above 2.5 MB stream to a temporary file instead of memory. Files above
# IMPORT_INLINE_MAX_BYTES are imported by a background job from IMPORT_UPLOAD_DIR, which web and workers share.
DATA_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024
# Request bodies above these are refused with 413 before anything reads them (config/request_limits.py): imports'
# files may be a 500 MB media bundle (plus their form fields), every other request a little.
REQUEST_MAX_BYTES = env.int("REQUEST_MAX_BYTES", default=2_621_440)
# A media bundle (docs/api.md §2.1) may be as large as MEDIA_MAX_BUNDLE_BYTES (zipped media hardly shrink).
IMPORT_REQUEST_MAX_BYTES = env.int("IMPORT_REQUEST_MAX_BYTES", default=501 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
IMPORT_INLINE_MAX_BYTES = env.int("IMPORT_INLINE_MAX_BYTES", default=2 * 1024 * 1024)
IMPORT_UPLOAD_DIR = env("IMPORT_UPLOAD_DIR", default=str(Path(tempfile.gettempdir()) / "mteval-imports"))

REST_FRAMEWORK = {
    # Session first: an unauthenticated or annotator request is answered 403, as docs/api.md says.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["annotation.permissions.IsResearcher"],
    "DEFAULT_SCHEMA_CLASS": "annotation.api.schema.ResearcherSchema",
    "DEFAULT_FILTER_BACKENDS": ["annotation.api.filters.StrictFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    # `format=csv|json` on the export is ours, not DRF's renderer switch.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "MT human evaluation: researcher API",
    "DESCRIPTION": "Campaigns, judgments and results. Token authentication: `Authorization: Token <key>`.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema is public (docs/api.md §6.1): it describes the endpoints, never a campaign's data.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    # Request bodies get their own components: an upload is `format: binary` there, not a URL.
    "COMPONENT_SPLIT_REQUEST": True,
    # The family result names as an enum, from the registries at generation time (evaluation/views/schema_hooks.py).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "evaluation.views.schema_hooks.family_endpoint_names"],
}

# Celery: with no broker configured, tasks run in-process (the newcomer's default).
CELERY_BROKER_URL = env("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", default=CELERY_BROKER_URL or None)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

CELERY_TASK_REJECT_ON_WORKER_LOST = True

# A hung Redis must not hold requests (docs/api.md): each Redis call gives up after REDIS_TIMEOUT_SECONDS, publishing
# retries once, and a web process that saw Redis fail skips it for REDIS_FAIL_FAST_SECONDS (config/redis_guard.py).
REDIS_TIMEOUT_SECONDS = env.float("REDIS_TIMEOUT_SECONDS", default=0.5)
REDIS_FAIL_FAST_SECONDS = env.float("REDIS_FAIL_FAST_SECONDS", default=5.0)
_ONE_RETRY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}
# How long a delivered message may stay unacknowledged before Redis hands it to a worker again (kombu's default is an
# hour): a run lost with a killed worker comes back by itself after this, even where no worker reconnects to catch
# up. It must exceed the longest task plus its countdown, or a run still running is delivered twice: 600 s is about
# 7x the longest measured (a 1,000,000-row import, ~90 s; a results run at WMT scale takes 5-40 s, benchmarks/).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=600),
    "socket_timeout": REDIS_TIMEOUT_SECONDS,
    "socket_connect_timeout": REDIS_TIMEOUT_SECONDS,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2 * REDIS_TIMEOUT_SECONDS
CELERY_TASK_PUBLISH_RETRY_POLICY = _ONE_RETRY
CELERY_REDIS_SOCKET_TIMEOUT = CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = REDIS_TIMEOUT_SECONDS
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"retry_policy": _ONE_RETRY}

# Results: recomputed on their own after new judgments, at most one run per campaign in flight.
RESULTS_AUTO_RECOMPUTE = env.bool("RESULTS_AUTO_RECOMPUTE", default=True)
# Bradley–Terry leaderboards (docs/methods.md §8.8): tie model (davidson or rao-kupper), bootstrap resamples (LMSYS
# publishes 1,000) and resamples per Celery subtask; a campaign's options bradley_terry_ties/_runs override.
BRADLEY_TERRY_TIES = env("BRADLEY_TERRY_TIES", default="davidson")
BRADLEY_TERRY_RUNS = env.int("BRADLEY_TERRY_RUNS", default=1000)
BRADLEY_TERRY_RUNS_PER_TASK = env.int("BRADLEY_TERRY_RUNS_PER_TASK", default=100)
RESULTS_DEBOUNCE_SECONDS = env.int("RESULTS_DEBOUNCE_SECONDS", default=10)
# Ranking stability's bootstrap after every results run (evaluation/stability_tasks.py). Unset: on where results
# recompute by themselves and a broker's workers run it at low priority; off in-process (no broker), where it would
# run in the web processes beside the annotators (the results page's button still runs it).
STABILITY_AFTER_RESULTS = env.bool("STABILITY_AFTER_RESULTS", default=None)

# The cache holds the debounce flags, so it must be shared by web and worker processes: Redis
# when a Redis broker is configured, else in-process memory (the single-process default).
if CELERY_BROKER_URL.startswith("redis"):
    CACHES = {"default": {"BACKEND": "config.cache.ReusingRedisCache",
                          "LOCATION": env("CACHE_URL", default=CELERY_BROKER_URL),
                          "OPTIONS": {"socket_timeout": REDIS_TIMEOUT_SECONDS,
                                      "socket_connect_timeout": REDIS_TIMEOUT_SECONDS}}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
CACHES["default"]["KEY_PREFIX"] = env("CACHE_KEY_PREFIX", default="")

# Crowd entry (/c/<slug>/start/, docs/api.md §8.1). Rate limits per client address (IPv6: per /64) and per
# campaign, "<count>/<s|m|h|d>" (e.g. 30/m, 100/5m); a blank value turns one off. They are counted by
# django-ratelimit in the default cache: Redis when configured (above), so they hold across gunicorn workers and
# hosts; in-process memory counts per process. A cache that cannot be reached limits nothing (fail open).
_RATE = r"^\d+/\d*[smhd]$"


def _crowd_setting(name: str, default: str, pattern: str) -> str | None:
    import re

    value = env.str(name, default=default).strip()
    if value and not re.match(pattern, value):
        raise ImproperlyConfigured(f"{name} must be blank (off) or match {pattern}, not {value!r}.")
    return value or None


CROWD_ENTRY_RATE_PER_IP = _crowd_setting("CROWD_ENTRY_RATE_PER_IP", "30/m", _RATE)
CROWD_ENTRY_RATE_PER_CAMPAIGN = _crowd_setting("CROWD_ENTRY_RATE_PER_CAMPAIGN", "600/m", _RATE)
# At most this many open (active, not idle) HITs of one campaign are handed to one client address; blank: no cap.
# A lab whose annotators share one address (a NAT) needs it raised or off.
_cap = _crowd_setting("CROWD_MAX_OPEN_HITS_PER_IP", "3", r"^[1-9]\d*$")
CROWD_MAX_OPEN_HITS_PER_IP = int(_cap) if _cap else None
# A crowd worker id is held by the browser it is used in (a cookie): its open HIT, next HITs and completion codes
# go to that browser only, until the id is unused for the campaign's idle timeout (docs/api.md §8.1).
CROWD_BIND_BROWSER = env.bool("CROWD_BIND_BROWSER", default=True)
# The client address is REMOTE_ADDR; behind N proxies that each append to X-Forwarded-For, set N: the address
# the outermost proxy saw is used (the N-th from the right), never a hop the client could have written.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
RATELIMIT_USE_CACHE = "default"
RATELIMIT_FAIL_OPEN = True

# Prolific (prolific/, docs/api.md "Prolific"): the REST API's base URL (tests point it at a local fake server), the
# key that encrypts researchers' API tokens at rest (a Fernet key; derived from SECRET_KEY when blank, so rotating
# SECRET_KEY means setting the tokens again), timeouts and retries of each call, and the payment floor.
PROLIFIC_API_BASE_URL = env("PROLIFIC_API_BASE_URL", default="https://api.prolific.com/api/v1/")
PROLIFIC_TOKEN_KEY = env("PROLIFIC_TOKEN_KEY", default="")
PROLIFIC_TIMEOUT_SECONDS = env.float("PROLIFIC_TIMEOUT_SECONDS", default=20.0)
PROLIFIC_ATTEMPTS = env.int("PROLIFIC_ATTEMPTS", default=5)
PROLIFIC_BACKOFF_SECONDS = env.float("PROLIFIC_BACKOFF_SECONDS", default=1.0)
PROLIFIC_MAX_WAIT_SECONDS = env.float("PROLIFIC_MAX_WAIT_SECONDS", default=60.0)
PROLIFIC_RETRY_LATER_SECONDS = env.float("PROLIFIC_RETRY_LATER_SECONDS", default=300.0)
# Prolific's minimum and recommended rewards per hour, in the minor unit of the study's currency (pence or cents).
PROLIFIC_MIN_HOURLY_REWARD = env.int("PROLIFIC_MIN_HOURLY_REWARD", default=600)
PROLIFIC_RECOMMENDED_HOURLY_REWARD = env.int("PROLIFIC_RECOMMENDED_HOURLY_REWARD", default=900)
# Seconds per item assumed before a campaign has any finished HIT (its median then replaces the estimate).
PROLIFIC_SECONDS_PER_ITEM_ESTIMATE = env.float("PROLIFIC_SECONDS_PER_ITEM_ESTIMATE", default=20.0)

# Annotation defaults.
HIT_TIMEOUT_MINUTES = env("HIT_TIMEOUT_MINUTES")
# Words that fixed routes use where a campaign slug also goes (/results/compare/), never given to a campaign.
RESERVED_CAMPAIGN_SLUGS = ("compare", "study")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="WARNING")},
}
