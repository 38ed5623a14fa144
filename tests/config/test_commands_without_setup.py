"""Commands as the README writes them: without DATABASE_URL the settings use
the checkout's local cluster, as scripts/localdb.sh builds its URL, and every command that the
README's "Comandos de gestão" lists runs."""

from __future__ import annotations

import importlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
PROJECT_SETTINGS = importlib.import_module("config.settings")


def localdb_url(checkout: Path, env: dict) -> str:
    """What `scripts/localdb.sh url` prints, run from a copy of it in `checkout`."""
    (checkout / "scripts").mkdir(exist_ok=True)
    shutil.copy(ROOT / "scripts" / "localdb.sh", checkout / "scripts" / "localdb.sh")
    return subprocess.run(
        ["bash", str(checkout / "scripts" / "localdb.sh"), "url"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_default_url_is_the_one_localdb_sh_prints(tmp_path):
    """localdb.sh run from a copy of the checkout writes its password under .local/ and prints
    the URL; the settings build the same URL from that checkout, honouring CTR_PG_PORT."""
    env = {**os.environ, "CTR_PG_PORT": "54401"}
    env.pop("CTR_PG_DB", None)
    printed = localdb_url(tmp_path, env)
    assert (tmp_path / ".local" / "pg-password").is_file()
    assert printed.endswith("@127.0.0.1:54401/ctr")
    assert PROJECT_SETTINGS.local_cluster_url(tmp_path, env) == printed
    # Without CTR_PG_PORT: the script's default port.
    env.pop("CTR_PG_PORT")
    assert PROJECT_SETTINGS.local_cluster_url(tmp_path, env).endswith("@127.0.0.1:54329/ctr")


def test_default_url_without_a_cluster_yet_has_no_password(tmp_path):
    url = PROJECT_SETTINGS.local_cluster_url(tmp_path, {})
    assert url == "postgis://postgres@127.0.0.1:54329/ctr"


def test_the_port_the_cluster_started_on_is_remembered_by_the_checkout(tmp_path):
    """`make run CTR_PG_PORT=54341` then `manage.py …` without it: the settings (and localdb.sh
    itself) read the port that `localdb.sh start` wrote in .local/pg-port, not 54329 (another
    checkout's cluster on a shared machine). CTR_PG_PORT, when given, still wins."""
    (tmp_path / ".local").mkdir()
    (tmp_path / ".local" / "pg-port").write_text("54341\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CTR_PG_PORT", "CTR_PG_DB")}
    printed = localdb_url(tmp_path, env)
    assert printed.endswith("@127.0.0.1:54341/ctr")
    assert PROJECT_SETTINGS.local_cluster_url(tmp_path, env) == printed
    env["CTR_PG_PORT"] = "54400"
    assert PROJECT_SETTINGS.local_cluster_url(tmp_path, env).endswith("@127.0.0.1:54400/ctr")


@pytest.mark.parametrize(
    ("environ", "url"),
    [
        ({}, "http://127.0.0.1:8000"),
        ({"PORT": "8123"}, "http://127.0.0.1:8123"),
        ({"HOST": "192.168.0.10", "PORT": "8123"}, "http://192.168.0.10:8123"),
        ({"HOST": "0.0.0.0", "PORT": "8123"}, "http://127.0.0.1:8123"),
        ({"CTR_SITE_URL": "https://ctr.example.org/", "PORT": "8123"}, "https://ctr.example.org"),
    ],
)
def test_links_in_e_mails_follow_the_port_make_run_serves_on(environ, url):
    assert PROJECT_SETTINGS.site_url(environ) == url


def checkout_uses_this_cluster() -> str | None:
    """Why the subprocess test cannot run here, or None: it needs this checkout's own cluster
    (the one `make test` starts), i.e. DATABASE_URL = `scripts/localdb.sh url`."""
    url = urlsplit(os.environ.get("DATABASE_URL", ""))
    password_file = ROOT / ".local" / "pg-password"
    if not password_file.is_file():
        return "this checkout has no local cluster (.local/pg-password)"
    if url.hostname != "127.0.0.1" or url.password != password_file.read_text().strip():
        return "the suite runs against an external DATABASE_URL, not this checkout's cluster"
    return None


def manage(*args: str, port: str | None, database: str) -> subprocess.CompletedProcess:
    """manage.py without DATABASE_URL; without CTR_PG_PORT too when `port` is None."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CTR_PG_PORT")}
    env.update(CTR_PG_DB=database)
    if port is not None:
        env["CTR_PG_PORT"] = port
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.django_db
def test_open_ctr_alerts_runs_without_database_url_nor_ctr_pg_port():
    reason = checkout_uses_this_cluster()
    if reason:
        pytest.skip(reason)
    port = str(urlsplit(os.environ["DATABASE_URL"]).port or 5432)
    # The test database (migrated, empty): the command connects and queries through the
    # settings' default URL alone.
    result = manage("open_ctr_alerts", port=port, database=connection.settings_dict["NAME"])
    assert result.returncode == 0, result.stderr
    assert "0 CTR(s) em aberto além do prazo." in result.stdout
    # A wrong port proves it was the default URL that connected (and CTR_PG_PORT is read).
    result = manage("open_ctr_alerts", port="1", database=connection.settings_dict["NAME"])
    assert result.returncode != 0
    assert "port 1 failed" in result.stderr
    # Without CTR_PG_PORT: the port this checkout's cluster was started on, as `make run
    # CTR_PG_PORT=…` starts it (running already: the start only records the port).
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    started = subprocess.run(
        ["bash", "scripts/localdb.sh", "start"],
        cwd=ROOT,
        env={**env, "CTR_PG_PORT": port},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 0, started.stderr
    result = manage("open_ctr_alerts", port=None, database=connection.settings_dict["NAME"])
    assert result.returncode == 0, result.stderr
    assert "0 CTR(s) em aberto além do prazo." in result.stdout


# The commands that only read, run for real with DEBUG on, as the README's commands run (the
# others, which write, are run by their own tests and below: import_ctrs).
READ_ONLY_RUNS = {
    "open_ctr_alerts": [],
    "enforcement_deadlines": ["--days", "7"],
    "export_facilities": ["{tmp}/rede.geojson"],
    "export_basins": ["{tmp}/bacias.geojson"],
    "export_ctrs": ["{tmp}/ctrs.csv", "--from", "2026-01-01", "--to", "2026-12-31"],
}


@pytest.mark.django_db
@pytest.mark.parametrize("name", sorted(READ_ONLY_RUNS))
def test_read_only_commands_run_with_debug_on(name, settings, tmp_path):
    from django.core.management import call_command

    from tests.ctr_world import build_world

    settings.DEBUG = True
    build_world()
    args = [a.format(tmp=tmp_path) for a in READ_ONLY_RUNS[name]]
    call_command(name, *args, stdout=io.StringIO(), stderr=io.StringIO())
    for arg in args:
        if arg.startswith(str(tmp_path)):
            assert Path(arg).stat().st_size > 0


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Comandos de gestão", 1)[1].split("\n## ", 1)[0]
    # "`manage.py import_facilities ARQUIVO` / `export_facilities SAIDA`", "`load_demo`"
    names = set(re.findall(r"`(?:manage\.py )?([a-z]+_[a-z_]+)[` ]", section))
    # One-word commands are named with their "manage.py" ("`manage.py tour`").
    return sorted(names | set(re.findall(r"`manage\.py ([a-z]+)[` ]", section)))


def test_the_readme_lists_the_project_commands():
    from django.apps import apps

    listed = readme_commands()
    # Every app of this checkout (a new one is not forgotten: the jobs app was, once).
    ours = sorted(
        path.stem
        for app in apps.get_app_configs()
        if Path(app.path).is_relative_to(ROOT) and ".venv" not in Path(app.path).parts
        for path in (Path(app.path) / "management" / "commands").glob("*.py")
        if not path.stem.startswith("_")
    )
    assert listed == ours


@pytest.mark.parametrize("name", readme_commands())
def test_every_readme_command_answers_help(name, manage_py_help):
    assert f"usage: manage.py {name}" in manage_py_help(name)


@pytest.mark.django_db
@pytest.mark.parametrize("dry_run", [True, False])
def test_import_ctrs_runs_with_debug_on_as_make_run_has_it(settings, tmp_path, dry_run):
    """DJANGO_DEBUG defaults to true (make run, the README's commands): Django then wraps every
    cursor in its debug wrapper, whose copy_expert takes no keyword arguments; the bulk import
    called it with one and crashed with a TypeError (the suite runs with DEBUG off)."""
    from django.core.management import call_command

    from ctr.models import CTR
    from tests.ctr.test_ctr_csv import csv_bytes, row
    from tests.ctr_world import build_world

    settings.DEBUG = True
    world = build_world()
    path = tmp_path / "ctrs.csv"
    path.write_bytes(csv_bytes([row(world), row(world)]))
    args = ["--dry-run"] if dry_run else []
    out = io.StringIO()
    call_command("import_ctrs", str(path), "--user", world.alfa_user.username, *args, stdout=out)
    assert CTR.objects.count() == (0 if dry_run else 2)
