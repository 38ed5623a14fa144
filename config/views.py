"""Site-wide views that belong to no app."""

from django.shortcuts import render


def csrf_failure(request, reason: str = ""):
    """Django's CSRF refusal, in Portuguese: usually a form left open too long or cookies off."""
    return render(request, "403_csrf.html", status=403)
