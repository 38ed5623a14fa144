"""The demonstration (demo/): each part, and the one command that loads them all."""

from __future__ import annotations

import contextlib

from django.db import transaction
from django.test import override_settings

from tests.clock import frozen_clock

FAST_HASHER = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@contextlib.contextmanager
def held_for_the_module(django_db_blocker):
    """A module's demo, loaded inside the block and rolled back after it (CTR events cannot be
    deleted), on a day the demo network's licences are in force (they have fixed dates,
    fixtures/README.md), whatever the day of the run."""
    with (
        frozen_clock(),
        django_db_blocker.unblock(),
        override_settings(PASSWORD_HASHERS=FAST_HASHER),
        transaction.atomic(),
    ):
        yield
        transaction.set_rollback(True)
