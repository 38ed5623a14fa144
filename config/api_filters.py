"""Filters shared by the spatial collections of the API."""

import django_filters

from .api_params import parse_bbox


class BBoxFilter(django_filters.CharFilter):
    """`bbox=minlon,minlat,maxlon,maxlat` in WGS 84, as intersects with an explicit 4326 box:
    djangorestframework-gis's InBBoxFilter builds its box without an SRID and compares
    bounding boxes only (design.md, known pitfalls)."""

    def __init__(self, field_name: str, **kwargs):
        kwargs.setdefault("label", "minlon,minlat,maxlon,maxlat (WGS 84)")
        super().__init__(field_name=field_name, **kwargs)

    def filter(self, queryset, value):
        if not value:
            return queryset
        return queryset.filter(**{f"{self.field_name}__intersects": parse_bbox("bbox", value)})
