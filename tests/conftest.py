import os

import pytest

# Playwright's sync API runs an event loop in the test thread; the ORM calls the tests make
# around it are still synchronous, so Django's async-safety check does not apply.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # Tests create many users; the production hasher is slow on purpose.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# Limits of the public endpoints high enough that no test but the ones about them meets one
# (fuzzing and browser tests hit the same endpoints from one address, and a live server's cache
# table is not emptied between tests). tests/test_security_settings.py sets its own.
GENEROUS_RATE_LIMITS = {scope: "100000/m" for scope in ("login", "nearest", "verify", "follow")}


@pytest.fixture(autouse=True)
def generous_rate_limits(settings):
    settings.CTR_RATE_LIMITS = dict(GENEROUS_RATE_LIMITS)
