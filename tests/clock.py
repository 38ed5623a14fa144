"""The test clock. No test may depend on the day it runs: a test that needs a date runs with the
clock frozen at FROZEN_NOW (`frozen_today` fixture, or `frozen_clock()` around module-scoped
data), an instant on tests.ctr_world.TODAY; every other test passes on any date, which CI checks
by running the suite a second time with the clock moved years ahead (tests/conftest.py,
CTR_TEST_CLOCK_SHIFT_DAYS).

Both move the clock of the test process only: the live server's thread shares it, the database
server and subprocesses keep the real one. Hence no SQL of the application reads now() or
CURRENT_DATE (the times come from Python), and the subprocesses the tests start do not need the
test's clock: tests/config/test_faults.py's gunicorn serves a world of fixed dates (TODAY,
registrations valid 2025-2027) whatever the day; the `manage.py check --deploy` of
tests/config/test_security_settings.py, the pg_dump/pg_restore/migrate of
tests/config/test_backup_restore.py and the GDAL tools of tests/interop/ and
tests/nucleo/test_nucleo_exports.py read no date. Chromium (tests/e2e/) keeps the real clock
too: cookies carry a Max-Age, which it counts from its own clock."""

from __future__ import annotations

import datetime
from zoneinfo import ZoneInfo

import time_machine

from tests.ctr_world import TODAY

# 10h in the municipality's time zone: hours of a test's run stay on TODAY.
FROZEN_NOW = datetime.datetime.combine(TODAY, datetime.time(10), ZoneInfo("America/Sao_Paulo"))


def frozen_clock(instant: datetime.datetime = FROZEN_NOW) -> time_machine.travel:
    """The clock of this process (every thread: the live server's too) at `instant`, ticking
    from there. Subprocesses keep the real clock. Use as a context manager."""
    return time_machine.travel(instant, tick=True)
