"""Generator accounts: the Núcleo's or a transporter's invitation by e-mail,
the self-registration that the Núcleo confirms or refuses, and their e-mails.

A generator (Lei 3.978/2007 art. 3 VIII-IX) acts through a user with `Membership(generator=…)`.
The Núcleo may invite any generator (art. 4 §2 V: it keeps the registries); a transporter only
one named on its own CTRs, the generators it owes the proof of destination (art. 13 p.ú.). A
self-registered account exists at once but has no Membership until the Núcleo confirms it, so
until then it sees what any signed-in user without a role sees: nothing of anyone's.

Each invitation and registration is one municipality's: the Núcleo's that sent the
invitation (or of the CTR on which the inviting transporter carried for the generator), the
one the generator chose to register with. Only that municipality's staff list and decide them
(jurisdiction.scope: `visible_to`, `require_acting`).

One transaction per operation; every refusal is an `AccountError` (a `DomainError`) with a
Portuguese message, the field it concerns and its HTTP status; e-mails leave after commit
(`config.mail`), with no personal data in the subject.
"""

from __future__ import annotations

import datetime
import hashlib
import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone

from config import mail
from config.br import br_datetime
from config.errors import DomainError
from config.rate_limits import RateLimit, Window
from ctr import roles
from ctr.documents import document_kind, format_document, normalize_document
from ctr.models import CTR, Generator, Membership, Worksite
from jurisdiction.access import reads_only
from jurisdiction.models import Role, StaffRole
from jurisdiction.scope import AUDITOR_REFUSAL, jurisdiction_of, municipalities, require_acting
from pev_network.letterhead import letterhead_by_id

from .models import GeneratorInvitation, GeneratorRegistration, RegistrationStatus

INVITATION_DAYS = 7
# 256 bits: the token cannot be guessed, so a plain SHA-256 of it is enough to store (a slow
# password hash protects secrets people choose, which can be tried from a dictionary).
TOKEN_BYTES = 32
MAX_REASON = 1000
# Who invited, in a sentence ("{inviter} convidou você"); capitalised where it opens one.
NUCLEO = "o Núcleo Permanente de Gestão"

# Subjects carry no personal data: a shared inbox, a locked phone's notification and a mail
# server's log show them (config.mail.send).
INVITATION_SUBJECT = "Convite para a conta de gerador no CTR"
CONFIRMED_SUBJECT = "Cadastro de gerador confirmado"
REFUSED_SUBJECT = "Cadastro de gerador não confirmado"

# The public self-registration, limited per client address like the other public forms
# (config.rate_limits). Registrations are rare (a municipality confirms a few a week), so even
# the hundreds of people behind one carrier's CGNAT address never come near 10 in 10 minutes,
# while a script that floods the Núcleo's queue with fake accounts stops there.
REGISTRATIONS = RateLimit(
    "generator-registration",
    (Window(10 * 60, 10, "10 minutos"), Window(24 * 3600, 50, "24 horas")),
    "solicitações de cadastro",
)
# Every submission, saved or refused: each one hashes a password.
ATTEMPTS = RateLimit(
    "generator-registration-attempt", (Window(10 * 60, 60, "10 minutos"),), "tentativas de cadastro"
)


class AccountError(DomainError):
    """An account operation refused; nothing was written."""

    code = "account"


class NotAllowed(AccountError):
    status = 403
    code = "forbidden"


class InvitationUnknown(AccountError):
    status = 404
    code = "invitation_unknown"


class InvitationGone(AccountError):
    """Used or expired: the link existed and will never work again."""

    status = 410
    code = "invitation_gone"


class AlreadyDecided(AccountError):
    status = 409
    code = "already_decided"


# --- input -----------------------------------------------------------------------------------


def _document(value: str) -> str:
    try:
        return normalize_document(value)
    except ValidationError as error:
        raise AccountError(error.messages[0], code="document", field="document") from None


def _email(value: str) -> str:
    address = (value or "").strip()
    if not address:
        raise AccountError("Informe o e-mail.", code="email", field="email")
    try:
        validate_email(address)
    except ValidationError:
        raise AccountError(
            f"E-mail inválido: “{address[:100]}”. Use um endereço como nome@exemplo.com.br.",
            code="email",
            field="email",
        ) from None
    if len(address) > 254:
        raise AccountError("O e-mail vai até 254 caracteres.", code="email", field="email")
    return get_user_model().objects.normalize_email(address)


def _name(value: str, missing: str = "Informe o nome do gerador.") -> str:
    name = " ".join((value or "").split())
    if not name:
        raise AccountError(missing, code="name", field="name")
    if len(name) > 200:
        raise AccountError("O nome vai até 200 caracteres.", code="name", field="name")
    return name


def _username(value: str) -> str:
    username = (value or "").strip()
    if not username:
        raise AccountError("Escolha um nome de usuário.", code="username", field="username")
    if len(username) > 150:
        raise AccountError(
            "O nome de usuário vai até 150 caracteres.", code="username", field="username"
        )
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        raise AccountError(
            "Nome de usuário inválido: use letras, números e os sinais @ . + - _ (sem espaços).",
            code="username",
            field="username",
        ) from None
    # Case-insensitive: "Maria" and "maria" would be two accounts a person cannot tell apart.
    if get_user_model().objects.filter(username__iexact=username).exists():
        raise _username_taken()
    return username


def _username_taken() -> AccountError:
    return AccountError(
        "Este nome de usuário já está em uso: escolha outro.",
        code="username_taken",
        field="username",
    )


def _create_account(username: str, password: str, email: str, name: str = ""):
    """A new user with Django's password validators (settings.AUTH_PASSWORD_VALIDATORS)."""
    username = _username(username)
    # The validators compare the password with the user's name, user name and e-mail.
    candidate = get_user_model()(username=username, email=email, first_name=name[:150])
    try:
        validate_password(password or "", candidate)
    except ValidationError as error:
        raise AccountError(" ".join(error.messages), code="password", field="password") from None
    try:
        with transaction.atomic():
            return get_user_model().objects.create_user(username, email, password)
    except IntegrityError:  # the same user name chosen at the same moment
        raise _username_taken() from None


def signed_by(user):
    """The letterhead of an e-mail a person of the municipal staff sends: the municipality it
    works in now; the platform's for anyone else (a transporter)."""
    return letterhead_by_id(jurisdiction_of(user).current_id)


DECIDERS = (
    "Só o Núcleo Permanente de Gestão e a fiscalização municipal decidem os cadastros de geradores."
)


def _require_decider(user, registration: GeneratorRegistration) -> None:
    """The staff of the registration's municipality decide it: 404 for anyone
    else's staff, 403 for the auditor and for whoever is not staff at all."""
    if not roles.is_municipal(user):
        raise NotAllowed(DECIDERS)
    require_acting(user, registration.municipality_id)


# --- invitations -----------------------------------------------------------------------------


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _generator_for_nucleo(document: str, name: str) -> Generator:
    """The generator of `document`, created from `name` when the registry does not know it (an
    existing one keeps its name)."""
    existing = Generator.objects.filter(document=document).first()
    if existing is not None:
        return existing
    name = _name(
        name,
        f"Informe o nome do gerador: o {document_kind(document)} {format_document(document)} "
        "ainda não está cadastrado.",
    )
    generator, _ = Generator.objects.get_or_create(document=document, defaults={"name": name})
    return generator


def _carried_generator(transporter, document: str) -> tuple[Generator, int]:
    """A generator named on at least one of the transporter's CTRs (art. 13 p.ú.), and the
    municipality of the latest of them (the invitation's). A document it never carried for
    gets the same answer whether or not it exists: a transporter learns nothing about other
    people's registrations."""
    carried = (
        CTR.objects.filter(transporter=transporter, generator__document=document)
        .order_by("-created_at", "-pk")
        .values_list("generator_id", "municipality_id")
        .first()
    )
    if carried is None:
        raise NotAllowed(
            f"O {document_kind(document)} {format_document(document)} não aparece em nenhum CTR "
            f"de “{transporter.name}”: um transportador só convida os geradores que atendeu. "
            "Para outros geradores, peça o convite ao Núcleo Permanente de Gestão.",
            code="generator_not_carried",
            field="document",
        )
    return Generator.objects.get(pk=carried[0]), carried[1]


def inviter_label(invitation: GeneratorInvitation) -> str:
    return invitation.transporter.name if invitation.transporter_id else NUCLEO


def require_inviter(user, acting: bool = False):
    """The transporter `user` invites for, None for the municipality; NotAllowed for anyone
    else (and, `acting`, for the auditor, who reads the invitations and sends none). Checked
    before the body is read: a stranger learns nothing else."""
    if roles.is_municipal(user):
        if acting and reads_only(user):
            raise NotAllowed(AUDITOR_REFUSAL)
        return None
    transporter = roles.transporter_of(user)
    if transporter is None:
        raise NotAllowed(
            "Só o Núcleo Permanente de Gestão e os transportadores convidam geradores."
        )
    return transporter


def invite(
    by,
    email: str,
    document: str,
    name: str = "",
    *,
    valid_days: int = INVITATION_DAYS,
    municipality_id: int | None = None,
) -> GeneratorInvitation:
    """Invite the generator of `document` to open its account: an e-mail to `email` with a
    single-use link valid for `valid_days`. The Núcleo may name any generator (and create it
    from `name`), for its municipality (`municipality_id`, by default the one it works in
    now); a transporter only one on its own CTRs."""
    transporter = require_inviter(by, acting=True)
    municipal = transporter is None
    if municipal:
        municipality_id = municipality_id or jurisdiction_of(by).current_id
        require_acting(by, municipality_id)
    email = _email(email)
    document = _document(document)
    with transaction.atomic():
        if municipal:
            generator = _generator_for_nucleo(document, name)
        else:
            generator, municipality_id = _carried_generator(transporter, document)
        token = secrets.token_urlsafe(TOKEN_BYTES)
        now = timezone.now()
        invitation = GeneratorInvitation.objects.create(
            generator=generator,
            email=email,
            token_hash=_hash(token),
            invited_by=by,
            transporter=transporter,
            municipality_id=municipality_id,
            created_at=now,
            expires_at=now + datetime.timedelta(days=valid_days),
        )
        mail.send(
            [email],
            INVITATION_SUBJECT,
            "generators/accounts/mail/invitation.txt",
            {
                "generator": generator,
                "inviter": inviter_label(invitation),
                "link": mail.absolute(reverse("generators:invitation", args=[token])),
                "expires": br_datetime(invitation.expires_at),
            },
            signed_by(by),
        )
    return invitation


def _usable(invitation: GeneratorInvitation | None) -> GeneratorInvitation:
    if invitation is None:
        raise InvitationUnknown(
            "Convite não encontrado: confira se o endereço foi copiado inteiro do e-mail. Se o "
            "problema continuar, peça um novo convite a quem o enviou."
        )
    state = invitation.state()
    if state == "accepted":
        raise InvitationGone(
            "Este convite já foi usado: a conta do gerador foi criada. Entre com o usuário e a "
            "senha escolhidos; se esqueceu a senha, procure o Núcleo Permanente de Gestão."
        )
    if state == "expired":
        raise InvitationGone(
            f"Este convite venceu em {br_datetime(invitation.expires_at)}. Peça um novo a quem "
            f"o enviou ({inviter_label(invitation)})."
        )
    return invitation


def invitation_for(token: str) -> GeneratorInvitation:
    """The invitation of a link, while it can still be accepted: otherwise InvitationUnknown
    (404) or InvitationGone (410, used or expired)."""
    invitation = (
        GeneratorInvitation.objects.select_related("generator", "transporter")
        .filter(token_hash=_hash(token))
        .first()
    )
    return _usable(invitation)


def accept_invitation(token: str, username: str, password: str):
    """Open the account of an invitation: a user acting for its generator. One winner when the
    link is used twice at once (the row is locked)."""
    with transaction.atomic():
        # Locked alone: FOR UPDATE refuses the nullable side of select_related's outer join.
        invitation = _usable(
            GeneratorInvitation.objects.select_for_update().filter(token_hash=_hash(token)).first()
        )
        user = _create_account(username, password, invitation.email)
        Membership.objects.create(user=user, generator_id=invitation.generator_id)
        invitation.accepted_at = timezone.now()
        invitation.account = user
        invitation.save(update_fields=["accepted_at", "account"])
    return user


def invitations_for(user, current: bool = True) -> QuerySet[GeneratorInvitation]:
    """The invitations a user may list: the staff those of its municipality (`current`: the
    one it works in now; else all of its municipalities), a transporter its own."""
    return (
        GeneratorInvitation.objects.visible_to(user, current=current)
        .select_related("generator", "transporter", "invited_by", "municipality")
        .defer("municipality__boundary")
    )


# --- self-registration -----------------------------------------------------------------------


def check_registration_attempt(client: str) -> None:
    """Before a public registration is read: the attempt counts, and one more must still fit.
    `client` is the keyed hash of the address (config.clients.client_key)."""
    ATTEMPTS.check_and_hit(client)
    REGISTRATIONS.check(client)


def count_registration(client: str) -> None:
    REGISTRATIONS.hit(client)


def registration_municipalities() -> QuerySet:
    """The municipalities a generator may register with: those the platform serves with a
    Núcleo to confirm the registration (jurisdiction.StaffRole), by name."""
    with_nucleo = StaffRole.objects.filter(role=Role.NUCLEO).values("municipality_id")
    return municipalities().filter(pk__in=with_nucleo).order_by("name", "uf")


def _municipality(value) -> int:
    """The municipality chosen for a registration (an id or a Municipality), one of those
    served; refused otherwise."""
    pk = getattr(value, "pk", value)
    if pk in (None, ""):
        raise AccountError(
            "Escolha o município onde o Núcleo vai conferir o seu cadastro.",
            code="municipality",
            field="municipality",
        )
    if not str(pk).isdigit() or not registration_municipalities().filter(pk=pk).exists():
        raise AccountError(
            "Este município não é atendido pela plataforma: escolha um da lista.",
            code="municipality",
            field="municipality",
        )
    return int(pk)


def register(name: str, document: str, email: str, username: str, password: str, municipality=None):
    """A generator asks for its account: the user exists at once, without a Membership; the
    registration waits for the Núcleo of the municipality it chose (one the platform serves).
    A CPF/CNPJ that already has accounts is not refused here: saying so would tell any visitor
    whether a person is registered, and a company may rightly have several people; the Núcleo
    sees the accounts and decides."""
    name = _name(name, "Informe o nome do gerador (pessoa ou empresa).")
    document = _document(document)
    email = _email(email)
    municipality_id = _municipality(municipality)
    with transaction.atomic():
        user = _create_account(username, password, email, name)
        return GeneratorRegistration.objects.create(
            user=user,
            name=name,
            document=document,
            email=email,
            municipality_id=municipality_id,
        )


def _locked_pending(registration: GeneratorRegistration) -> GeneratorRegistration:
    locked = GeneratorRegistration.objects.select_for_update().get(pk=registration.pk)
    if locked.status != RegistrationStatus.PENDING:
        raise AlreadyDecided(
            f"Este cadastro já foi {locked.get_status_display()} em "
            f"{br_datetime(locked.decided_at)}."
        )
    return locked


def confirm_registration(registration: GeneratorRegistration, by) -> GeneratorRegistration:
    """The Núcleo confirms: the account acts for the generator of the CPF/CNPJ, created from the
    registration when the registry does not know it (an existing generator keeps its name).
    Only the staff of the registration's municipality."""
    _require_decider(by, registration)
    with transaction.atomic():
        registration = _locked_pending(registration)
        if Membership.objects.filter(user_id=registration.user_id).exists():
            raise AlreadyDecided(
                "Esta conta já está vinculada a um transportador, área ou gerador: recuse o "
                "cadastro e peça à pessoa que se cadastre com outro usuário."
            )
        generator, _ = Generator.objects.get_or_create(
            document=registration.document, defaults={"name": registration.name}
        )
        Membership.objects.create(user_id=registration.user_id, generator=generator)
        registration.status = RegistrationStatus.CONFIRMED
        registration.generator = generator
        registration.decided_at = timezone.now()
        registration.decided_by = by
        registration.save(update_fields=["status", "generator", "decided_at", "decided_by"])
        mail.send(
            [registration.email],
            CONFIRMED_SUBJECT,
            "generators/accounts/mail/registration_confirmed.txt",
            {
                "registration": registration,
                "generator": generator,
                "username": registration.user.get_username(),
                "link": mail.absolute(reverse("ctr_web:login")),
            },
            signed_by(by),
        )
    return registration


def refuse_registration(
    registration: GeneratorRegistration, by, reason: str
) -> GeneratorRegistration:
    """The Núcleo refuses, with the reason the person receives by e-mail; the account stays
    without a role. Only the staff of the registration's municipality."""
    _require_decider(by, registration)
    reason = " ".join((reason or "").split())
    if not reason:
        raise AccountError(
            "Informe o motivo da recusa: ele vai no e-mail a quem pediu o cadastro.",
            code="reason",
            field="reason",
        )
    if len(reason) > MAX_REASON:
        raise AccountError(
            f"O motivo vai até {MAX_REASON} caracteres.", code="reason", field="reason"
        )
    with transaction.atomic():
        registration = _locked_pending(registration)
        registration.status = RegistrationStatus.REFUSED
        registration.reason = reason
        registration.decided_at = timezone.now()
        registration.decided_by = by
        registration.save(update_fields=["status", "reason", "decided_at", "decided_by"])
        mail.send(
            [registration.email],
            REFUSED_SUBJECT,
            "generators/accounts/mail/registration_refused.txt",
            {"registration": registration},
            signed_by(by),
        )
    return registration


@dataclass(frozen=True)
class KnownGenerator:
    """What the registry already holds for a registration's CPF/CNPJ, for the Núcleo's
    decision."""

    generator: Generator
    ctrs: int
    worksites: int
    accounts: list[str]  # user names of the active accounts acting for it


def known_generator(document: str, user, besides=None) -> KnownGenerator | None:
    """The registry's generator of the CPF/CNPJ, with its CTRs and worksites as `user` sees
    them (its municipalities') and the accounts that act for it (which this
    registration would join), but for `besides` (the registration's own, once confirmed)."""
    generator = Generator.objects.filter(document=document).first()
    if generator is None:
        return None
    accounts = (
        Membership.objects.filter(generator=generator, user__is_active=True)
        .exclude(user=besides)
        .order_by("user__username")
        .values_list("user__username", flat=True)
    )
    return KnownGenerator(
        generator=generator,
        ctrs=CTR.objects.visible_to(user).filter(generator=generator).count(),
        worksites=Worksite.objects.visible_to(user).filter(generator=generator).count(),
        accounts=list(accounts),
    )


def registrations_for(user, current: bool = True) -> QuerySet[GeneratorRegistration]:
    """The registrations the staff list: of its municipality (`current`: the one it works in
    now; else all of its municipalities)."""
    return GeneratorRegistration.objects.visible_to(user, current=current)


def pending_registrations(user) -> QuerySet[GeneratorRegistration]:
    """The Núcleo's queue (of the municipality it works in), oldest first."""
    return (
        registrations_for(user)
        .filter(status=RegistrationStatus.PENDING)
        .select_related("user", "municipality")
        .defer("municipality__boundary")
    )
