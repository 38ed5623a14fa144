import os

import pytest

# Playwright's sync API runs an event loop in the test thread; the ORM calls the tests make
# around it are still synchronous, so Django's async-safety check does not apply.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # Tests create many users; the production hasher is slow on purpose.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
