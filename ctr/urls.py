"""Web pages of the CTR for transporters and facility operators."""

urlpatterns: list = []
