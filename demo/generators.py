"""The demo of the generator's side, on top of the CTR demo (demo/ctrs.py, loaded
before it by `manage.py load_demo`): small functions, one per thing shown, each idempotent (a
second load creates nothing and undoes nothing a demo user did), run in order by `load()`.

The generator account "gerador" acts for Construtora Horizonte (demo.cast.COMPANIES[0]), the
owner of the README's conclusive certificate worksite (Rua Fictícia do Certificado, 100). That
worksite is registered, its PGRCC approved, and its Habite-se declaration waits for the
Núcleo (every load was received and destined: the Núcleo can issue it). Horizonte's large
worksite of the CTR demo is registered too, with an approved plan, and is a suspect worksite:
its expected end is weeks past and it transported a fraction of its plan.

Dates are relative to the day of the first load (later loads change nothing); the agents a plan
names are the ones licensed that day. The demo's people have @demo.invalid addresses: the
e-mails the steps send are discarded."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.db import transaction
from django.test.utils import override_settings
from django.utils import timezone

from ctr.models import Generator, Membership, WorkKind, Worksite
from generators import declarations, estimator, plans, worksites
from generators.models import GeneratorRegistration, HabiteSeDeclaration, RegistrationStatus

from . import cast
from . import ctrs as ctr_demo

GENERATOR_USERNAME = "gerador"
GENERATOR_DOCUMENT = cast.COMPANIES[0][1]
# A self-registration waiting in the Núcleo's queue: a company of the CTR demo, whose CNPJ the
# registry already knows (confirming links the account to it).
REGISTRANT_USERNAME = "reformas-exemplo"
REGISTRANT_NAME, REGISTRANT_DOCUMENT = cast.COMPANIES[2][:2]
CERTIFICATE_ADDRESS = "Rua Fictícia do Certificado, 100"


@dataclass(frozen=True)
class DemoWorksite:
    """How a demo worksite is registered: its kind and area, and its dates in days before
    the first load (its loads are demo.ctrs')."""

    work_kind: str
    built_area_m2: Decimal
    started_days_ago: int
    expected_end_days_ago: int
    transporter_keys: tuple[str, ...]  # demo.cast.TRANSPORTERS' keys
    facility_codes: tuple[str, ...]


# The certificate worksite's loads go from 33 to 19 days ago (demo.ctr_history.SHOWCASE): a
# renovation of about the size its 14 m³ predict (estimator: 0.125 m³/m²).
CERTIFICATE_WORKSITE = DemoWorksite(
    WorkKind.RENOVATION, Decimal("110"), 45, 15, ("A",), ("ATT-01", "REC-01")
)
CERTIFICATE_ENDED_DAYS_AGO = 15
# A new building of 1,800 m² (about 225 m³ predicted), 45 days past its expected end.
SUSPECT_WORKSITE = DemoWorksite(
    WorkKind.NEW_BUILDING, Decimal("1800"), 200, 45, ("A",), tuple(ctr_demo.PLAN_FACILITIES)
)


@dataclass
class DemoResult:
    accounts: list[str] = field(default_factory=list)
    generator: str = ""
    pending: int = 0
    certificate_worksite: int | None = None
    suspect_worksite: int | None = None

    def summary(self) -> str:
        lines = [
            f"Conta de demonstração do gerador (senha {ctr_demo.DEMO_PASSWORD}): "
            f"{', '.join(self.accounts)}, pelo gerador “{self.generator}”. Cadastros de "
            f"geradores aguardando o Núcleo: {self.pending} (/nucleo/geradores/cadastros/)."
        ]
        if self.certificate_worksite:
            lines.append(
                f"Obra com PGRCC aprovado e pedido de Habite-se aguardando o Núcleo: "
                f"/nucleo/obras/{self.certificate_worksite}/ (/nucleo/habite-se/)."
            )
        if self.suspect_worksite:
            lines.append(f"Obra suspeita: /nucleo/obras/{self.suspect_worksite}/.")
        return "\n".join(lines)


def _demo_generator() -> Generator:
    generator = Generator.objects.filter(document=GENERATOR_DOCUMENT).first()
    if generator is None:
        raise ValueError("Demonstração de CTRs não carregada: rode manage.py load_demo.")
    return generator


def ensure_generator_account(generator: Generator):
    """The listed account "gerador" (password demo.ctrs.DEMO_PASSWORD, restored on each load),
    acting for the demo generator."""
    user, created = get_user_model().objects.get_or_create(
        username=GENERATOR_USERNAME, defaults={"email": f"{GENERATOR_USERNAME}@demo.invalid"}
    )
    if created or not user.check_password(ctr_demo.DEMO_PASSWORD):
        user.set_password(ctr_demo.DEMO_PASSWORD)
        user.save(update_fields=["password"])
    Membership.objects.update_or_create(
        user=user, defaults={"generator": generator, "transporter": None, "facility": None}
    )
    return user


def ensure_pending_registration(municipality_id: int | None) -> GeneratorRegistration:
    """A self-registration for the queue of the Núcleo of `municipality_id` (the
    generator chooses it), by an account without a usable password (not listed: the person
    would sign in with their own). Once decided in the demo, it stays so."""
    user, created = get_user_model().objects.get_or_create(
        username=REGISTRANT_USERNAME, defaults={"email": f"{REGISTRANT_USERNAME}@demo.invalid"}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    registration, _ = GeneratorRegistration.objects.get_or_create(
        user=user,
        defaults={
            "name": REGISTRANT_NAME,
            "document": REGISTRANT_DOCUMENT,
            "email": user.email,
            "municipality_id": municipality_id,
        },
    )
    if registration.municipality_id is None and municipality_id is not None:
        registration.municipality_id = municipality_id
        registration.save(update_fields=["municipality"])
    return registration


def _nucleo():
    return get_user_model().objects.get(username="nucleo")


def ensure_registered(worksite: Worksite, spec: DemoWorksite, account) -> Worksite:
    """The worksite a transporter's CTRs created, completed as its generator registers it."""
    if worksite.registered_at is not None:
        return worksite
    today = timezone.localdate()
    data = worksites.Registration.of(worksite)
    data.work_kind = spec.work_kind
    data.built_area_m2 = spec.built_area_m2
    data.start_date = today - datetime.timedelta(days=spec.started_days_ago)
    data.expected_end = today - datetime.timedelta(days=spec.expected_end_days_ago)
    return worksites.update(worksite, data, account)


def ensure_approved_plan(worksite: Worksite, spec: DemoWorksite, account):
    """The PGRCC the estimator proposes, naming the spec's agents licensed today, submitted by
    the generator and approved by the Núcleo."""
    if plans.latest(worksite) is not None:
        return plans.in_force(worksite)
    today = timezone.localdate()
    keys = {t.key: t.document for t in cast.TRANSPORTERS}
    documents = {keys[key] for key in spec.transporter_keys}
    place = plans.worksite_municipality(worksite)
    transporters = [
        t.pk for t in plans.licensed_transporters(today, place) if t.document in documents
    ]
    facilities = plans.licensed_facilities(today).filter(code__in=spec.facility_codes)
    estimate = estimator.for_worksite(worksite)
    volumes = {c.waste_class: c.volume_m3 for c in estimate.classes if c.volume_m3 > 0}
    plan = plans.save(
        worksite,
        account,
        plans.PlanInput(volumes, transporters, facilities.values_list("pk", flat=True)),
        submit=True,
    )
    return plans.approve(plan, _nucleo(), "Plano conferido com a área e o tipo da obra.")


def ensure_declaration_request(worksite: Worksite, account) -> HabiteSeDeclaration:
    """The Habite-se declaration the generator asked for, waiting for the Núcleo."""
    existing = worksite.declarations.order_by("pk").first()
    if existing is not None:
        return existing
    ended_on = timezone.localdate() - datetime.timedelta(days=CERTIFICATE_ENDED_DAYS_AGO)
    return declarations.request(worksite, account, ended_on, "Obra concluída; pedimos o Habite-se.")


def _suspect_worksite(generator: Generator) -> Worksite | None:
    """Horizonte's large worksite of the CTR demo (demo.cast.COMPANIES: its first)."""
    return (
        Worksite.objects.filter(generator=generator, is_large_generator=True)
        .exclude(address=CERTIFICATE_ADDRESS)
        .order_by("pk")
        .first()
    )


def load() -> DemoResult:
    """Load the generator's demo (after the CTR demo); idempotent."""
    with (
        override_settings(EMAIL_BACKEND="django.core.mail.backends.dummy.EmailBackend"),
        transaction.atomic(),
    ):
        generator = _demo_generator()
        account = ensure_generator_account(generator)
        showcase = Worksite.objects.get(generator=generator, address=CERTIFICATE_ADDRESS)
        showcase = ensure_registered(showcase, CERTIFICATE_WORKSITE, account)
        ensure_pending_registration(showcase.municipality_id)
        ensure_approved_plan(showcase, CERTIFICATE_WORKSITE, account)
        ensure_declaration_request(showcase, account)
        suspect = _suspect_worksite(generator)
        if suspect is not None:
            suspect = ensure_registered(suspect, SUSPECT_WORKSITE, account)
            ensure_approved_plan(suspect, SUSPECT_WORKSITE, account)
    return DemoResult(
        certificate_worksite=showcase.pk,
        suspect_worksite=suspect.pk if suspect else None,
        accounts=[account.get_username()],
        generator=generator.name,
        pending=GeneratorRegistration.objects.filter(status=RegistrationStatus.PENDING).count(),
    )
