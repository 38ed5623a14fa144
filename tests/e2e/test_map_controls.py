"""The maps in Portuguese and the issue map's facilities big enough to tap: Leaflet's own controls
(zoom titles, attribution prefix, scale) speak pt-BR on every map of the site (they all come from
maps.base.LocalAssetsMap), and on a phone each facility's marker on "Emitir CTR" is at least 44 px
to tap (WCAG 2.5.5)."""

from __future__ import annotations

import pytest

from tests.ctr_world import build_world
from tests.e2e.conftest import log_in, map_ready
from tests.e2e.test_offline_list import sized_page

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]

CONTROLS = """() => ({
  zoomIn: document.querySelector(".leaflet-control-zoom-in").title,
  zoomOut: document.querySelector(".leaflet-control-zoom-out").title,
  attribution: document.querySelector(".leaflet-control-attribution").innerHTML,
  scale: [...document.querySelectorAll(".leaflet-control-scale-line")].map((e) => e.textContent),
})"""


def assert_portuguese(controls: dict) -> None:
    assert controls["zoomIn"] == "Aproximar"
    assert controls["zoomOut"] == "Afastar"
    assert "A JavaScript library for interactive maps" not in controls["attribution"]
    assert "Biblioteca JavaScript de mapas interativos" in controls["attribution"]
    # Metres only: no feet nor miles.
    assert controls["scale"] and all(
        text.endswith(" m") or text.endswith(" km") for text in controls["scale"]
    ), controls["scale"]


def test_the_issue_map_speaks_portuguese_and_its_facilities_are_big_enough_to_tap(
    chromium, live_server, shot
):
    world = build_world()
    context, page, recorder = sized_page(chromium, live_server, (390, 844))
    log_in(page, live_server, world.alfa_user)
    page.goto(f"{live_server.url}/transportador/ctrs/novo/")
    map_ready(page)
    page.wait_for_selector("#mapa .leaflet-overlay-pane svg path")
    assert_portuguese(page.evaluate(CONTROLS))

    # Each facility's point: its largest tap target 44 px or more, whatever the zoom.
    name = map_ready(page)
    sizes = page.evaluate(
        f"""() => {{
          const map = window['{name}'];
          const sizes = {{}};
          map.eachLayer((layer) => {{
            if (layer instanceof L.CircleMarker && layer.options.interactive !== false
                && layer.feature && layer.feature.properties.kind) {{
              const box = layer.getElement().getBoundingClientRect();
              const id = layer.feature.properties.id;
              sizes[id] = Math.max(sizes[id] || 0, Math.min(box.width, box.height));
            }}
          }});
          return Object.values(sizes);
        }}"""
    )
    assert len(sizes) >= 2
    assert min(sizes) >= 44, sizes
    # For the screenshot: the facilities at city zoom.
    anchor = world.att.area.point_on_surface
    page.locator("#mapa").scroll_into_view_if_needed()
    page.evaluate(f"window['{name}'].setView([{anchor.y}, {anchor.x}], 13, {{animate: false}})")
    shot(page, "mapa-emitir-alvos-390.png")
    assert recorder.js_errors() == []
    context.close()


def test_the_public_map_speaks_portuguese(chromium, live_server):
    build_world()
    context, page, recorder = sized_page(chromium, live_server, (1366, 900))
    page.goto(f"{live_server.url}/onde-descartar/")
    map_ready(page)
    page.wait_for_selector(".leaflet-control-zoom-in")
    assert_portuguese(page.evaluate(CONTROLS))
    assert recorder.js_errors() == []
    context.close()
