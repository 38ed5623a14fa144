"""Production app servers started by tests: gunicorn serving config.wsgi with DEBUG off, on
127.0.0.1 and a free port each, against a database the test names (the test database).

Each server is its own gunicorn master with its own worker process(es): what one keeps in
memory the other does not see, as with two machines behind a load balancer. Requests reach
them as an HTTPS proxy sends them (`X-Forwarded-Proto: https`, DJANGO_SECURE_PROXY_SSL_HEADER),
so the production settings hold: secure cookies, CSRF origin checks, no SSL redirect.

The options are on gunicorn's command line; `config=` adds a gunicorn configuration file
(the production one, when there is one) that the command line then overrides.

The servers keep the real clock (tests/clock.py): what they write and compare (sessions'
expiry, django-axes' attempts, the rate limits' windows) is their own time, never the test's.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import quote, urlencode

BASE_DIR = Path(__file__).resolve().parents[1]
# config.settings plus the tests' fast password hasher (tests/app_server_settings.py).
SETTINGS_MODULE = "tests.app_server_settings"
START_SECONDS = 90
STOP_SECONDS = 20
# What the proxy in front of production servers adds (README: Produção).
PROXY_HEADERS = {"X-Forwarded-Proto": "https"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def database_url(settings_dict: Mapping) -> str:
    """A DATABASE_URL for Django's connection settings (the test database's, once created)."""
    user = quote(settings_dict.get("USER") or "", safe="")
    password = quote(settings_dict.get("PASSWORD") or "", safe="")
    credentials = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or "5432"
    return f"postgis://{credentials}{host}:{port}/{quote(settings_dict['NAME'], safe='')}"


def server_environment(database: str, secret_key: str, extra: Mapping[str, str]) -> dict:
    """The test's environment without its database, Django and app settings, plus the
    production ones: DEBUG off, the shared SECRET_KEY, the database, behind an HTTPS proxy."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DATABASE_", "DJANGO_", "CTR_", "PG"))
    }
    env.update(
        DATABASE_URL=database,
        DJANGO_SETTINGS_MODULE=SETTINGS_MODULE,
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=secret_key,
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SECURE_PROXY_SSL_HEADER="true",
        DJANGO_LOG_LEVEL="WARNING",
        PYTHONPATH=str(BASE_DIR),
    )
    env.update(extra)
    return env


@dataclass
class Response:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def request(
    port: int,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> Response:
    """One HTTP request to 127.0.0.1:`port` as the HTTPS proxy forwards it; no redirects
    followed."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers={**PROXY_HEADERS, **(headers or {})})
        answer = connection.getresponse()
        return Response(answer.status, answer.headers, answer.read())
    finally:
        connection.close()


@dataclass
class AppServer:
    """One gunicorn master and its workers, in a process group of their own."""

    name: str
    port: int
    process: subprocess.Popen
    log: Path
    media: Path  # MEDIA_ROOT, shared by all the servers started together
    # Its database connections' application_name (pg_stat_activity tells the servers apart).
    application_name: str

    @property
    def origin(self) -> str:
        """The origin a browser behind the HTTPS proxy sees (CSRF's Origin check)."""
        return f"https://127.0.0.1:{self.port}"

    def request(self, method: str, path: str, **kwargs) -> Response:
        return request(self.port, method, path, **kwargs)

    def assert_alive(self) -> None:
        assert self.process.poll() is None, f"{self.name} parou:\n{self.log_text()}"

    def log_text(self) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-4000:]
        return ""

    def wait_ready(self, deadline: float) -> None:
        while True:
            self.assert_alive()
            with contextlib.suppress(OSError):
                if self.request("GET", "/entrar/", timeout=5).status == 200:
                    return
            assert time.monotonic() < deadline, f"{self.name} não respondeu:\n{self.log_text()}"
            time.sleep(0.2)

    def stop(self) -> None:
        stop_process_group(self.process)


def stop_process_group(process: subprocess.Popen, seconds: float = STOP_SECONDS) -> None:
    """A server started in its own session (gunicorn's master and workers, or honcho and its
    processes): SIGTERM to the group (a graceful stop), SIGKILL to it past `seconds`."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=seconds)
    # Workers left behind by a master that died first: the group, and nothing else.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=seconds)


def gunicorn_command(
    port: int, workers: int, threads: int, config: Path | None = None
) -> list[str]:
    command = [sys.executable, "-m", "gunicorn"]
    if config is not None:
        command += ["-c", str(config)]
    return [
        *command,
        "--bind", f"127.0.0.1:{port}",
        "--workers", str(workers),
        "--worker-class", "gthread",
        "--threads", str(threads),
        "--timeout", "60",
        "--graceful-timeout", "5",
        "--log-level", "warning",
        "config.wsgi:application",
    ]  # fmt: skip


@contextlib.contextmanager
def app_servers(
    count: int,
    database: str,
    extra_env: Mapping[str, str] | None = None,
    workers: int = 1,
    threads: int = 4,
    config: Path | None = None,
) -> Iterator[list[AppServer]]:
    """`count` gunicorn servers of config.wsgi on free ports, with the same SECRET_KEY,
    settings and media folder (as every server behind one load balancer must have:
    docs/operations.md), all against `database`. Stopped on exit, whatever happened; the
    media folder and the logs go with them."""
    secret_key = f"test-{secrets.token_urlsafe(32)}"
    root = Path(tempfile.mkdtemp(prefix="ctr-app-servers-"))
    media = root / "media"
    media.mkdir()
    env = server_environment(
        database, secret_key, {"CTR_MEDIA_ROOT": str(media), **(extra_env or {})}
    )
    servers: list[AppServer] = []
    stack = contextlib.ExitStack()
    try:
        for index in range(count):
            letter = chr(ord("A") + index)
            name = f"servidor {letter}"
            application_name = f"ctr-app-server-{letter}"
            port = free_port()
            log = root / f"gunicorn-{index}.log"
            log_file = stack.enter_context(log.open("w"))
            process = subprocess.Popen(
                gunicorn_command(port, workers, threads, config),
                cwd=BASE_DIR,
                env={**env, "PGAPPNAME": application_name},  # libpq reads it
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stopped as one
            )
            servers.append(AppServer(name, port, process, log, media, application_name))
        deadline = time.monotonic() + START_SECONDS
        for server in servers:
            server.wait_ready(deadline)
        yield servers
    finally:
        for server in servers:
            server.stop()
        stack.close()
        shutil.rmtree(root, ignore_errors=True)


# --- a browser's side ------------------------------------------------------------------------


@dataclass
class Browser:
    """A person's browser behind the HTTPS proxy: its cookies, sent to whichever server the
    load balancer picks (secure cookies included: the proxy speaks HTTPS to the browser)."""

    cookies: dict[str, str] = field(default_factory=dict)

    def send(
        self,
        server: AppServer,
        method: str,
        path: str,
        form: dict | None = None,
        files: dict[str, tuple[str, bytes]] | None = None,
    ):
        headers = {}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if files:
            body, headers["Content-Type"] = multipart(form or {}, files)
        elif form is not None:
            body = urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if body is not None:
            headers["Origin"] = server.origin
        response = server.request(method, path, body=body, headers=headers)
        for line in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(line).items():
                if morsel["max-age"] == "0" or morsel.value == "":
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value
        return response

    def get(self, server: AppServer, path: str) -> Response:
        return self.send(server, "GET", path)

    def post(
        self,
        server: AppServer,
        path: str,
        form: dict,
        files: dict[str, tuple[str, bytes]] | None = None,
    ) -> Response:
        """A form; with `files` (field: (file name, content)), as multipart/form-data."""
        return self.send(server, "POST", path, form, files)


def multipart(form: dict, files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body and its Content-Type."""
    boundary = f"ctr-{secrets.token_hex(12)}"
    parts = []
    for name, value in form.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
            f"{value}\r\n".encode()
        )
    for name, (filename, content) in files.items():
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
            f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
        )
        parts.append(head.encode() + content + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
