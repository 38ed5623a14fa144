"""The read replica's settings and small parts (config/replica.py). What it does against a
real streaming replica is tests/config/test_replica.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import MiddlewareNotUsed

from config.replica import ReadYourWritesMiddleware, parse_lsn

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
