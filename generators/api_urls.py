"""The generator's side in the API (/api/v1/, English paths like the rest of the API).

/worksites/<id>/destinations/ is ctr's (ctr/api_urls.py, included first): the worksite
patterns here end before it or name another tail, so neither shadows the other."""

from django.urls import path

from . import api_accounts, api_declarations, api_nucleo, api_plans, api_portal, api_worksites

urlpatterns = [
    # accounts
    path(
        "generator-invitations/",
        api_accounts.InvitationListView.as_view(),
        name="generator-invitation-list",
    ),
    path(
        "generator-registrations/",
        api_accounts.RegistrationListView.as_view(),
        name="generator-registration-list",
    ),
    path(
        "generator-registrations/<int:pk>/",
        api_accounts.RegistrationDetailView.as_view(),
        name="generator-registration-detail",
    ),
    path(
        "generator-registrations/<int:pk>/confirm/",
        api_accounts.RegistrationConfirmView.as_view(),
        name="generator-registration-confirm",
    ),
    path(
        "generator-registrations/<int:pk>/refuse/",
        api_accounts.RegistrationRefuseView.as_view(),
        name="generator-registration-refuse",
    ),
    # the generator's CTRs and their confirmation
    path(
        "ctrs/<str:number>/confirm-departure/",
        api_portal.ConfirmDepartureView.as_view(),
        name="ctr-confirm-departure",
    ),
    # worksites
    path("worksites/", api_worksites.WorksiteListView.as_view(), name="worksite-list"),
    path("worksites/<int:pk>/", api_worksites.WorksiteDetailView.as_view(), name="worksite-detail"),
    # the PGRCC
    path("pgrcc/estimate/", api_plans.EstimateView.as_view(), name="plan-estimate"),
    path("worksites/<int:pk>/plans/", api_plans.WorksitePlansView.as_view(), name="worksite-plans"),
    path("plans/", api_plans.PlanQueueView.as_view(), name="plan-list"),
    path("plans/<int:pk>/", api_plans.PlanDetailView.as_view(), name="plan-detail"),
    path("plans/<int:pk>/submit/", api_plans.PlanSubmitView.as_view(), name="plan-submit"),
    path("plans/<int:pk>/approve/", api_plans.PlanApproveView.as_view(), name="plan-approve"),
    path("plans/<int:pk>/return/", api_plans.PlanReturnView.as_view(), name="plan-return"),
    # the Núcleo's worksites and suspects
    *api_nucleo.urlpatterns,
    # the Habite-se declaration
    path(
        "worksites/<int:pk>/habite-se/",
        api_declarations.WorksiteDeclarationsView.as_view(),
        name="worksite-declarations",
    ),
    path("habite-se/", api_declarations.DeclarationListView.as_view(), name="declaration-list"),
    path(
        "habite-se/<int:pk>/",
        api_declarations.DeclarationDetailView.as_view(),
        name="declaration-detail",
    ),
    path(
        "habite-se/<int:pk>/issue/",
        api_declarations.DeclarationIssueView.as_view(),
        name="declaration-issue",
    ),
    path(
        "habite-se/<int:pk>/refuse/",
        api_declarations.DeclarationRefuseView.as_view(),
        name="declaration-refuse",
    ),
]
