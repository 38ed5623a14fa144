"""Moving the test database's schema to a migration and back, for the tests of data migrations
(they run with transaction=True: a migration is DDL)."""

from __future__ import annotations

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets: list[tuple[str, str]] | None = None) -> None:
    """Migrate to `targets` ((app, migration) pairs), or to the latest of every app."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets or executor.loader.graph.leaf_nodes())
