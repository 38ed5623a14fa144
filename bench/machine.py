"""What the figures were measured on."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return None


def load() -> tuple[float, float, float] | None:
    """The load average now (1, 5, 15 min), where the system has one."""
    return os.getloadavg() if hasattr(os, "getloadavg") else None


def _load_text(values) -> str:
    return " / ".join(f"{x:.2f}" for x in values) if values else "?"


def describe(load_at_start: tuple[float, float, float] | None = None) -> dict[str, str]:
    """The machine and its software; the load at the end (now) and, when given, at the start
    (a busy machine inflates and spreads the times)."""
    import django
    import folium
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        pg = cursor.fetchone()[0]
        cursor.execute("SELECT postgis_lib_version(), postgis_geos_version()")
        postgis, geos = cursor.fetchone()
        cursor.execute("SHOW shared_buffers")
        shared_buffers = cursor.fetchone()[0]
        cursor.execute("SHOW work_mem")
        work_mem = cursor.fetchone()[0]
    memory = _memory_gib()
    described = {
        "CPU": _cpu_model(),
        "núcleos (os.cpu_count)": str(os.cpu_count()),
        "memória": f"{memory:.1f} GiB" if memory else "?",
        "sistema": f"{platform.system()} {platform.release()}",
        "Python": platform.python_version(),
        "Django": django.get_version(),
        "folium": folium.__version__,
        "PostgreSQL": pg,
        "PostGIS": f"{postgis} (GEOS {geos})",
        "PostgreSQL shared_buffers / work_mem": f"{shared_buffers} / {work_mem}",
        "carga (load average 1/5/15 min) ao final": _load_text(load()),
    }
    if load_at_start:
        described["carga (load average 1/5/15 min) no início"] = _load_text(load_at_start)
    return described
