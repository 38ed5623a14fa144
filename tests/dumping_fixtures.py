"""Photos and points for the dumping-report tests: real image files built with Pillow, and
points at exact geodesic distances."""

from __future__ import annotations

import io
import struct
import zlib

from django.contrib.gis.geos import Point
from PIL import ExifTags, Image
from pyproj import Geod

from tests.builders import ORIGIN

WGS84 = Geod(ellps="WGS84")
# EXIF position written into test photos: 22°48'36"S 45°11'24"W (-22.81, -45.19).
EXIF_LAT_DMS = (22.0, 48.0, 36.0)
EXIF_LON_DMS = (45.0, 11.0, 24.0)
EXIF_POINT = (-45.19, -22.81)


def geodesic_offset(lon: float, lat: float, azimuth_deg: float, metres: float) -> Point:
    """The point `metres` away along `azimuth_deg` on the WGS 84 spheroid, which is what
    PostGIS geography measures. (tests.builders.offset is a flat approximation: 251 m north
    there is 249.7 m on the spheroid, which would turn a 251 m test into a 249 m one.)"""
    x, y, _back = WGS84.fwd(lon, lat, azimuth_deg, metres)
    return Point(x, y, srid=4326)


def at(east_m: float = 0, north_m: float = 0) -> Point:
    """A point east/north of ORIGIN, in metres along the spheroid (one leg at a time)."""
    lon, lat = ORIGIN
    if east_m:
        p = geodesic_offset(lon, lat, 90 if east_m > 0 else 270, abs(east_m))
        lon, lat = p.x, p.y
    if north_m:
        p = geodesic_offset(lon, lat, 0 if north_m > 0 else 180, abs(north_m))
        lon, lat = p.x, p.y
    return Point(lon, lat, srid=4326)


def upload(name: str, data: bytes) -> io.BytesIO:
    """A file for Django's test client (it reads `name` for the multipart file name)."""
    handle = io.BytesIO(data)
    handle.name = name
    return handle


def jpeg_with_gps(size=(320, 240), colour="red", orientation: int | None = None) -> bytes:
    exif = Image.Exif()
    exif[ExifTags.Base.Make] = "CameraDeTeste"
    exif[ExifTags.Base.Artist] = "Fulano de Tal"
    if orientation:
        exif[ExifTags.Base.Orientation] = orientation
    gps = exif.get_ifd(ExifTags.IFD.GPSInfo)
    gps[ExifTags.GPS.GPSLatitudeRef] = "S"
    gps[ExifTags.GPS.GPSLatitude] = EXIF_LAT_DMS
    gps[ExifTags.GPS.GPSLongitudeRef] = "W"
    gps[ExifTags.GPS.GPSLongitude] = EXIF_LON_DMS
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "JPEG", exif=exif, quality=90)
    return out.getvalue()


def jpeg_plain(size=(200, 150)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, "blue").save(out, "JPEG")
    return out.getvalue()


def png_with_text() -> bytes:
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("Author", "Fulano de Tal")
    out = io.BytesIO()
    Image.new("RGBA", (120, 90), (0, 128, 0, 200)).save(out, "PNG", pnginfo=info)
    return out.getvalue()


def webp() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (160, 120), "yellow").save(out, "WEBP")
    return out.getvalue()


def gif() -> bytes:
    out = io.BytesIO()
    Image.new("P", (50, 50)).save(out, "GIF")
    return out.getvalue()


def oversized_jpeg(total_bytes: int = 9 * 1024 * 1024) -> bytes:
    """A valid JPEG followed by padding: 9 MB on the wire."""
    data = jpeg_plain()
    return data + b"\0" * (total_bytes - len(data))


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    return (
        struct.pack(">I", len(payload))
        + kind
        + payload
        + struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)
    )


def png_bomb(width: int, height: int, real_data: bool = True) -> bytes:
    """A greyscale PNG declaring width×height pixels. With real_data, the IDAT really holds
    that many zero pixels, deflated to a few kilobytes (a true decompression bomb); without,
    only the header lies (for sizes too large to generate)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit grey
    if real_data:
        compressor = zlib.compressobj(9)
        row = b"\0" * (width + 1)  # filter byte + pixels
        parts = [compressor.compress(row) for _ in range(height)]
        idat = b"".join(parts) + compressor.flush()
    else:
        idat = zlib.compress(b"\0" * 64)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", idat)
        + _png_chunk(b"IEND", b"")
    )
