"""The expected outcome of every URL of the project for every role
(tests/config/test_authorization_matrix.py). One entry per URL name; a new URL without an
entry fails that test.

Roles (tests/ctr_world.py): anon (no session, no token), alfa (transporter A, who issued the
CTRs of the table), beta (transporter B), operador (operator of the ATT, destination of those
CTRs), operador_pev (operator of another facility, the PEV), nucleo (Núcleo Permanente de
Gestão), autoridade (the Autoridade group: sees what the municipality sees, and alone applies
penalties and decides appeals, Lei 3.978/2007 art. 35), fiscal (Fiscalização), curioso (signed
in, no role), gerador (the account of a generator, Construtora Gama, art. 9).

Outcomes: "200", "403"... the status code; "login" a redirect to the sign-in page; "302→/x/" a
redirect elsewhere. Placeholders such as {ctr} name objects that the test builds (alfa's CTR
to the ATT, a dumping report with a photo, an enforcement case with its notice, record and
embargo...). POST bodies are empty unless the check gives one: a role allowed in then gets its
form back (200) or a validation error (400), a role kept out the same refusal as for a GET.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fiscalization.enforcement.actions import ACTIONS

ROLES = (
    "anon",
    "curioso",
    "gerador",
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


# The test town's IBGE code (tests/ctr_world.py): its public pages' own address.
TOWN_IBGE = "3518404"

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
GENERATOR_PAGE = row("403", anon="login", gerador="200")
# The PGRCC: the Núcleo decides (an empty POST: 400), the other municipal roles see;
# a plan's readers are its generator and the municipality.
NUCLEO_FORM = row("403", anon="login", nucleo="400")
PLAN_READERS = row("404", anon="401", gerador="200", **municipal("200"))

# Webhooks: the roles with endpoints of their own, and alfa's endpoint for the others.
OWNERS_OK = dict.fromkeys(("alfa", "beta", "operador", "operador_pev"), "200")
OWNERS_400 = dict.fromkeys(("alfa", "beta", "operador", "operador_pev"), "400")
WEBHOOK_OTHERS = dict.fromkeys(("beta", "operador", "operador_pev"), "404")
WEBHOOK_PAGE = row("403", anon="login", alfa="200", **WEBHOOK_OTHERS)
WEBHOOK_BACK_TO_DETAIL = row(
    "403", anon="login", alfa="302→/integracoes/webhooks/{webhook}/", **WEBHOOK_OTHERS
)
WEBHOOK_API = row("403", anon="401", alfa="200", **WEBHOOK_OTHERS)


TABLE: dict[str, list[Check]] = {
    # --- API: schema and docs, public --------------------------------------------------------
    "api-schema": [Check(get=PUBLIC)],
    "api-docs": [Check(get=PUBLIC)],
    # --- probes and metrics (platform-level, no municipality's data) --------------------------
    "healthz": [Check(get=PUBLIC)],
    # The same answer for every role: here 503, since the world's outbox holds a delivery due
    # an hour ago that no worker sends (tests/config/test_health.py covers the checks).
    "readyz": [Check(get=row("503"))],
    # A token (CTR_METRICS_TOKEN), not a role, opens /metrics: without it set, 404 for all
    # (tests/config/test_metrics.py covers the token and the networks).
    "metrics": [Check(get=row("404"))],
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
        # An onward CTR: from the ATT only its operator, from a PEV its operator
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
    # A facility's stock: its operator and the municipality.
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
    # Where a worksite's (a generator's) loads are now: the municipality, and a
    # transporter for the loads it carried (art. 13 p.ú.); the others are refused with a 403.
    "worksite-destinations": [
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("403", anon="401", alfa="200", **municipal("200")),
        ),
        # Construtora Gama's worksite: its generator sees all of it too.
        Check(
            kwargs={"pk": "{gama_worksite}"},
            get=row("403", anon="401", alfa="200", gerador="200", **municipal("200")),
        ),
    ],
    "generator-destinations": [
        Check(
            kwargs={"pk": "{generator}"},
            get=row("403", anon="401", alfa="200", **municipal("200")),
        ),
        Check(
            kwargs={"pk": "{gama_generator}"},
            get=row("403", anon="401", alfa="200", gerador="200", **municipal("200")),
        ),
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
        ),
        # Construtora Gama's CTR: its generator reads it too.
        Check(
            kwargs={"number": "{gama_ctr}"},
            get=row(
                "404", anon="401", alfa="200", operador="200", gerador="200", **municipal("200")
            ),
        ),
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
    # --- API: CTR templates, the transporter's own; another's is not found
    "ctr-template-list": [
        Check(
            get=row("403", anon="401", alfa="200", beta="200"),
            post=API_TRANSPORTER_FORM,
            data={},
        )
    ],
    "ctr-template-detail": [
        Check(
            kwargs={"pk": "{ctr_template}"},
            get=row("403", anon="401", alfa="200", beta="404"),
        )
    ],
    "ctr-template-issue": [
        Check(
            kwargs={"pk": "{ctr_template}"},
            get=row("405", anon="401"),
            post=row("403", anon="401", alfa="400", beta="404"),
            data={},
        )
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
                gerador="302→/gerador/",
                alfa="302→/transportador/ctrs/",
                beta="302→/transportador/ctrs/",
                operador="302→/recebimentos/",
                operador_pev="302→/recebimentos/",
                fiscal="302→/fiscalizacao/",
            )
        )
    ],
    "ctr_web:rules": [Check(get=PUBLIC)],
    # Each public page also at a municipality's own address (/m/<IBGE>/…).
    "maps:home": [Check(get=PUBLIC), Check(kwargs={"ibge": TOWN_IBGE}, get=PUBLIC)],
    "maps:choose-municipality": [Check(get=row("302→/"))],
    "maps:favicon": [Check(get=row("301→/static/maps/favicon.svg"))],
    "maps:onde-descartar": [Check(get=PUBLIC), Check(kwargs={"ibge": TOWN_IBGE}, get=PUBLIC)],
    # Public verification of a printed CTR (personal data masked).
    "ctr-verify-form": [Check(get=PUBLIC), Check(kwargs={"ibge": TOWN_IBGE}, get=PUBLIC)],
    "ctr-verify": [Check(kwargs={"number": "{ctr}"}, get=PUBLIC)],
    # The public page of an issued certificate of destination (data masked).
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
    # The transporter's installable app. Its manifest and worker hold no
    # one's data (public, like static files); the offline bundle is the transporter's own.
    "ctr_web:app-manifest": [Check(get=PUBLIC)],
    "ctr_web:service-worker": [Check(get=PUBLIC)],
    "offline-bundle": [Check(get=row("403", anon="401", alfa="200", beta="200"))],
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
    # CTR templates: alfa's template; beta is told it does not exist.
    "ctr_web:template-list": [Check(get=TRANSPORTER_PAGE)],
    "ctr_web:template-new": [Check(get=TRANSPORTER_PAGE, post=TRANSPORTER_FORM)],
    "ctr_web:template-issue": [
        Check(
            kwargs={"pk": "{ctr_template}"},
            get=row("403", anon="login", alfa="200", beta="404"),
        )
    ],
    "ctr_web:template-edit": [
        Check(
            kwargs={"pk": "{ctr_template}"},
            get=row("403", anon="login", alfa="200", beta="404"),
            post=row("403", anon="login", alfa="400", beta="404"),
        )
    ],
    "ctr_web:template-delete": [
        Check(
            kwargs={"pk": "{ctr_template_to_delete}"},
            get=POST_ONLY,
            post=row("403", anon="login", alfa="302→/transportador/modelos/", beta="404"),
        )
    ],
    # An empty name: back to the CTR's page with the message.
    "ctr_web:ctr-save-template": [
        Check(
            kwargs={"number": "{ctr}"},
            get=POST_ONLY,
            post=row("403", anon="login", alfa="400", beta="404"),
        )
    ],
    # --- web: receiving facilities ------------------------------------------------------------
    "ctr_web:receptions": [Check(get=OPERATOR_PAGE)],
    # Onward CTRs and the stock: each operator from its own facility (the PEV's
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
        ),
        Check(
            kwargs={"number": "{gama_ctr}"},
            get=row(
                "404", anon="login", alfa="200", operador="200", gerador="200", **municipal("200")
            ),
        ),
    ],
    # The worksite of alfa's CTR: the municipality, and alfa (its own CTRs there).
    "worksite-report": [
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("404", anon="login", alfa="200", **municipal("200")),
        ),
        Check(
            kwargs={"pk": "{gama_worksite}"},
            get=row("404", anon="login", alfa="200", gerador="200", **municipal("200")),
        ),
    ],
    "worksite-report-pdf": [
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("404", anon="login", alfa="200", **municipal("200")),
        ),
        Check(
            kwargs={"pk": "{gama_worksite}"},
            get=row("404", anon="login", alfa="200", gerador="200", **municipal("200")),
        ),
    ],
    # The certificate of destination: as the worksite report, per worksite and per
    # generator (the generator of alfa's CTR).
    "worksite-cdf": [
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("404", anon="login", alfa="200", **municipal("200")),
        ),
        Check(
            kwargs={"pk": "{gama_worksite}"},
            get=row("404", anon="login", alfa="200", gerador="200", **municipal("200")),
        ),
    ],
    "worksite-cdf-pdf": [
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("404", anon="login", alfa="200", **municipal("200")),
        ),
        Check(
            kwargs={"pk": "{gama_worksite}"},
            get=row("404", anon="login", alfa="200", gerador="200", **municipal("200")),
        ),
    ],
    "generator-cdf": [
        Check(
            kwargs={"pk": "{generator}"},
            get=row("404", anon="login", alfa="200", **municipal("200")),
        ),
        Check(
            kwargs={"pk": "{gama_generator}"},
            get=row("404", anon="login", alfa="200", gerador="200", **municipal("200")),
        ),
    ],
    "generator-cdf-pdf": [
        Check(
            kwargs={"pk": "{generator}"},
            get=row("404", anon="login", alfa="200", **municipal("200")),
        ),
        Check(
            kwargs={"pk": "{gama_generator}"},
            get=row("404", anon="login", alfa="200", gerador="200", **municipal("200")),
        ),
    ],
    # Fee statements: a transporter its own, the municipality any; asking for alfa's by id,
    # beta is told it does not exist.
    "fee-current": [Check(get=row("302→/taxas/{month}/", anon="login"))],
    "fee-statement": [
        Check(
            kwargs={"period": "{month}"},
            get=row(
                "200",
                anon="login",
                curioso="403",
                gerador="403",
                operador="403",
                operador_pev="403",
            ),
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
            get=row(
                "200",
                anon="login",
                curioso="403",
                gerador="403",
                operador="403",
                operador_pev="403",
            ),
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
    "intake:new": [
        Check(get=PUBLIC, post=row("400")),
        Check(kwargs={"ibge": TOWN_IBGE}, get=PUBLIC, post=row("400")),
    ],
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
    "enforcement:apply-fine": [
        Check(kwargs={"pk": "{record}"}, get=AUTHORITY_PAGE, post=AUTHORITY_FORM)
    ],
    # The records awaiting the authority (art. 35): every municipal role reads the queue; an
    # empty POST names no record (400).
    "enforcement:records-awaiting": [Check(get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)],
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
    "nucleo:painel": [Check(get=MUNICIPAL_PAGE)],
    # The municipal staff pick the municipality they work in; a form sent empty is
    # invalid (400) for them, refused for anyone else.
    "jurisdiction:choose": [Check(get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)],
    # A new staff account's link: the token is the credential; a wrong one
    # shows everyone the same "link no longer valid" page and changes nothing.
    "jurisdiction:set-password": [
        Check(kwargs={"uidb64": "MQ", "token": "x-invalido"}, get=PUBLIC, post=PUBLIC)
    ],
    "nucleo:mapa": [Check(get=MUNICIPAL_PAGE)],
    "nucleo:exportar": [Check(get=MUNICIPAL_PAGE)],
    "nucleo:exportar-arquivo": [Check(kwargs={"name": "areas.gpkg"}, get=MUNICIPAL_PAGE)],
    # --- generators: worksites, the generator's own, the municipality's all -----------------
    # {gama_worksite} is the gerador's; {worksite} (alfa's CTR's) another generator's: a 404 to
    # the gerador, as if it did not exist. An empty POST: the form back with its errors.
    "generators:worksite-list": [
        Check(get=row("403", anon="login", gerador="200", **municipal("200")))
    ],
    "generators:worksite-new": [
        Check(
            get=row("403", anon="login", gerador="200", **municipal("200")),
            post=row("403", anon="login", gerador="400", **municipal("400")),
        )
    ],
    "generators:worksite-detail": [
        Check(
            kwargs={"pk": "{gama_worksite}"},
            get=row("403", anon="login", gerador="200", **municipal("200")),
        ),
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("403", anon="login", gerador="404", **municipal("200")),
        ),
    ],
    "generators:worksite-edit": [
        Check(
            kwargs={"pk": "{gama_worksite}"},
            get=row("403", anon="login", gerador="200", **municipal("200")),
            post=row("403", anon="login", gerador="400", **municipal("400")),
        ),
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("403", anon="login", gerador="404", **municipal("200")),
            post=row("403", anon="login", gerador="404", **municipal("400")),
        ),
    ],
    "worksite-list": [
        Check(
            get=row("403", anon="401", gerador="200", **municipal("200")),
            post=row("403", anon="401", gerador="400", **municipal("400")),
            data={},
        )
    ],
    "worksite-detail": [
        Check(
            kwargs={"pk": "{gama_worksite}"},
            get=row("403", anon="401", gerador="200", **municipal("200")),
        ),
        Check(
            kwargs={"pk": "{worksite}"},
            get=row("403", anon="401", gerador="404", **municipal("200")),
        ),
    ],
    # --- generator accounts -------------------------------------------------------------------
    # Public self-registration: a signed-in user would be signed out by a new account, so only
    # anonymous visitors may send it (the others get the page with that notice, a POST 403).
    "generators:registration": [Check(get=PUBLIC, post=row("403", anon="400"))],
    "generators:registration-status": [Check(get=row("200", anon="login"))],
    "generators:invitation": [
        Check(kwargs={"token": "{invitation_token}"}, get=PUBLIC, post=row("403", anon="400")),
        Check(kwargs={"token": "nao-existe"}, get=row("404"), post=row("404")),
    ],
    "generators:registration-queue": [Check(get=MUNICIPAL_PAGE)],
    "generators:registration-detail": [Check(kwargs={"pk": "{registration}"}, get=MUNICIPAL_PAGE)],
    # The first municipal role confirms; the next ones are told it is decided, on the same page.
    "generators:registration-confirm": [
        Check(
            kwargs={"pk": "{registration_web}"},
            get=POST_ONLY,
            post=row(
                "403",
                anon="login",
                **municipal("302→/nucleo/geradores/cadastros/{registration_web}/"),
            ),
        )
    ],
    "generators:registration-refuse": [
        Check(kwargs={"pk": "{registration}"}, get=POST_ONLY, post=MUNICIPAL_FORM)
    ],
    "generators:nucleo-invitations": [Check(get=MUNICIPAL_PAGE, post=MUNICIPAL_FORM)],
    "generators:transporter-invitations": [Check(get=TRANSPORTER_PAGE, post=TRANSPORTER_FORM)],
    "generator-invitation-list": [
        Check(
            get=row("403", anon="401", alfa="200", beta="200", **municipal("200")),
            post=row("403", anon="401", alfa="400", beta="400", **municipal("400")),
            data={},
        )
    ],
    "generator-registration-list": [Check(get=API_MUNICIPAL)],
    "generator-registration-detail": [Check(kwargs={"pk": "{registration}"}, get=API_MUNICIPAL)],
    "generator-registration-confirm": [
        Check(
            kwargs={"pk": "{registration_api}"},
            get=API_MUNICIPAL_NO_GET,
            post=row("403", anon="401", nucleo="200", autoridade="409", fiscal="409"),
        )
    ],
    "generator-registration-refuse": [
        Check(
            kwargs={"pk": "{registration}"},
            get=API_MUNICIPAL_NO_GET,
            post=API_MUNICIPAL_FORM,
            data={},
        )
    ],
    # --- web: the generator's CTRs, map and confirmation ------------------------------------
    "generators:home": [Check(get=GENERATOR_PAGE)],
    "generators:ctr-list": [Check(get=GENERATOR_PAGE)],
    "generators:ctr-map": [Check(get=GENERATOR_PAGE)],
    # Its own CTR; another's (alfa's CTR for Maria da Obra) does not exist for it.
    "generators:ctr-detail": [
        Check(kwargs={"number": "{gama_ctr}"}, get=GENERATOR_PAGE),
        Check(kwargs={"number": "{ctr}"}, get=row("403", anon="login", gerador="404")),
    ],
    # The world's municipality does not ask for the confirmation (the default): refused, back
    # to the CTR's page with the reason.
    "generators:ctr-confirm": [
        Check(
            kwargs={"number": "{gama_ctr}"},
            get=POST_ONLY,
            post=row("403", anon="login", gerador="302→/gerador/ctrs/{gama_ctr}/"),
        )
    ],
    "generators:unconfirmed": [Check(get=MUNICIPAL_PAGE)],
    # API: whoever sees the CTR reaches the service, and only its generator gets past the
    # role (409 here: the municipality does not ask for it); the others are told it is not
    # there.
    "ctr-confirm-departure": [
        Check(
            kwargs={"number": "{gama_ctr}"},
            get=row("405", anon="401"),
            post=row(
                "404", anon="401", gerador="409", alfa="403", operador="403", **municipal("403")
            ),
        )
    ],
    # --- the Habite-se declaration: the generator asks on its worksite; the
    # Núcleo alone decides (the inspectors and the authority see the queue); {declaration}'s
    # loads are not all received, so the Núcleo's issue is refused (409) and nothing changes.
    "generators:declaration-request": [
        Check(
            kwargs={"pk": "{declaration_worksite}"},
            get=row("403", anon="login", gerador="200"),
            post=row("403", anon="login", gerador="400"),
        )
    ],
    "generators:declaration-queue": [Check(get=MUNICIPAL_PAGE)],
    "generators:declaration-review": [Check(kwargs={"pk": "{declaration}"}, get=MUNICIPAL_PAGE)],
    "generators:declaration-issue": [
        Check(
            kwargs={"pk": "{declaration}"},
            get=POST_ONLY,
            post=row("403", anon="login", nucleo="409"),
        )
    ],
    "generators:declaration-refuse": [
        Check(
            kwargs={"pk": "{declaration}"},
            get=POST_ONLY,
            post=row("403", anon="login", nucleo="400"),
        )
    ],
    "generators:declaration-pdf": [
        Check(
            kwargs={"pk": "{issued_declaration}"},
            get=row("404", anon="login", gerador="200", **municipal("200")),
        )
    ],
    "generators:declaration-verify": [Check(kwargs={"code": "{declaration_code}"}, get=PUBLIC)],
    # Who does not see the worksite (its generator, its municipality's staff) gets
    # a 404, as if it did not exist; who sees it without the role of the act, a 403.
    "worksite-declarations": [
        Check(
            kwargs={"pk": "{declaration_worksite}"},
            get=row("404", anon="401", gerador="200", **municipal("200")),
            post=row("404", anon="401", gerador="400", **municipal("403")),
        )
    ],
    "declaration-list": [Check(get=API_MUNICIPAL)],
    "declaration-detail": [
        Check(
            kwargs={"pk": "{declaration}"},
            get=row("404", anon="401", gerador="200", **municipal("200")),
        )
    ],
    "declaration-issue": [
        Check(
            kwargs={"pk": "{declaration}"},
            get=row("405", anon="401"),
            post=row(
                "404", anon="401", gerador="403", autoridade="403", fiscal="403", nucleo="409"
            ),
        )
    ],
    "declaration-refuse": [
        Check(
            kwargs={"pk": "{declaration}"},
            get=row("405", anon="401"),
            post=row(
                "404", anon="401", gerador="403", autoridade="403", fiscal="403", nucleo="400"
            ),
        )
    ],
    # --- the PGRCC: the generator writes its worksite's plan, the
    # municipality sees the queue and the review, only the Núcleo decides (art. 20) ----------
    # Another's worksite does not exist; the staff who see it do not write its plan.
    "generators:worksite-plan": [
        Check(
            kwargs={"pk": "{gama_site}"},
            get=row("404", anon="login", gerador="200", **municipal("403")),
            post=row("404", anon="login", gerador="400", **municipal("403")),  # empty: no action
        )
    ],
    "generators:plan-queue": [Check(get=MUNICIPAL_PAGE)],
    "generators:plan-review": [
        Check(kwargs={"pk": "{plan}"}, get=MUNICIPAL_PAGE, post=NUCLEO_FORM)
    ],
    "generators:plan-rates": [Check(get=MUNICIPAL_PAGE, post=NUCLEO_FORM)],
    "plan-estimate": [Check(query="built_area_m2=100&work_kind=renovation", get=API_SIGNED_IN)],
    # The generator's plans and the municipality read them; another is told they do not exist.
    "worksite-plans": [
        Check(
            kwargs={"pk": "{gama_site}"},
            get=PLAN_READERS,
            post=row("404", anon="401", gerador="400", **municipal("403")),  # empty body
            data={},
        )
    ],
    "plan-list": [Check(get=API_MUNICIPAL)],
    "plan-detail": [Check(kwargs={"pk": "{plan}"}, get=PLAN_READERS)],
    "plan-submit": [
        Check(
            kwargs={"pk": "{plan_draft}"},
            get=row("405", anon="401"),
            post=row("404", anon="401", gerador="200", **municipal("403")),
            data={},
        )
    ],
    "plan-approve": [
        Check(
            kwargs={"pk": "{plan_to_approve}"},
            get=row("405", anon="401"),
            post=row(
                "404", anon="401", gerador="403", autoridade="403", fiscal="403", nucleo="200"
            ),
            data={},
        )
    ],
    "plan-return": [
        Check(
            kwargs={"pk": "{plan}"},
            get=row("405", anon="401"),
            # Without the note the Núcleo is told to write one.
            post=row(
                "404", anon="401", gerador="403", autoridade="403", fiscal="403", nucleo="400"
            ),
            data={},
        )
    ],
    # --- the Núcleo's worksites and the suspect worksites (municipal only; the
    # generator sees its own worksites elsewhere, never these lists) ---------------------------
    "nucleo:obras": [Check(get=MUNICIPAL_PAGE), Check(query="csv=1", get=MUNICIPAL_PAGE)],
    "nucleo:obra": [Check(kwargs={"pk": "{worksite}"}, get=MUNICIPAL_PAGE)],
    "suspect-worksites": [
        Check(get=API_MUNICIPAL),
        Check(query="reason=suspect&municipality=3518404", get=API_MUNICIPAL),
    ],
    # --- webhooks, a transporter's or a facility's own; another's is a 404,
    # a role without CTRs of its own (municipal, generator, curioso) has none: 403 -------------
    "webhooks:list": [
        Check(
            get=row(**OWNERS_OK, default="403", anon="login"),
            post=row(**OWNERS_400, default="403", anon="login"),
        )
    ],
    "webhooks:detail": [Check(kwargs={"pk": "{webhook}"}, get=WEBHOOK_PAGE)],
    "webhooks:rotate": [Check(kwargs={"pk": "{webhook}"}, get=POST_ONLY, post=WEBHOOK_PAGE)],
    "webhooks:enable": [
        Check(kwargs={"pk": "{webhook}"}, get=POST_ONLY, post=WEBHOOK_BACK_TO_DETAIL)
    ],
    "webhooks:disable": [
        Check(kwargs={"pk": "{webhook}"}, get=POST_ONLY, post=WEBHOOK_BACK_TO_DETAIL)
    ],
    "webhooks:replay": [
        Check(kwargs={"pk": "{webhook_delivery}"}, get=POST_ONLY, post=WEBHOOK_BACK_TO_DETAIL)
    ],
    "webhook-list": [
        Check(
            get=row(**OWNERS_OK, default="403", anon="401"),
            post=row(**OWNERS_400, default="403", anon="401"),
        )
    ],
    "webhook-detail": [Check(kwargs={"pk": "{webhook}"}, get=WEBHOOK_API)],
    "webhook-deliveries": [Check(kwargs={"pk": "{webhook}"}, get=WEBHOOK_API)],
    "webhook-rotate-secret": [
        Check(kwargs={"pk": "{webhook}"}, get=row("405", anon="401"), post=WEBHOOK_API)
    ],
    "webhook-enable": [
        Check(kwargs={"pk": "{webhook}"}, get=row("405", anon="401"), post=WEBHOOK_API)
    ],
    "webhook-disable": [
        Check(kwargs={"pk": "{webhook}"}, get=row("405", anon="401"), post=WEBHOOK_API)
    ],
    "webhook-delivery-replay": [
        Check(
            kwargs={"pk": "{webhook_delivery_api}"},
            get=row("405", anon="401"),
            post=row(**WEBHOOK_OTHERS, default="403", anon="401", alfa="202"),
        )
    ],
    # --- corrections after reception --------------------------------------------------------------
    # The two parties of the reception (alfa, the ATT's operator) and the municipality read
    # them; anyone else is told they do not exist. Either party proposes (an empty body: 400);
    # the other one approves or refuses (the proposer, alfa, is refused); either sends a refused
    # one to the Núcleo (alfa first; then it is escalated already: 409); only the Núcleo's own
    # group decides (an empty body: 400).
    "ctr-corrections": [
        Check(
            kwargs={"number": "{corr_ctr}"},
            get=row("404", anon="401", alfa="200", operador="200", **municipal("200")),
            post=row("404", anon="401", **municipal("403"), alfa="400", operador="400"),
            data={},
        )
    ],
    "correction-detail": [
        Check(
            kwargs={"pk": "{api_corr_decide}"},
            get=row("404", anon="401", alfa="200", operador="200", **municipal("200")),
        )
    ],
    "correction-approve": [
        Check(
            kwargs={"pk": "{api_corr_approve}"},
            get=row("405", anon="401"),
            post=row("404", anon="401", **municipal("403"), alfa="403", operador="200"),
            data={},
        )
    ],
    "correction-refuse": [
        Check(
            kwargs={"pk": "{api_corr_refuse}"},
            get=row("405", anon="401"),
            post=row("404", anon="401", **municipal("403"), alfa="403", operador="200"),
            data={"reason": "Não confere"},
        )
    ],
    "correction-escalate": [
        Check(
            kwargs={"pk": "{api_corr_escalate}"},
            get=row("405", anon="401"),
            post=row("404", anon="401", **municipal("403"), alfa="200", operador="409"),
            data={},
        )
    ],
    "correction-decide": [
        Check(
            kwargs={"pk": "{api_corr_decide}"},
            get=row("405", anon="401"),
            post=row(
                "404",
                anon="401",
                nucleo="400",
                autoridade="403",
                fiscal="403",
                alfa="403",
                operador="403",
            ),
            data={},
        )
    ],
    "ctr_web:corrections": [
        Check(
            kwargs={"number": "{corr_ctr}"},
            get=row("404", anon="login", alfa="200", operador="200", **municipal("200")),
        )
    ],
    "ctr_web:correction-propose": [
        Check(
            kwargs={"number": "{corr_ctr}"},
            get=POST_ONLY,
            post=row("404", anon="login", **municipal("403"), alfa="400", operador="400"),
        )
    ],
    "ctr_web:correction-approve": [
        Check(
            kwargs={"pk": "{web_corr_approve}"},
            get=POST_ONLY,
            post=row(
                "404",
                anon="login",
                **municipal("403"),
                alfa="403",
                operador="302→/ctrs/{web_corr_approve_ctr}/correcoes/",
            ),
        )
    ],
    "ctr_web:correction-refuse": [
        Check(
            kwargs={"pk": "{web_corr_refuse}"},
            get=POST_ONLY,
            post=row("404", anon="login", **municipal("403"), alfa="403", operador="400"),
        )
    ],
    "ctr_web:correction-escalate": [
        Check(
            kwargs={"pk": "{web_corr_escalate}"},
            get=POST_ONLY,
            post=row(
                "404",
                anon="login",
                **municipal("403"),
                alfa="302→/ctrs/{web_corr_escalate_ctr}/correcoes/",
                operador="409",
            ),
        )
    ],
    "ctr_web:correction-decide": [
        Check(
            kwargs={"pk": "{web_corr_decide}"},
            get=POST_ONLY,
            post=row(
                "404",
                anon="login",
                nucleo="400",
                autoridade="403",
                fiscal="403",
                alfa="403",
                operador="403",
            ),
        )
    ],
    "ctr_web:nucleo-corrections": [Check(get=MUNICIPAL_PAGE)],
    # --- django.contrib.admin: only its index (see EXCLUDED_NAMESPACES); nobody is staff ------
    "admin:index": [Check(get=row("302→/admin/login/"))],
}


# --- the other municipality -------------------------------------------------------------------
# Municipality B (Aparecida, beside the town: tests/two_towns.py) accepts the town's landfill for
# its CTRs, the two sharing it. For every entry above, B's people and the state's auditor of A
# answer as the issue asks (tests/config/test_authorization_matrix.py derives it):
# - B's people: an object of A does not exist for them. They get what their counterpart in A
#   (ACROSS_ROLES) gets for the same route with an object that does not exist (its ids replaced
#   by ids of nothing: the "ghost" request); a public route (anonymous 200) answers them as it
#   answers everyone;
# - the auditor of A reads what A's inspector reads and sends nothing: 403 where A's staff act
#   on a route that is not open to any signed-in user.
# ACROSS names the exceptions, with the reason.
ACROSS_ROLES = {
    "transportador_b": "beta",  # licensed in B only: another transporter, for A's objects
    "operador_b": "operador_pev",  # operates B's PEV
    "nucleo_b": "nucleo",
    "autoridade_b": "autoridade",
    "fiscal_b": "fiscal",
    "auditor_a": "fiscal",
}
B_STAFF = frozenset({"nucleo_b", "autoridade_b", "fiscal_b"})
# A form accepted, refused for its content, or for the state of its object: the act was open.
ACTING = ("200", "201", "400", "409", "422")
# The URL parameters that name an object, and what names no object of that kind.
GHOSTS = {
    "pk": "987654321",
    "number": "CTR-9999999-2099-999999",
    "protocol": "2099-ZZZZ-ZZZZ",
    "code": "CDF-ZZZZ-ZZZZ-ZZZZ",
    "feature_id": "987654321",
    # Not "token": an invitation's or a password link's token is a credential, not an object
    # of a municipality; its pages answer B's people as anyone.
}

# (URL name, method) -> {role: outcome}: where the rules above do not hold, and why.
ACROSS: dict[tuple[str, str], dict[str, str]] = {
    # Choosing the municipality one works in is not acting for it: the auditor chooses too (an
    # empty form: 400).
    ("jurisdiction:choose", "POST"): {"auditor_a": "400"},
    # The auditor's home is the Núcleo's dashboard (it reads; the inspectors' reports are
    # theirs to work on).
    ("ctr_web:dashboard", "GET"): {"auditor_a": "302→/nucleo/"},
    # A's PEV is public: issuing an onward CTR from it is refused to whoever is not its operator
    # or its municipality's staff (403, the body names the facility, not the address).
    ("ctr-list", "POST"): {
        "operador_b": "403",
        "nucleo_b": "403",
        "autoridade_b": "403",
        "fiscal_b": "403",
    },
    # Only a facility's operator records its processing: refused to any staff before the
    # facility is looked up (403), B's as A's.
    ("facility-processing", "POST"): {"nucleo_b": "403", "autoridade_b": "403", "fiscal_b": "403"},
}


# The enforcement steps' pages are forms to act (fiscalization.enforcement.actions): the auditor
# reads the case and is refused the step's page, as the inspector is an authority's step.
ACROSS.update(
    {
        (row.url, method): {"auditor_a": "403"}
        for row in ACTIONS.values()
        if row.path
        for method in ("GET", "POST")
    }
)


def across_row(default: str, **roles: str) -> dict[str, str]:
    """The outcome of each role of both municipalities: `default` for all but those named."""
    everyone = (*ROLES, *ACROSS_ROLES)
    unknown = set(roles) - set(everyone)
    assert not unknown, unknown
    return {role: roles.get(role, default) for role in everyone}


# Objects of B, every role of both municipalities named.
B_TABLE: dict[str, list[Check]] = {
    # B's CTR to the landfill they share: its transporter, B's staff (its origin), A's staff
    # (it arrives at their landfill) and A's auditor read it; nobody else knows it exists.
    "ctr-detail": [
        Check(
            kwargs={"number": "{ctr_b}"},
            get=across_row(
                "404",
                anon="401",
                transportador_b="200",
                nucleo_b="200",
                autoridade_b="200",
                fiscal_b="200",
                auditor_a="200",
                **municipal("200"),
            ),
        )
    ],
    # B's dumping report: B's staff only.
    "dumping-report-detail": [
        Check(
            kwargs={"pk": "{report_b}"},
            get=across_row(
                "404",
                anon="401",
                curioso="403",
                gerador="403",
                alfa="403",
                beta="403",
                operador="403",
                operador_pev="403",
                transportador_b="403",
                operador_b="403",
                nucleo_b="200",
                autoridade_b="200",
                fiscal_b="200",
            ),
        )
    ],
}
