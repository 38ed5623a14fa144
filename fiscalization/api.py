"""API of dumping reports (intake and inspectors' queries)."""

from rest_framework.routers import SimpleRouter

router = SimpleRouter()
