"""The settings of the app servers the tests start (tests/app_servers.py): production's,
configured from the environment as in production, with one change for speed."""

from config.settings import *  # noqa: F403

# The tests create their users with this hasher (tests/conftest.py, fast_password_hashing): the
# servers must read those hashes, and a production hasher would cost a second per sign-in.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
