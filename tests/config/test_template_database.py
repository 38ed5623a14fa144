"""The run's test databases are copies of one migrated template (tests/template_database.py)."""

import os
import subprocess

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests import template_database


@pytest.mark.django_db
def test_the_test_database_is_a_complete_copy_of_the_runs_migrated_template(request):
    worker = getattr(request.config, "workerinput", {}).get("workerid")
    test_name = connection.settings_dict["NAME"]
    template = template_database.template_name(test_name, worker)
    assert template.endswith(os.environ[template_database.RUN_ID_ENV])
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        assert cursor.fetchone()[0] == test_name
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [template])
        assert cursor.fetchone() == (1,), f"sem o modelo {template}"
        cursor.execute("SELECT count(*) FROM django_migrations")
        applied = cursor.fetchone()[0]
    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []
    assert applied == len(executor.loader.graph.nodes)


def test_a_new_run_drops_the_templates_of_ended_runs_only():
    """Two runs on one cluster (a second `make test` while the first goes on): the second once
    dropped the first's template, and the first's next copy found none."""
    settings_dict = connection.settings_dict
    ended_pid = subprocess.Popen(["true"])  # a pid no process holds once it has ended
    ended_pid.wait()
    prefix = f"test_tplprobe{template_database.TEMPLATE_MARK}"
    ours = f"{prefix}ours"
    going = f"{prefix}abcdef01p{os.getpid()}"
    left = f"{prefix}abcdef02p{ended_pid.pid}"
    with template_database.maintenance_cursor(settings_dict) as cursor:
        for name in (going, left):
            cursor.execute(f'CREATE DATABASE "{name}"')
        try:
            template_database.drop_templates_of_ended_runs(cursor, ours)
            cursor.execute(
                "SELECT datname FROM pg_database WHERE starts_with(datname, %s)", [prefix]
            )
            remaining = {name for (name,) in cursor.fetchall()}
        finally:
            for name in (going, left):
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
    assert remaining == {going}
