"""The generator accounts' objects that tests/config/test_authorization_matrix.py names: a
valid invitation (its token known, as only its e-mail knows it) and pending self-registrations
of people without a role."""

from __future__ import annotations

import datetime
import hashlib

from django.contrib.auth import get_user_model
from django.utils import timezone

from generators.models import GeneratorInvitation, GeneratorRegistration

INVITATION_TOKEN = "convite-da-matriz-de-autorizacao"


def pending_registration(
    username: str, document: str = "52998224725", municipality=None
) -> GeneratorRegistration:
    """A registration sent to the Núcleo of `municipality` (the generator chooses
    it)."""
    user = get_user_model().objects.create_user(username, f"{username}@example.org", "senha-teste")
    return GeneratorRegistration.objects.create(
        user=user, name="Maria da Obra", document=document, email=user.email,
        municipality=municipality,
    )  # fmt: skip


def account_objects(world) -> dict[str, object]:
    GeneratorInvitation.objects.create(
        generator=world.gama,
        email="gama@example.org",
        token_hash=hashlib.sha256(INVITATION_TOKEN.encode()).hexdigest(),
        invited_by=world.nucleo,
        municipality=world.town,
        expires_at=timezone.now() + datetime.timedelta(days=7),
    )
    return {
        "invitation_token": INVITATION_TOKEN,
        # One to look at and refuse, one the web confirms, one the API confirms: each
        # registration is decided once.
        "registration": pending_registration("cadastro-pendente", municipality=world.town).pk,
        "registration_web": pending_registration("cadastro-web", municipality=world.town).pk,
        "registration_api": pending_registration("cadastro-api", municipality=world.town).pk,
    }
