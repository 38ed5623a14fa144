from rest_framework.routers import DefaultRouter

from .api import BasinViewSet, FacilityViewSet, MunicipalityViewSet

router = DefaultRouter()
router.register("facilities", FacilityViewSet, basename="facility")
router.register("municipalities", MunicipalityViewSet, basename="municipality")
router.register("basins", BasinViewSet, basename="basin")

urlpatterns = router.urls
