"""audit.record(request, obj, purpose): called by the views that show personal data."""

from __future__ import annotations

from django.contrib.contenttypes.models import ContentType
from django.http import HttpRequest

from config.clients import client_key

from .models import AccessLog

# The attribute that names a record without personal data, by model (first one present).
LABEL_ATTRIBUTES = ("number", "protocol")


def _label(obj) -> str:
    for attribute in LABEL_ATTRIBUTES:
        value = getattr(obj, attribute, None)
        if value:
            return str(value)[:120]
    return f"{obj._meta.verbose_name} {obj.pk}"[:120]


def record(request: HttpRequest, obj, purpose: str) -> AccessLog | None:
    """Note that `request.user` was shown `obj`'s personal data on `purpose` (a short pt-BR
    label of the page or document). Anonymous requests are not recorded: public pages never
    show personal data."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return None
    return AccessLog.objects.create(
        user=user,
        username=user.get_username()[:150],
        content_type=ContentType.objects.get_for_model(obj) if obj is not None else None,
        object_id=str(obj.pk) if obj is not None else "",
        object_label=_label(obj) if obj is not None else "",
        purpose=purpose[:80],
        method=request.method or "",
        # The path only: a query string may carry search terms with personal data.
        path=request.path[:300],
        client_hash=client_key(request.META),
    )
