import contextlib
import datetime
import logging
import os
import tempfile

import pytest
import time_machine

from tests import template_database

# Playwright's sync API runs an event loop in the test thread; the ORM calls the tests make
# around it are still synchronous, so Django's async-safety check does not apply.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
# Nothing of a run in the checkout: Hypothesis (tests/config/test_api_fuzz.py, through schemathesis)
# keeps its caches under the system's temporary folder, not in ./.hypothesis.
os.environ.setdefault(
    "HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "ctr-tests-hypothesis")
)

# No test may depend on the day it runs. CI runs the suite a second time with the clock of the
# test process moved this many days ahead (time_machine, still ticking): every thread of the
# process sees it (the live server's too); subprocesses do not (tests/clock.py says which and
# why that is fine). Tests that need a particular day freeze the clock (`frozen_today`).
CLOCK_SHIFT_ENV = "CTR_TEST_CLOCK_SHIFT_DAYS"


def clock_shift_days() -> int:
    value = os.environ.get(CLOCK_SHIFT_ENV, "").strip()
    try:
        return int(value or 0)
    except ValueError:
        raise pytest.UsageError(
            f"{CLOCK_SHIFT_ENV} deve ser um número de dias: {value!r}"
        ) from None


def pytest_xdist_make_scheduler(config, log):
    """`make test`'s --dist load, with the tests of one class together (tests/scheduling.py)."""
    if config.getvalue("dist") != "load":
        return None
    from tests.scheduling import ClassesTogether

    return ClassesTogether(config, log)


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the process that starts the run, not a worker
        template_database.start_run()
    days = clock_shift_days()
    if days:
        shifted = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=days)
        config._ctr_clock_shift = time_machine.travel(shifted, tick=True)
        config._ctr_clock_shift.start()


def pytest_sessionfinish(session):
    if hasattr(session.config, "workerinput") or _keeps_its_own_databases(session.config):
        return
    from django.conf import settings

    with contextlib.suppress(Exception):  # no database at all (a run of tests without one)
        template_database.drop_template(settings.DATABASES["default"])


def _keeps_its_own_databases(config) -> bool:
    return bool(config.getvalue("reuse_db") or config.getvalue("create_db"))


@pytest.fixture(scope="session")
def test_database_from_template(request, django_db_modify_db_settings, django_db_blocker):
    """This process's test database, a copy of the run's migrated template
    (tests/template_database.py), dropped at the end. Not with --reuse-db or --create-db,
    which keep pytest-django's own handling."""
    if _keeps_its_own_databases(request.config):
        yield False
        return
    from django.db import connection

    worker = getattr(request.config, "workerinput", {}).get("workerid")
    with django_db_blocker.unblock():
        name = template_database.clone_test_database(connection, worker)
    yield True
    with django_db_blocker.unblock():
        template_database.drop_test_database(connection, name)


@pytest.fixture(scope="session")
def django_db_keepdb(request, test_database_from_template) -> bool:
    """pytest-django's setup keeps (neither recreates nor, at the end, drops) the copy made
    from the template: migrating it finds nothing to do."""
    return test_database_from_template or bool(request.config.getvalue("reuse_db"))


def pytest_unconfigure(config):
    shift = getattr(config, "_ctr_clock_shift", None)
    if shift is not None:
        shift.stop()


def _shift_line() -> str | None:
    days = clock_shift_days()
    if days:
        today = datetime.datetime.now(datetime.UTC).date()
        return f"relógio dos testes adiantado {days} dias ({CLOCK_SHIFT_ENV}): hoje é {today}"
    return None


def pytest_report_header(config):
    return _shift_line()


def pytest_terminal_summary(terminalreporter):
    line = _shift_line()
    if line:  # also under -q, where the header is not shown
        terminalreporter.write_line(line)


@pytest.fixture
def frozen_today():
    """The clock frozen at tests.clock.FROZEN_NOW (on tests.ctr_world.TODAY), still ticking."""
    from tests.clock import frozen_clock

    with frozen_clock() as traveller:
        yield traveller


@pytest.fixture(scope="session", autouse=True)
def transactional_tests_empty_only_what_they_wrote():
    """tests/emptying.py: after a transactional test, DELETE from the tables it wrote to
    instead of Django's TRUNCATE of every table."""
    from tests import emptying

    emptying.install()


@pytest.fixture(autouse=True)
def live_server_requests_end_before_the_flush(request):
    """A test with the live server: its requests still in flight end before the database is
    flushed (tests/quiet_database.py says why). Requesting transactional_db here makes this
    fixture's teardown run before the flush."""
    if "live_server" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("transactional_db")
    yield
    from tests.quiet_database import settle_other_connections

    marker = request.node.get_closest_marker("settle_timeout")
    settle_other_connections(*(marker.args if marker else ()))


def _closed_log_streams() -> list[str]:
    loggers = [logging.getLogger()] + [
        logger
        for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)
    ]
    return sorted(
        {
            logger.name
            for logger in loggers
            for handler in logger.handlers
            if isinstance(handler, logging.StreamHandler)
            and getattr(handler.stream, "closed", False)
        }
    )


@pytest.fixture(autouse=True)
def log_handlers_keep_an_open_stream():
    """A test that sets Django up again while its output is captured (ManagementUtility.execute
    calls django.setup(), which configures logging anew) leaves the log handlers writing to the
    capture, closed after the test: every later line of the run is lost ("I/O operation on
    closed file"). Such a test fails here; `manage_py_help` shows the way round."""
    yield
    closed = _closed_log_streams()
    assert not closed, f"o teste deixou os logs {closed} escrevendo num arquivo fechado"


@pytest.fixture
def manage_py_help(capsys, monkeypatch):
    """`manage.py NAME --help` as the shell runs it (the usage names `manage.py NAME`); its
    standard output. Django is already set up: setting it up again would point the log handlers
    at this test's capture (see `log_handlers_keep_an_open_stream`)."""
    import django
    from django.core.management import ManagementUtility

    monkeypatch.setattr(django, "setup", lambda *args, **kwargs: None)

    def run(name: str) -> str:
        with pytest.raises(SystemExit) as exit_:
            ManagementUtility(["manage.py", name, "--help"]).execute()
        assert exit_.value.code in (0, None)
        return capsys.readouterr().out

    return run


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # Tests create many users; the production hasher is slow on purpose.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# Limits of the public endpoints high enough that no test but the ones about them meets one
# (fuzzing and browser tests hit the same endpoints from one address, and a live server's cache
# table is not emptied between tests). tests/config/test_security_settings.py sets its own.
GENEROUS_RATE_LIMITS = {scope: "100000/m" for scope in ("login", "nearest", "verify", "follow")}


@pytest.fixture(autouse=True)
def generous_rate_limits(settings):
    settings.CTR_RATE_LIMITS = dict(GENEROUS_RATE_LIMITS)


@pytest.fixture
def private_media(settings, tmp_path):
    """Uploaded photos under this test's own folder (private media, never the checkout's)."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def fresh_rate_limits():
    """The per-client limits start from zero (they live in the database cache)."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def smtp_server(settings, django_capture_on_commit_callbacks):
    """A real SMTP server on loopback that Django's SMTP backend sends to. config.mail sends
    after the transaction commits: inside a test's transaction, wrap the operation in
    `smtp_server.commit()` (the on-commit callbacks run at its end). Read what arrived in
    `smtp_server.messages`."""
    from tests import mail_server

    controller, received = mail_server.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = controller.port
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_HOST_USER = ""
    settings.EMAIL_HOST_PASSWORD = ""
    received.commit = lambda: django_capture_on_commit_callbacks(execute=True)
    try:
        yield received
    finally:
        controller.stop()


@pytest.fixture
def json_lines():
    """What the `ctr.access` and `ctr.jobs` loggers write through a handler configured as
    production's (the masking filter, the JSON formatter); a list of parsed lines."""
    import io
    import json
    import logging

    from config.log_privacy import MaskPersonalData
    from config.logs import JsonFormatter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(MaskPersonalData())
    handler.setFormatter(JsonFormatter())
    loggers = [logging.getLogger(name) for name in ("ctr.access", "ctr.jobs", "ctr.test")]
    for logger in loggers:
        logger.addHandler(handler)
    logging.getLogger("ctr.test").setLevel(logging.INFO)

    def lines():
        return [json.loads(line) for line in stream.getvalue().splitlines()]

    lines.text = stream.getvalue
    yield lines
    for logger in loggers:
        logger.removeHandler(handler)
