"""Settings, one module, configured from the environment (see README: Configuração)."""

import datetime
import os
from pathlib import Path
from urllib.parse import quote, urlsplit

import dj_database_url
from csp.constants import NONCE

from config.log_format import env_bool, log_format

BASE_DIR = Path(__file__).resolve().parent.parent


DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise RuntimeError("DJANGO_SECRET_KEY é obrigatória com DJANGO_DEBUG=false")
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",")
    if h.strip()
]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]

INSTALLED_APPS = [
    # The admin, scoped to the user's municipalities (jurisdiction.admin_site).
    "jurisdiction.apps.ScopedAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.gis",
    "rest_framework",
    "rest_framework.authtoken",
    "rest_framework_gis",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "leaflet",
    "config.apps.AxesConfig",  # django-axes, named in Portuguese
    "csp",
    "audit",
    "pev_network",
    "jurisdiction",
    "ctr",
    "generators",
    "fiscalization",
    "maps",
    "nucleo",
    "webhooks",
    # The periodic jobs, their runs and the worker/scheduler processes (docs/operations.md).
    "jobs",
    "ogc",
    "synthetic",
    "demo",
    "tour",
]

MIDDLEWARE = [
    # Outermost: pages and JSON gzip-compressed on the way out (config/middleware.py).
    "config.middleware.CompressedTextMiddleware",
    # Then: the request id (X-Request-ID), the access log line and the HTTP metrics of every
    # request, whatever answers it below (config/logs.py).
    "config.logs.RequestObservationMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files served by the app itself (gunicorn in production, README: Produção).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Content-Security-Policy on every HTML page, with a per-request nonce (docs/security.md).
    "config.security.CSPMiddleware",
    "config.middleware.DatabaseGuardMiddleware",
    # The primary's WAL position after a write, for read-your-writes (only with a replica).
    "config.replica.ReadYourWritesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # 429 on the public endpoints (token, nearest, verification, follow-up): CTR_RATE_LIMITS.
    "config.security.PublicRateLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # A domain error escaping a page's view: a message on the page the user acted from.
    "config.middleware.DomainErrorMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Every 404 in Portuguese, with DEBUG on too (Django's technical page is in English).
    "config.middleware.PortugueseNotFoundMiddleware",
    # Last, as django-axes asks: turns a locked-out login into its 429 page.
    "axes.middleware.AxesMiddleware",
]

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
                "jurisdiction.context_processors.jurisdiction",
                "nucleo.context_processors.waiting",
            ],
        },
    },
]


def local_cluster_url(base_dir: Path, environ=os.environ) -> str:
    """The URL of this checkout's own PostgreSQL cluster, built as `scripts/localdb.sh url`
    builds it: port CTR_PG_PORT, else the one its last start used (.local/pg-port, so that
    after `make run CTR_PG_PORT=54341` a plain `manage.py …` reaches that cluster and not
    another checkout's on 54329), else 54329; database CTR_PG_DB (ctr), user postgres, and the
    password that localdb.sh wrote in .local/pg-password (always there, even when the cluster's
    data lives under /var/tmp). So `.venv/bin/python manage.py …` works without DATABASE_URL
    once `make run`, `make test` or `scripts/localdb.sh start` has made the cluster."""
    try:
        remembered = (base_dir / ".local" / "pg-port").read_text().strip()
    except OSError:
        remembered = ""
    port = environ.get("CTR_PG_PORT") or remembered or "54329"
    name = environ.get("CTR_PG_DB") or "ctr"
    password_file = base_dir / ".local" / "pg-password"
    try:
        password = password_file.read_text().strip()
    except OSError:
        password = ""  # no cluster yet: the connection error says so
    credentials = f"postgres:{quote(password, safe='')}" if password else "postgres"
    return f"postgis://{credentials}@127.0.0.1:{port}/{name}"


# DATABASE_URL when set (another PostGIS; docker-compose.yml); else the checkout's local cluster.
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", "").strip() or local_cluster_url(BASE_DIR),
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
        # A persistent connection broken by a database restart is replaced, not reused.
        conn_health_checks=True,
        engine="django.contrib.gis.db.backends.postgis",
    )
}
# Parallel test runs (several checkouts or sessions on one cluster) each take their own test DB.
if os.environ.get("CTR_TEST_DB"):
    DATABASES["default"]["TEST"] = {"NAME": os.environ["CTR_TEST_DB"]}

# A streaming read replica for the heavy read-only pages (config/replica.py; docs/operations.md,
# "Réplica de leitura"). Unset: one database, and nothing of the replica is installed.
DATABASE_REPLICA_URL = os.environ.get("DATABASE_REPLICA_URL", "").strip()
# Past this lag (seconds behind the primary), reads go back to the primary.
CTR_REPLICA_MAX_LAG_SECONDS = float(os.environ.get("CTR_REPLICA_MAX_LAG_SECONDS", "30"))
# A replica that failed is left alone this long (seconds) before it is tried again.
CTR_REPLICA_RETRY_SECONDS = float(os.environ.get("CTR_REPLICA_RETRY_SECONDS", "10"))
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = dj_database_url.parse(
        DATABASE_REPLICA_URL,
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
        engine="django.contrib.gis.db.backends.postgis",
    )
    # A replica that is down must not hold a request: a short connection timeout (seconds).
    DATABASES["replica"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", int(os.environ.get("CTR_REPLICA_CONNECT_TIMEOUT", "3"))
    )
    # Tests never get a database of their own for it: the same as the primary's.
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
    DATABASE_ROUTERS = ["config.replica.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# django-axes first: it refuses a locked-out client before any password is checked.
AUTHENTICATION_BACKENDS = [
    "config.security.LockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "pt-br"
LANGUAGES = [("pt-br", "Português (Brasil)")]
# Our own catalogue for third-party apps that ship no pt-BR (django-axes in the admin);
# the .mo is committed next to its .po (`msgfmt -o django.mo django.po` after an edit).
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "America/Sao_Paulo"
USE_I18N = True
USE_TZ = True

# Uploaded files (photos of dumping reports) are private: served only through views that
# check who asks, never by the web server from this folder.
MEDIA_ROOT = Path(os.environ.get("CTR_MEDIA_ROOT", BASE_DIR / "media"))
MEDIA_URL = "/arquivos/"
# Larger bodies are refused before any view runs (photos are checked again, per file).
DATA_UPLOAD_MAX_MEMORY_SIZE = 12 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# Shared by every worker process (rate limits, throttles): a table in PostgreSQL.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "ctr_cache",
    }
}

CSRF_FAILURE_VIEW = "config.views.csrf_failure"

# Each request's queries run under this statement_timeout (config.middleware); 0 = off.
# Management commands and benchmarks are not requests: they have no limit.
CTR_REQUEST_STATEMENT_TIMEOUT_MS = int(os.environ.get("CTR_REQUEST_STATEMENT_TIMEOUT_MS", "15000"))
# Idempotency-Key (ctr/idempotency.py): hours a key and its first response
# are kept, at least 24 (manage.py purge_idempotency_keys deletes older ones). A retry waits
# for a first request still running up to the statement timeout above, then gets a 409.
CTR_IDEMPOTENCY_KEY_HOURS = int(os.environ.get("CTR_IDEMPOTENCY_KEY_HOURS", "24"))
# Parallel workers per query of a request (max_parallel_workers_per_gather); empty keeps the
# server's. 0: see config.middleware.request_session_settings and docs/performance.md (P5).
_parallel = os.environ.get("CTR_REQUEST_PARALLEL_WORKERS", "0").strip()
CTR_REQUEST_PARALLEL_WORKERS = int(_parallel) if _parallel else None

LOGIN_URL = "/entrar/"
LOGIN_REDIRECT_URL = "/painel/"
LOGOUT_REDIRECT_URL = "/"

STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT", BASE_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
# Production (README: Produção): hashed, compressed files from `manage.py collectstatic`,
# served by WhiteNoise. Opt-in, since the manifest needs collectstatic first (tests don't run it).
if not DEBUG and env_bool("DJANGO_STATIC_MANIFEST", False):
    STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {
            "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage",
        },
    }

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # Token first: an anonymous call gets 401 with a WWW-Authenticate header, not 403.
    # Ours refuses a malformed key (a NUL byte, 10,000 characters) before any query.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "config.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # JSON with limits and Portuguese errors (config/parsers.py); forms and multipart (the
    # photos of dumping reports) as DRF reads them.
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # Closed unless an endpoint opens itself (the public network layers do).
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "EXCEPTION_HANDLER": "config.api_errors.problem_exception_handler",
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "CTR — Controle de Transporte de Resíduos",
    "DESCRIPTION": (
        "API pública e de gestão do Controle de Transporte de Resíduos da construção civil e "
        "volumosos, conforme a lei municipal de cada município atendido (o catálogo de regras "
        "cita a Lei 3.978/2007 de Guaratinguetá/SP, o seu modelo): rede licenciada de "
        "recebimento (PEV, ATT, áreas de reciclagem, aterros de RCC), municípios e bacias de "
        "captação."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and ReDoc from our own static files (drf-spectacular-sidecar), not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # One name for the CTR's status wherever it appears (else drf_spectacular.W001 in
    # `check --deploy`: a collision of the enums named "status").
    # 415 on every operation with a body (config.api_errors), after the default enum hook.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.api_errors.document_unsupported_media_type",
        # Idempotency-Key: its header and its 400/409/422.
        "ctr.idempotency.document_idempotency_key",
    ],
    "ENUM_NAME_OVERRIDES": {
        "CTRStatusEnum": "ctr.models.CTRStatus",
        "ProcessingKindEnum": "ctr.models.ProcessingKind",
    },
}

# Maps: base-map tiles are the only external resource; point this at the municipal tile server
# on intranets. Leaflet and every other asset are served from our static files.
MAP_TILE_URL = os.environ.get("CTR_MAP_TILE_URL", "https://tile.openstreetmap.org/{z}/{x}/{y}.png")
MAP_TILE_ATTRIBUTION = os.environ.get(
    "CTR_MAP_TILE_ATTRIBUTION",
    '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a>',
)
# The municipality the public pages open on (IBGE code).
DEFAULT_MUNICIPALITY_IBGE = os.environ.get("CTR_DEFAULT_MUNICIPALITY", "3518404")

# E-mail (invitations, PGRCC decisions, Habite-se declarations, unconfirmed CTRs): SMTP from
# the environment (README: Configuração). Without CTR_EMAIL_HOST the messages are written to
# the console, so a fresh `make run` sends nothing anywhere.
EMAIL_HOST = os.environ.get("CTR_EMAIL_HOST", "")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = int(os.environ.get("CTR_EMAIL_PORT", "587"))
EMAIL_HOST_USER = os.environ.get("CTR_EMAIL_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("CTR_EMAIL_PASSWORD", "")
EMAIL_USE_TLS = env_bool("CTR_EMAIL_TLS", True)
EMAIL_TIMEOUT = int(os.environ.get("CTR_EMAIL_TIMEOUT", "20"))
DEFAULT_FROM_EMAIL = os.environ.get("CTR_EMAIL_FROM", "CTR Resíduos <nao-responda@localhost>")


def site_url(environ=os.environ) -> str:
    """The address the site is reached at, for links in e-mails (no request to build them
    from): CTR_SITE_URL, else where `make run` serves (HOST and PORT, as scripts/start.sh reads
    them; a wildcard host is reached at 127.0.0.1)."""
    if environ.get("CTR_SITE_URL"):
        return environ["CTR_SITE_URL"].rstrip("/")
    host = environ.get("HOST") or "127.0.0.1"
    if host in ("0.0.0.0", "::", "[::]"):
        host = "127.0.0.1"
    return f"http://{host}:{environ.get('PORT') or '8000'}"


SITE_URL = site_url()

# Webhooks and the e-mails of the outbox (webhooks/; README: Webhooks). A
# request waits at most CTR_WEBHOOKS_TIMEOUT seconds; a failed delivery is retried after
# base × 2^(n-1) seconds, at most the cap, up to CTR_WEBHOOKS_MAX_ATTEMPTS tries. Targets on
# the loopback (and plain http to them) only where CTR_WEBHOOKS_ALLOW_LOOPBACK (development and
# tests); other non-public networks only those listed in CTR_WEBHOOKS_ALLOWED_NETWORKS (CIDR,
# comma-separated: an intranet's receivers).
WEBHOOKS_TIMEOUT_SECONDS = float(os.environ.get("CTR_WEBHOOKS_TIMEOUT", "10"))
WEBHOOKS_MAX_ATTEMPTS = int(os.environ.get("CTR_WEBHOOKS_MAX_ATTEMPTS", "12"))
WEBHOOKS_BACKOFF_BASE_SECONDS = int(os.environ.get("CTR_WEBHOOKS_BACKOFF_BASE", "60"))
WEBHOOKS_BACKOFF_CAP_SECONDS = int(os.environ.get("CTR_WEBHOOKS_BACKOFF_CAP", str(6 * 3600)))
WEBHOOKS_ALLOW_LOOPBACK = env_bool("CTR_WEBHOOKS_ALLOW_LOOPBACK", DEBUG)
WEBHOOKS_ALLOWED_NETWORKS = [
    n.strip() for n in os.environ.get("CTR_WEBHOOKS_ALLOWED_NETWORKS", "").split(",") if n.strip()
]

LEAFLET_CONFIG = {
    "DEFAULT_CENTER": (-22.81, -45.19),
    "DEFAULT_ZOOM": 12,
    "TILES": [("OpenStreetMap", MAP_TILE_URL, {"attribution": MAP_TILE_ATTRIBUTION})],
    "SPATIAL_EXTENT": (-53.2, -25.4, -44.1, -19.7),
    # The admin's geometry widgets: django-leaflet puts Leaflet.draw first in this plugin's
    # scripts; ours follow, Leaflet's controls and Leaflet.draw's toolbars in Portuguese.
    "PLUGINS": {
        "forms": {"js": ["maps/leaflet-pt.js", "maps/leaflet-draw-pt.js"], "auto-include": False}
    },
}

# Debian 12 ships GDAL 3.6, which cannot block file/network access from spatial reference
# strings. We never hand user-supplied SRS text to GDAL through Django: imports read CRSs with
# pyogrio/pyproj and reject anything that is not an EPSG code they resolve.
SILENCED_SYSTEM_CHECKS = ["gis.W001"]

# --- security (docs/security.md) ----------------------------------------------------------

# Logs never carry CPF, CNPJ, e-mail addresses or phone numbers: every record is masked before
# any handler writes it, and the request lines of the development server lose the values of
# their query strings (config/log_privacy.py). Names cannot be recognised by pattern: the code
# never logs them, and request bodies are never logged.
# CTR_LOG_FORMAT: "json" (one JSON object per line, the default with DEBUG off: production)
# or "console" (`make run`). The access lines (`ctr.access`, one per request) and the job runs
# (`ctr.jobs`) carry a request or job id (config/logs.py); both formatters mask.
LOG_FORMAT = log_format()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"personal_data": {"()": "config.log_privacy.MaskPersonalData"}},
    "formatters": {
        "console": {
            "()": "config.logs.ConsoleFormatter",
            "format": "{asctime} {levelname} {name}: {message}",
            "style": "{",
        },
        "json": {"()": "config.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["personal_data"],
            "formatter": "json" if LOG_FORMAT == "json" else "console",
        },
    },
    "root": {"handlers": ["console"], "level": os.environ.get("DJANGO_LOG_LEVEL", "WARNING")},
    # Django's own defaults send these elsewhere (runserver's request lines with their query
    # strings): through the masking handler instead.
    "loggers": {
        "django": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "axes": {"handlers": ["console"], "level": "WARNING", "propagate": False},
        # CTR_ACCESS_LOG=false silences the line per request (the job lines stay).
        "ctr.access": {
            "handlers": ["console"],
            "level": "INFO" if env_bool("CTR_ACCESS_LOG", True) else "WARNING",
            "propagate": False,
        },
        "ctr.jobs": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# --- health, readiness and metrics (docs/operations.md, "Saúde, métricas e logs") ---------------

# /readyz fails when a pending outbox delivery has been due for longer than this.
CTR_READY_OUTBOX_STUCK_MINUTES = int(os.environ.get("CTR_READY_OUTBOX_STUCK_MINUTES", "15"))
# /readyz fails when the worker or the scheduler has not been seen for this long (each beats
# every 10 s: jobs/runner.py).
CTR_READY_PROCESS_SEEN_MINUTES = int(os.environ.get("CTR_READY_PROCESS_SEEN_MINUTES", "5"))
# /metrics: a bearer token (`Authorization: Bearer …`), and/or client networks (CIDR, comma-
# separated) that need none. With neither, /metrics answers 404.
CTR_METRICS_TOKEN = os.environ.get("CTR_METRICS_TOKEN", "").strip()
CTR_METRICS_ALLOWED_NETWORKS = [
    n.strip() for n in os.environ.get("CTR_METRICS_ALLOWED_NETWORKS", "").split(",") if n.strip()
]

# Clickjacking: no page of ours is ever framed (the CSP says frame-ancestors 'none' too).
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
# A signed-in session lasts a working day at most (shared municipal computers).
SESSION_COOKIE_AGE = int(os.environ.get("DJANGO_SESSION_SECONDS", str(10 * 3600)))
SECURE_SSL_REDIRECT = False

if not DEBUG:
    # Behind an HTTPS proxy (nginx, a load balancer) that sets X-Forwarded-Proto; never set it
    # without one, or a client could claim HTTPS on a plain connection.
    if env_bool("DJANGO_SECURE_PROXY_SSL_HEADER", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # HSTS is a promise browsers keep for that long: 0 (off) until HTTPS is known to work on
    # the host, then e.g. 31536000 (a year). `check --deploy` warns while it is 0.
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", "0"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
    # security.W021 (HSTS preload off): the preload list takes whole registrable domains (the
    # prefeitura's, e.g. guaratingueta.sp.gov.br), which is the municipality's IT decision for
    # all its sites, not this app's; DJANGO_HSTS_PRELOAD=true when they make it.
    if not SECURE_HSTS_PRELOAD:
        SILENCED_SYSTEM_CHECKS += ["security.W021"]


def _tile_origin(url: str) -> str | None:
    """The origin of the base-map tiles for the CSP's img-src: `{s}.tile.example.org` becomes
    `*.tile.example.org`; a relative URL is 'self' already."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return None
    host = parts.netloc
    if "{" in host:
        head, _, rest = host.partition(".")
        host = f"*.{rest}" if "{" in head and rest else host
    return f"{parts.scheme}://{host}"


MAP_TILE_ORIGIN = _tile_origin(MAP_TILE_URL)

# Content Security Policy (django-csp 4). Scripts: our own files, and inline scripts only with
# this request's nonce (templates write <script nonce="{{ request.csp_nonce }}">; the map's
# script is one of them). Styles: 'unsafe-inline' as well, because folium's header, Leaflet's
# controls and our templates (the swatches' colours, the document pages) use inline <style> and
# style="" attributes; a style cannot run code, and scripts stay locked. Images: ours, data:
# URIs (Leaflet's and Swagger UI's icons) and the tile server. Nothing may frame our pages.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'", NONCE],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", *([MAP_TILE_ORIGIN] if MAP_TILE_ORIGIN else [])],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        # The transporter's app, its worker and manifest ours only.
        "worker-src": ["'self'"],
        "manifest-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "upgrade-insecure-requests": not DEBUG and SECURE_SSL_REDIRECT,
    },
}

# Login lockout (django-axes): after AXES_FAILURE_LIMIT failed sign-ins of one user name from
# one address, that pair is refused (429, Portuguese page or problem+json) for the cool-off
# time, even with the right password. On /entrar/, /admin/login/ and /api/v1/auth/token/.
# Failures by address alone are bounded by the per-address rate limit of those endpoints, whose
# ceiling is hundreds in 10 minutes (CTR_RATE_LIMITS["login"]): never lock by address alone.
AXES_FAILURE_LIMIT = int(os.environ.get("CTR_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = datetime.timedelta(
    minutes=int(os.environ.get("CTR_LOGIN_COOLOFF_MINUTES", "15"))
)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "config.security.lockout_response"
AXES_USERNAME_FORM_FIELD = "username"
# A user name is at most 150 characters (Django's field); axes stores it in 255: anything
# longer is cut before it reaches the database (a 5,000-character name gave a DataError).
AXES_USERNAME_CALLABLE = "config.security.axes_username"
# Attempts keep the user name and address for the cool-off, not the form data.
AXES_SENSITIVE_PARAMETERS = ["username", "ip_address", "password"]
# The client's address as the rate limits read it (REMOTE_ADDR, or X-Forwarded-For behind
# CTR_TRUSTED_PROXY_COUNT proxies: config/clients.py).
AXES_CLIENT_IP_CALLABLE = "config.security.client_ip"
# Its log lines name the client by a keyed hash of the address, as the rate limits do.
AXES_CLIENT_STR_CALLABLE = "config.security.axes_client_str"
CTR_TRUSTED_PROXY_COUNT = int(os.environ.get("CTR_TRUSTED_PROXY_COUNT", "0"))


def _rate(name: str, default: str) -> str:
    return os.environ.get(f"CTR_RATE_{name.upper()}", default)


# Per-client limits of the public endpoints ("N/period", period in s, m, h or d; several
# windows separated by commas). Over a limit: 429 with Retry-After and a Portuguese message.
# The dumping-report form and API keep their own limits (fiscalization/throttle.py), on the
# same mechanism (config/rate_limits.py: a sliding window per hashed client, in the database
# cache).
CTR_RATE_LIMITS = {
    # POST /api/v1/auth/token/, /entrar/ and /admin/login/ (failures only): password guessing
    # over many user names from one address; axes locks one user name from one address after 5.
    # High on purpose: a mobile carrier's CGNAT or a city hall's NAT puts hundreds of people
    # behind one address, and their typos must not lock the others out.
    "login": _rate("login", "300/10m,3000/d"),
    # GET /api/v1/facilities/nearest/: a spatial query per call.
    "nearest": _rate("nearest", "60/m,1000/h"),
    # /verificar/ and /verificar/<number>/: guessing CTR numbers.
    "verify": _rate("verify", "30/m,300/h"),
    # /denuncia/<protocol>/: guessing report protocols.
    "follow": _rate("follow", "30/m,300/h"),
}
