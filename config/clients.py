"""Who a request comes from, as the rate limits, the login lockout and the audit log name it:
the client's address, and keyed hashes of it (the cache and the logs never hold a raw address).

The client's address is REMOTE_ADDR. Behind a reverse proxy every request comes from the proxy:
set CTR_TRUSTED_PROXY_COUNT to the number of proxies in front of the app, and the address is
read from X-Forwarded-For, counting that many entries from the right (the ones our proxies
appended; entries further left are whatever the client sent, and can be forged). Never set it
without a proxy that overwrites or appends that header.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress

from django.conf import settings


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


def keyed_hash(text: str) -> str:
    """An HMAC of `text` under the SECRET_KEY: stable across processes, useless without the
    key (an address space is small enough to hash exhaustively, so a plain hash would not do)."""
    digest = hmac.new(settings.SECRET_KEY.encode(), text.encode(), hashlib.sha256)
    return digest.hexdigest()[:32]


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
    return keyed_hash(bucket)
