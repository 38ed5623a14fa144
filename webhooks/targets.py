"""Where a webhook may point (SSRF): the platform makes requests on its users' behalf, so a URL
must never reach what only the server can reach (the database host, a cloud's metadata service
at 169.254.169.254, the municipal intranet).

The decision, checked twice:
- when an endpoint is registered, the URL itself: https (plain http only to the loopback where
  allowed), no user or password in it, and a host that is not a literal address of a
  non-public network;
- at each delivery, the host's addresses as DNS gives them then: every one must be public
  (`ipaddress.is_global`: not private, CGNAT, link-local, multicast, reserved or unspecified),
  and the request connects to the address checked, not to a second lookup (a DNS answer that
  changes between the check and the connection, "DNS rebinding", cannot slip through).
The loopback is allowed only with settings.WEBHOOKS_ALLOW_LOOPBACK (development and tests: the
test receivers listen there); networks an intranet needs are listed in
settings.WEBHOOKS_ALLOWED_NETWORKS. Redirects are never followed (webhooks.delivery)."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import SplitResult, urlsplit

from django.conf import settings

from .errors import WebhookError

LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}


def _address(host: str):
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _allowed_networks():
    return [ipaddress.ip_network(n, strict=False) for n in settings.WEBHOOKS_ALLOWED_NETWORKS]


def address_allowed(address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    if any(address in network for network in _allowed_networks()):
        return True
    if address.is_loopback:
        return settings.WEBHOOKS_ALLOW_LOOPBACK
    return address.is_global and not address.is_multicast


def is_loopback_host(host: str) -> bool:
    host = host.lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    address = _address(host)
    return address is not None and address.is_loopback


def check_url(url: str) -> SplitResult:
    """The URL of a new endpoint, or a WebhookError saying what is wrong with it."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise WebhookError("O endereço não é uma URL válida.", "url", "url") from None
    host = parts.hostname or ""
    if parts.scheme not in ("https", "http") or not host:
        raise WebhookError("Informe uma URL completa, começando por https://.", "url_scheme", "url")
    if parts.username or parts.password:
        raise WebhookError(
            "A URL não pode conter usuário ou senha: use o segredo do webhook.",
            "url_credentials",
            "url",
        )
    if port == 0:
        raise WebhookError("A porta da URL não é válida.", "url", "url")
    loopback = is_loopback_host(host)
    if loopback and not settings.WEBHOOKS_ALLOW_LOOPBACK:
        raise WebhookError(
            "O endereço aponta para o próprio servidor: use o endereço público do seu sistema.",
            "url_private",
            "url",
        )
    if parts.scheme == "http" and not loopback:
        raise WebhookError(
            "Use https:// (a entrega leva dados dos CTRs e a assinatura).", "url_scheme", "url"
        )
    address = _address(host)
    if address is not None and not address_allowed(address):
        raise WebhookError(
            "O endereço aponta para uma rede privada ou reservada, que o servidor não acessa "
            "por você.",
            "url_private",
            "url",
        )
    return parts


def resolve(host: str, port: int) -> str:
    """The address to connect to: the first of the host's, when every one is allowed."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise WebhookError(f"O nome {host} não foi encontrado (DNS).", "dns") from None
    addresses = [info[4][0] for info in found]
    for address in addresses:
        if not address_allowed(ipaddress.ip_address(address.split("%")[0])):
            raise WebhookError(
                f"{host} aponta para um endereço de rede privada ou reservada: entrega recusada.",
                "url_private",
            )
    return addresses[0]
