"""Which log format a process writes: read by config/settings.py (Django's handlers) and by
deploy/gunicorn.conf.py (gunicorn's own lines), which must agree and which loads before Django.

CTR_LOG_FORMAT: "json" (one JSON object per line) or "console" (`make run`); unset, JSON with
DEBUG off (production) and the console with DEBUG on."""

from __future__ import annotations

import os

TRUE_WORDS = {"1", "true", "yes", "sim", "on"}


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in TRUE_WORDS


def log_format() -> str:
    chosen = os.environ.get("CTR_LOG_FORMAT", "").strip().lower()
    return chosen or ("console" if env_bool("DJANGO_DEBUG", True) else "json")
