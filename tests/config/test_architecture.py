"""The arrows between the apps, as docs/architecture.md draws them: a test fails when code adds
an arrow the page does not allow, a circle between two modules, or an import of another
module's private (underscored) name; and when a module grows past what a reader holds."""

import ast
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# app -> the apps it may import (docs/architecture.md, "Arrows"). Lower layers never import
# higher ones; `bench` and the tests may import anything.
ALLOWED = {
    "config": set(),
    "audit": {"config"},
    # Who acts where: below every app whose rows it scopes.
    "jurisdiction": {"config"},
    "pev_network": {"config", "jurisdiction"},
    "maps": {"config", "jurisdiction", "pev_network"},
    "ctr": {"config", "audit", "jurisdiction", "pev_network", "maps"},
    "generators": {"config", "audit", "jurisdiction", "pev_network", "ctr", "maps"},
    "fiscalization": {
        "config",
        "audit",
        "jurisdiction",
        "pev_network",
        "ctr",
        "generators",
        "maps",
    },
    "ogc": {"config", "jurisdiction", "pev_network", "ctr"},
    "nucleo": {
        "config",
        "audit",
        "jurisdiction",
        "pev_network",
        "ctr",
        "generators",
        "fiscalization",
        "maps",
    },
    # Events out: hears ctr through ctr.signals, the reports through fiscalization.
    "webhooks": {
        "config",
        "audit",
        "jurisdiction",
        "pev_network",
        "ctr",
        "generators",
        "fiscalization",
    },
    # The periodic jobs and the worker: call the services of the apps they run.
    "jobs": {"config", "pev_network", "ctr", "generators", "fiscalization", "webhooks"},
    # Tools above every app: test data at scale, the demonstration, the guided tour.
    "synthetic": {"config", "jurisdiction", "pev_network", "ctr", "fiscalization"},
    "demo": {"config", "jurisdiction", "pev_network", "ctr", "generators", "fiscalization"},
    "tour": {"config", "jurisdiction", "ctr", "generators", "fiscalization"},
}
PACKAGES = set(ALLOWED) | {"bench"}
# The root URLconf wires every app's URLs: the one module of config that names them.
WIRING = {"config/urls.py"}


def modules(app: str):
    for path in sorted((ROOT / app).rglob("*.py")):
        if "migrations" not in path.parts:
            yield path


def imports(path: Path):
    """(module imported, names taken from it) for every absolute import of our packages."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            package = ".".join(path.relative_to(ROOT).with_suffix("").parts[: -node.level])
            if node.module is None:  # from . import bulk: each name is a module
                for alias in node.names:
                    yield f"{package}.{alias.name}", []
            else:
                module = f"{package}.{node.module}" if node.level else node.module
                yield module, [alias.name for alias in node.names]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.mark.parametrize("app", sorted(ALLOWED))
def test_each_app_imports_only_the_apps_below_it(app):
    wrong = sorted(
        f"{path.relative_to(ROOT)} imports {module}"
        for path in modules(app)
        if str(path.relative_to(ROOT)) not in WIRING
        for module, _ in imports(path)
        if (top := module.split(".")[0]) in PACKAGES and top != app and top not in ALLOWED[app]
    )
    assert wrong == []


def test_no_module_imports_another_modules_private_names():
    wrong = sorted(
        f"{path.relative_to(ROOT)}: {name} from {module}"
        for app in PACKAGES
        for path in modules(app)
        for module, names in imports(path)
        if module.split(".")[0] in PACKAGES and module != module_name(path)
        for name in names
        if name.startswith("_") and not name.startswith("__")
    )
    assert wrong == []


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports. `from .custody import stock` imports the
    module ctr.custody.stock (its package too, which runs first); a name that is no module is
    taken from the package."""
    paths = [path for app in PACKAGES for path in modules(app)]
    known = {module_name(path) for path in paths}
    graph: dict[str, set[str]] = {}
    for path in paths:
        targets = graph.setdefault(module_name(path), set())
        for module, names in imports(path):
            if module.split(".")[0] in PACKAGES:
                targets.add(module)
                targets.update(f"{module}.{name}" for name in names if f"{module}.{name}" in known)
    return graph


def test_the_graph_sees_the_modules_imported_from_a_package():
    graph = import_graph()
    assert {"ctr.custody", "ctr.custody.stock"} <= graph["ctr.api"]
    assert "ctr.field.offline" in graph["ctr.api_serializers"]


def test_no_two_modules_import_each_other():
    graph = import_graph()
    circles = sorted(
        f"{a} <-> {b}" for a, targets in graph.items() for b in targets
        if a < b and a in graph.get(b, ())
    )  # fmt: skip
    assert circles == []


# A module longer than this is split where it already splits (its parts, each named for what it
# holds); the tests and the migrations are not counted.
MAX_LINES = 900
LONG_ALLOWED = {
    # The synthetic data at scale: one generator, read top to bottom, kept whole on purpose.
    "synthetic/generator.py",
}
NOT_MODULES = {"tests", "migrations", "node_modules", "static", "staticfiles"}


def project_modules():
    """Every .py file of the project (apps, bench, scripts, deploy, manage.py) but the tests,
    the migrations and what is installed or collected."""
    for folder, folders, files in os.walk(ROOT):
        folders[:] = sorted(
            f for f in folders
            if not f.startswith(".") and f not in NOT_MODULES and not f.endswith(".egg-info")
        )  # fmt: skip
        for name in sorted(files):
            if name.endswith(".py"):
                yield Path(folder) / name


def test_no_module_is_longer_than_a_reader_holds():
    long = sorted(
        f"{path.relative_to(ROOT)}: {lines} lines"
        for path in project_modules()
        if str(path.relative_to(ROOT)) not in LONG_ALLOWED
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    )
    assert long == []


def test_the_long_modules_allowed_are_still_long():
    """An allowed module that came under the limit leaves the list, so that it cannot grow back."""
    short = sorted(
        name
        for name in LONG_ALLOWED
        if not (ROOT / name).exists()
        or len((ROOT / name).read_text(encoding="utf-8").splitlines()) <= MAX_LINES
    )
    assert short == []
