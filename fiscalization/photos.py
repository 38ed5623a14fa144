"""Photos of dumping reports: checked by content, their location read, their metadata stripped.

A citizen's upload is untrusted bytes. We never believe its name, extension or declared type:
Pillow opens it with the JPEG, PNG and WebP decoders only (a GIF, an SVG or a text file renamed
`.jpg` is refused), its dimensions are checked from the header before any pixel is decoded (a
decompression bomb is a few kilobytes that inflate to gigabytes), and what we store is a fresh
encoding of the pixels with no metadata at all: EXIF (GPS, camera serial, owner's name), XMP,
ICC profiles and PNG text chunks stay out. The EXIF GPS position, useful evidence for the
inspectors, is read first and kept on DumpingPhoto.exif_location, which only they see.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.gis.geos import Point
from PIL import ExifTags, Image, ImageOps

from config.errors import DomainError

MAX_PHOTOS = 5
MAX_PHOTO_BYTES = 8 * 1024 * 1024
# Header checks before decoding: 50 megapixels is more than phones save by default (12-48 MP),
# and ~150 MB of RGB once decoded; a side over 12,000 px is no photo of a street.
MAX_PIXELS = 50_000_000
MAX_SIDE = 12_000
# What we keep: 4096 px on the long side shows a plate or a logo and keeps files at ~1-3 MB.
STORED_MAX_SIDE = 4096
JPEG_QUALITY = 88
WEBP_QUALITY = 85


@dataclass(frozen=True)
class Format:
    pillow: str
    content_type: str
    extension: str
    label: str


FORMATS = {
    "JPEG": Format("JPEG", "image/jpeg", "jpg", "JPEG"),
    "PNG": Format("PNG", "image/png", "png", "PNG"),
    "WEBP": Format("WEBP", "image/webp", "webp", "WebP"),
}
# Phones save portrait/3D shots as MPO: JPEG with extra frames (depth maps, previews) after
# the first. Its first frame is the photo; it is stored as a plain JPEG.
FORMATS["MPO"] = FORMATS["JPEG"]
ACCEPTED_LABEL = "JPEG, PNG ou WebP"


class PhotoError(Exception):
    """One refused file: its (sanitized) name, why, and a stable code."""

    def __init__(self, filename: str, message: str, code: str):
        super().__init__(f"{filename}: {message}")
        self.filename = filename
        self.message = message
        self.code = code


class PhotoErrors(DomainError):
    """Every refused file of one submission (all are reported at once)."""

    code = "photos"

    def __init__(self, errors: list[PhotoError]):
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors
        if self.too_large:
            self.status = 413

    def problem_errors(self) -> list[dict]:
        return self.as_list()

    @property
    def too_large(self) -> bool:
        """Every refusal is about size: the answer is 413, not 400."""
        return all(e.code == "too_large" for e in self.errors)

    def as_list(self) -> list[dict]:
        return [
            {"campo": "photos", "arquivo": e.filename, "codigo": e.code, "mensagem": e.message}
            for e in self.errors
        ]


@dataclass(frozen=True)
class CheckedPhoto:
    """A photo ready to store: re-encoded bytes without metadata, and what we learnt."""

    original_name: str
    content: bytes
    content_type: str
    extension: str
    width: int
    height: int
    sha256: str
    exif_location: Point | None

    @property
    def size_bytes(self) -> int:
        return len(self.content)


def display_name(name: str | None) -> str:
    """The uploader's file name, safe to echo in a message: no path, no control characters,
    at most 80 characters."""
    base = os.path.basename((name or "").replace("\\", "/"))
    base = "".join(ch for ch in base if ch.isprintable()).strip()
    if len(base) > 80:
        base = base[:77] + "…"
    return base or "(sem nome)"


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f}".replace(".", ",") + " MB"


# --- EXIF location ---------------------------------------------------------------------------


def _degrees(value) -> float | None:
    """EXIF degrees, minutes, seconds (rationals) to decimal degrees."""
    try:
        parts = [float(v) for v in value]
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    if len(parts) != 3 or not all(math.isfinite(p) for p in parts):
        return None
    d, m, s = parts
    return d + m / 60 + s / 3600


def _ref(value) -> str:
    if isinstance(value, bytes):
        value = value.decode("ascii", "ignore")
    return str(value or "").strip().upper()[:1]


def exif_location(exif: Image.Exif) -> Point | None:
    """The GPS position in the EXIF, as a WGS 84 point (EXIF GPS is WGS 84 in practice), or
    None when absent, malformed, out of range or (0, 0) (cameras without a fix write zeros)."""
    try:
        gps = exif.get_ifd(ExifTags.IFD.GPSInfo)
    except Exception:  # a malformed IFD is no location, not an error of the photo
        return None
    if not gps:
        return None
    lat = _degrees(gps.get(ExifTags.GPS.GPSLatitude))
    lon = _degrees(gps.get(ExifTags.GPS.GPSLongitude))
    if lat is None or lon is None:
        return None
    if _ref(gps.get(ExifTags.GPS.GPSLatitudeRef)) == "S":
        lat = -lat
    if _ref(gps.get(ExifTags.GPS.GPSLongitudeRef)) == "W":
        lon = -lon
    if not (-90 <= lat <= 90 and -180 <= lon <= 180) or (lat == 0 and lon == 0):
        return None
    return Point(round(lon, 7), round(lat, 7), srid=4326)


# --- checking and re-encoding ----------------------------------------------------------------


def _open(data: bytes, formats: Sequence[str]) -> Image.Image:
    # `formats` limits the decoders Pillow tries: no GIF, BMP, TIFF, SVG or PSD parser ever
    # sees the bytes, whatever the file is called.
    return Image.open(io.BytesIO(data), formats=list(formats))


def _clean_mode(image: Image.Image, fmt: Format) -> Image.Image:
    if "transparency" in image.info and image.mode in ("P", "L", "RGB"):
        # Transparency lives in `info`, which we drop: make it an alpha channel first.
        image = image.convert("RGBA")
    if fmt.pillow == "JPEG":
        return image if image.mode in ("RGB", "L") else image.convert("RGB")
    if fmt.pillow == "PNG":
        return (
            image if image.mode in ("1", "L", "LA", "P", "RGB", "RGBA") else image.convert("RGBA")
        )
    has_alpha = image.mode in ("RGBA", "LA", "PA") or "A" in image.getbands()
    wanted = "RGBA" if has_alpha else "RGB"
    return image if image.mode == wanted else image.convert(wanted)


def _encode(image: Image.Image, fmt: Format) -> bytes:
    # A new image with the same pixels and an empty `info`: nothing of the original's metadata
    # (exif, icc_profile, xmp, dpi, PNG text) can ride along into the encoder.
    clean = image.copy()
    clean.info = {}
    out = io.BytesIO()
    if fmt.pillow == "JPEG":
        clean.save(out, "JPEG", quality=JPEG_QUALITY, optimize=True)
    elif fmt.pillow == "PNG":
        clean.save(out, "PNG", optimize=False)
    else:
        clean.save(out, "WEBP", quality=WEBP_QUALITY)
    return out.getvalue()


def check_photo(name: str | None, data: bytes) -> CheckedPhoto:
    """Check one file by its content and prepare what we store. Raises PhotoError."""
    filename = display_name(name)
    if len(data) > MAX_PHOTO_BYTES:
        raise PhotoError(
            filename,
            f"tem {_megabytes(len(data))}; o limite é {_megabytes(MAX_PHOTO_BYTES)} por foto.",
            "too_large",
        )
    if not data:
        raise PhotoError(filename, "o arquivo está vazio.", "empty")
    not_an_image = PhotoError(
        filename,
        f"não é uma imagem {ACCEPTED_LABEL} (o conteúdo do arquivo foi verificado, não o nome).",
        "not_an_image",
    )
    with warnings.catch_warnings():
        # Pillow warns above MAX_IMAGE_PIXELS and raises above twice that; both are refusals.
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            probe = _open(data, FORMATS)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            raise PhotoError(
                filename, "as dimensões da imagem são grandes demais.", "too_many_pixels"
            ) from None
        except Exception:  # UnidentifiedImageError, and whatever a malformed header raises
            raise not_an_image from None
        fmt = FORMATS.get(probe.format or "")
        if fmt is None:
            raise not_an_image
        width, height = probe.size
        if width < 1 or height < 1 or width * height > MAX_PIXELS or max(width, height) > MAX_SIDE:
            raise PhotoError(
                filename,
                f"a imagem tem {width}×{height} pixels; o limite é {MAX_SIDE} pixels de lado e "
                f"{MAX_PIXELS // 1_000_000} megapixels.",
                "too_many_pixels",
            )
        try:
            probe.verify()  # structure and checksums, without decoding the pixels
        except Exception:
            raise PhotoError(
                filename, "o arquivo está corrompido ou incompleto.", "corrupt"
            ) from None

        try:
            image = _open(data, [fmt.pillow])
            if getattr(image, "n_frames", 1) > 1:
                image.seek(0)  # MPO, animated PNG or WebP: the first frame only
            location = exif_location(image.getexif())
            if image.format == "JPEG":
                # Decode at a reduced scale when the photo is larger than what we keep: the
                # JPEG decoder scales by 1/2, 1/4 or 1/8 for free.
                image.draft(None, (STORED_MAX_SIDE, STORED_MAX_SIDE))
            image.load()
            # The stored file has no Orientation tag: turn the pixels as the camera meant.
            image = ImageOps.exif_transpose(image)
            image.thumbnail((STORED_MAX_SIDE, STORED_MAX_SIDE), Image.Resampling.LANCZOS)
            image = _clean_mode(image, fmt)
            content = _encode(image, fmt)
        except MemoryError:
            raise PhotoError(
                filename, "a imagem é grande demais para ser processada.", "too_many_pixels"
            ) from None
        except Exception:  # truncated data, bad Huffman tables, broken chunks...
            raise PhotoError(
                filename, "o arquivo está corrompido ou incompleto.", "corrupt"
            ) from None
    return CheckedPhoto(
        original_name=filename,
        content=content,
        content_type=fmt.content_type,
        extension=fmt.extension,
        width=image.width,
        height=image.height,
        sha256=hashlib.sha256(content).hexdigest(),
        exif_location=location,
    )


def check_photos(files: Sequence) -> list[CheckedPhoto]:
    """Check every uploaded file (Django UploadedFile or anything with name, size, read());
    raise PhotoErrors naming each refused file and why, or return them all ready to store."""
    if len(files) > MAX_PHOTOS:
        raise PhotoErrors(
            [
                PhotoError(
                    f"{len(files)} arquivos",
                    f"envie no máximo {MAX_PHOTOS} fotos por denúncia.",
                    "too_many_files",
                )
            ]
        )
    checked: list[CheckedPhoto] = []
    errors: list[PhotoError] = []
    for upload in files:
        name = getattr(upload, "name", None)
        size = getattr(upload, "size", None)
        try:
            if size is not None and size > MAX_PHOTO_BYTES:
                # Do not even read it: the declared size of a Django upload is what was received.
                raise PhotoError(
                    display_name(name),
                    f"tem {_megabytes(size)}; o limite é {_megabytes(MAX_PHOTO_BYTES)} por foto.",
                    "too_large",
                )
            if hasattr(upload, "seek"):
                upload.seek(0)
            checked.append(check_photo(name, upload.read(MAX_PHOTO_BYTES + 1)))
        except PhotoError as error:
            errors.append(error)
    if errors:
        raise PhotoErrors(errors)
    return checked
