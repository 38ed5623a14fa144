"""Photos of a /denunciar/ submission that came back with an error, kept until it goes through.

A browser cannot fill a file input again: without this, the photos a citizen attached were
dropped, without a word, whenever the form came back (a missing category, a point outside the
municipality, "is it one of these?"). Each photo that passes fiscalization.photos.check_photos is
stored, already re-encoded without metadata, under a random key in the private media directory
(MEDIA_ROOT is never served); the form carries the key signed (django.core.signing), shows the
photos as thumbnails, and the submission that is accepted attaches them to the report. Nothing
else links them to anyone; a key is good for PENDING_MAX_AGE, after which its files are swept.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import re
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.contrib.gis.geos import Point
from django.core import signing
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from PIL import Image

from .photos import MAX_PHOTOS, CheckedPhoto, PhotoError, PhotoErrors, check_photos

log = logging.getLogger(__name__)

PENDING_ROOT = "denuncias-pendentes"
PENDING_MAX_AGE = 6 * 3600  # seconds: a form left open for a morning still has its photos
SALT = "fiscalization.pending-photos"
KEY_RE = re.compile(r"^[0-9a-f]{32}$")
THUMB_SIDE = 240
MANIFEST = "fotos.json"


@dataclass
class Pending:
    """The photos kept for one form: the signed token the form carries, and the photos."""

    token: str = ""
    photos: list[CheckedPhoto] = field(default_factory=list)
    expired: bool = False  # the form carried a token that is no longer good

    @property
    def key(self) -> str | None:
        return _key_of(self.token)


def _key_of(token: str) -> str | None:
    if not token:
        return None
    try:
        key = signing.loads(token, salt=SALT, max_age=PENDING_MAX_AGE)
    except signing.BadSignature:  # SignatureExpired included
        return None
    return key if isinstance(key, str) and KEY_RE.match(key) else None


def _dir(key: str) -> str:
    return f"{PENDING_ROOT}/{key}"


def _point(value) -> Point | None:
    if not value:
        return None
    return Point(float(value[0]), float(value[1]), srid=4326)


def load(token: str) -> Pending:
    """The photos kept under the form's token; none (and `expired`) when it is not good."""
    token = (token or "").strip()
    if not token:
        return Pending()
    key = _key_of(token)
    if key is None:
        return Pending(expired=True)
    manifest_name = f"{_dir(key)}/{MANIFEST}"
    try:
        with default_storage.open(manifest_name, "rb") as handle:
            entries = json.loads(handle.read())
        photos = []
        for entry in entries:
            with default_storage.open(f"{_dir(key)}/{entry['file']}", "rb") as handle:
                content = handle.read()
            photos.append(
                CheckedPhoto(
                    original_name=entry["name"],
                    content=content,
                    content_type=entry["content_type"],
                    extension=entry["extension"],
                    width=entry["width"],
                    height=entry["height"],
                    sha256=entry["sha256"],
                    exif_location=_point(entry.get("exif")),
                )
            )
    except (OSError, ValueError, KeyError, TypeError):
        return Pending(expired=True)
    return Pending(token, photos)


def _write(key: str, photos: Sequence[CheckedPhoto]) -> None:
    directory = _dir(key)
    entries = []
    for index, photo in enumerate(photos):
        name = f"{index}-{photo.sha256[:16]}.{photo.extension}"
        if not default_storage.exists(f"{directory}/{name}"):
            default_storage.save(f"{directory}/{name}", ContentFile(photo.content))
        entries.append(
            {
                "file": name,
                "name": photo.original_name,
                "content_type": photo.content_type,
                "extension": photo.extension,
                "width": photo.width,
                "height": photo.height,
                "sha256": photo.sha256,
                "exif": list(photo.exif_location.coords) if photo.exif_location else None,
            }
        )
    manifest = f"{directory}/{MANIFEST}"
    if default_storage.exists(manifest):
        default_storage.delete(manifest)
    default_storage.save(manifest, ContentFile(json.dumps(entries).encode()))
    # Files of photos removed since the last submission.
    wanted = {entry["file"] for entry in entries} | {MANIFEST}
    for name in default_storage.listdir(directory)[1]:
        if name not in wanted:
            default_storage.delete(f"{directory}/{name}")


def keep(pending: Pending, photos: Sequence[CheckedPhoto]) -> Pending:
    """Store `photos` (the kept ones and the new ones, in order) for the form to come back with;
    the token stays the same while it is good."""
    if not photos:
        discard(pending)
        return Pending(expired=pending.expired)
    sweep()
    key = pending.key or secrets.token_hex(16)
    _write(key, photos)
    token = pending.token if pending.key else signing.dumps(key, salt=SALT)
    return Pending(token, list(photos))


def discard(pending: Pending) -> None:
    """Delete the kept photos (the report has them now, or the user removed them)."""
    if pending.key:
        _delete_dir(pending.key)


def _delete_dir(key: str) -> None:
    directory = _dir(key)
    try:
        _, files = default_storage.listdir(directory)
        for name in files:
            default_storage.delete(f"{directory}/{name}")
        default_storage.delete(directory)  # FileSystemStorage removes an empty directory
    except OSError:
        log.warning("Could not delete pending photos %s", directory)


def sweep(now: float | None = None) -> None:
    """Delete the kept photos older than PENDING_MAX_AGE (forms abandoned)."""
    now = now or time.time()
    try:
        directories, _ = default_storage.listdir(PENDING_ROOT)
    except (OSError, FileNotFoundError):
        return
    for key in directories:
        if not KEY_RE.match(key):
            continue
        try:
            modified = default_storage.get_modified_time(f"{_dir(key)}/{MANIFEST}").timestamp()
        except OSError:
            modified = 0
        if now - modified > PENDING_MAX_AGE:
            _delete_dir(key)


def check_each(files: Iterable) -> tuple[list[CheckedPhoto], list[PhotoError]]:
    """Every uploaded file through fiscalization.photos.check_photos, one at a time: the good
    ones are kept even when another is refused."""
    checked: list[CheckedPhoto] = []
    errors: list[PhotoError] = []
    for upload in files:
        try:
            checked.extend(check_photos([upload]))
        except PhotoErrors as error:
            errors.extend(error.errors)
    return checked, errors


def too_many(count: int) -> PhotoError:
    return PhotoError(
        f"{count} fotos",
        f"envie no máximo {MAX_PHOTOS} fotos por denúncia (contando as já anexadas).",
        "too_many_files",
    )


def thumbnail_uri(photo: CheckedPhoto) -> str:
    """A small JPEG of the photo as a data: URI (the page's CSP allows data: images)."""
    with Image.open(io.BytesIO(photo.content)) as image:
        image.thumbnail((THUMB_SIDE, THUMB_SIDE))
        if image.mode not in ("RGB", "L"):
            background = Image.new("RGB", image.size, "white")
            rgba = image.convert("RGBA")
            background.paste(rgba, mask=rgba.getchannel("A"))
            image = background
        out = io.BytesIO()
        image.save(out, "JPEG", quality=70)
    return "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode()
