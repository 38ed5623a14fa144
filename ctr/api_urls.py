from django.urls import path
from rest_framework.authtoken.views import obtain_auth_token
from rest_framework.routers import SimpleRouter

from .api import (
    CTRViewSet,
    EquipmentViewSet,
    FacilityBalanceView,
    FacilityProcessingView,
    RuleListView,
    VehicleViewSet,
)
from .api_destinations import GeneratorDestinationsView, WorksiteDestinationsView
from .field import correction_api as api_corrections
from .field.offline_views import OfflineBundleView
from .field.template_api import CTRTemplateViewSet

router = SimpleRouter()
router.register("ctrs", CTRViewSet, basename="ctr")
router.register("vehicles", VehicleViewSet, basename="vehicle")
router.register("equipment", EquipmentViewSet, basename="equipment")
router.register("ctr-templates", CTRTemplateViewSet, basename="ctr-template")

urlpatterns = [
    path("auth/token/", obtain_auth_token, name="api-token"),
    path("rules/", RuleListView.as_view(), name="rules"),
    path("facilities/<int:pk>/balance/", FacilityBalanceView.as_view(), name="facility-balance"),
    path(
        "facilities/<int:pk>/processing/",
        FacilityProcessingView.as_view(),
        name="facility-processing",
    ),
    path(
        "worksites/<int:pk>/destinations/",
        WorksiteDestinationsView.as_view(),
        name="worksite-destinations",
    ),
    path(
        "generators/<int:pk>/destinations/",
        GeneratorDestinationsView.as_view(),
        name="generator-destinations",
    ),
    # Corrections after reception: ctr.field.correction_api
    path(
        "ctrs/<str:number>/corrections/",
        api_corrections.CTRCorrectionsView.as_view(),
        name="ctr-corrections",
    ),
    path(
        "corrections/<int:pk>/",
        api_corrections.CorrectionDetailView.as_view(),
        name="correction-detail",
    ),
    path(
        "corrections/<int:pk>/approve/",
        api_corrections.CorrectionApproveView.as_view(),
        name="correction-approve",
    ),
    path(
        "corrections/<int:pk>/refuse/",
        api_corrections.CorrectionRefuseView.as_view(),
        name="correction-refuse",
    ),
    path(
        "corrections/<int:pk>/escalate/",
        api_corrections.CorrectionEscalateView.as_view(),
        name="correction-escalate",
    ),
    path(
        "corrections/<int:pk>/decide/",
        api_corrections.CorrectionDecideView.as_view(),
        name="correction-decide",
    ),
    # What the transporter's phone keeps to issue offline.
    path("offline-bundle/", OfflineBundleView.as_view(), name="offline-bundle"),
    *router.urls,
]
