"""Per-client rate limits: sliding windows of hits per client key, in Django's cache.

The cache is the database here (settings.CACHES), shared by every worker process. A client is
whatever key the caller counts by: the keyed hash of an address (config.clients.client_key),
of a browser's device id (fiscalization.throttle), of both. Users: the public endpoints'
limits (config.security.PublicRateLimitMiddleware, settings.CTR_RATE_LIMITS, the login's
among them) and the dumping-report intake (fiscalization.throttle).

The read-modify-write on the cache is not atomic: two simultaneous requests of one client may
both pass the last free slot. For forms that people fill by hand that is one hit too many at
worst; the longest window bounds it.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

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
        self.what = what  # pt-BR feminine plural noun: "denúncias"
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


_RATE_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_UNIT_NAMES = {"s": ("segundo", "segundos"), "m": ("minuto", "minutos"), "h": ("hora", "horas")}
_UNIT_NAMES["d"] = ("dia", "dias")


def parse_rate(text: str) -> tuple[Window, ...]:
    """Text like "20/10m,100/d" → windows of 20 hits in 10 minutes and 100 in a day."""
    windows = []
    for part in text.split(","):
        if not part.strip():
            continue
        match = _RATE_RE.match(part)
        if match is None:
            raise ValueError(f"limite inválido: {part!r} (use N/período, ex. 20/10m)")
        limit, count, unit = int(match[1]), int(match[2] or 1), match[3]
        one, many = _UNIT_NAMES[unit]
        label = one if count == 1 else f"{count} {many}"
        windows.append(Window(count * _UNIT_SECONDS[unit], limit, label))
    return tuple(windows)
