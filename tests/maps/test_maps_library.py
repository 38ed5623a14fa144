"""maps/ is a library with a public interface: the other apps build their maps from its
public names only, and the steps it owns (fitting the view, the layer control) are written
there once, not again in each app."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from maps import bounds
from maps.base import add_layer_control, base_map, render_parts

ROOT = Path(__file__).resolve().parents[2]
APPS = ("audit", "bench", "config", "ctr", "fiscalization", "nucleo", "ogc", "pev_network")


def app_modules():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_no_app_imports_a_private_name_of_maps():
    found = []
    for path, tree in app_modules():
        maps_modules = set()  # local names bound to maps' modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "maps":
                for alias in node.names:
                    if alias.name.startswith("_"):
                        found.append(f"{path.relative_to(ROOT)}: {node.module}.{alias.name}")
                    if node.module == "maps":
                        maps_modules.add(alias.asname or alias.name)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in maps_modules
                and node.attr.startswith("_")
            ):
                found.append(f"{path.relative_to(ROOT)}: {node.value.id}.{node.attr}")
    assert found == []


def test_fitting_the_view_and_the_layer_control_are_written_in_maps_only():
    """folium.FitBounds and folium.LayerControl appear in maps/ alone (maps.bounds.fit,
    maps.base.add_layer_control): a map elsewhere calls those."""
    found = []
    for path, tree in app_modules():
        for node in ast.walk(tree):
            name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
            if name in ("FitBounds", "LayerControl") and isinstance(node, ast.Attribute | ast.Name):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert found == []


def test_one_point_is_fitted_with_context_around_it():
    m = base_map()
    bounds.fit(m, [[-22.8, -45.2], [-22.8, -45.2]], point_margin_deg=0.003)
    script = render_parts(m).script
    assert "fitBounds" in script and "-22.797" in script and "-45.203" in script
    assert '"animate": false' in script


def test_a_window_needs_a_loaded_municipality():
    assert bounds.window(None) is None
    outline = {"bbox": [-45.3, -22.9, -45.1, -22.7]}
    assert bounds.window(outline, 0.1) == pytest.approx((-45.4, -23.0, -45.0, -22.6))


def test_layer_control_is_exposed_to_page_scripts_unless_asked_not_to():
    exposed, closed = base_map(), base_map()
    add_layer_control(exposed)
    add_layer_control(closed, expose=False)
    assert ".ctrLayerControl = " in render_parts(exposed).script
    assert ".ctrLayerControl = " not in render_parts(closed).script
