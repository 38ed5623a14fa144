"""One start for `make run`: scripts/start.sh does migrate, the cache table,
the three demos, the static files and serves; the Makefile calls it and does none of those
steps itself. Docker runs the production processes instead (scripts/serve.sh).
And `make test` collects the static files first and ends with a note on the local cluster,
pass or fail, keeping the suite's exit code."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START = "scripts/start.sh"
STEPS = [
    "migrate",
    "createcachetable",
    "load_demo",
    "collectstatic",
    "runserver",
]


def start_script_steps() -> list[str]:
    text = (ROOT / START).read_text()
    calls = re.findall(r"^(?:manage|exec \"\$PYTHON\" manage\.py) (\w+)", text, re.MULTILINE)
    return calls


def test_the_start_script_does_every_step_in_order():
    assert start_script_steps() == STEPS


def test_the_docker_image_and_compose_run_the_production_processes():
    """The image's CMD is the production web (gunicorn), as a non-root user;
    compose has web, worker, scheduler and db, each with a healthcheck, and the migrations as
    a one-off service (scripts/serve.sh prepare). Read, not run: no Docker here."""
    import yaml

    dockerfile = (ROOT / "Dockerfile").read_text()
    cmd = re.search(r"^CMD (.+)$", dockerfile, re.MULTILINE)
    assert cmd and "gunicorn" in cmd[1] and "deploy/gunicorn.conf.py" in cmd[1]
    users = re.findall(r"^USER (\S+)", dockerfile, re.MULTILINE)
    assert users and users[-1] not in ("root", "0")
    # Served on every interface inside the container, as compose publishes it.
    assert re.search(r"^ENV .*HOST=0\.0\.0\.0", dockerfile, re.MULTILINE)
    assert re.search(r"^ENV .*DJANGO_DEBUG=false", dockerfile, re.MULTILINE)
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert {"web", "worker", "scheduler", "db"} <= set(services)
    for name in ("web", "worker", "scheduler", "db"):
        assert services[name]["healthcheck"]["test"], name
    assert "/healthz" in " ".join(services["web"]["healthcheck"]["test"])
    assert services["worker"]["command"][-1] == "worker"
    assert services["scheduler"]["command"][-1] == "scheduler"
    for name in ("worker", "scheduler"):
        assert services[name]["healthcheck"]["test"][-4:-2] == ["jobs_seen", name]
    assert services["migrate"]["command"] == ["bash", "scripts/serve.sh", "prepare"]
    for name in ("web", "worker", "scheduler"):
        assert services[name]["depends_on"]["migrate"] == {
            "condition": "service_completed_successfully"
        }
    assert "runserver" not in dockerfile + (ROOT / "docker-compose.yml").read_text()


def make_dry_run(target: str, tmp_path: Path) -> str:
    stamp = tmp_path / "stamp"
    stamp.touch()  # the virtualenv counts as installed
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    env.pop("DATABASE_URL", None)
    return subprocess.run(
        ["make", "-n", target, f"STAMP={stamp}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_make_run_calls_the_start_script_and_nothing_else_starts(tmp_path):
    commands = make_dry_run("run", tmp_path)
    assert re.search(r"bash scripts/start\.sh\s*$", commands, re.MULTILINE), commands
    for step in STEPS:
        assert f"manage.py {step}" not in commands, step
    makefile = (ROOT / "Makefile").read_text()
    for step in STEPS:
        assert f"manage.py {step}" not in makefile or step == "collectstatic", step


NOTE = "O PostgreSQL local continua em execução"


def test_make_test_collects_static_files_keeps_the_exit_code_and_notes_the_cluster(tmp_path):
    """`make test` for real, on a suite of its own (one test passes, one fails; no database),
    the local cluster neither started nor asked for (DB_START, DB_ENV): what is checked is the
    recipe."""
    stamp = tmp_path / "stamp"
    stamp.touch()
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_two.py").write_text(
        "def test_passes():\n    assert True\n\n\ndef test_fails():\n    assert 1 == 2\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    env.pop("DATABASE_URL", None)
    env["DJANGO_STATIC_ROOT"] = str(tmp_path / "static")
    args = f"{suite} -q -p no:cacheprovider --rootdir {suite}"
    result = subprocess.run(
        [
            "make",
            "test",
            f"STAMP={stamp}",
            f"VENV={Path(sys.executable).parent.parent}",
            "DB_START=:",
            "DB_ENV=",
            f"PYTEST_ARGS={args}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0, output  # the failing test fails make test
    assert "1 failed, 1 passed" in result.stdout
    assert (tmp_path / "static" / "admin").is_dir()  # collected before the suite
    assert "No directory at" not in output
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith(NOTE) and "'make stop'" in last


def test_the_whole_suite_runs_in_parallel_processes_and_a_file_in_one(tmp_path):
    stamp = tmp_path / "stamp"
    stamp.touch()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MAKE", "MFLAGS", "PYTEST_ARGS", "TEST_WORKERS"))
    }

    def pytest_line(*variables: str) -> str:
        commands = subprocess.run(
            ["make", "-n", "test", f"STAMP={stamp}", *variables],
            cwd=ROOT, env=env, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        return next(line for line in commands.splitlines() if " -m pytest" in line)

    assert "-m pytest -n 4 --dist load ;" in pytest_line()
    assert "-m pytest  tests/x;" in pytest_line("PYTEST_ARGS=tests/x")
    assert "-m pytest -n 2 --dist load tests/x;" in pytest_line(
        "PYTEST_ARGS=tests/x", "TEST_WORKERS=2"
    )
    assert "-m pytest  ;" in pytest_line("TEST_WORKERS=0")


def test_no_note_with_an_external_database(tmp_path):
    commands = make_dry_run("test", tmp_path)
    assert NOTE in commands
    stamp = tmp_path / "stamp"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    env["DATABASE_URL"] = "postgis://u:p@db.example:5432/ctr"
    external = subprocess.run(
        ["make", "-n", "test", f"STAMP={stamp}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert NOTE not in external
    assert "localdb.sh" not in external, shlex.quote(external)
