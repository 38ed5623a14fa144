"""Web pages of the generator's side (pt-BR paths): the generator's own pages under /gerador/,
the Núcleo's under /nucleo/geradores/, /nucleo/pgrcc/ and /nucleo/habite-se/ (the Núcleo's
worksite list and map are nucleo's). Namespace `generators`."""

from django.urls import path

from . import account_views, declaration_views, plan_views, portal_views, worksite_views

app_name = "generators"

urlpatterns = [
    # accounts: invitations, self-registration, the Núcleo's confirmation (account_views)
    path("gerador/cadastro/", account_views.registration_new, name="registration"),
    path(
        "gerador/cadastro/situacao/",
        account_views.registration_status,
        name="registration-status",
    ),
    path("gerador/convite/<str:token>/", account_views.invitation, name="invitation"),
    path(
        "nucleo/geradores/cadastros/",
        account_views.registration_queue,
        name="registration-queue",
    ),
    path(
        "nucleo/geradores/cadastros/<int:pk>/",
        account_views.registration_detail,
        name="registration-detail",
    ),
    path(
        "nucleo/geradores/cadastros/<int:pk>/confirmar/",
        account_views.registration_confirm,
        name="registration-confirm",
    ),
    path(
        "nucleo/geradores/cadastros/<int:pk>/recusar/",
        account_views.registration_refuse,
        name="registration-refuse",
    ),
    path(
        "nucleo/geradores/convites/",
        account_views.nucleo_invitations,
        name="nucleo-invitations",
    ),
    path(
        "transportador/geradores/convites/",
        account_views.transporter_invitations,
        name="transporter-invitations",
    ),
    # the generator's CTRs, map and confirmation of departure (portal_views)
    path("gerador/", portal_views.home, name="home"),
    path("gerador/ctrs/", portal_views.ctr_list, name="ctr-list"),
    path("gerador/mapa/", portal_views.ctr_map, name="ctr-map"),
    path("gerador/ctrs/<str:number>/", portal_views.ctr_detail, name="ctr-detail"),
    path(
        "gerador/ctrs/<str:number>/confirmar-saida/",
        portal_views.ctr_confirm,
        name="ctr-confirm",
    ),
    path(
        "nucleo/geradores/ctrs-sem-confirmacao/",
        portal_views.unconfirmed_list,
        name="unconfirmed",
    ),
    # worksites registered by the generator (worksite_views)
    path("gerador/obras/", worksite_views.worksite_list, name="worksite-list"),
    path("gerador/obras/nova/", worksite_views.worksite_new, name="worksite-new"),
    path("gerador/obras/<int:pk>/", worksite_views.worksite_detail, name="worksite-detail"),
    path("gerador/obras/<int:pk>/editar/", worksite_views.worksite_edit, name="worksite-edit"),
    # the PGRCC: estimator, submission, the Núcleo's decision (plan_views)
    path("gerador/obras/<int:pk>/pgrcc/", plan_views.worksite_plan, name="worksite-plan"),
    path("nucleo/pgrcc/", plan_views.plan_queue, name="plan-queue"),
    path("nucleo/pgrcc/indices/", plan_views.plan_rates, name="plan-rates"),
    path("nucleo/pgrcc/<int:pk>/", plan_views.plan_review, name="plan-review"),
    # the Habite-se destination declaration (declaration_views, public verification)
    path(
        "gerador/obras/<int:pk>/habite-se/",
        declaration_views.request_page,
        name="declaration-request",
    ),
    path("nucleo/habite-se/", declaration_views.queue, name="declaration-queue"),
    path("nucleo/habite-se/<int:pk>/", declaration_views.review_page, name="declaration-review"),
    path("nucleo/habite-se/<int:pk>/emitir/", declaration_views.issue, name="declaration-issue"),
    path("nucleo/habite-se/<int:pk>/recusar/", declaration_views.refuse, name="declaration-refuse"),
    path("habite-se/<int:pk>/declaracao.pdf", declaration_views.pdf, name="declaration-pdf"),
    path("verificar/habite-se/<str:code>/", declaration_views.verify, name="declaration-verify"),
]
