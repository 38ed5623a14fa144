from django.urls import path

from . import account_views, views

app_name = "jurisdiction"

urlpatterns = [
    path("municipio/", views.choose_municipality, name="choose"),
    # The link of a new staff account (jurisdiction.accounts): its first password.
    path(
        "conta/senha/<uidb64>/<token>/",
        account_views.SetPasswordView.as_view(),
        name="set-password",
    ),
]
