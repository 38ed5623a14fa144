"""API of hotspots, suspects and roadside checks."""

urlpatterns: list = []
