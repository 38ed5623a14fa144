"""What a user may see and act on: the one mechanism every page, API route, export, OGC
collection, map layer, PDF, e-mail, webhook and admin list goes through (docs/architecture.md,
"Municípios").

- `jurisdiction_of(user)`: the municipalities of the user's roles (jurisdiction.models), what
  it may do in each, and the one it works in now (the current municipality).
- `ScopedQuerySet.visible_to(user)`: a model's rows the user may see. Each model says once how
  its rows reach a municipality (`municipality_path`, or `municipal_q` when the path is not a
  plain lookup) and what a user acting for a transporter, a facility or a generator sees of
  them (`side_q`); lists, dashboards and maps ask for `current=True`, the current
  municipality's rows only. A row outside answers as if it did not exist (404).
- For the SQL written by hand (maps, analytics, OGC), `readable_ids` and `current_id` are the
  municipalities to put in the query's WHERE.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.db import connections, router
from django.db.models import Q, QuerySet

from config.errors import DomainError

from .models import ACTING_ROLES, MUNICIPALITY, CurrentMunicipality, Role, StaffRole


def municipalities() -> QuerySet:
    """pev_network's municipalities, without their boundaries (jurisdiction sits below it)."""
    return apps.get_model(MUNICIPALITY).objects.defer("boundary")


@dataclass(frozen=True)
class Jurisdiction:
    """Where a user acts: `roles` maps each municipality id of its roles to those roles;
    `everywhere` is the platform's administrator (a superuser), who reads and acts in every
    municipality."""

    everywhere: bool = False
    roles: dict[int, frozenset[str]] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    current_id: int | None = None
    current_name: str = ""

    @property
    def is_staff(self) -> bool:
        return self.everywhere or bool(self.roles)

    @property
    def readable_ids(self) -> frozenset[int] | None:
        """The municipalities the user reads; None for every municipality (the superuser)."""
        return None if self.everywhere else frozenset(self.roles)

    def reads(self, municipality_id: int | None) -> bool:
        return self.everywhere or municipality_id in self.roles

    def acts(self, municipality_id: int | None, roles: Iterable[str] = ACTING_ROLES) -> bool:
        """Holds one of `roles` in the municipality (the superuser acts everywhere)."""
        if self.everywhere:
            return True
        return bool(self.roles.get(municipality_id, frozenset()) & set(roles))

    def acting_ids(self, roles: Iterable[str] = ACTING_ROLES) -> frozenset[int] | None:
        """The municipalities where the user holds one of `roles`; None for every one."""
        if self.everywhere:
            return None
        wanted = set(roles)
        return frozenset(m for m, held in self.roles.items() if held & wanted)

    @property
    def acts_anywhere(self) -> bool:
        return self.everywhere or any(held & ACTING_ROLES for held in self.roles.values())

    @property
    def several(self) -> bool:
        """Whether the user has a municipality to choose (the banner's "trocar")."""
        return self.everywhere or len(self.roles) > 1

    def roles_in(self, municipality_id: int | None) -> frozenset[str]:
        if self.everywhere:
            return frozenset(Role.values)
        return self.roles.get(municipality_id, frozenset())


NOBODY = Jurisdiction()


def jurisdiction_of(user) -> Jurisdiction:
    """The user's jurisdiction, read once per user object (one request)."""
    if user is None or isinstance(user, AnonymousUser) or not user.is_authenticated:
        return NOBODY
    cached = getattr(user, "_jurisdiction", None)
    if cached is None:
        cached = _read(user)
        user._jurisdiction = cached
    return cached


def forget(user) -> None:
    """Drop the cached jurisdiction (after a role is granted or the current one changes)."""
    if user is not None and hasattr(user, "_jurisdiction"):
        del user._jurisdiction


def _rows_sql() -> str:
    town = municipalities().model._meta.db_table
    return (
        "SELECT r.municipality_id, r.role, m.name, m.uf"
        f" FROM {StaffRole._meta.db_table} r JOIN {town} m ON m.id = r.municipality_id"
        " WHERE r.user_id = %(user)s"
        " UNION ALL"
        " SELECT c.municipality_id, NULL, m.name, m.uf"
        f" FROM {CurrentMunicipality._meta.db_table} c JOIN {town} m ON m.id = c.municipality_id"
        " WHERE c.user_id = %(user)s"
    )


def _read(user) -> Jurisdiction:
    # The roles and the chosen municipality in one round trip: every signed-in request reads
    # them. The chosen one is the row without a role.
    roles: dict[int, set[str]] = {}
    names: dict[int, str] = {}
    chosen = None
    with connections[router.db_for_read(StaffRole)].cursor() as cursor:
        cursor.execute(_rows_sql(), {"user": user.pk})
        for municipality_id, role, name, uf in cursor.fetchall():
            if role is None:
                chosen = (municipality_id, name, uf)
                continue
            roles.setdefault(municipality_id, set()).add(role)
            names[municipality_id] = f"{name}/{uf}"
    everywhere = bool(user.is_superuser)
    current_id, current_name = None, ""
    if chosen is not None and (everywhere or chosen[0] in roles):
        current_id, current_name = chosen[0], f"{chosen[1]}/{chosen[2]}"
    elif roles:
        # The first by name: the same every time until the person picks another.
        current_id = min(roles, key=lambda m: (names[m], m))
        current_name = names[current_id]
    elif everywhere:
        default = (
            municipalities()
            .filter(ibge_code=settings.DEFAULT_MUNICIPALITY_IBGE)
            .values_list("pk", "name", "uf")
            .first()
        )
        if default is not None:
            current_id, current_name = default[0], f"{default[1]}/{default[2]}"
    return Jurisdiction(
        everywhere=everywhere,
        roles={m: frozenset(held) for m, held in roles.items()},
        names=names,
        current_id=current_id,
        current_name=current_name,
    )


def choose(user, municipality_id: int) -> None:
    """Make `municipality_id` the user's current municipality (one of its own)."""
    if not jurisdiction_of(user).reads(municipality_id):
        raise OutsideJurisdiction()
    CurrentMunicipality.objects.update_or_create(
        user=user, defaults={"municipality_id": municipality_id}
    )
    forget(user)


def choices(user) -> QuerySet:
    """The municipalities the user may pick: those of its roles; for the administrator, those
    with something to show (a state has 645)."""
    j = jurisdiction_of(user)
    queryset = municipalities().order_by("name", "uf")
    if j.everywhere:
        return queryset.filter(Q(pk__in=j.roles) | Q(facilities__isnull=False)).distinct()
    return queryset.filter(pk__in=j.roles)


class OutsideJurisdiction(DomainError):
    """What lies outside the user's municipalities answers as if it did not exist."""

    status = 404
    code = "not_found"

    def __init__(self, message: str = "Não encontrado.", field: str | None = None):
        super().__init__(message, self.code, field)


class ReadOnlyRole(DomainError):
    """Seen, but not the user's to act on: the auditor's role, or a role that is not this
    act's (the authority's penalties, the Núcleo's decisions)."""

    status = 403
    code = "forbidden"

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message, self.code, field)


AUDITOR_REFUSAL = (
    "O papel de auditoria só lê: quem age pelo município é o Núcleo, a fiscalização ou a "
    "autoridade dele."
)


def require_acting(
    user, municipality_id: int | None, roles: Iterable[str] = ACTING_ROLES, refusal: str = ""
) -> None:
    """Refuse unless the user acts in the municipality with one of `roles`: 404 when it does
    not even read it, 403 (with `refusal`, or the auditor's) when it reads without acting."""
    j = jurisdiction_of(user)
    if not j.reads(municipality_id):
        raise OutsideJurisdiction()
    if not j.acts(municipality_id, roles):
        raise ReadOnlyRole(refusal or AUDITOR_REFUSAL)


class ScopedQuerySet(QuerySet):
    """A model's rows by municipality. Subclasses set `municipality_path` (the lookup from the
    row to its municipality), `scope_via` (the row belongs to another scoped row) or override
    `municipal_q`, and override `side_q` when people acting for a transporter, a facility or a
    generator see some rows. `scoped(...)` makes the simple ones in a line."""

    municipality_path = "municipality"
    # Or: the foreign key to another scoped model whose rows decide (a CTR's waste lines are
    # its CTR's): a subquery of that model's own municipal_q, so the rule is written once.
    scope_via: str = ""

    def municipal_q(self, ids: Iterable[int]) -> Q:
        if self.scope_via:
            target = self.model._meta.get_field(self.scope_via).related_model
            rows = target._default_manager.in_municipalities(ids)
            return Q(**{f"{self.scope_via}_id__in": rows.values("pk")})
        return Q(**{f"{self.municipality_path}__in": list(ids)})

    def side_q(self, user) -> Q | None:
        return None

    def visible_to(self, user, *, current: bool = False) -> QuerySet:
        """The rows `user` may see: of its municipalities (with `current`, of the one it works
        in now), plus what its side sees. The superuser's are every municipality's."""
        j = jurisdiction_of(user)
        if current:
            ids = [j.current_id] if j.current_id is not None else []
        elif j.everywhere:
            return self.all()
        else:
            ids = sorted(j.roles)
        q = self.municipal_q(ids) if ids else None
        side = self.side_q(user) if user is not None and user.is_authenticated else None
        if side is not None:
            q = side if q is None else q | side
        return self.none() if q is None else self.filter(q)

    def in_municipalities(self, ids: Iterable[int]) -> QuerySet:
        """The rows of these municipalities, whoever asks (jobs, the SQL's subqueries)."""
        return self.filter(self.municipal_q(ids))

    def acted_on_by(self, user, roles: Iterable[str] = ACTING_ROLES) -> QuerySet:
        """The rows of the municipalities where `user` holds one of `roles`."""
        ids = jurisdiction_of(user).acting_ids(roles)
        if ids is None:
            return self.all()
        return self.filter(self.municipal_q(ids)) if ids else self.none()


def scoped(path: str = "municipality", via: str = "") -> QuerySet:
    """The manager of a model scoped by a plain path to its municipality, or through the
    foreign key `via` to another scoped model."""
    return type(
        "ScopedBy" + "".join(part.title() for part in (via or path).split("__")),
        (ScopedQuerySet,),
        {"municipality_path": path, "scope_via": via},
    ).as_manager()


def staff_of(municipality_id: int, roles: Iterable[str]):
    """The active people holding one of `roles` in the municipality (its e-mails)."""
    from django.contrib.auth import get_user_model

    return (
        get_user_model()
        .objects.filter(
            is_active=True,
            staff_roles__municipality_id=municipality_id,
            staff_roles__role__in=list(roles),
        )
        .distinct()
    )
