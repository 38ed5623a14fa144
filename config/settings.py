"""Settings, one module, configured from the environment (see README: Configuração)."""

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "sim", "on"}


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
    "django.contrib.admin",
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
    "pev_network",
    "ctr",
    "fiscalization",
    "maps",
    "ogc",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.DatabaseGuardMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
            ],
        },
    },
]

# `make run`/`make test` set DATABASE_URL to the project-local cluster (scripts/localdb.sh).
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", "postgis://postgres@127.0.0.1:54329/ctr"),
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
        # A persistent connection broken by a database restart is replaced, not reused.
        conn_health_checks=True,
        engine="django.contrib.gis.db.backends.postgis",
    )
}
# Parallel test runs (several checkouts or sessions on one cluster) each take their own test DB.
if os.environ.get("CTR_TEST_DB"):
    DATABASES["default"]["TEST"] = {"NAME": os.environ["CTR_TEST_DB"]}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "pt-br"
LANGUAGES = [("pt-br", "Português (Brasil)")]
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

LOGIN_URL = "/entrar/"
LOGIN_REDIRECT_URL = "/painel/"
LOGOUT_REDIRECT_URL = "/"

STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT", BASE_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # Token first: an anonymous call gets 401 with a WWW-Authenticate header, not 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
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
        "volumosos (Lei 3.978/2007 de Guaratinguetá): rede licenciada de recebimento (PEV, ATT, "
        "áreas de reciclagem, aterros de RCC), municípios e bacias de captação."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and ReDoc from our own static files (drf-spectacular-sidecar), not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
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

LEAFLET_CONFIG = {
    "DEFAULT_CENTER": (-22.81, -45.19),
    "DEFAULT_ZOOM": 12,
    "TILES": [("OpenStreetMap", MAP_TILE_URL, {"attribution": MAP_TILE_ATTRIBUTION})],
    "SPATIAL_EXTENT": (-53.2, -25.4, -44.1, -19.7),
}

# Debian 12 ships GDAL 3.6, which cannot block file/network access from spatial reference
# strings. We never hand user-supplied SRS text to GDAL through Django: imports read CRSs with
# pyogrio/pyproj and reject anything that is not an EPSG code they resolve.
SILENCED_SYSTEM_CHECKS = ["gis.W001"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("DJANGO_LOG_LEVEL", "WARNING")},
}

if not DEBUG:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
