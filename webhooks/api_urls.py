from django.urls import path
from rest_framework.routers import SimpleRouter

from .api import EndpointViewSet, ReplayView

router = SimpleRouter()
router.register("webhooks", EndpointViewSet, basename="webhook")

urlpatterns = [
    path(
        "webhook-deliveries/<int:pk>/replay/",
        ReplayView.as_view(),
        name="webhook-delivery-replay",
    ),
    *router.urls,
]
