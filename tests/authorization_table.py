"""The expected outcome of every URL of the project for every role
(tests/config/test_authorization_matrix.py). One entry per URL name; a new URL without an
entry fails that test.

Roles (tests/ctr_world.py): anon (no session, no token), alfa (transporter A, who issued the
CTRs of the table), beta (transporter B), operador (operator of the ATT, destination of those
CTRs), operador_pev (operator of another facility, the PEV), nucleo (Núcleo Permanente de
Gestão), autoridade (the Autoridade group: sees what the municipality sees, and alone applies
penalties and decides appeals, Lei 3.978/2007 art. 35), fiscal (Fiscalização), curioso (signed
in, no role).

Outcomes: "200", "403"... the status code; "login" a redirect to the sign-in page; "302→/x/" a
redirect elsewhere. Placeholders such as {ctr} name objects that the test builds (alfa's CTR
to the ATT, a dumping report with a photo, an enforcement case with its notice, record and
embargo...). POST bodies are empty unless the check gives one: a role allowed in then gets its
form back (200) or a validation error (400), a role kept out the same refusal as for a GET.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ROLES = (
    "anon",
    "curioso",
    "beta",
    "operador_pev",
    "nucleo",
    "autoridade",
    "fiscal",
    "alfa",
    "operador",
)

# Namespaces left out of the matrix, with the reason.
EXCLUDED_NAMESPACES = {
    # django.contrib.admin has its own permission system (is_staff plus model permissions) and
    # hundreds of generated URLs; tests/config/test_admin.py covers it. Its index is checked below:
    # no role of the platform is staff.
    "admin": "django.contrib.admin: is_staff + permissões por modelo; tests/config/test_admin.py",
}
# Static files and uploads: no URL pattern serves them (static files come from the web server
# or runserver; uploaded photos only through intake:photo), so there is nothing to list here;
# test_uploaded_files_are_served_by_no_url checks the second.


def row(default: str, **roles: str) -> dict[str, str]:
    """The outcome of each role: `default` for all but those named."""
    unknown = set(roles) - set(ROLES)
    assert not unknown, unknown
    return {role: roles.get(role, default) for role in ROLES}


def municipal(outcome: str) -> dict[str, str]:
    """The same outcome for the municipal roles (Núcleo, autoridade, Fiscalização), who see the
    same pages; only the authority's steps (art. 35) tell them apart."""
    return dict.fromkeys(("nucleo", "autoridade", "fiscal"), outcome)


@dataclass(frozen=True)
class Check:
    kwargs: dict = field(default_factory=dict)
    get: dict[str, str] | None = None
    post: dict[str, str] | None = None
    query: str = ""
    data: dict | None = None
    # The API router adds a `.json` variant of each route: "all" checks both, "plain" only
    # the route without suffix, "format" only the suffixed one.
    routes: str = "all"


# --- the usual rows ----------------------------------------------------------------------------

PUBLIC = row("200")
POST_ONLY = row("405")  # require_POST comes first: a GET is refused before any role check
# Web pages (session): anonymous users go to the sign-in page, the wrong role gets a 403.
MUNICIPAL_PAGE = row("403", anon="login", **municipal("200"))
MUNICIPAL_FORM = row("403", anon="login", **municipal("400"))  # empty POST: invalid
TRANSPORTER_PAGE = row("403", anon="login", alfa="200", beta="200")
TRANSPORTER_FORM = row("403", anon="login", alfa="400", beta="400")
OPERATOR_PAGE = row("403", anon="login", operador="200", operador_pev="200")
OPERATOR_FORM = row("403", anon="login", operador="400", operador_pev="400")  # empty POST
# API (token): anonymous callers get 401, the wrong role 403.
API_PUBLIC = row("200")
API_SIGNED_IN = row("200", anon="401")  # lists filtered by role (empty for curioso)
# The authority's steps (art. 35): an inspector or the Núcleo is refused like any other role.
AUTHORITY_PAGE = row("403", anon="login", autoridade="200")
AUTHORITY_FORM = row("403", anon="login", autoridade="400")
API_MUNICIPAL = row("403", anon="401", **municipal("200"))
API_MUNICIPAL_NO_GET = row("403", anon="401", **municipal("405"))
API_MUNICIPAL_FORM = row("403", anon="401", **municipal("400"))
API_TRANSPORTER_FORM = row("403", anon="401", alfa="400", beta="400")


TABLE: dict[str, list[Check]] = {
    # --- API: schema and docs, public --------------------------------------------------------
    "api-schema": [Check(get=PUBLIC)],
    "api-docs": [Check(get=PUBLIC)],
    # DefaultRouter's root lists the public network routes, yet asks for a login (the default
    # permission): harmless, noted in the report.
    "api-root": [Check(get=API_SIGNED_IN)],
    "api-token": [
        Check(
            get=POST_ONLY,
            post=API_PUBLIC,
            data={"username": "alfa", "password": "senha-teste"},
        )
    ],
    "rules": [Check(get=API_PUBLIC)],
    # --- API: receiving network, public layers ------------------------------------------------
    "facility-list": [Check(get=API_PUBLIC)],
    "facility-detail": [Check(kwargs={"pk": "{facility}"}, get=API_PUBLIC)],
    "facility-nearest": [Check(query="lon=-45.19&lat=-22.81&volume_m3=1", get=API_PUBLIC)],
    "municipality-list": [Check(get=API_PUBLIC)],
    "municipality-detail": [Check(kwargs={"pk": "{municipality}"}, get=API_PUBLIC)],
    "municipality-lookup": [Check(query="lon=-45.19&lat=-22.81", get=API_PUBLIC)],
    "basin-list": [Check(get=API_PUBLIC)],
    "basin-detail": [Check(kwargs={"pk": "{basin}"}, get=API_PUBLIC)],
    # --- API: CTRs ------------------------------------------------------------------------------
    # The list is filtered by role (tests/ctr/test_ctr_api.py); creating is for transporters.
    "ctr-list": [
        Check(get=API_SIGNED_IN, post=API_TRANSPORTER_FORM, data={}),
        # An onward CTR (issue 14): from the ATT only its operator, from a PEV its operator
        # and the municipality (its own PEV collection); an incomplete body is then a 400.
        Check(
            post=row("403", anon="401", operador="400"),
            data={"origin_facility": "{facility}"},
        ),
        Check(
            post=row("403", anon="401", operador_pev="400", **municipal("400")),
            data={"origin_facility": "{pev}"},
        ),
    ],
    # A facility's stock (issue 14): its operator and the municipality.
    "facility-balance": [
        Check(
            kwargs={"pk": "{facility}"},
            get=row("403", anon="401", operador="200", **municipal("200")),
        )
    ],
    # Its on-site processing: the operator and the municipality read it; only the operator
    # records it (an empty body: 400), the municipality is refused like anyone else.
    "facility-processing": [
        Check(
            kwargs={"pk": "{facility}"},
            get=row("403", anon="401", operador="200", **municipal("200")),
            post=row("403", anon="401", operador="400"),
            data={},
        )
    ],
    # Where a worksite's (a generator's) loads are now (issue 14): the municipality, and a
    # transporter for the loads it carried (art. 13 p.ú.); the others are refused with a 403.
    "worksite-destinations": [
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("403", anon="401", alfa="200", **municipal("200")),
        )
    ],
    "generator-destinations": [
        Check(
            kwargs={"pk": "{generator}"},
            get=row("403", anon="401", alfa="200", **municipal("200")),
        )
    ],
    # alfa's CTR to the ATT: its transporter, the ATT's operator and the municipality see it;
    # another transporter, another facility's operator and curioso are told it does not exist.
    "ctr-detail": [
        Check(
            kwargs={"number": "{ctr}"},
            get=row(
                "404",
                anon="401",
                alfa="200",
                operador="200",
                **municipal("200"),
            ),
        )
    ],
    # Each action on a CTR of its own, with a valid body: only one role may act.
    "ctr-receive": [
        Check(
            kwargs={"number": "{ctr_to_receive}"},
            get=row("405", anon="401"),
            post=row(
                "404",
                anon="401",
                alfa="403",
                **municipal("403"),
                operador="200",
            ),
            data={"received_volume_m3": "3"},
        )
    ],
    "ctr-refuse": [
        Check(
            kwargs={"number": "{ctr_to_refuse}"},
            get=row("405", anon="401"),
            post=row(
                "404",
                anon="401",
                alfa="403",
                **municipal("403"),
                operador="200",
            ),
            data={"reason": "Carga misturada"},
        )
    ],
    "ctr-cancel": [
        Check(
            kwargs={"number": "{ctr_to_cancel}"},
            get=row("405", anon="401"),
            post=row(
                "404",
                anon="401",
                operador="403",
                **municipal("403"),
                alfa="200",
            ),
            data={"reason": "Obra adiada"},
        )
    ],
    # --- API: the transporter's fleet (only its own; others see an empty list) --------------
    "vehicle-list": [Check(get=API_SIGNED_IN, post=API_TRANSPORTER_FORM, data={})],
    "vehicle-detail": [Check(kwargs={"pk": "{vehicle}"}, get=row("404", anon="401", alfa="200"))],
    "equipment-list": [Check(get=API_SIGNED_IN, post=API_TRANSPORTER_FORM, data={})],
    "equipment-detail": [
        Check(kwargs={"pk": "{equipment}"}, get=row("404", anon="401", alfa="200"))
    ],
    # --- API: fiscalization -----------------------------------------------------------------
    # Anyone reports dumping (empty body: 400 for all); only the municipality reads reports.
    "dumping-report-list": [Check(get=API_MUNICIPAL, post=row("400"), data={})],
    "dumping-report-detail": [Check(kwargs={"pk": "{report}"}, get=API_MUNICIPAL)],
    "dumping-report-status": [
        Check(
            kwargs={"pk": "{report}"},
            get=API_MUNICIPAL_NO_GET,
            post=API_MUNICIPAL_FORM,
            data={},
        )
    ],
    "dumping-report-merge": [
        Check(
            kwargs={"pk": "{report}"},
            get=API_MUNICIPAL_NO_GET,
            post=API_MUNICIPAL_FORM,
            data={},
        )
    ],
    "dumping-report-hotspots": [Check(get=API_MUNICIPAL)],
    "dumping-report-suspects": [Check(kwargs={"pk": "{report}"}, get=API_MUNICIPAL)],
    "roadside": [Check(query="plate=ABC1D23", get=API_MUNICIPAL)],
    # --- OGC API – Features: public layers; CTR origins only for the municipality (404 to
    # others, as if it did not exist) --------------------------------------------------------
    "ogc-landing": [Check(get=PUBLIC)],
    "ogc-conformance": [Check(get=PUBLIC)],
    "ogc-collections": [Check(get=PUBLIC)],
    "ogc-collection": [
        Check(kwargs={"collection_id": "facilities"}, get=PUBLIC),
        Check(
            kwargs={"collection_id": "ctr-origins"},
            get=row("404", **municipal("200")),
        ),
    ],
    "ogc-items": [
        Check(kwargs={"collection_id": "facilities"}, get=PUBLIC),
        Check(
            kwargs={"collection_id": "ctr-origins"},
            get=row("404", **municipal("200")),
        ),
    ],
    "ogc-item": [
        Check(kwargs={"collection_id": "facilities", "feature_id": "{facility}"}, get=PUBLIC),
        Check(
            kwargs={"collection_id": "ctr-origins", "feature_id": "{ctr_pk}"},
            get=row("404", **municipal("200")),
        ),
    ],
    # --- web: sign-in, dashboard, public pages -----------------------------------------------
    "ctr_web:login": [
        Check(get=row("302→/painel/", anon="200"), post=row("302→/painel/", anon="200"))
    ],
    "ctr_web:logout": [Check(get=PUBLIC, post=row("302→/"))],
    # Each role to its own area; signed in without a role: 403.
    "ctr_web:dashboard": [
        Check(
            get=row(
                "302→/nucleo/",
                anon="login",
                curioso="403",
                alfa="302→/transportador/ctrs/",
                beta="302→/transportador/ctrs/",
                operador="302→/recebimentos/",
                operador_pev="302→/recebimentos/",
                fiscal="302→/fiscalizacao/",
            )
        )
    ],
    "ctr_web:rules": [Check(get=PUBLIC)],
    "maps:home": [Check(get=PUBLIC)],
    "maps:favicon": [Check(get=row("301→/static/maps/favicon.svg"))],
    "maps:onde-descartar": [Check(get=PUBLIC)],
    # Public verification of a printed CTR (personal data masked).
    "ctr-verify-form": [Check(get=PUBLIC)],
    "ctr-verify": [Check(kwargs={"number": "{ctr}"}, get=PUBLIC)],
    # The public page of an issued certificate of destination (issue 14; data masked).
    "cdf-verify": [Check(kwargs={"code": "{certificate}"}, get=PUBLIC)],
    # --- web: transporters ---------------------------------------------------------------------
    "ctr_web:ctr-list": [Check(get=TRANSPORTER_PAGE)],
    "ctr_web:ctr-new": [Check(get=TRANSPORTER_PAGE, post=TRANSPORTER_FORM)],
    "ctr_web:ctr-import": [Check(get=TRANSPORTER_PAGE, post=TRANSPORTER_FORM)],
    "ctr_web:ctr-import-example": [Check(get=TRANSPORTER_PAGE)],
    "ctr_web:ctr-detail": [
        Check(kwargs={"number": "{ctr}"}, get=row("403", anon="login", alfa="200", beta="404"))
    ],
    "ctr_web:ctr-cancel": [
        Check(
            kwargs={"number": "{ctr}"},
            get=POST_ONLY,
            post=row("403", anon="login", alfa="400", beta="404"),
        )
    ],
    "ctr_web:vehicles": [Check(get=TRANSPORTER_PAGE, post=TRANSPORTER_FORM)],
    # alfa's vehicle: deactivated, then reactivated (a redirect back to the list).
    "ctr_web:vehicle-deactivate": [
        Check(
            kwargs={"pk": "{vehicle}"},
            get=POST_ONLY,
            post=row("403", anon="login", alfa="302→/transportador/veiculos/", beta="404"),
        )
    ],
    "ctr_web:vehicle-reactivate": [
        Check(
            kwargs={"pk": "{vehicle}"},
            get=POST_ONLY,
            post=row("403", anon="login", alfa="302→/transportador/veiculos/", beta="404"),
        )
    ],
    "ctr_web:equipment": [Check(get=TRANSPORTER_PAGE, post=TRANSPORTER_FORM)],
    "ctr_web:equipment-deactivate": [
        Check(
            kwargs={"pk": "{equipment}"},
            get=POST_ONLY,
            post=row("403", anon="login", alfa="302→/transportador/equipamentos/", beta="404"),
        )
    ],
    "ctr_web:equipment-reactivate": [
        Check(
            kwargs={"pk": "{equipment}"},
            get=POST_ONLY,
            post=row("403", anon="login", alfa="302→/transportador/equipamentos/", beta="404"),
        )
    ],
    # --- web: receiving facilities ------------------------------------------------------------
    "ctr_web:receptions": [Check(get=OPERATOR_PAGE)],
    # Onward CTRs and the stock (issue 14): each operator from its own facility (the PEV's
    # too); the ATT's onward CTR is its operator's, another facility's is told it does not
    # exist. An empty POST: the form back with its errors (400).
    "ctr_web:onward-new": [Check(get=OPERATOR_PAGE, post=OPERATOR_FORM)],
    "ctr_web:onward-detail": [
        Check(
            kwargs={"number": "{onward_ctr}"},
            get=row("403", anon="login", operador="200", operador_pev="404"),
        )
    ],
    "ctr_web:onward-cancel": [
        Check(
            kwargs={"number": "{onward_ctr}"},
            get=POST_ONLY,
            post=row("403", anon="login", operador="400", operador_pev="404"),
        )
    ],
    "ctr_web:facility-stock": [Check(get=OPERATOR_PAGE)],
    "ctr_web:processing-new": [Check(get=POST_ONLY, post=OPERATOR_FORM)],
    "ctr_web:reception-receive": [
        Check(
            kwargs={"number": "{ctr}"},
            get=POST_ONLY,
            post=row("403", anon="login", operador="400", operador_pev="404"),
        )
    ],
    "ctr_web:reception-refuse": [
        Check(
            kwargs={"number": "{ctr}"},
            get=POST_ONLY,
            post=row("403", anon="login", operador="400", operador_pev="404"),
        )
    ],
    # --- web: documents ------------------------------------------------------------------------
    # The printed CTR: whoever sees the CTR in the API.
    "ctr-pdf": [
        Check(
            kwargs={"number": "{ctr}"},
            get=row(
                "404",
                anon="login",
                alfa="200",
                operador="200",
                **municipal("200"),
            ),
        )
    ],
    # The worksite of alfa's CTR: the municipality, and alfa (its own CTRs there).
    "worksite-report": [
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("404", anon="login", alfa="200", **municipal("200")),
        )
    ],
    "worksite-report-pdf": [
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("404", anon="login", alfa="200", **municipal("200")),
        )
    ],
    # The certificate of destination (issue 14): as the worksite report, per worksite and per
    # generator (the generator of alfa's CTR).
    "worksite-cdf": [
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("404", anon="login", alfa="200", **municipal("200")),
        )
    ],
    "worksite-cdf-pdf": [
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("404", anon="login", alfa="200", **municipal("200")),
        )
    ],
    "generator-cdf": [
        Check(
            kwargs={"pk": "{generator}"},
            get=row("404", anon="login", alfa="200", **municipal("200")),
        )
    ],
    "generator-cdf-pdf": [
        Check(
            kwargs={"pk": "{generator}"},
            get=row("404", anon="login", alfa="200", **municipal("200")),
        )
    ],
    # Fee statements: a transporter its own, the municipality any; asking for alfa's by id,
    # beta is told it does not exist.
    "fee-current": [Check(get=row("302→/taxas/{month}/", anon="login"))],
    "fee-statement": [
        Check(
            kwargs={"period": "{month}"},
            get=row("200", anon="login", curioso="403", operador="403", operador_pev="403"),
        ),
        Check(
            kwargs={"period": "{month}"},
            query="transportador={alfa_id}",
            get=row(
                "403",
                anon="login",
                alfa="200",
                beta="404",
                **municipal("200"),
            ),
        ),
    ],
    "fee-statement-csv": [
        Check(
            kwargs={"period": "{month}"},
            get=row("200", anon="login", curioso="403", operador="403", operador_pev="403"),
        ),
        Check(
            kwargs={"period": "{month}"},
            query="transportador={alfa_id}",
            get=row(
                "403",
                anon="login",
                alfa="200",
                beta="404",
                **municipal("200"),
            ),
        ),
    ],
    # --- web: dumping reports ------------------------------------------------------------------
    # Citizens report and follow their report by protocol without an account.
    "intake:new": [Check(get=PUBLIC, post=row("400"))],
    "intake:nearby": [Check(query="lon=-45.19&lat=-22.81", get=PUBLIC)],
    "intake:follow": [Check(kwargs={"protocol": "{protocol}"}, get=PUBLIC)],
    # The protocol box, for anyone (a malformed protocol: 400; a good one redirects).
    "intake:lookup": [Check(query="protocolo=ABC", get=row("400"))],
    "intake:inspect": [Check(get=MUNICIPAL_PAGE)],
    "intake:inspect-report": [Check(kwargs={"pk": "{report}"}, get=MUNICIPAL_PAGE)],
    "intake:inspect-status": [Check(kwargs={"pk": "{report}"}, get=POST_ONLY, post=MUNICIPAL_FORM)],
    "intake:inspect-merge": [Check(kwargs={"pk": "{report}"}, get=POST_ONLY, post=MUNICIPAL_FORM)],
    "intake:inspect-category": [
        Check(kwargs={"pk": "{report}"}, get=POST_ONLY, post=MUNICIPAL_FORM)
    ],
    # A report's photo (private upload): the municipality only.
    "intake:photo": [Check(kwargs={"pk": "{photo}"}, get=MUNICIPAL_PAGE)],
    "fiscalization_analysis:hotspots": [Check(get=MUNICIPAL_PAGE)],
    "fiscalization_analysis:suspects": [Check(kwargs={"pk": "{report}"}, get=MUNICIPAL_PAGE)],
    "fiscalization_analysis:roadside": [Check(query="plate=ABC1D23", get=MUNICIPAL_PAGE)],
    # --- web: enforcement procedure (inspectors and Núcleo) ---------------------------------
    "enforcement:case-list": [Check(get=MUNICIPAL_PAGE)],
    "enforcement:case-new": [Check(get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)],
    # Suggestions of the case form's generator box: CPFs are personal data.
    "enforcement:generator-suggestions": [Check(query="q=Silva", get=MUNICIPAL_PAGE)],
    "enforcement:case-detail": [Check(kwargs={"pk": "{case}"}, get=MUNICIPAL_PAGE)],
    "enforcement:notice-new": [
        Check(kwargs={"pk": "{case}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:record-new": [
        Check(kwargs={"pk": "{case}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:notice-delivery": [
        Check(kwargs={"pk": "{notice}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:notice-repaired": [
        Check(kwargs={"pk": "{notice}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:notice-failure": [
        Check(kwargs={"pk": "{notice}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:notice-edital": [
        Check(kwargs={"pk": "{notice}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:notice-pdf": [Check(kwargs={"pk": "{notice}"}, get=MUNICIPAL_PAGE)],
    # A record sent by mail (one delivered by hand has no delivery to register: 404).
    "enforcement:record-delivery": [
        Check(kwargs={"pk": "{record_by_mail}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:record-failure": [
        Check(kwargs={"pk": "{record_by_mail}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:record-edital": [
        Check(kwargs={"pk": "{record_by_mail}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:appeal-new": [
        Check(kwargs={"pk": "{record}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    # Only the authority decides an appeal and applies a penalty (art. 35).
    "enforcement:appeal-decision": [
        Check(kwargs={"pk": "{record}"}, get=AUTHORITY_PAGE, post=AUTHORITY_FORM)
    ],
    "enforcement:payment": [
        Check(kwargs={"pk": "{record}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:divida-ativa": [
        Check(kwargs={"pk": "{record}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:record-pdf": [Check(kwargs={"pk": "{record}"}, get=MUNICIPAL_PAGE)],
    "enforcement:penalty-new": [
        Check(kwargs={"pk": "{record}", "kind": kind}, get=AUTHORITY_PAGE, post=AUTHORITY_FORM)
        for kind in ("embargo", "apreensao", "suspensao", "cassacao")
    ],
    "enforcement:embargo-breach": [
        Check(kwargs={"pk": "{penalty}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:seizure-costs": [
        Check(kwargs={"pk": "{penalty}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:seizure-release": [
        Check(kwargs={"pk": "{penalty}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:penalty-lift": [
        Check(kwargs={"pk": "{penalty}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:record-repair": [
        Check(kwargs={"pk": "{record}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:embargo-fine": [
        Check(kwargs={"pk": "{penalty}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:charge-payment": [
        Check(kwargs={"pk": "{charge}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    "enforcement:charge-divida-ativa": [
        Check(kwargs={"pk": "{charge}"}, get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)
    ],
    # --- web: the Núcleo's maps, figures and exports ----------------------------------------
    "maps:nucleo-painel": [Check(get=MUNICIPAL_PAGE)],
    "maps:nucleo-mapa": [Check(get=MUNICIPAL_PAGE)],
    "maps:nucleo-exportar": [Check(get=MUNICIPAL_PAGE)],
    "maps:nucleo-exportar-arquivo": [Check(kwargs={"name": "areas.gpkg"}, get=MUNICIPAL_PAGE)],
    # --- django.contrib.admin: only its index (see EXCLUDED_NAMESPACES); nobody is staff ------
    "admin:index": [Check(get=row("302→/admin/login/"))],
}
