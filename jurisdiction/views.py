"""The one place a person with several municipalities picks the one it works in."""

from __future__ import annotations

from django import forms
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from .access import DataScope, declare
from .scope import choices, choose, jurisdiction_of


class ChooseForm(forms.Form):
    municipality = forms.ModelChoiceField(
        label="Município", queryset=None, empty_label=None, to_field_name="pk"
    )
    next = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, user, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["municipality"].queryset = choices(user)
        self.fields["municipality"].initial = jurisdiction_of(user).current_id


def _safe_next(request, value: str) -> str:
    if value and url_has_allowed_host_and_scheme(
        value, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return value
    return "/painel/"


@declare(DataScope.STAFF)
@require_http_methods(["GET", "POST"])
def choose_municipality(request):
    """GET: the user's municipalities, the current one selected; POST: make one current and
    go back to the page the user came from. Choosing is not acting for the municipality: the
    auditor chooses too."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not jurisdiction_of(request.user).is_staff:
        return render(request, "security/sem_acesso.html", status=403)
    if request.method == "POST":
        form = ChooseForm(request.user, request.POST)
        if form.is_valid():
            choose(request.user, form.cleaned_data["municipality"].pk)
            return redirect(_safe_next(request, form.cleaned_data["next"]))
        status = 400
    else:
        form = ChooseForm(request.user, initial={"next": request.GET.get("next", "")})
        status = 200
    return render(request, "jurisdiction/choose.html", {"form": form}, status=status)
