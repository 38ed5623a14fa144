"""Per-client rate limits of the public dumping-report intake (web form and API).

Anyone can report without an account, so anyone could flood the inspectors' queue. Each client
(an IP address, hashed: the cache never holds a raw address) may file a few reports in a short
window and a few more per day. The counts live in Django's cache, which is the database here
(settings.CACHES), shared by every worker process.

The client's address is REMOTE_ADDR. Behind a reverse proxy every request comes from the proxy:
set CTR_TRUSTED_PROXY_COUNT to the number of proxies in front of the app, and the address is
read from X-Forwarded-For, counting that many entries from the right (the ones our proxies
appended; entries further left are whatever the client sent, and can be forged). Never set it
without a proxy that overwrites or appends that header.

Brazilian mobile carriers put thousands of phones behind one public address (CGNAT), and a city
hall sits behind one NAT: a limit per address alone would let one citizen's five reports block
everyone else on that address (docs/security.md). So the web form gives each browser a random
device id in a signed cookie, and the limits above count per device; the address only has a
ceiling high enough for many people at once. A client without the cookie (an API script, a
browser that refuses cookies) is counted by its address at the per-device level.

The read-modify-write on the cache is not atomic: two simultaneous requests of one client may
both pass the last free slot. For a form that citizens fill by hand that is one report too many
at worst; the daily window bounds it.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import secrets
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from config.errors import DomainError


def now() -> float:
    return time.time()


@dataclass(frozen=True)
class Window:
    seconds: int
    limit: int
    label: str  # pt-BR, for the message: "10 minutos"


class RateLimited(DomainError):
    """Over the limit: a Portuguese message and how many seconds until a slot frees."""

    status = 429
    code = "rate_limited"

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


def _wait_text(seconds: int) -> str:
    if seconds < 60:
        return "menos de um minuto"
    minutes = math.ceil(seconds / 60)
    if minutes < 60:
        return f"{minutes} minuto{'s' if minutes > 1 else ''}"
    hours = math.ceil(minutes / 60)
    return f"{hours} hora{'s' if hours > 1 else ''}"


class RateLimit:
    """A sliding-window log per client: the times of its last hits, up to the longest window."""

    def __init__(self, scope: str, windows: tuple[Window, ...], what: str):
        self.scope = scope
        self.windows = windows
        self.what = what  # pt-BR plural noun: "denúncias"
        self.horizon = max(w.seconds for w in windows)

    def _key(self, client: str) -> str:
        return f"ctr:rate:{self.scope}:{client}"

    def _stamps(self, client: str, at: float) -> list[float]:
        stamps = cache.get(self._key(client)) or []
        return sorted(t for t in stamps if isinstance(t, int | float) and t > at - self.horizon)

    def check(self, client: str) -> None:
        """Raise RateLimited if one more hit would go over any window."""
        at = now()
        stamps = self._stamps(client, at)
        worst: tuple[int, Window] | None = None
        for window in self.windows:
            recent = [t for t in stamps if t > at - window.seconds]
            if len(recent) >= window.limit:
                # The hit that must leave the window for one more to fit.
                leaving = recent[len(recent) - window.limit]
                wait = max(1, math.ceil(leaving + window.seconds - at))
                if worst is None or wait > worst[0]:
                    worst = (wait, window)
        if worst is not None:
            wait, window = worst
            raise RateLimited(
                f"Muitas {self.what} enviadas a partir desta conexão: o limite é "
                f"{window.limit} a cada {window.label}. Tente de novo em {_wait_text(wait)}.",
                wait,
            )

    def hit(self, client: str) -> None:
        at = now()
        stamps = self._stamps(client, at)
        stamps.append(at)
        cache.set(self._key(client), stamps, timeout=self.horizon)

    def check_and_hit(self, client: str) -> None:
        self.check(client)
        self.hit(client)


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


def client_address(meta: dict) -> str:
    """The client's IP address from a request's META (see the module's note on proxies)."""
    remote = meta.get("REMOTE_ADDR", "") or ""
    proxies = int(getattr(settings, "CTR_TRUSTED_PROXY_COUNT", 0) or 0)
    if proxies > 0:
        forwarded = [p.strip() for p in meta.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [p for p in forwarded if p]
        if len(forwarded) >= proxies:
            candidate = forwarded[-proxies]
            try:
                ipaddress.ip_address(candidate)
            except ValueError:
                return remote
            return candidate
    return remote


def client_key(meta: dict) -> str:
    """A keyed hash of the client's address: what the cache stores, never the address itself.
    An IPv6 client is counted per /64, the block one subscriber gets and may rotate within."""
    address = client_address(meta)
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        bucket = address or "unknown"
    else:
        if ip.version == 6 and ip.ipv4_mapped is not None:
            bucket = str(ip.ipv4_mapped)  # ::ffff:a.b.c.d is an IPv4 client
        elif ip.version == 6:
            bucket = str(ipaddress.ip_network(f"{ip}/64", strict=False))
        else:
            bucket = str(ip)
    digest = hmac.new(settings.SECRET_KEY.encode(), bucket.encode(), hashlib.sha256)
    return digest.hexdigest()[:32]


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
    if device:
        digest = hmac.new(settings.SECRET_KEY.encode(), f"device:{device}".encode(), hashlib.sha256)
        device = digest.hexdigest()[:32]
    return Client(address=client_key(request.META), device=device)


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
