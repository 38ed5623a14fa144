"""Template helper of the CTR pages: a link to a CTR's page for whoever is looking
({% load ctr_links %})."""

from __future__ import annotations

from urllib.parse import quote

from django import template
from django.urls import reverse

from ctr import roles

register = template.Library()


def ctr_url_for(user, ctr) -> str:
    """The page of this CTR that `user` may open: the transporter's detail for its own CTRs,
    the operator's page of an onward CTR leaving its facility, the operator's reception
    (looked up by number) for loads destined to its facility, the generator's detail for a
    generator's user, and otherwise the public verification page (Núcleo, inspectors,
    citizens: art. 13 p.ú.). `ctr` is a CTR, a dict with "number" (and maybe
    "transporter_id"), or a number."""
    member = roles.membership(user) if user is not None else None
    if isinstance(ctr, str):
        # A bare number is shown on pages already scoped to the viewer's CTRs (a transporter's
        # fee statement, its worksite report): its own, then.
        number = ctr
        transporter_id = member.transporter_id if member else None
        facility_id = member.facility_id if member else None
    elif isinstance(ctr, dict):
        number = ctr.get("number", "")
        transporter_id = ctr.get("transporter_id")
        facility_id = ctr.get("destination_facility_id")
    else:
        number = ctr.number
        transporter_id = getattr(ctr, "transporter_id", None)
        facility_id = getattr(ctr, "destination_facility_id", None)
    origin_id = getattr(ctr, "origin_facility_id", None)
    if member is not None and member.generator_id:
        # A generator's pages list only its own CTRs (roles.visible_ctrs), and its detail page
        # answers 404 for any other. By URL name: ctr imports nothing of generators.
        return reverse("generators:ctr-detail", args=[number])
    if member is not None:
        if member.transporter_id and member.transporter_id == transporter_id:
            return reverse("ctr_web:ctr-detail", args=[number])
        if member.facility_id and origin_id is not None and member.facility_id == origin_id:
            return reverse("ctr_web:onward-detail", args=[number])
        if member.facility_id and member.facility_id == facility_id:
            return reverse("ctr_web:receptions") + "?busca=" + quote(number)
    return reverse("ctr-verify", args=[number])


@register.simple_tag(takes_context=True)
def ctr_url(context, ctr) -> str:
    request = context.get("request")
    return ctr_url_for(getattr(request, "user", None), ctr)
