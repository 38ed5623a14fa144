"""The page of the link jurisdiction.accounts sends: the person chooses its password."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import SetPasswordForm
from django.urls import reverse_lazy

from .access import DataScope


class ChoosePasswordForm(SetPasswordForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["new_password1"].label = "Nova senha"
        self.fields["new_password2"].label = "Repita a nova senha"
        for field in self.fields.values():
            field.widget.attrs["autocomplete"] = "new-password"


class SetPasswordView(auth_views.PasswordResetConfirmView):
    """Public: the link's token (unguessable, one use, expiring) is the credential. Django's
    view moves the token from the address into the session before showing the form (so it
    does not leak through the Referer), checks it again on the POST, and then signs the person
    in and sends it to its panel (/painel/: the Núcleo's, for a Núcleo account)."""

    data_scope = DataScope.PUBLIC
    template_name = "jurisdiction/set_password.html"
    form_class = ChoosePasswordForm
    # The path the token is replaced with ("…/<uid>/definir/").
    reset_url_token = "definir"
    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"
    success_url = reverse_lazy("ctr_web:dashboard")
