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

router = SimpleRouter()
router.register("ctrs", CTRViewSet, basename="ctr")
router.register("vehicles", VehicleViewSet, basename="vehicle")
router.register("equipment", EquipmentViewSet, basename="equipment")

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
    *router.urls,
]
