"""Parsing of query parameters, each error naming the parameter, in Portuguese (400, not 500)."""

from __future__ import annotations

import datetime
import math
from decimal import Decimal, InvalidOperation

from django.contrib.gis.geos import Point, Polygon

from .api_errors import InvalidParameter


def required(params, name: str) -> str:
    value = params.get(name)
    if value is None or str(value).strip() == "":
        raise InvalidParameter(name, f"O parâmetro '{name}' é obrigatório.")
    return str(value).strip()


def parse_float(name: str, raw: str, low: float, high: float) -> float:
    try:
        value = float(raw.replace(",", ".") if raw.count(",") == 1 and "." not in raw else raw)
    except ValueError:
        raise InvalidParameter(name, f"'{raw}' não é um número.") from None
    if not math.isfinite(value):
        raise InvalidParameter(name, f"'{raw}' não é um número finito.")
    if not low <= value <= high:
        raise InvalidParameter(name, f"{value:g} está fora do intervalo de {low:g} a {high:g}.")
    return value


def parse_decimal(name: str, raw: str, low: Decimal, high: Decimal) -> Decimal:
    try:
        value = Decimal(raw.replace(",", ".") if raw.count(",") == 1 and "." not in raw else raw)
    except InvalidOperation:
        raise InvalidParameter(name, f"'{raw}' não é um número.") from None
    if not value.is_finite():
        raise InvalidParameter(name, f"'{raw}' não é um número finito.")
    if not low <= value <= high:
        raise InvalidParameter(name, f"{value} está fora do intervalo de {low} a {high}.")
    return value


def parse_int(name: str, raw: str, low: int, high: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise InvalidParameter(name, f"'{raw}' não é um número inteiro.") from None
    if not low <= value <= high:
        raise InvalidParameter(name, f"{value} está fora do intervalo de {low} a {high}.")
    return value


def parse_date(name: str, raw: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(raw)
    except ValueError:
        raise InvalidParameter(
            name, f"'{raw}' não é uma data válida no formato AAAA-MM-DD (ex.: 2026-03-31)."
        ) from None


def parse_lon_lat(params) -> Point:
    """A WGS 84 point from ?lon=&lat=."""
    lon = parse_float("lon", required(params, "lon"), -180, 180)
    lat = parse_float("lat", required(params, "lat"), -90, 90)
    return Point(lon, lat, srid=4326)


def parse_bbox(name: str, raw: str) -> Polygon:
    """minlon,minlat,maxlon,maxlat in WGS 84, as an explicit 4326 polygon."""
    parts = [p.strip() for p in raw.split(",")]
    if len(parts) != 4:
        raise InvalidParameter(
            name, "Use quatro números separados por vírgula: minlon,minlat,maxlon,maxlat."
        )
    labels = ("minlon", "minlat", "maxlon", "maxlat")
    limits = ((-180, 180), (-90, 90), (-180, 180), (-90, 90))
    values = []
    for label, part, (low, high) in zip(labels, parts, limits, strict=True):
        try:
            value = float(part)
        except ValueError:
            raise InvalidParameter(name, f"{label} '{part}' não é um número.") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise InvalidParameter(
                name, f"{label} {part} está fora do intervalo de {low} a {high}."
            )
        values.append(value)
    min_lon, min_lat, max_lon, max_lat = values
    if min_lon >= max_lon or min_lat >= max_lat:
        raise InvalidParameter(
            name, "Caixa invertida ou vazia: minlon < maxlon e minlat < maxlat são necessários."
        )
    box = Polygon.from_bbox((min_lon, min_lat, max_lon, max_lat))
    box.srid = 4326
    return box
