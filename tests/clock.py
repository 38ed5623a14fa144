"""The test clock. No test may depend on the day it runs: a test that needs a date runs with the
clock frozen at FROZEN_NOW (`frozen_today` fixture, or `frozen_clock()` around module-scoped
data), an instant on tests.ctr_world.TODAY; every other test passes on any date, which CI checks
by running the suite a second time with the clock moved years ahead (tests/conftest.py,
CTR_TEST_CLOCK_SHIFT_DAYS)."""

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
