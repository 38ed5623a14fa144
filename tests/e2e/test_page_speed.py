"""What makes the phone pages fast, on each role's main pages at a phone's
390×844 in a real headless Chromium:

- no render-blocking script: every `<script src>` of the served HTML is deferred (`defer`,
  `async` or `type="module"`), the HTML as the server sent it, before any script ran;
- nothing moves while the page loads: the layout shifts a PerformanceObserver('layout-shift')
  records (those not caused by input, as Lighthouse counts them) sum to at most 0.05, the
  goal for cumulative layout shift. The scripts arrive late, as on a phone's network (each
  held 300 ms): what they change must already have its room. A layout property, not a time.
- map code only on the pages that show a map: Leaflet is not loaded elsewhere, and no page
  names it in a <script> (maps/map-loader.js loads it when a map comes near the viewport);
- what a phone does not see above the fold waits: the issue form's map (below the fold at
  390×844) is not built, nor Leaflet fetched, until the form is scrolled to it; then a tap on
  it fills the coordinates as before."""

from __future__ import annotations

import time
from html.parser import HTMLParser

import pytest

from fiscalization.models import DumpingReport
from tests.builders import offset, point
from tests.ctr_world import build_world, issue_hours_ago
from tests.e2e.conftest import Recorder, log_in, map_ready

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db", "frozen_today")]

PHONE = {"width": 390, "height": 844}
MAX_SHIFT = 0.05
SCRIPT_DELAY_S = 0.3
# After the load event: late blocks (a map's tiles, counts fetched by scripts) have arrived.
SETTLE_MS = 700

# (path, shows a map) per role, as bench/pages.py measures them.
PAGES = {
    None: [("/", False), ("/onde-descartar/", True), ("/denunciar/", True), ("/verificar/", False)],
    "alfa_user": [("/transportador/ctrs/", False), ("/transportador/ctrs/novo/", True)],
    "operator": [("/recebimentos/", False)],
    "generator_user": [("/gerador/", False)],
    "nucleo": [("/nucleo/", True), ("/nucleo/mapa/", True)],  # the dashboard: a choropleth
    "fiscal": [("/fiscalizacao/", True)],
}

# Before any page script: the sum of the layout shifts not caused by input.
OBSERVE_SHIFTS = """
window.__ctrShift = 0;
window.__ctrShifts = [];
new PerformanceObserver(function (list) {
  list.getEntries().forEach(function (entry) {
    if (entry.hadRecentInput) return;
    window.__ctrShift += entry.value;
    window.__ctrShifts.push([entry.value, (entry.sources || []).map(function (s) {
      var n = s.node;
      if (!n || n.nodeType !== 1) return String(n);
      var classes = typeof n.className === "string" ? n.className.split(" ").join(".") : "";
      var r = function (rect) { return [rect.x, rect.y, rect.width, rect.height].map(Math.round); };
      return n.tagName + (n.id ? "#" + n.id : "") + (classes ? "." + classes : "") + " " +
        JSON.stringify(r(s.previousRect)) + "→" + JSON.stringify(r(s.currentRect));
    })]);
  });
}).observe({ type: "layout-shift", buffered: true });
"""


class Scripts(HTMLParser):
    """The <script src> tags of a page, and those that block: neither defer, async nor a
    module."""

    def __init__(self):
        super().__init__()
        self.sources: list[str] = []
        self.blocking: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag != "script" or not attributes.get("src"):
            return
        self.sources.append(attributes["src"])
        deferred = "defer" in attributes or "async" in attributes
        if not deferred and attributes.get("type") != "module":
            self.blocking.append(attributes["src"])


@pytest.fixture
def world():
    world = build_world()
    world.ctr = issue_hours_ago(world, 100)  # overdue: the Núcleo's map and counts show it
    issue_hours_ago(world, 3)
    x, y = world.origin.coords
    DumpingReport.objects.create(
        municipality=world.town, location=point(*offset(x, y, 400, 300)), category="LOTE_VAGO"
    )
    return world


def late_scripts(route):
    """A phone's network: each script arrives 300 ms after it was asked for."""
    time.sleep(SCRIPT_DELAY_S)
    route.fallback()


@pytest.mark.parametrize("user", list(PAGES), ids=lambda u: u or "visitor")
def test_main_pages_block_on_no_script_and_do_not_move(chromium, live_server, world, user):
    context = chromium.new_context(viewport=PHONE, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    page.route("**/*.js", late_scripts)
    page.add_init_script(OBSERVE_SHIFTS)
    if user:
        log_in(page, live_server, getattr(world, user))
    blocking, moved, maps = [], [], []
    try:
        for path, has_map in PAGES[user]:
            response = page.goto(live_server.url + path, wait_until="load")
            assert response.status == 200, f"{path}: HTTP {response.status}"
            scripts = Scripts()
            scripts.feed(response.text())
            blocking += [f"{path}: {src}" for src in scripts.blocking]
            loader = any("maps/map-loader" in src for src in scripts.sources)
            if loader != has_map:
                maps.append(f"{path}: map loader {'loaded' if loader else 'missing'}")
            maps += [f"{path}: {s} in the HTML" for s in scripts.sources if "leaflet/" in s]
            page.wait_for_timeout(SETTLE_MS)
            shift = page.evaluate("window.__ctrShift")
            if shift > MAX_SHIFT:
                moved.append(f"{path}: {shift:.3f} {page.evaluate('window.__ctrShifts')}")
    finally:
        context.close()
    problems = [f"render-blocking script: {x}" for x in blocking]
    problems += [f"layout shift above {MAX_SHIFT}: {x}" for x in moved] + maps
    assert not problems, "\n".join(problems)
    assert recorder.page_errors == []


def test_the_issue_forms_map_waits_for_the_scroll_on_a_phone(chromium, live_server, world):
    context = chromium.new_context(viewport=PHONE, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    fetched = []
    page.on("request", lambda request: fetched.append(request.url))
    log_in(page, live_server, world.alfa_user)
    try:
        page.goto(live_server.url + "/transportador/ctrs/novo/", wait_until="load")
        page.wait_for_timeout(SETTLE_MS)
        name = page.get_attribute("#mapa", "data-map-var")
        # Below the fold: neither the map nor Leaflet yet (window[name] is the map's <div>,
        # a named property of window, until the map replaces it).
        assert page.evaluate("typeof L") == "undefined"
        assert page.evaluate("(name) => window[name] instanceof HTMLElement", name)
        assert not [url for url in fetched if "leaflet/leaflet.js" in url]
        assert page.locator("#mapa .leaflet-container").count() == 0
        # The choice of what a tap sets is there from the start (it must not push the map).
        assert page.is_visible("#alvo-mapa")

        assert map_ready(page) == name
        assert page.evaluate("(name) => window[name] instanceof L.Map", name)
        assert [url for url in fetched if "leaflet/leaflet.js" in url]
        # The page's script took the map: a tap sets the origin.
        x, y = world.origin.coords
        page.evaluate(f"window['{name}'].setView([{y}, {x}], 16, {{animate: false}})")
        xy = page.evaluate(f"window['{name}'].latLngToContainerPoint([{y}, {x}])")
        page.locator("#mapa .leaflet-container").click(position=xy)
        lat, lon = (page.input_value(f"#id_origin_{c}") for c in ("lat", "lon"))
        assert float(lat.replace(",", ".")) == pytest.approx(y, abs=1e-4)
        assert float(lon.replace(",", ".")) == pytest.approx(x, abs=1e-4)
        # What every map shares on a phone: the layer list starts collapsed.
        assert page.locator("#mapa .leaflet-control-layers-expanded").count() == 0
    finally:
        context.close()
    assert recorder.page_errors == []


def test_a_map_is_built_in_steps(chromium, live_server, world):
    """The Núcleo's map, once near the viewport, is built in several tasks (one folium
    element each, maps/map-loader.js), not in one long one: a task queued meanwhile runs while
    the map exists and its layer list does not yet."""
    context = chromium.new_context(viewport=PHONE, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    # A task every turn of the event loop, noting what of the map exists.
    page.add_init_script(
        """window.__ctrSeen = [];
        (function tick() {
          var box = document.querySelector("#mapa .leaflet-container");
          if (box) {
            window.__ctrSeen.push(box.querySelectorAll(".leaflet-control-layers").length);
          }
          if (!document.querySelector("#mapa .leaflet-control-layers")) setTimeout(tick, 0);
        })();"""
    )
    log_in(page, live_server, world.nucleo)
    try:
        page.goto(live_server.url + "/nucleo/mapa/", wait_until="load")
        page.locator("#mapa").scroll_into_view_if_needed()
        page.wait_for_selector("#mapa .leaflet-control-layers", state="attached")
        seen = page.evaluate("window.__ctrSeen")
    finally:
        context.close()
    assert 0 in seen, f"no task ran between the map's creation and its layer list: {seen}"
    assert recorder.page_errors == []
