"""config.rows: instances built from one SELECT's row, by threads of one worker at once."""

from __future__ import annotations

import threading

from django.db import connection

from config.rows import Columns
from ctr.models import Vehicle


def test_a_thread_never_builds_with_the_converters_another_thread_is_still_listing(monkeypatch):
    """gunicorn's gthread workers serve several requests at once: the first issues on a fresh
    worker built each part's converters in two threads together, and the one that found the
    list half-filled failed on the row (zip ... is shorter: a 500 in CI's fault test)."""
    columns = Columns(Vehicle, "v")
    operations = type(connection.ops)
    listing = operations.get_db_converters
    halfway, go_on = threading.Event(), threading.Event()
    slow = {}

    def held_on_the_second_field(ops, expression):
        if threading.current_thread() is slow.get("thread"):
            slow["calls"] = slow.get("calls", 0) + 1
            if slow["calls"] == 2:  # one field listed, the others not yet
                halfway.set()
                assert go_on.wait(10)
        return listing(ops, expression)

    monkeypatch.setattr(operations, "get_db_converters", held_on_the_second_field)
    built_by_the_slow_thread = []
    thread = threading.Thread(target=lambda: built_by_the_slow_thread.append(columns.converters()))
    slow["thread"] = thread
    thread.start()
    try:
        assert halfway.wait(10)
        row = (7, 3, "ABC1D23", "Basculante", True)
        vehicle = columns.build(row)
    finally:
        go_on.set()
        thread.join(10)

    assert (vehicle.pk, vehicle.transporter_id, vehicle.plate, vehicle.active) == (
        7,
        3,
        "ABC1D23",
        True,
    )
    assert len(built_by_the_slow_thread[0]) == len(columns.fields) == len(row)
    assert len(columns.converters()) == len(row)
