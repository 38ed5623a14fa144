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


def describe() -> dict[str, str]:
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
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
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
        "carga (load average 1/5/15 min) ao final": (
            " / ".join(f"{x:.2f}" for x in load) if load else "?"
        ),
    }
