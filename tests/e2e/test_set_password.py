"""The link a new municipal staff account gets (jurisdiction.accounts), in a
real Chromium at a phone's 390×844 and a desktop's 1366×900: the page fits the screen and the
finger, and the person sets its password and lands on its municipality's panel."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from jurisdiction.accounts import password_link
from jurisdiction.models import Role, StaffRole
from tests.builders import municipality
from tests.e2e.conftest import Recorder
from tests.e2e.test_phone_layout import MEASURE, MIN_TARGET, WIDTHS

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("transactional_db")]

PASSWORD = "Entulho-no-lugar-certo-2026"


def measure(page, label: str, width: str) -> list[str]:
    measured = page.evaluate(MEASURE)
    problems = []
    if measured["scrollWidth"] > measured["innerWidth"]:
        problems.append(f"{label}: scrolls sideways: {measured['wide'][:3]}")
    if width == "phone":
        problems += [f"{label}: tap target under {MIN_TARGET} px: {s}" for s in measured["small"]]
    return problems


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_new_nucleo_sets_its_password_from_the_link(chromium, live_server, width):
    town = municipality("3502507", "Aparecida")
    user = get_user_model().objects.create_user("ana@example.org", "ana@example.org")
    user.set_unusable_password()
    user.save()
    StaffRole.objects.create(user=user, municipality=town, role=Role.NUCLEO)
    path = password_link(user).url.split("://", 1)[1].split("/", 1)[1]

    w, h = WIDTHS[width]
    context = chromium.new_context(viewport={"width": w, "height": h}, locale="pt-BR")
    page = context.new_page()
    recorder = Recorder(page, live_server.url)
    try:
        page.goto(f"{live_server.url}/{path}")
        page.wait_for_load_state("load")
        assert page.url.endswith("/definir/")
        problems = measure(page, "formulário", width)
        # Two different passwords: the form comes back with the error, still fitting.
        page.fill("#id_new_password1", PASSWORD)
        page.fill("#id_new_password2", "outra-coisa")
        page.click("button[type=submit]")
        page.wait_for_load_state("load")
        assert "não correspondem" in page.content()
        problems += measure(page, "formulário com erro", width)
        page.fill("#id_new_password1", PASSWORD)
        page.fill("#id_new_password2", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/nucleo/**")
        assert "Aparecida/SP" in page.locator(".jurisdiction-bar").inner_text()
    finally:
        context.close()
    assert not problems, "\n".join(problems)
    assert recorder.page_errors == []
    user.refresh_from_db()
    assert user.check_password(PASSWORD)
