"""Bringing a municipality in: one operation creates it from its IBGE code
and boundary file, its legal parameters, its penalty framework, its first Núcleo account, and
imports its receiving network; all of it or nothing (one transaction), with a dry run.

It crosses pev_network (the municipality, its boundary and network), fiscalization (the
framework) and jurisdiction (the Núcleo's role): nucleo is the app allowed to import the three
(docs/architecture.md). The callers are thin: `manage.py onboard_municipality` and the admin's
"Incluir município" page (nucleo/admin.py). Scoping: an act of the platform's administrator,
not of a municipality's staff (there is no municipality yet to act in): the admin page is the
superuser's, the command the server's operator's; `by`, when given, must be a superuser.

Choices, with their reasons:
- The boundary comes from a file of one municipality or of many (IBGE's mesh of a state, the
  645 of SP in fixtures/): only the feature of the IBGE code is read and judged.
- The parameters (the municipality's first set, pev_network.MunicipalParameters, in force
  from FIRST_SET_FROM) are the model's defaults (the figures of Lei 3.978/2007 and the
  documented judgements of docs/legal.md), or every parameter of the set another municipality
  has in force today (a consortium's members usually adopt the same figures). PARAMETERS
  names them (pev_network.models.parameter_names); a new field of Municipality must be
  classified here as its identity (tests/nucleo/test_onboarding.py fails until it is).
- The penalty framework: without `framework_from`, the municipality has none and opens no
  enforcement case until one is registered (no other municipality's law governs
  it; fiscalization.enforcement.frameworks); with it, a copy of that municipality's framework
  in force becomes the new municipality's own (a new row with its IBGE code, independent of
  its source), to edit in the admin ("Regimes de penalidades") before the first case. A
  municipality that already has its own framework (one shipped with the system) keeps it.
- The first Núcleo account gets an e-mail with a link to set its password
  (jurisdiction.accounts: whoever runs this never knows the password); an existing account
  with that e-mail (a consortium's staff, Núcleo elsewhere) gets the role in this municipality
  too. The role is granted in this municipality only.
- The network is the facility import (pev_network.importing) restricted to this municipality:
  an area outside its boundary, or a code of another municipality's area, refuses the file.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import shapely
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from config.br import br_date, br_number
from config.errors import DomainError
from ctr.models import Membership
from fiscalization.models.frameworks import PenaltyFramework
from fiscalization.penalty_table import install_law_lines
from jurisdiction.accounts import PasswordLink, send_password_link
from jurisdiction.models import Role, StaffRole
from jurisdiction.scope import forget
from pev_network import importing
from pev_network.boundaries import (
    UF_BY_IBGE_PREFIX,
    Boundary,
    BoundaryImportError,
    read_boundary,
)
from pev_network.geofile import GEOD
from pev_network.models import Municipality, parameter_names
from pev_network.services import NetworkError, refresh_municipality_pieces

# The legal parameters of a municipality, a set of pev_network.models.MunicipalParameters:
# copied whole from another municipality's set in force today, or left at their defaults.
PARAMETERS = parameter_names()
# What a municipality is, not how it applies the law: never copied from another (its own
# waste law among them: a document never cites another municipality's law).
IDENTITY = (
    "id",
    "ibge_code",
    "name",
    "uf",
    "boundary",
    "boundary_source",
    "waste_law",
    "fee_collector",
)

# (stage, done, total), as pev_network.importing reports its own stages.
Progress = Callable[[str, int, int], None]
STAGES = ("limite", "parâmetros", "regime de penalidades", "conta do Núcleo")


class OnboardingRefused(DomainError):
    """The municipality was not brought in: every reason, and nothing was written."""

    code = "onboarding_refused"

    def __init__(self, problems: list[str], network: importing.ImportReport | None = None):
        self.problems = problems
        self.network = network
        lines = [f"  - {p}" for p in problems]
        super().__init__(
            "Município não incluído; nada foi gravado:\n" + "\n".join(lines), self.code
        )


class NotAdministrator(DomainError):
    status = 403
    code = "forbidden"

    def __init__(self):
        super().__init__(
            "Só o administrador da plataforma inclui municípios.", self.code, status=403
        )


@dataclass
class NetworkFile:
    """The municipality's receiving network, as `manage.py import_facilities` reads it."""

    path: Path
    layer: str | None = None
    field_map: dict[str, str] = field(default_factory=dict)
    kind: str | None = None
    buffer_m: float | None = None
    fix_invalid: bool = False


@dataclass
class NewMunicipality:
    """What the IT of a consortium says about the new member."""

    ibge_code: str
    boundary_file: Path
    nucleo_email: str
    boundary_layer: str | None = None
    code_field: str | None = None
    name_field: str | None = None
    # The name as it should read, when the file's differs (accents lost in a Shapefile).
    name: str = ""
    # Where the boundary comes from (repository, version, licence); default: the file's name.
    boundary_source: str = ""
    # The municipality's own construction-waste law, as its documents cite it ("Lei Municipal
    # nº 1.234/2020"); empty: its documents say it is not on record yet (pev_network.letterhead).
    waste_law: str = ""
    fix_invalid: bool = False
    # IBGE code of the municipality whose parameters are copied; empty: the defaults.
    parameters_from: str = ""
    # IBGE code of the municipality whose framework is copied; empty: none (no case opens).
    framework_from: str = ""
    # From when the copy governs new cases; default: today.
    framework_valid_from: datetime.date | None = None
    nucleo_name: str = ""
    nucleo_username: str = ""
    network: NetworkFile | None = None


@dataclass
class OnboardingReport:
    dry_run: bool
    boundary: Boundary
    municipality: Municipality | None = None
    area_km2: float = 0.0
    parameters: str = ""
    framework: str = ""
    framework_copy: PenaltyFramework | None = None
    nucleo: str = ""
    nucleo_user: object = None
    link: PasswordLink | None = None
    network: importing.ImportReport | None = None
    warnings: list[str] = field(default_factory=list)

    def summary_lines(self) -> list[str]:
        b = self.boundary
        verb = "a criar" if self.dry_run else "criado"
        lines = [
            f"Município {verb}: {b.name}/{b.uf} (IBGE {b.ibge_code})",
            f"  Limite: {b.vertices} vértices, {br_number(self.area_km2, 1)} km²; fonte: "
            f"{self.municipality.boundary_source if self.municipality else b.source}",
        ]
        if b.repaired:
            lines.append(f"  Geometria corrigida (--fix-invalid): {b.repaired}")
        lines += [
            f"Parâmetros: {self.parameters}",
            f"Regime de penalidades: {self.framework}",
            f"Núcleo: {self.nucleo}",
        ]
        if self.network is None:
            lines.append(
                "Rede de recebimento: nenhum arquivo (importe-a depois com "
                "`manage.py import_facilities`)."
            )
        else:
            lines.append("Rede de recebimento:")
            lines += [
                f"  {line}"
                for line in self.network.summary_lines()
                if line != "nada foi gravado (--dry-run)"
            ]
        lines += [f"Atenção: {w}" for w in self.warnings]
        if self.dry_run:
            lines.append("Simulação (--dry-run): nada foi gravado e nenhum e-mail foi enviado.")
        return lines

    def summary(self) -> str:
        return "\n".join(self.summary_lines())


# --- checks before anything is written ---------------------------------------------------------


def ibge_check_digit(code: str) -> int:
    """The 7th digit of an IBGE municipality code: weights 1-2-1-2-1-2 on the first six,
    the digits of each product summed, and what takes the sum to the next ten."""
    total = 0
    for i, digit in enumerate(code[:6]):
        product = int(digit) * (1 if i % 2 == 0 else 2)
        total += product // 10 + product % 10
    return (10 - total % 10) % 10


def _framework_of(ibge_code: str, day: datetime.date) -> PenaltyFramework | None:
    """The framework of `ibge_code` in force on `day`, else its latest."""
    own = PenaltyFramework.objects.filter(ibge_code=ibge_code)
    in_force = own.filter(
        Q(valid_from__lte=day) & (Q(valid_until__isnull=True) | Q(valid_until__gte=day))
    )
    return in_force.order_by("-valid_from").first() or own.order_by("-valid_from").first()


def _shipped_list() -> str:
    rows = PenaltyFramework.objects.order_by("ibge_code", "-valid_from").values_list(
        "ibge_code", "name"
    )
    seen: dict[str, str] = {}
    for code, name in rows:
        seen.setdefault(code, name)
    return "; ".join(f"{code} ({name})" for code, name in seen.items()) or "nenhum"


def _nucleo_account(new: NewMunicipality, problems: list[str]):
    """The existing account of the e-mail (or username), None for a new one."""
    User = get_user_model()
    email = new.nucleo_email.strip()
    try:
        validate_email(email)
    except ValidationError:
        problems.append(f"E-mail do Núcleo inválido: “{email}”.")
        return None
    by_email = list(User.objects.filter(email__iexact=email).order_by("pk")[:2])
    username = new.nucleo_username.strip()
    if username:
        user = User.objects.filter(username=username).first()
        if user is not None and user.email.casefold() != email.casefold():
            problems.append(
                f"O usuário “{username}” já existe com outro e-mail: escolha outro usuário "
                "para o Núcleo."
            )
            return None
        if user is None and by_email:
            problems.append(
                f"O e-mail {email} já é da conta “{by_email[0].get_username()}”: informe esse "
                "usuário, ou nenhum, para dar o papel a ela."
            )
            return None
    elif len(by_email) > 1:
        problems.append(
            f"Há mais de uma conta com o e-mail {email}: informe o usuário (--nucleo-username)."
        )
        return None
    else:
        user = by_email[0] if by_email else None
        if user is None and User.objects.filter(username=email.lower()).exists():
            problems.append(
                f"O usuário “{email.lower()}” já existe com outro e-mail: informe outro usuário "
                "(--nucleo-username)."
            )
            return None
    if user is None:
        return None
    if not user.is_active:
        problems.append(f"A conta “{user.get_username()}” está desativada: reative-a antes.")
    if Membership.objects.filter(user=user).exists():
        problems.append(
            f"A conta “{user.get_username()}” é de um transportador, de uma área de recebimento "
            "ou de um gerador: a equipe municipal usa uma conta própria."
        )
    return user


def _check(new: NewMunicipality, today: datetime.date) -> tuple[list[str], dict]:
    """Every reason to refuse, at once, and what the checks found."""
    problems: list[str] = []
    found: dict = {"parameters_from": None, "framework_from": None}
    code = new.ibge_code.strip()
    code_ok = len(code) == 7 and code.isdigit() and code[:2] in UF_BY_IBGE_PREFIX
    if not code_ok:
        problems.append(
            f"Código IBGE inválido: “{code}” (sete dígitos, os dois primeiros do estado, como "
            "3502507)."
        )
    elif Municipality.objects.filter(ibge_code=code).exists():
        existing = Municipality.objects.defer("boundary").get(ibge_code=code)
        problems.append(
            f"O município {existing} (IBGE {code}) já está na plataforma: altere-o no admin "
            "(Municípios) ou atualize o limite com `manage.py import_municipalities`."
        )
    if new.parameters_from:
        source = (
            Municipality.objects.defer("boundary")
            .filter(ibge_code=new.parameters_from.strip())
            .first()
        )
        if source is None:
            problems.append(
                f"Não há município com o código IBGE {new.parameters_from} de onde copiar os "
                "parâmetros."
            )
        found["parameters_from"] = source
    own = _framework_of(code, today) if code_ok else None
    found["own_framework"] = own
    if new.framework_from:
        source = _framework_of(new.framework_from.strip(), today)
        if source is None:
            problems.append(
                f"Não há regime de penalidades do município {new.framework_from} para copiar; "
                f"os cadastrados (código IBGE): {_shipped_list()}."
            )
        elif own is not None:
            problems.append(
                f"O município {code} já tem regime de penalidades próprio (“{own.name}”): ele "
                "continua valendo; para trocá-lo, encerre a vigência dele no admin e cadastre "
                "o novo."
            )
        found["framework_from"] = source
    found["user"] = _nucleo_account(new, problems)
    found["boundary"] = None
    if code_ok:
        try:
            found["boundary"] = read_boundary(
                new.boundary_file,
                code,
                layer=new.boundary_layer,
                code_field=new.code_field,
                name_field=new.name_field,
                fix_invalid=new.fix_invalid,
            )
        except BoundaryImportError as error:
            message = error.message
            if error.code == "boundary_missing" and ibge_check_digit(code) != int(code[6]):
                message += (
                    f" O dígito verificador não confere (o último dígito de {code[:6]}… seria "
                    f"{ibge_check_digit(code)}): o código deve estar errado."
                )
            problems.append(message)
    if len(new.boundary_source) > 300:
        problems.append("A fonte do limite tem mais de 300 caracteres.")
    return problems, found


# --- the operation -------------------------------------------------------------------------------


def onboard(
    new: NewMunicipality,
    *,
    by=None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> OnboardingReport:
    """Bring the municipality in, or raise OnboardingRefused with every reason and write
    nothing. With `dry_run` every step runs (the database's constraints, the network's import)
    and is rolled back; no e-mail leaves (they are sent after the commit)."""
    if by is not None and not by.is_superuser:
        raise NotAdministrator()
    step = progress or (lambda stage, done, total: None)
    today = timezone.localdate()
    problems, found = _check(new, today)
    if problems:
        raise OnboardingRefused(problems)
    boundary: Boundary = found["boundary"]
    report = OnboardingReport(dry_run=dry_run, boundary=boundary)
    try:
        with transaction.atomic():
            step(STAGES[0], 0, 1)
            municipality = _create_municipality(
                new, boundary, found["parameters_from"], report, today
            )
            step(STAGES[0], 1, 1)
            step(STAGES[1], 1, 1)
            _framework(municipality, new, found, report, today)
            step(STAGES[2], 1, 1)
            _nucleo(municipality, new, found["user"], by, report)
            step(STAGES[3], 1, 1)
            if new.network is not None:
                report.network = _network(municipality, new.network, dry_run, progress)
            if dry_run:
                transaction.set_rollback(True)
    except IntegrityError as error:
        # Another run created the same municipality or account meanwhile.
        raise OnboardingRefused([f"Conflito ao gravar (tente de novo): {error}"]) from error
    return report


def _valid_or_refused(row, clean: bool = True) -> None:
    try:
        if clean:
            row.full_clean()
        else:
            row.clean_fields()
    except ValidationError as error:
        raise OnboardingRefused(
            [f"{name}: {' '.join(msgs)}" for name, msgs in error.message_dict.items()]
        ) from error


def _create_municipality(
    new: NewMunicipality,
    boundary: Boundary,
    parameters_from: Municipality | None,
    report: OnboardingReport,
    today: datetime.date,
) -> Municipality:
    municipality = Municipality(
        ibge_code=boundary.ibge_code,
        name=new.name.strip() or boundary.name,
        uf=boundary.uf,
        boundary=boundary.geometry,
        boundary_source=new.boundary_source.strip() or boundary.source,
        waste_law=new.waste_law.strip(),
    )
    _valid_or_refused(municipality)
    municipality.save()  # with its first set of parameters, the defaults
    if parameters_from is not None:
        first = municipality.parameter_sets.get()
        first.take_values_of(parameters_from.parameters_on(today))
        # The field rules only: the start rules of MunicipalParameters.clean protect the CTRs
        # a set judged, and the municipality has none yet.
        _valid_or_refused(first, clean=False)
        first.save()
        report.parameters = f"copiados de {parameters_from} ({len(PARAMETERS)} parâmetros)"
    else:
        report.parameters = "os padrões (Lei 3.978/2007 e docs/legal.md); edite-os no admin"
    # The subdivided copy the point lookups use (a CTR's municipality, the network's areas).
    refresh_municipality_pieces([municipality.pk])
    # Geodesic area on the WGS 84 ellipsoid, for the IT to see it got the right polygon.
    area, _ = GEOD.geometry_area_perimeter(shapely.from_wkb(bytes(boundary.geometry.wkb)))
    report.area_km2 = abs(area) / 1e6
    report.municipality = municipality
    return municipality


def _framework(
    municipality: Municipality,
    new: NewMunicipality,
    found: dict,
    report: OnboardingReport,
    today: datetime.date,
) -> None:
    own: PenaltyFramework | None = found["own_framework"]
    source: PenaltyFramework | None = found["framework_from"]
    if own is not None:
        report.framework = f"o próprio do município, já cadastrado: “{own.name}”."
        # The fines its law writes become lines of its table (Lei 3.190/2013 art. 9 I-II).
        if lines := install_law_lines(municipality, own):
            report.framework += (
                " Linhas da tabela de multas fixadas na própria lei: "
                + ", ".join(f"{e.code} ({e.legal_reference})" for e in lines)
                + "."
            )
        return
    if source is None:
        # No other municipality's law governs it.
        report.framework = "nenhum."
        report.warnings.append(
            "o município não tem regime de penalidades: nenhum processo de fiscalização pode "
            "ser aberto nele até que o seu seja cadastrado (admin, “Regimes de penalidades”, "
            "ou --framework-from para copiar outro e editá-lo)."
        )
        return
    valid_from = new.framework_valid_from or today
    framework = PenaltyFramework()
    for f in PenaltyFramework._meta.concrete_fields:
        if not f.primary_key:
            setattr(framework, f.attname, copy.deepcopy(getattr(source, f.attname)))
    framework.ibge_code = municipality.ibge_code
    framework.valid_from = valid_from
    framework.valid_until = None
    framework.name = f"{municipality.name} — cópia de {source.name}"[:160]
    note = (
        f"Copiado em {br_date(today)} do regime “{source.name}” (id {source.pk}) ao incluir "
        f"{municipality} na plataforma. Revise a lei, cada parâmetro, os artigos citados e os "
        f"textos impressos conforme a lei de {municipality}: até lá, notificações e autos "
        "citam a lei do regime de origem."
    )
    framework.readings = f"{source.readings}\n\n{note}" if source.readings else note
    try:
        framework.full_clean()
    except ValidationError as error:
        raise OnboardingRefused(
            [f"Regime copiado de “{source.name}”: {'; '.join(error.messages)}"]
        ) from error
    framework.save()
    report.framework_copy = framework
    report.framework = (
        f"cópia de “{source.name}” criada para editar (“{framework.name}”, vigente desde "
        f"{br_date(valid_from)}): revise-a no admin, “Regimes de penalidades”, antes do "
        "primeiro processo."
    )


def _nucleo(municipality: Municipality, new: NewMunicipality, user, by, report) -> None:
    User = get_user_model()
    email = new.nucleo_email.strip()
    created = user is None
    if created:
        first, _, last = new.nucleo_name.strip().partition(" ")
        user = User.objects.create_user(
            username=new.nucleo_username.strip() or email.lower(),
            email=email,
            first_name=first[:150],
            last_name=last[:150],
        )
        # No password until the person chooses one through the link.
        user.set_unusable_password()
        user.save(update_fields=["password"])
    StaffRole.objects.create(user=user, municipality=municipality, role=Role.NUCLEO, granted_by=by)
    forget(user)
    report.nucleo_user = user
    role = Role.NUCLEO.label
    full_name = user.get_full_name()
    who = f"“{user.get_username()}”" + (f" ({full_name})" if full_name else "")
    if created:
        report.nucleo = f"conta nova {who}, papel {role} só em {municipality}"
    else:
        others = (
            StaffRole.objects.filter(user=user)
            .exclude(municipality=municipality)
            .select_related("municipality")
            .order_by("municipality__name")
        )
        elsewhere = sorted({str(r.municipality) for r in others})
        report.nucleo = f"conta existente {who} recebe o papel {role} em {municipality}" + (
            f" (já tinha papéis em {', '.join(elsewhere)})" if elsewhere else ""
        )
    if created or not user.has_usable_password():
        why = (
            f"Você foi cadastrado(a) no {role} de {municipality} no CTR — Controle de "
            "Transporte de Resíduos."
        )
        if report.dry_run:
            report.nucleo += f"; um link para definir a senha seria enviado a {user.email}"
        else:
            report.link = send_password_link(user, why)
            report.nucleo += (
                f"; link para definir a senha enviado a {user.email} (vale até "
                f"{report.link.expires_text})"
            )
    report.nucleo += "."


def _network(
    municipality: Municipality, network: NetworkFile, dry_run: bool, progress: Progress | None
) -> importing.ImportReport:
    try:
        return importing.import_facilities(
            network.path,
            layer=network.layer,
            field_map=network.field_map,
            kind=network.kind,
            buffer_m=network.buffer_m,
            fix_invalid=network.fix_invalid,
            dry_run=dry_run,
            progress=progress,
            municipality_id=municipality.pk,
        )
    except importing.ImportRefused as error:
        raise OnboardingRefused(
            [f"Rede de recebimento ({Path(network.path).name}): {error.message}"],
            network=error.report,
        ) from error
    except NetworkError as error:
        raise OnboardingRefused([f"Rede de recebimento: {error.message}"]) from error
