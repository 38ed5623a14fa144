"""The limits of the public dumping-report intake (web form and API), on config.rate_limits.

Anyone can report without an account, so anyone could flood the inspectors' queue. Each client
may file a few reports in a short window and a few more per day.

Brazilian mobile carriers put thousands of phones behind one public address (CGNAT), and a city
hall sits behind one NAT: a limit per address alone would let one citizen's five reports block
everyone else on that address (docs/security.md). So the web form gives each browser a random
device id in a signed cookie, and the limits below count per device; the address only has a
ceiling high enough for many people at once. A client without the cookie (an API script, a
browser that refuses cookies) is counted by its address at the per-device level.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.conf import settings

from config.clients import client_key, keyed_hash
from config.rate_limits import RateLimit, Window

# Reports actually saved: 5 in 10 minutes, 20 a day per client (device, or address without one).
REPORTS = RateLimit(
    "dumping-report",
    (Window(10 * 60, 5, "10 minutos"), Window(24 * 3600, 20, "24 horas")),
    "denúncias",
)
# Every submission, saved or refused (bad photos, a 409): uploads cost bandwidth and CPU.
ATTEMPTS = RateLimit("dumping-report-attempt", (Window(10 * 60, 30, "10 minutos"),), "tentativas")
# The ceilings of one address over all its devices: a dozen people reporting at once from a
# carrier's or a city hall's address pass; a flood from one address does not.
ADDRESS_REPORTS = RateLimit(
    "dumping-report-address",
    (Window(10 * 60, 60, "10 minutos"), Window(24 * 3600, 300, "24 horas")),
    "denúncias",
)
ADDRESS_ATTEMPTS = RateLimit(
    "dumping-report-attempt-address", (Window(10 * 60, 300, "10 minutos"),), "tentativas"
)
# The "is it one of these?" lookups of the public form.
NEARBY = RateLimit("dumping-nearby", (Window(10 * 60, 120, "10 minutos"),), "consultas")


# --- devices -----------------------------------------------------------------------------------

DEVICE_COOKIE = "ctr_dispositivo"
DEVICE_COOKIE_SALT = "fiscalization.throttle.device"
DEVICE_COOKIE_AGE = 365 * 24 * 3600


@dataclass(frozen=True)
class Client:
    """Who a public limit counts: the device (the form's cookie), when it has one, and always
    the address (both as keyed hashes)."""

    address: str
    device: str | None = None

    @property
    def own(self) -> str:
        """The key of the per-client limits: the device, or the address without one."""
        return f"device:{self.device}" if self.device else self.address


def _device_id(request) -> str | None:
    # A forged or tampered cookie fails the signature: the client is then its address.
    return request.get_signed_cookie(DEVICE_COOKIE, default=None, salt=DEVICE_COOKIE_SALT)


def client_of(request) -> Client:
    device = _device_id(request)
    return Client(
        address=client_key(request.META), device=keyed_hash(f"device:{device}") if device else None
    )


def remember_device(request, response) -> None:
    """Give the browser its device id (a random value, nothing about the person) when it has
    none: the limits then count this browser apart from the others on its address."""
    if _device_id(request):
        return
    response.set_signed_cookie(
        DEVICE_COOKIE,
        secrets.token_urlsafe(16),
        salt=DEVICE_COOKIE_SALT,
        max_age=DEVICE_COOKIE_AGE,
        httponly=True,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,
    )


def check_report_attempt(client: Client) -> None:
    """Before a public report is read: the attempt counts, and a report must still fit."""
    ATTEMPTS.check_and_hit(client.own)
    REPORTS.check(client.own)
    if client.device:
        ADDRESS_ATTEMPTS.check_and_hit(client.address)
        ADDRESS_REPORTS.check(client.address)


def count_report(client: Client) -> None:
    """A public report was saved."""
    REPORTS.hit(client.own)
    if client.device:
        ADDRESS_REPORTS.hit(client.address)
