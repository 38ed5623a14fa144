"""A GeoJSON Point field for DRF input, strict and with Portuguese messages."""

from __future__ import annotations

import math

from django.contrib.gis.geos import Point
from rest_framework import serializers


class GeoJSONPointField(serializers.Field):
    """{"type": "Point", "coordinates": [lon, lat]} in WGS 84; also [lon, lat] shorthand is
    refused, so that nobody swaps the axes by accident."""

    default_error_messages = {
        # Doubled braces: DRF formats these messages with str.format.
        "not_object": 'Informe um ponto GeoJSON: {{"type": "Point", "coordinates": [lon, lat]}}.',
        "wrong_type": "Esperava uma geometria do tipo Point, recebi {kind}.",
        "coordinates": "As coordenadas do ponto devem ser [longitude, latitude] em números.",
        "lon_range": "Longitude {value} fora do intervalo de -180 a 180.",
        "lat_range": "Latitude {value} fora do intervalo de -90 a 90.",
    }

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            self.fail("not_object")
        kind = data.get("type")
        if kind != "Point":
            self.fail("wrong_type", kind=repr(kind))
        coords = data.get("coordinates")
        if (
            not isinstance(coords, list | tuple)
            or len(coords) not in (2, 3)
            or not all(isinstance(c, int | float) and not isinstance(c, bool) for c in coords)
            or not all(math.isfinite(c) for c in coords)
        ):
            self.fail("coordinates")
        lon, lat = float(coords[0]), float(coords[1])
        if not -180 <= lon <= 180:
            self.fail("lon_range", value=lon)
        if not -90 <= lat <= 90:
            self.fail("lat_range", value=lat)
        return Point(lon, lat, srid=4326)

    def to_representation(self, value: Point):
        return {"type": "Point", "coordinates": [round(value.x, 7), round(value.y, 7)]}
