"""Timing and the shapes of the results."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Stats:
    """Wall-clock seconds over `runs` runs (after a warm-up run that is not counted), and the
    median CPU time of this process (Python's share; it does not count the time spent waiting
    for PostgreSQL, nor time lost to other processes on a busy machine)."""

    median: float
    min: float
    max: float
    runs: int
    cpu_median: float = 0.0


def measure(fn: Callable[[], object], runs: int, warmup: int = 1) -> Stats:
    for _ in range(warmup):
        fn()
    times, cpu = [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return Stats(statistics.median(times), min(times), max(times), runs, statistics.median(cpu))


@dataclass
class Result:
    benchmark: str
    case: str  # a short key
    label: str  # what it is, in Portuguese
    size: int  # CTRs in the database
    reports: int  # dumping reports in the database
    url: str
    html_bytes: int
    stats: Stats
    queries: int
    sql_seconds: float
    baseline: bool = False
    ratio: float | None = None  # median / the baseline's median, same size and run
    parts: list[tuple[str, int]] | None = None  # what the HTML is made of, largest first


@dataclass
class Plan:
    """A query of a page, its time in that page and (for the slowest) its EXPLAIN ANALYZE."""

    label: str
    seconds: float
    sql: str
    plan: str = ""


@dataclass
class Generation:
    size: int
    reports: int
    seconds: float
    command: str
    reused: bool = False
