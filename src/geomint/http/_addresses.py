"""Which addresses a request may reach: public ones, and what the operator trusts.

This is the address policy of the SSRF guard, as data and pure functions; the connection
layer (``_guard``) applies it to every address a host resolves to. An address is
refused when it is not public (loopback, private, link-local where cloud metadata
answers, carrier-grade NAT...) unless it lies in a network the application allows;
IPv6 forms that carry an IPv4 address are judged by that address too, and a host name
that is an IPv4 address spelled oddly ("2130706433") is refused outright. Operators
name the services they trust by base URL, and requests to those hosts and ports may
reach any address.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from typing import Final

import httpx

from geomint.errors import UsageError
from geomint.http._redact import shown_url

__all__ = ["address_refusal", "host_port", "obfuscated_ipv4", "parse_bases", "parse_networks"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_SHARED_ADDRESS_SPACE: Final = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64_PREFIX: Final = ipaddress.IPv6Network("64:ff9b::/96")
_IPV4_COMPATIBLE: Final = ipaddress.IPv6Network("::/96")
_NUMERIC_LABEL: Final = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")


def address_refusal(address: str, allowed_networks: Iterable[str] = ()) -> str | None:
    """Say why geomint refuses to connect to an IP address, or ``None`` if it may.

    An address may be reached when it is public, or when it lies in one of
    ``allowed_networks``. IPv6 forms that carry an IPv4 address (mapped, compatible,
    6to4, Teredo, NAT64) are judged by the IPv4 address they carry as well.

    >>> address_refusal("8.8.8.8") is None
    True
    >>> address_refusal("10.0.0.5")
    'a private address'
    >>> address_refusal("10.0.0.5", ["10.0.0.0/8"]) is None
    True
    """
    ip = ipaddress.ip_address(address)
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    for network in parse_networks(allowed_networks):
        if ip in network or (mapped is not None and mapped in network):
            return None
    return _non_public(ip)


def _non_public(ip: IPAddress) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address):
        carried = _carried_ipv4(ip)
        if carried is not None:
            form, ipv4 = carried
            problem = _non_public(ipv4)
            if problem is not None:
                return f"an IPv6 address carrying {ipv4} ({form}), {problem}"
            if form == "IPv4-mapped":
                return None  # on the wire this is the public IPv4 address itself
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.is_loopback:
        return "a loopback address (this machine)"
    if ip.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if ip.is_multicast:
        return "a multicast address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED_ADDRESS_SPACE:
        return "a shared carrier-grade NAT address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        return "a site-local address"
    if ip.is_private:
        return "a private address"
    if ip.is_reserved:
        return "a reserved address"
    if not ip.is_global:
        return "not a public address"
    return None


def _carried_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", ip.ipv4_mapped
    if ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    if ip.teredo is not None:
        return "Teredo", ip.teredo[1]
    low = ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
    if ip in _NAT64_PREFIX:
        return "NAT64", low
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:
        return "IPv4-compatible", low
    return None


def obfuscated_ipv4(host: str) -> bool:
    """Say whether a host name is an IPv4 address spelled oddly ("2130706433", "0x7f.1").

    >>> obfuscated_ipv4("2130706433"), obfuscated_ipv4("127.0.0.1"), obfuscated_ipv4("a.test")
    (True, False, False)
    """
    bare = host.removesuffix(".")
    if ":" in bare or not _NUMERIC_LABEL.fullmatch(bare.rsplit(".", 1)[-1]):
        return False
    try:
        ipaddress.IPv4Address(bare)
    except ValueError:
        return True
    return False


def parse_networks(cidrs: Iterable[str]) -> list[IPNetwork]:
    """Parse allowed networks written in CIDR form, refusing any that is not one."""
    networks = []
    for cidr in cidrs:
        try:
            networks.append(ipaddress.ip_network(cidr))
        except ValueError as exc:
            raise UsageError(
                f"allowed_networks entry {cidr!r} is not a network: {exc}; "
                "write it in CIDR form, such as '10.0.0.0/8' or '127.0.0.1/32'"
            ) from None
    return networks


def parse_bases(urls: Iterable[str]) -> list[httpx.URL]:
    """Parse trusted base URLs, refusing anything that is not a plain http(s) URL."""
    parsed = []
    for url in urls:
        try:
            base = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise UsageError(f"trusted base URL {url!r} is not a valid URL ({exc})") from None
        if base.scheme not in {"http", "https"} or not base.host or base.userinfo:
            raise UsageError(
                f"trusted base URL {shown_url(url)!r} must be an http or https URL with a "
                "host name and no user name or password, such as 'http://10.0.0.5:8080/'"
            )
        parsed.append(base)
    return parsed


def host_port(url: httpx.URL) -> tuple[str, int]:
    """Return the host and port as the connection layer sees them (IDNA-encoded, port filled in).

    >>> host_port(httpx.URL("https://Bücher.example/"))
    ('xn--bcher-kva.example', 443)
    """
    port = url.port if url.port is not None else (443 if url.scheme == "https" else 80)
    return url.raw_host.decode("ascii").lower(), port
