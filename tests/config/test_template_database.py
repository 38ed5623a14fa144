"""The run's test databases are copies of one migrated template (tests/template_database.py)."""

import os

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
