import os

# Playwright's sync API runs an event loop in the test thread; the ORM calls the tests make
# around it are still synchronous, so Django's async-safety check does not apply.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
