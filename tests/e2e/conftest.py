"""Shared browser fixtures: Debian's Chromium driven by Playwright, no network but the live
server, and a recorder of JavaScript errors."""

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import sync_playwright

from tour.walk import CHROMIUM, CHROMIUM_ARGS


class Recorder:
    """Page errors, console errors and the requests aborted because they left the server."""

    def __init__(self, page, server_url: str):
        self.server = urlsplit(server_url).netloc
        self.page_errors: list[str] = []
        self.console_errors: list[tuple[str, str]] = []
        self.aborted: list[str] = []
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        page.on(
            "console",
            lambda msg: (
                self.console_errors.append((msg.text, msg.location.get("url", "")))
                if msg.type == "error"
                else None
            ),
        )
        page.route("**/*", self.route)

    def route(self, route):
        url = route.request.url
        if urlsplit(url).netloc == self.server:
            route.continue_()
        else:
            self.aborted.append(url)
            route.abort()

    def js_errors(self, expected_error_page: str | None = None) -> list[str]:
        """Page errors, and console errors other than Chromium's reports of the tile requests
        we aborted (and of `expected_error_page`'s own HTTP status, when a test asks for 400)."""
        aborted_hosts = {urlsplit(u).netloc for u in self.aborted}

        def expected(text: str, url: str) -> bool:
            if urlsplit(url).netloc in aborted_hosts or "net::ERR_FAILED" in text:
                return True
            return url == expected_error_page and text.startswith("Failed to load resource")

        return self.page_errors + [
            text for text, url in self.console_errors if not expected(text, url)
        ]


SCREENSHOTS = pytest.StashKey[Path]()


@pytest.fixture(scope="session")
def screenshot_dir(request, tmp_path_factory) -> Path:
    """A folder of this run's own under pytest's temporary base (never the checkout; pytest
    keeps the last three runs'), or the folder CTR_E2E_SCREENSHOTS names; told at the end."""
    chosen = os.environ.get("CTR_E2E_SCREENSHOTS", "").strip()
    if chosen:
        folder = Path(chosen).resolve()
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder = tmp_path_factory.mktemp("screenshots")
    request.config.stash[SCREENSHOTS] = folder
    return folder


@pytest.fixture
def shot(screenshot_dir):
    """`shot(page, "name.png")`: a full-page screenshot into this run's folder; its path."""

    def take(page, name: str) -> Path:
        path = screenshot_dir / name
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


def pytest_terminal_summary(terminalreporter, config):
    folder = config.stash.get(SCREENSHOTS, None)
    if folder is not None and any(folder.iterdir()):
        terminalreporter.write_line(f"Capturas de tela dos testes e2e: {folder}")


@pytest.fixture(scope="session")
def chromium():
    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield browser
    browser.close()
    playwright.stop()


@pytest.fixture
def browser_page(chromium, live_server):
    context = chromium.new_context(viewport={"width": 1366, "height": 900}, locale="pt-BR")
    page = context.new_page()
    page.recorder = Recorder(page, live_server.url)
    yield page
    context.close()


def log_in(page, live_server, user) -> None:
    """Give the browser a session of `user` (no dependence on any login page's markup)."""
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": cookie.value, "url": live_server.url}]
    )


def map_ready(page, frame: str = "#mapa") -> str:
    """The folium map in `frame` (an element with data-map-var), built: maps/map-loader.js
    builds a map only when it comes near the viewport, so the frame is scrolled into view
    first. Returns the name of the map's global (window[name] is its L.Map)."""
    page.locator(frame).scroll_into_view_if_needed()
    page.wait_for_selector(f"{frame} [data-map-ready]", state="attached")
    return page.get_attribute(frame, "data-map-var")
