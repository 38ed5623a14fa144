"""A new municipal staff account's first password (jurisdiction.accounts): a link the person
follows, once, before it expires; `manage.py send_password_link` sends a new one."""

from __future__ import annotations

import datetime
import io
from urllib.parse import urlsplit

import pytest
import time_machine
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from jurisdiction.accounts import password_link, send_password_link
from jurisdiction.models import Role, StaffRole
from tests.builders import municipality
from tests.ctr_world import make_user

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "Entulho-no-lugar-certo-2026"


@pytest.fixture
def newcomer():
    """A Núcleo account as the onboarding creates it: no usable password."""
    town = municipality("3502507", "Aparecida")
    user = get_user_model().objects.create_user("ana@example.org", "ana@example.org")
    user.set_unusable_password()
    user.save()
    StaffRole.objects.create(user=user, municipality=town, role=Role.NUCLEO)
    return user


def form_url(client: Client, link: str) -> str:
    """Django's view moves the token into the session and sends the browser on."""
    response = client.get(urlsplit(link).path)
    assert response.status_code == 302
    assert response.url.endswith("/definir/")
    return response.url


def test_the_link_lets_the_person_choose_its_password_and_signs_it_in(newcomer):
    client = Client()
    url = form_url(client, password_link(newcomer).url)
    page = client.get(url)
    assert page.status_code == 200
    assert "Definir a senha" in page.content.decode()
    response = client.post(url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert response.status_code == 302 and response.url == "/painel/"
    newcomer.refresh_from_db()
    assert newcomer.check_password(NEW_PASSWORD)
    # Signed in: the panel sends the Núcleo to its dashboard.
    assert client.get("/painel/").url == "/nucleo/"


def test_two_different_passwords_are_refused_in_portuguese(newcomer):
    client = Client()
    url = form_url(client, password_link(newcomer).url)
    response = client.post(url, {"new_password1": NEW_PASSWORD, "new_password2": "outra"})
    assert response.status_code == 200
    assert "Os dois campos de senha não correspondem" in response.content.decode()
    newcomer.refresh_from_db()
    assert not newcomer.has_usable_password()


def test_the_link_works_once(newcomer):
    link = password_link(newcomer).url
    client = Client()
    url = form_url(client, link)
    client.post(url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    again = Client().get(urlsplit(link).path)
    assert again.status_code == 200
    assert "Este endereço não vale mais" in again.content.decode()


def test_the_link_expires(newcomer):
    link = password_link(newcomer)
    assert link.expires > datetime.datetime.now(datetime.UTC)
    later = link.expires + datetime.timedelta(minutes=1)
    with time_machine.travel(later, tick=False):
        page = Client().get(urlsplit(link.url).path)
    assert page.status_code == 200 and "Este endereço não vale mais" in page.content.decode()
    expected = settings.PASSWORD_RESET_TIMEOUT
    assert abs((link.expires - datetime.datetime.now(datetime.UTC)).total_seconds() - expected) < 60


def test_the_e_mail_carries_the_link_and_no_personal_data_in_its_subject(
    newcomer, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        link = send_password_link(newcomer, "Você foi cadastrado(a) no Núcleo de Aparecida/SP.")
    (message,) = mail.outbox
    assert message.to == ["ana@example.org"]
    assert "ana" not in message.subject.lower() and "Aparecida" not in message.subject
    assert link.url in message.body and link.expires_text in message.body
    assert "Núcleo de Aparecida/SP" in message.body


def test_send_password_link_sends_a_new_one(newcomer, django_capture_on_commit_callbacks):
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("send_password_link", "ana@example.org", "--show-link", stdout=out)
    text = out.getvalue()
    assert "Link enviado a ana@example.org" in text and "/conta/senha/" in text
    (message,) = mail.outbox
    assert "Núcleo Permanente de Gestão em Aparecida/SP" in message.body


@pytest.mark.parametrize(
    "account, reason",
    [
        ("ninguem@example.org", "Não há conta com o usuário ou e-mail"),
        ("curioso", "não tem papel municipal"),
    ],
)
def test_send_password_link_refuses_who_is_not_municipal_staff(newcomer, account, reason):
    make_user("curioso")
    with pytest.raises(CommandError) as error:
        call_command("send_password_link", account, stdout=io.StringIO())
    assert reason in str(error.value)
    assert mail.outbox == []
