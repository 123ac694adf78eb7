"""The address policy: which IP addresses geomint connects to, and what a policy may allow."""

from __future__ import annotations

import pytest

from geomint.errors import UsageError
from geomint.http import FetchPolicy, address_refusal


def test_a_policy_with_a_malformed_network_is_refused() -> None:
    with pytest.raises(UsageError, match=r"'10\.0\.0\.1/8' is not a network"):
        FetchPolicy(allowed_networks=("10.0.0.1/8",))


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("10.0.0.1", "a private address"),
        ("172.16.5.4", "a private address"),
        ("192.168.1.1", "a private address"),
        ("127.0.0.1", "a loopback address"),
        ("0.0.0.0", "the unspecified address"),
        ("169.254.169.254", "a link-local address"),
        ("100.64.0.1", "a shared carrier-grade NAT address"),
        ("224.0.0.1", "a multicast address"),
        ("240.0.0.1", "a private address"),
        ("255.255.255.255", "a private address"),
        ("192.0.2.1", "a private address"),
        ("::1", "a loopback address"),
        ("::", "the unspecified address"),
        ("fe80::1", "a link-local address"),
        ("fd12:3456::1", "a private address"),
        ("fec0::1", "a site-local address"),
        ("ff02::1", "a multicast address"),
        ("::ffff:127.0.0.1", "carrying 127.0.0.1 (IPv4-mapped), a loopback address"),
        ("::ffff:169.254.169.254", "(IPv4-mapped), a link-local address"),
        ("::127.0.0.1", "carrying 127.0.0.1 (IPv4-compatible), a loopback address"),
        ("2002:a00:1::1", "carrying 10.0.0.1 (6to4), a private address"),
        ("64:ff9b::a00:1", "carrying 10.0.0.1 (NAT64), a private address"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "(Teredo), a private address"),
        ("8.8.8.8", None),
        ("1.1.1.1", None),
        ("2606:4700::1111", None),
        ("2001:4860:4860::8888", None),
        ("::ffff:8.8.8.8", None),
    ],
)
def test_address_classifier(address: str, reason: str | None) -> None:
    found = address_refusal(address)
    if reason is None:
        assert found is None
    else:
        assert found is not None
        assert reason in found


@pytest.mark.parametrize(
    ("address", "allowed", "reachable"),
    [
        ("127.0.0.1", ("127.0.0.0/8",), True),
        ("::ffff:127.0.0.1", ("127.0.0.0/8",), True),
        ("127.0.0.2", ("127.0.0.1/32",), False),
        ("10.20.30.40", ("10.0.0.0/8", "192.168.0.0/16"), True),
        ("fd00::5", ("fd00::/8",), True),
        ("172.16.0.1", ("10.0.0.0/8",), False),
    ],
)
def test_allowed_networks_open_exactly_themselves(
    address: str, allowed: tuple[str, ...], reachable: bool
) -> None:
    assert (address_refusal(address, allowed) is None) is reachable
