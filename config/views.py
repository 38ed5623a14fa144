"""Site-wide views that belong to no app."""

from django.http import JsonResponse
from django.shortcuts import render


def csrf_failure(request, reason: str = ""):
    """Django's CSRF refusal, in Portuguese: usually a form left open too long or cookies off."""
    return render(request, "403_csrf.html", status=403)


def not_found(request, exception=None):
    """404: problem+json for the API and OGC paths (clients parse it), a page otherwise."""
    if request.path.startswith(("/api/", "/ogc/")):
        return JsonResponse(
            {
                "type": "about:blank",
                "title": "Não encontrado",
                "status": 404,
                "detail": "O endereço pedido não existe nesta API.",
                "instance": request.path,
            },
            status=404,
            content_type="application/problem+json",
            json_dumps_params={"ensure_ascii": False},
        )
    return render(request, "404.html", status=404)
