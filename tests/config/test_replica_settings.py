"""The read replica's settings and small parts (config/replica.py). What it does against a
real streaming replica is tests/config/test_replica.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.core.cache.backends.db import DatabaseCache
from django.core.exceptions import MiddlewareNotUsed
from django.db import transaction
from rest_framework.authtoken.models import Token

from config import replica
from config.replica import ReadYourWritesMiddleware, parse_lsn
from ctr.models import CTR
from jurisdiction.models import StaffRole
from pev_network.models import ReceivingFacility

BASE_DIR = Path(__file__).resolve().parents[2]
SHOW = (
    "import json, config.settings as s; print(json.dumps({'aliases': sorted(s.DATABASES), "
    "'routers': getattr(s, 'DATABASE_ROUTERS', []), 'replica': s.DATABASES.get('replica')}))"
)


def settings_with(**environ) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATABASE_")}
    env.update(DATABASE_URL="postgis://u:p@127.0.0.1:5432/ctr", **environ)
    done = subprocess.run(
        [sys.executable, "-c", SHOW], cwd=BASE_DIR, env=env, capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def test_without_a_replica_url_there_is_one_database_and_no_router():
    found = settings_with()
    assert found == {"aliases": ["default"], "routers": [], "replica": None}


def test_a_replica_url_adds_the_alias_the_router_and_a_short_connection_timeout():
    found = settings_with(DATABASE_REPLICA_URL="postgis://leitor:s@replica:5432/ctr")
    assert found["aliases"] == ["default", "replica"]
    assert found["routers"] == ["config.replica.ReplicaRouter"]
    replica = found["replica"]
    assert (replica["HOST"], replica["USER"], replica["NAME"]) == ("replica", "leitor", "ctr")
    assert replica["OPTIONS"]["connect_timeout"] == 3
    # Tests never create a database on it.
    assert replica["TEST"] == {"MIRROR": "default"}


def test_the_read_your_writes_middleware_is_not_installed_without_a_replica():
    with pytest.raises(MiddlewareNotUsed):
        ReadYourWritesMiddleware(lambda request: None)


@pytest.mark.parametrize(
    "text, value",
    [
        ("0/0", 0),
        ("16/B374D848", (0x16 << 32) | 0xB374D848),
        ("FFFFFFFF/FFFFFFFF", (1 << 64) - 1),
        ("", None),
        (None, None),
        ("16/B374D848; DROP", None),
        ("1/2/3", None),
        ("123456789/0", None),
    ],
)
def test_wal_positions_are_read_strictly(text, value):
    assert parse_lsn(text) == value


@pytest.fixture
def in_replica_readable_view():
    """What a replica-readable view's code sees once the replica was chosen."""
    token = replica._read_alias.set(replica.REPLICA)
    yield
    replica._read_alias.reset(token)


def test_the_domain_is_read_from_the_replica_but_who_may_see_it_from_the_primary(
    in_replica_readable_view,
):
    router = replica.ReplicaRouter()
    assert router.db_for_read(CTR) == router.db_for_read(ReceivingFacility) == "replica"
    # Authentication, sessions, roles and the cache (rate limits) answer on current data.
    for model in (get_user_model(), Session, StaffRole, Token):
        assert router.db_for_read(model) == "default", model
    assert router.db_for_read(DatabaseCache("ctr_cache", {}).cache_model_class) == "default"


def test_outside_a_replica_readable_view_everything_is_read_from_the_primary():
    assert replica.ReplicaRouter().db_for_read(CTR) == "default"
    assert replica.read_alias() == "default"


def test_writes_and_migrations_never_go_to_the_replica(in_replica_readable_view):
    router = replica.ReplicaRouter()
    assert router.db_for_write(CTR) == "default"
    assert router.allow_migrate("replica", "ctr") is False
    assert router.allow_migrate("default", "ctr") is True


def test_inside_a_transaction_on_the_primary_reads_stay_there(
    in_replica_readable_view, django_db_blocker
):
    """What a transaction wrote is read back in it, not from a replica that lacks it."""
    assert replica.read_alias() == "replica"
    with django_db_blocker.unblock(), transaction.atomic():
        assert replica.read_alias() == "default"
        assert replica.ReplicaRouter().db_for_read(CTR) == "default"
        assert replica.read_connection.alias == "default"
    assert replica.read_alias() == "replica"
