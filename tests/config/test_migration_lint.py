"""Migrations a rolling deploy survives (config/migration_lint.py, run by `make lint`, which
lints the project's migrations, the old ones through its reasoned exceptions): a new
backward-incompatible migration is caught, the expand step of docs/operations.md is not. The
new ones are written into a throwaway app in a temporary directory, added to INSTALLED_APPS by
the lint's --with-app (nothing of the project's tree is touched)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

INITIAL = """
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [
        migrations.CreateModel(
            name="Load",
            fields=[
                ("id", models.BigAutoField(primary_key=True)),
                ("plate", models.CharField(max_length=8)),
            ],
        ),
    ]
"""

# Each is the app's second migration: (name, operation).
INCOMPATIBLE = {
    # The old version still selects and inserts the column.
    "0002_drop_plate": 'migrations.RemoveField(model_name="load", name="plate")',
    # The old version inserts rows without the column: NOT NULL without a database default.
    "0002_add_volume": (
        'migrations.AddField(model_name="load", name="volume",'
        " field=models.IntegerField(default=0), preserve_default=False)"
    ),
    "0002_rename_plate": (
        'migrations.RenameField(model_name="load", old_name="plate", new_name="vehicle")'
    ),
}
# The expand step of docs/operations.md: nullable, or with a default kept in the database.
COMPATIBLE = {
    "0002_add_volume_db_default": (
        'migrations.AddField(model_name="load", name="volume",'
        " field=models.IntegerField(db_default=0))"
    ),
}


def lint(tmp_path: Path, name: str, operation: str) -> subprocess.CompletedProcess:
    app = tmp_path / "lintprobe"
    (app / "migrations").mkdir(parents=True)
    (app / "__init__.py").write_text("")
    (app / "migrations" / "__init__.py").write_text("")
    (app / "migrations" / "0001_initial.py").write_text(INITIAL)
    (app / "migrations" / f"{name}.py").write_text(
        "from django.db import migrations, models\n\n\n"
        "class Migration(migrations.Migration):\n"
        '    dependencies = [("lintprobe", "0001_initial")]\n'
        f"    operations = [{operation}]\n"
    )
    env = {**os.environ}
    env.pop("CTR_TEST_DB", None)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "config.migration_lint",
            "--with-app",
            f"{tmp_path}:lintprobe",
            "--only-with-apps",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("name", INCOMPATIBLE)
def test_a_backward_incompatible_migration_fails_the_lint(tmp_path, name):
    result = lint(tmp_path, name, INCOMPATIBLE[name])
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"(lintprobe, {name})... ERR" in result.stdout
    assert "Erroneous migrations: 1/" in result.stdout


@pytest.mark.parametrize("name", COMPATIBLE)
def test_the_expand_step_passes_the_lint(tmp_path, name):
    result = lint(tmp_path, name, COMPATIBLE[name])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Erroneous migrations: 0/" in result.stdout


def test_every_exception_names_a_migration_of_the_project_and_says_why():
    """An exception for a migration renamed or squashed away would hide nothing, silently."""
    from django.db.migrations.loader import MigrationLoader

    from config.migration_lint import BEFORE_THE_RULE, EXCEPTIONS

    on_disk = set(MigrationLoader(None, ignore_no_migrations=True).disk_migrations)
    assert [key for key in EXCEPTIONS if key not in on_disk] == []
    assert all(reason.startswith(BEFORE_THE_RULE) for reason in EXCEPTIONS.values())
