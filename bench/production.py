"""The production mode's processes for the benchmarks (bench/soak.py, bench/pages.py): gunicorn
with deploy/gunicorn.conf.py and the worker (`manage.py worker`), each in a process group of
its own, their memory read from /proc, and the environment production runs with."""

from __future__ import annotations

import contextlib
import http.client
import http.server
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .p2_http import PROXY_HEADERS, free_port, say

ROOT = Path(__file__).resolve().parent.parent
GUNICORN_CONFIG = ROOT / "deploy" / "gunicorn.conf.py"
START_SECONDS = 120


# --- memory ------------------------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    """VmRSS of one process (kB), 0 when it is gone."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            # The command may hold spaces and parentheses: the fields follow the last ")".
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
    return found


# --- the production processes ------------------------------------------------------------------


class Production:
    """gunicorn (deploy/gunicorn.conf.py) and the worker, each in a session of its own (the
    worker is killed alone; gunicorn's master and workers are stopped as one group)."""

    def __init__(self, env: dict[str, str], worker: bool = True):
        self.port = free_port()
        self.with_worker = worker  # the page benchmark (bench/pages.py) needs only gunicorn
        self.root = Path(tempfile.mkdtemp(prefix="ctr-soak-"))
        metrics = self.root / "metrics"
        metrics.mkdir()
        self.env = {
            **env,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "PROMETHEUS_MULTIPROC_DIR": str(metrics),
            "CTR_SITE_URL": f"http://127.0.0.1:{self.port}",
            # The receiver listens on the loopback (webhooks/targets.py refuses it otherwise).
            "CTR_WEBHOOKS_ALLOW_LOOPBACK": "true",
            # No line per request on the terminal (gunicorn's and the app's JSON line).
            "GUNICORN_ACCESS_LOG": "0",
            "CTR_ACCESS_LOG": "false",
            "PYTHONUNBUFFERED": "1",
        }
        self.web: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.workers_started = 0
        self.command = (
            f"gunicorn -c deploy/gunicorn.conf.py config.wsgi:application; {self.worker_line}"
        )

    worker_line = "python manage.py worker"

    def _start(self, name: str, command: list[str]) -> subprocess.Popen:
        log = (self.root / f"{name}.log").open("a")
        try:
            return subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()

    def log_tail(self, name: str) -> str:
        with contextlib.suppress(OSError):
            return (self.root / f"{name}.log").read_text(errors="replace")[-3000:]
        return ""

    def __enter__(self) -> Production:
        python = sys.executable
        self.web = self._start(
            "gunicorn",
            [python, "-m", "gunicorn", "-c", str(GUNICORN_CONFIG), "config.wsgi:application"],
        )
        if self.with_worker:
            self.start_worker()
        deadline = time.monotonic() + START_SECONDS
        while True:
            if self.web.poll() is not None or time.monotonic() > deadline:
                tail = self.log_tail("gunicorn")
                self.__exit__()
                raise RuntimeError(f"gunicorn não respondeu:\n{tail}")
            with contextlib.suppress(OSError):
                if self.get("/healthz") == 200:
                    break
            time.sleep(0.3)
        worker = f"; worker pid {self.worker.pid}" if self.worker else ""
        say(
            f"gunicorn na porta {self.port} (pid {self.web.pid}, "
            f"{len(children(self.web.pid))} workers){worker}"
        )
        return self

    def start_worker(self) -> None:
        self.worker = self._start("worker", [sys.executable, "manage.py", "worker"])
        self.workers_started += 1

    def kill_worker(self) -> int:
        """SIGKILL, no goodbye: what a crash or the OOM killer does. The pid killed."""
        pid = self.worker.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        self.worker.wait(timeout=30)
        return pid

    def rss(self) -> dict[str, int]:
        """kB: gunicorn's master plus its workers, and the worker."""
        web = rss_kib(self.web.pid) + sum(rss_kib(p) for p in children(self.web.pid))
        return {"gunicorn": web, "worker": rss_kib(self.worker.pid)}

    def get(self, path: str) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", path, headers=PROXY_HEADERS)
            response = conn.getresponse()
            response.read()
            return response.status
        finally:
            conn.close()

    def __exit__(self, *exc) -> None:
        for process in (self.worker, self.web):
            if process is None or process.poll() is not None:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        shutil.rmtree(self.root, ignore_errors=True)


def production_env(static_root: str) -> dict[str, str]:
    """This process's environment (the bench database) as production runs: DEBUG off, the
    static files hashed and collected, behind an HTTPS proxy."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_DEBUG": "false",
        "DJANGO_STATIC_MANIFEST": "true",
        "DJANGO_STATIC_ROOT": static_root,
        "DJANGO_SECURE_PROXY_SSL_HEADER": "true",
    }
