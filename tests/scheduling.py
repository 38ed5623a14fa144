"""How `make test` deals the suite out to its pytest-xdist workers: as --dist load (each test on
its own, in pytest-django's order: every test in a transaction before any that flushes), except
that the tests of one class go to one worker, together. A class's fixture (the API fuzz builds a
world and draws its cases once for its class, tests/config/test_api_fuzz.py) is then built once
in the run, not once in each worker its tests reach. The classes are dealt first (xdist orders
scopes by their number of tests, and keeps the order of the rest).

xdist's own `loadgroup` marks do nothing under pytest 9: xdist renames the marked items through
an attribute (`_nodeid`) that pytest no longer reads."""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling


def scope_of(nodeid: str) -> str:
    """The unit a test is dealt in: its class ("file::Class") or, outside a class, itself."""
    module, _, rest = nodeid.partition("::")
    owner, _, test = rest.partition("::")
    return f"{module}::{owner}" if test else nodeid


class ClassesTogether(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        return scope_of(nodeid)
