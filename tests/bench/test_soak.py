"""The soak of `make bench` (bench/soak.py) for a few seconds on the test database: the
production processes (gunicorn with deploy/gunicorn.conf.py, the worker) and the soak's own
receiver, its bookkeeping checked against the outbox and the CTRs written. Counts are asserted,
never timings (those are the benchmark's business).

The world is built by a subprocess, as tests/config/test_production.py's: the servers keep the
real clock (tests/clock.py) and the world has fixed dates valid around today."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys

import pytest
from django.db import connection

from bench import soak, soak_load, soak_run
from bench.production import Production
from ctr.models import CTR, CTRStatus
from tests.app_servers import BASE_DIR, database_url, server_environment

pytestmark = pytest.mark.django_db(transaction=True)

SECONDS = 4

WORLD_SCRIPT = """
import json, sys
import django
django.setup()
from rest_framework.authtoken.models import Token
from bench import soak_load
from tests.ctr_world import build_world, ctr_payload
world = build_world()
mine = soak_load.World(
    Token.objects.create(user=world.alfa_user).key,
    [json.dumps(ctr_payload(world))],
    soak_load.operator_tokens([world.att.pk]),
)
secret = soak_load.subscribe(mine, world.alfa, world.alfa_user, sys.argv[1])
print(json.dumps({**mine.__dict__, "secret": secret, "transporter": world.alfa.pk}))
"""


@pytest.fixture
def env():
    return server_environment(
        database_url(connection.settings_dict),
        f"test-{secrets.token_urlsafe(32)}",
        # One gunicorn worker of the production configuration: enough, and cheap.
        {"WEB_CONCURRENCY": "1", "GUNICORN_THREADS": "4"},
    )


def build(env: dict, url: str) -> tuple[soak_load.World, str, int]:
    made = subprocess.run(
        [sys.executable, "-c", WORLD_SCRIPT, url], cwd=BASE_DIR, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    data = json.loads(made.stdout.strip().splitlines()[-1])
    secret, transporter = data.pop("secret"), data.pop("transporter")
    data["operators"] = {int(k): v for k, v in data["operators"].items()}
    return soak_load.World(**data), secret, transporter


def test_a_short_soak_counts_every_delivery_through_a_killed_worker(env):
    with soak_run.Receiver() as receiver:
        world, receiver.secret, transporter = build(env, receiver.url)
        with Production(env) as production:
            result = soak_run.run(
                production, receiver, world, SECONDS,
                capacity_seconds=1, lone_seconds=1, drain_seconds=60, warmup_seconds=1,
            )  # fmt: skip
    load = result.load
    assert load.errors == 0 and result.lone.errors == 0, (load.statuses, result.lone.statuses)
    # The mix issued and received, in turn.
    assert load.count("issue") > 0 and load.count("receive") > 0
    assert abs(load.count("issue") - load.count("receive")) <= 1 + soak_load.CONNECTIONS

    # One event id per issue and per reception of the soak's CTRs (all phases), each
    # written to the outbox and delivered.
    ctrs = CTR.objects.filter(transporter_id=transporter)
    received = ctrs.filter(status=CTRStatus.RECEIVED).count()
    assert received == result.lone.count("receive") + load.count("receive")
    assert result.expected == ctrs.count() + received
    assert result.outbox == {"delivered": result.expected}
    assert (result.missing, result.pending_after_drain, result.unexpected) == (0, 0, 0)
    assert result.bad_signatures == 0

    # The worker killed while the receiver held a delivery, and another one started: that
    # delivery came twice (at least once), every other once.
    kill = result.kill
    assert kill.held and kill.pid and kill.restarted_pid not in (0, kill.pid)
    assert result.duplicates == {kill.held: 2}
    assert result.duplicates_explained
    assert result.received == result.expected + 1

    assert all(result.rss_start.values()) and all(result.rss_end.values())
    assert len(result.rss_samples) >= 2
    text = soak.render(result, {"CPU": "teste"}, "agora", "python -m bench.soak --seconds 4")
    assert kill.held in text and "Nenhuma entrega se perdeu" in text
