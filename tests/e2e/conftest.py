"""Shared browser fixtures: Debian's Chromium driven by Playwright, no network but the live
server, and a recorder of JavaScript errors."""

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import sync_playwright

from tests.e2e.test_onde_descartar import CHROMIUM, CHROMIUM_ARGS, Recorder


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
