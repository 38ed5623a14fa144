"""Where a webhook may point (webhooks.targets, the SSRF decision): https to public addresses;
the loopback only where allowed; never a private, link-local or reserved network, neither
written in the URL nor behind a name that DNS resolves to one."""

from __future__ import annotations

import socket

import pytest

from webhooks import targets
from webhooks.errors import WebhookError


@pytest.mark.parametrize(
    "url",
    [
        "https://10.0.0.5/x",
        "https://192.168.1.10/x",
        "https://172.16.0.1/x",
        "https://169.254.169.254/latest/meta-data/",  # a cloud's metadata service
        "https://100.64.0.1/x",  # CGNAT
        "https://[fd00::1]/x",  # IPv6 unique local
        "https://[::ffff:10.0.0.1]/x",  # IPv4-mapped private
        "https://0.0.0.0/x",
        "https://224.0.0.1/x",
    ],
)
def test_a_private_or_reserved_address_is_refused(url):
    with pytest.raises(WebhookError) as refused:
        targets.check_url(url)
    assert refused.value.code == "url_private"


@pytest.mark.parametrize(
    "url, code",
    [
        ("http://sistema.example.com/ctr", "url_scheme"),
        ("ftp://sistema.example.com/ctr", "url_scheme"),
        ("https://usuario:senha@sistema.example.com/ctr", "url_credentials"),
        ("sistema.example.com/ctr", "url_scheme"),
    ],
)
def test_a_url_that_is_not_plain_https_is_refused(url, code):
    with pytest.raises(WebhookError) as refused:
        targets.check_url(url)
    assert refused.value.code == code


def test_a_public_https_url_is_accepted():
    targets.check_url("https://sistema.example.com:8443/ctr/eventos?x=1")
    targets.check_url("https://8.8.8.8/ctr")


def test_the_loopback_only_where_allowed(settings):
    settings.WEBHOOKS_ALLOW_LOOPBACK = True
    targets.check_url("http://127.0.0.1:8080/ctr")
    targets.check_url("http://localhost:8080/ctr")
    settings.WEBHOOKS_ALLOW_LOOPBACK = False
    for url in ("http://127.0.0.1:8080/ctr", "https://localhost/ctr", "https://[::1]/ctr"):
        with pytest.raises(WebhookError):
            targets.check_url(url)


def test_an_intranet_network_may_be_allowed(settings):
    settings.WEBHOOKS_ALLOWED_NETWORKS = ["10.20.0.0/16"]
    targets.check_url("https://10.20.3.4/ctr")
    with pytest.raises(WebhookError):
        targets.check_url("https://10.21.3.4/ctr")


def test_a_name_that_resolves_to_a_private_address_is_refused_at_delivery(monkeypatch):
    def private(host, port, **kwargs):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", port))]

    monkeypatch.setattr(socket, "getaddrinfo", private)
    targets.check_url("https://interno.example.com/ctr")  # the name itself looks public
    with pytest.raises(WebhookError) as refused:
        targets.resolve("interno.example.com", 443)
    assert refused.value.code == "url_private"


def test_the_admin_reads_a_url_typed_without_its_scheme_as_https(rf, admin_user):
    from django.contrib import admin

    from webhooks.models import Endpoint

    request = rf.get("/")
    request.user = admin_user
    form = admin.site._registry[Endpoint].get_form(request)
    assert form.base_fields["url"].clean("sistema.example.com/ctr") == (
        "https://sistema.example.com/ctr"
    )
