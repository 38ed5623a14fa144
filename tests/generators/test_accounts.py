"""Generator accounts: the Núcleo's and a transporter's invitations, whose e-mail reaches a real
SMTP server and whose link opens the account; the self-registration that the Núcleo confirms or
refuses; what a pending account cannot do."""

from __future__ import annotations

import datetime
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from audit.models import AccessLog
from config.rate_limits import RateLimit, Window
from ctr import roles
from ctr.models import Generator, Membership
from generators import accounts
from generators.models import GeneratorInvitation, GeneratorRegistration, RegistrationStatus
from tests.ctr_world import CNPJ_GAMA, CPF_GENERATOR, build_world, issue_hours_ago
from tests.mail_server import Received

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_today", "fresh_rate_limits")]

LINK = re.compile(r"https?://\S+(/gerador/convite/[A-Za-z0-9_-]+/)")
NEW_CNPJ = "11.222.333/0001-81"  # valid check digits, no generator with it in the world
BAD_CPF = "529.982.247-26"  # the last check digit is wrong
PASSWORD = "entulho-certo-2026"
User = get_user_model()


@pytest.fixture
def world():
    return build_world()


def web(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def body(message) -> str:
    return Received.body(message)


def link_in(message) -> str:
    """The invitation's path, as the e-mail's body gives it."""
    match = LINK.search(body(message))
    assert match, body(message)
    return match.group(1)


def assert_no_personal_data(subject: str, *values: str) -> None:
    digits = re.sub(r"\D", "", subject)
    for value in values:
        assert value not in subject
        only_digits = re.sub(r"\D", "", value)
        if only_digits:
            assert only_digits not in digits


# --- invitations -------------------------------------------------------------------------------


def test_nucleo_invites_a_new_generator_and_the_link_in_the_email_opens_its_account(
    world, smtp_server
):
    with smtp_server.commit():
        response = web(world.nucleo).post(
            "/nucleo/geradores/convites/",
            {"document": NEW_CNPJ, "name": "Obras Novas Ltda.", "email": "obras@exemplo.com.br"},
        )
    assert response.status_code == 302, response.content.decode()
    generator = Generator.objects.get(document="11222333000181")
    assert generator.name == "Obras Novas Ltda."
    [message] = smtp_server.to("obras@exemplo.com.br")
    assert_no_personal_data(message["Subject"], "Obras Novas", "11222333000181")
    assert "Obras Novas Ltda." in body(message)
    path = link_in(message)

    visitor = Client()
    page = visitor.get(path)
    assert page.status_code == 200
    assert "Obras Novas Ltda." in page.content.decode()
    done = visitor.post(
        path, {"username": "obras", "password": PASSWORD, "password_confirm": PASSWORD}
    )

    assert done.status_code == 302 and done["Location"] == "/painel/"
    user = User.objects.get(username="obras")
    assert user.email == "obras@exemplo.com.br" and user.check_password(PASSWORD)
    assert roles.membership(user).generator == generator
    invitation = GeneratorInvitation.objects.get()
    assert invitation.accepted_at is not None and invitation.account == user
    # Signed in as the new account.
    assert visitor.session["_auth_user_id"] == str(user.pk)


def test_only_a_hash_of_the_token_is_stored(world, smtp_server):
    with smtp_server.commit():
        accounts.invite(world.nucleo, "g@exemplo.com.br", CNPJ_GAMA)
    token = link_in(smtp_server.messages[0]).rstrip("/").rsplit("/", 1)[1]
    stored = GeneratorInvitation.objects.values_list("token_hash", flat=True).get()
    assert token not in stored and len(stored) == 64


def test_transporter_invites_a_generator_named_on_its_ctr(world, smtp_server):
    issue_hours_ago(world, 3)  # alfa carried for Maria da Obra (CPF_GENERATOR)
    with smtp_server.commit():
        response = api(world.alfa_user).post(
            "/api/v1/generator-invitations/",
            {"document": "529.982.247-25", "email": "maria@exemplo.com.br"},
            format="json",
        )
    assert response.status_code == 201, response.json()
    answer = response.json()
    assert answer["generator"]["document"] == CPF_GENERATOR and answer["state"] == "pending"
    assert answer["transporter_id"] == world.alfa.pk
    assert "token" not in str(answer).lower()
    [message] = smtp_server.to("maria@exemplo.com.br")
    assert "Caçambas Alfa Ltda." in body(message)
    assert_no_personal_data(message["Subject"], "Maria", CPF_GENERATOR)
    # The other transporter lists none of alfa's invitations.
    assert api(world.beta_user).get("/api/v1/generator-invitations/").json()["results"] == []


def test_transporter_cannot_invite_a_generator_it_never_carried(world, smtp_server):
    issue_hours_ago(world, 3)  # alfa carried for Maria; Gama is on no CTR of alfa
    with smtp_server.commit():
        response = api(world.alfa_user).post(
            "/api/v1/generator-invitations/",
            {"document": CNPJ_GAMA, "email": "gama@exemplo.com.br"},
            format="json",
        )
        page = web(world.beta_user).post(
            "/transportador/geradores/convites/",
            {"document": CPF_GENERATOR, "email": "maria@exemplo.com.br"},
        )

    assert response.status_code == 403
    problem = response.json()
    assert "não aparece em nenhum CTR" in problem["detail"]
    assert problem["errors"][0]["campo"] == "document"
    assert page.status_code == 403
    assert "só convida os geradores que atendeu" in page.content.decode()
    assert not GeneratorInvitation.objects.exists()
    assert smtp_server.messages == []


def test_an_unknown_document_gets_the_same_refusal_as_one_never_carried(world):
    """A transporter learns nothing of who else is registered."""
    response = api(world.alfa_user).post(
        "/api/v1/generator-invitations/",
        {"document": NEW_CNPJ, "email": "x@exemplo.com.br"},
        format="json",
    )
    assert response.status_code == 403
    assert "não aparece em nenhum CTR" in response.json()["detail"]


def test_invalid_document_is_a_400_in_portuguese_and_writes_nothing(world, smtp_server):
    with smtp_server.commit():
        response = api(world.nucleo).post(
            "/api/v1/generator-invitations/",
            {"document": BAD_CPF, "name": "Fulano", "email": "f@exemplo.com.br"},
            format="json",
        )
        page = web(world.nucleo).post(
            "/nucleo/geradores/convites/",
            {"document": BAD_CPF, "name": "Fulano", "email": "f@exemplo.com.br"},
        )
    assert response.status_code == 400
    assert "CPF inválido" in response.json()["detail"]
    assert page.status_code == 400 and "CPF inválido" in page.content.decode()
    assert not GeneratorInvitation.objects.exists()
    assert not Generator.objects.filter(name="Fulano").exists()
    assert smtp_server.messages == []


def test_nucleo_must_name_a_generator_it_creates(world):
    response = api(world.nucleo).post(
        "/api/v1/generator-invitations/",
        {"document": NEW_CNPJ, "email": "n@exemplo.com.br"},
        format="json",
    )
    assert response.status_code == 400
    assert "Informe o nome do gerador" in response.json()["detail"]
    assert not Generator.objects.filter(document="11222333000181").exists()


def test_an_existing_generator_keeps_its_name_when_invited(world):
    accounts.invite(world.nucleo, "g@exemplo.com.br", CNPJ_GAMA, "Outro Nome")
    world.gama.refresh_from_db()
    assert world.gama.name == "Construtora Gama Ltda."


def test_someone_without_a_role_cannot_invite(world):
    response = api(world.outsider).post("/api/v1/generator-invitations/", {}, format="json")
    assert response.status_code == 403
    assert "Só o Núcleo Permanente de Gestão e os transportadores" in response.json()["detail"]


def invitation_link(world, smtp_server, valid_days=accounts.INVITATION_DAYS) -> str:
    with smtp_server.commit():
        accounts.invite(world.nucleo, "g@exemplo.com.br", CNPJ_GAMA, valid_days=valid_days)
    return link_in(smtp_server.messages[-1])


def test_a_used_invitation_is_gone(world, smtp_server):
    path = invitation_link(world, smtp_server)
    data = {"username": "gama2", "password": PASSWORD, "password_confirm": PASSWORD}
    assert Client().post(path, data).status_code == 302

    again = Client().get(path)
    twice = Client().post(path, {**data, "username": "gama3"})

    assert again.status_code == 410 and twice.status_code == 410
    assert "já foi usado" in again.content.decode()
    assert not User.objects.filter(username="gama3").exists()


def test_an_expired_invitation_is_gone(world, smtp_server, frozen_today):
    path = invitation_link(world, smtp_server, valid_days=7)
    frozen_today.shift(datetime.timedelta(days=7, seconds=1))

    page = Client().get(path)

    assert page.status_code == 410
    assert "Este convite venceu em 07/12/2026" in page.content.decode()


def test_an_unknown_invitation_is_not_found(world):
    page = Client().get("/gerador/convite/nao-existe-este-token/")
    assert page.status_code == 404
    assert "Convite não encontrado" in page.content.decode()


def test_the_password_validators_apply_to_an_invitation(world, smtp_server):
    path = invitation_link(world, smtp_server)
    weak = Client().post(
        path, {"username": "gama2", "password": "12345678", "password_confirm": "12345678"}
    )
    assert weak.status_code == 400
    assert "senha" in weak.content.decode().lower()
    assert not User.objects.filter(username="gama2").exists()


def test_a_taken_user_name_is_refused_whatever_its_case(world, smtp_server):
    path = invitation_link(world, smtp_server)
    data = {"username": "ALFA", "password": PASSWORD, "password_confirm": PASSWORD}
    page = Client().post(path, data)
    assert page.status_code == 400
    assert "Este nome de usuário já está em uso" in page.content.decode()
    assert GeneratorInvitation.objects.get().accepted_at is None


# --- self-registration -------------------------------------------------------------------------


def registration(**changes) -> dict:
    data = {
        "name": "Maria da Obra",
        "document": "529.982.247-25",
        "email": "maria@exemplo.com.br",
        "username": "maria",
        "password": PASSWORD,
        "password_confirm": PASSWORD,
    }
    return {**data, **changes}


def test_an_invalid_cpf_is_a_400_in_portuguese_and_writes_nothing(world):
    users = User.objects.count()
    page = Client().post("/gerador/cadastro/", registration(document=BAD_CPF))
    assert page.status_code == 400
    assert "CPF inválido" in page.content.decode()
    assert User.objects.count() == users and not GeneratorRegistration.objects.exists()


def test_a_pending_registrant_acts_for_no_generator(world):
    client = Client()
    response = client.post("/gerador/cadastro/", registration())
    assert response.status_code == 302 and response["Location"] == "/gerador/cadastro/situacao/"

    user = User.objects.get(username="maria")
    assert roles.membership(user) is None
    assert GeneratorRegistration.objects.get(user=user).status == RegistrationStatus.PENDING
    status = client.get("/gerador/cadastro/situacao/")
    assert "Aguardando o Núcleo" in status.content.decode()
    # What an account without a role gets: no CTR, no generator's destinations.
    assert client.get("/api/v1/ctrs/").json()["results"] == []
    assert client.get("/nucleo/geradores/cadastros/").status_code == 403


def test_confirmation_links_the_existing_generator_without_renaming_it(world, smtp_server):
    Client().post(
        "/gerador/cadastro/",
        registration(name="Gama Construções", document=CNPJ_GAMA, username="gama2"),
    )
    pending = GeneratorRegistration.objects.get()
    detail = web(world.nucleo).get(f"/nucleo/geradores/cadastros/{pending.pk}/")
    assert "Construtora Gama Ltda." in detail.content.decode()
    assert "gerador" in detail.content.decode()  # its active account, named
    assert AccessLog.objects.filter(object_id=str(pending.pk)).exists()

    with smtp_server.commit():
        done = web(world.nucleo).post(f"/nucleo/geradores/cadastros/{pending.pk}/confirmar/")

    assert done.status_code == 302
    user = User.objects.get(username="gama2")
    assert roles.membership(user).generator == world.gama
    world.gama.refresh_from_db()
    assert world.gama.name == "Construtora Gama Ltda."
    [message] = smtp_server.to("maria@exemplo.com.br")
    assert "confirmado" in message["Subject"]
    assert_no_personal_data(message["Subject"], "Gama", CNPJ_GAMA)
    assert "gama2" in body(message)
    # The confirmed registration's page: its own account is no other account to warn about,
    # and no step is offered that was already taken.
    after = web(world.nucleo).get(f"/nucleo/geradores/cadastros/{pending.pk}/").content.decode()
    assert "Confirme só se" not in after and "alert-warning" not in after
    assert "Confirmar vincula" not in after
    assert "A conta gama2 age por ele." in after


def test_confirmation_registers_an_unknown_generator(world, smtp_server):
    Client().post("/gerador/cadastro/", registration(document=NEW_CNPJ, name="Obra Nova ME"))
    pending = GeneratorRegistration.objects.get()
    with smtp_server.commit():
        response = api(world.nucleo).post(f"/api/v1/generator-registrations/{pending.pk}/confirm/")
    assert response.status_code == 200, response.json()
    generator = Generator.objects.get(document="11222333000181")
    assert generator.name == "Obra Nova ME"
    assert response.json()["generator_id"] == generator.pk
    assert Membership.objects.get(user__username="maria").generator == generator
    assert len(smtp_server.messages) == 1


def test_refusal_needs_a_reason_and_sends_it(world, smtp_server):
    Client().post("/gerador/cadastro/", registration())
    pending = GeneratorRegistration.objects.get()
    url = f"/nucleo/geradores/cadastros/{pending.pk}/recusar/"

    empty = web(world.nucleo).post(url, {"reason": "  "})
    assert empty.status_code == 400
    pending.refresh_from_db()
    assert pending.status == RegistrationStatus.PENDING

    with smtp_server.commit():
        done = web(world.nucleo).post(url, {"reason": "O CPF não é do responsável pela obra."})
    assert done.status_code == 302
    pending.refresh_from_db()
    assert pending.status == RegistrationStatus.REFUSED
    assert roles.membership(pending.user) is None
    [message] = smtp_server.to("maria@exemplo.com.br")
    assert "O CPF não é do responsável pela obra." in body(message)
    assert_no_personal_data(message["Subject"], "Maria", CPF_GENERATOR)


def test_a_registration_is_decided_once(world):
    Client().post("/gerador/cadastro/", registration())
    pending = GeneratorRegistration.objects.get()
    client = api(world.nucleo)
    assert client.post(f"/api/v1/generator-registrations/{pending.pk}/confirm/").status_code == 200

    again = client.post(
        f"/api/v1/generator-registrations/{pending.pk}/refuse/", {"reason": "x"}, format="json"
    )

    assert again.status_code == 409
    assert "já foi confirmado" in again.json()["detail"]


def test_the_nucleo_lists_pending_registrations_with_masked_documents(world):
    Client().post("/gerador/cadastro/", registration())
    pending = GeneratorRegistration.objects.get()
    client = api(world.nucleo)

    listed = client.get("/api/v1/generator-registrations/").json()["results"]
    detail = client.get(f"/api/v1/generator-registrations/{pending.pk}/").json()

    assert [item["document"] for item in listed] == ["***.982.247-**"]
    assert detail["document"] == "529.982.247-25" and detail["email"] == "maria@exemplo.com.br"
    assert detail["known_generator"] is None
    assert AccessLog.objects.filter(purpose="API: cadastro de gerador").count() == 1
    assert client.get("/api/v1/generator-registrations/?status=refused").json()["results"] == []
    bad = client.get("/api/v1/generator-registrations/?status=talvez")
    assert bad.status_code == 400 and "Situação desconhecida" in bad.json()["detail"]


def test_a_signed_in_user_cannot_register_another_account(world):
    response = web(world.alfa_user).post("/gerador/cadastro/", registration())
    assert response.status_code == 403
    assert "Você está conectado como" in response.content.decode()
    assert not GeneratorRegistration.objects.exists()


def test_the_public_registration_is_rate_limited(world, monkeypatch):
    monkeypatch.setattr(
        accounts,
        "REGISTRATIONS",
        RateLimit("test-registration", (Window(600, 2, "10 minutos"),), "solicitações de cadastro"),
    )
    for n in range(2):
        sent = Client().post("/gerador/cadastro/", registration(username=f"maria{n}"))
        assert sent.status_code == 302

    third = Client().post("/gerador/cadastro/", registration(username="maria2"))

    assert third.status_code == 429
    assert int(third["Retry-After"]) > 0
    assert "Muitas solicitações de cadastro" in third.content.decode()
    assert GeneratorRegistration.objects.count() == 2
