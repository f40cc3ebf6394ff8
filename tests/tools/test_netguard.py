"""The SSRF guard on every address spelling, metadata targets and the allow list."""

from __future__ import annotations

import ipaddress

import pytest

from local2.errors import FetchRefused
from local2.tools._web_fetch import NetGuard, parse_ip_host, parse_legacy_ipv4


def no_dns(host: str, port: int) -> list[str]:
    raise AssertionError(f"literal addresses must not be resolved ({host})")


@pytest.mark.parametrize(
    ("spelling", "address"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("10.1", "10.0.0.1"),
        ("0xa9fea9fe", "169.254.169.254"),
        ("025177524776", "169.254.169.254"),
        ("192.168.0x1.01", "192.168.1.1"),
    ],
)
def test_legacy_ipv4_forms_parse_like_inet_aton(spelling: str, address: str) -> None:
    assert parse_legacy_ipv4(spelling) == ipaddress.IPv4Address(address)


@pytest.mark.parametrize("name", ["example.com", "1.2.3.4.5", "256.1.1.1", "08.1.1.1", "1..1", ""])
def test_names_and_invalid_forms_are_not_addresses(name: str) -> None:
    assert parse_legacy_ipv4(name) is None


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://127.255.255.254:8080/", "loopback"),
        ("http://2130706433/", "loopback"),
        ("http://0177.0.0.1/", "loopback"),
        ("http://0x7f000001/", "loopback"),
        ("http://127.1/", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "IPv4-embedded loopback"),
        ("http://[::ffff:7f00:1]/", "IPv4-embedded loopback"),
        ("http://[64:ff9b::7f00:1]/", "IPv4-embedded loopback"),
        ("http://[2002:7f00:1::]/", "IPv4-embedded loopback"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://0/", "unspecified"),
        ("http://[::]/", "unspecified"),
        ("http://10.0.0.1/", "private"),
        ("http://172.16.5.4/", "private"),
        ("http://192.168.1.1/", "private"),
        ("http://[fc00::1]/", "private"),
        ("http://[::ffff:10.0.0.1]/", "IPv4-embedded private"),
        ("http://169.254.1.1/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://224.0.0.1/", "multicast"),
        ("http://[ff02::1]/", "multicast"),
        ("http://100.64.0.1/", "carrier-grade NAT"),
        ("http://198.18.0.1/", "private"),
        ("http://240.0.0.1/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://0xa9fea9fe/", "cloud metadata"),
        ("http://[fd00:ec2::254]/", "cloud metadata"),
        ("http://[::ffff:169.254.169.254]/", "IPv4-embedded cloud metadata"),
        ("http://100.100.100.200/", "cloud metadata"),
        ("https://metadata.google.internal/computeMetadata/v1/", "cloud metadata host"),
        ("http://METADATA.GOOGLE.INTERNAL./", "cloud metadata host"),
    ],
)
def test_non_public_targets_are_refused(url: str, reason: str) -> None:
    with pytest.raises(FetchRefused, match=f"refused {reason}"):
        NetGuard(resolver=no_dns).vet(url)


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://93.184.216.34/", "93.184.216.34"),
        ("https://1.1.1.1:8443/dns", "1.1.1.1"),
        ("http://[2606:4700:4700::1111]/", "2606:4700:4700::1111"),
        ("http://1572395042/", "93.184.216.34"),
    ],
)
def test_public_literals_pass_without_dns(url: str, address: str) -> None:
    target = NetGuard(resolver=no_dns).vet(url)
    assert target.addresses == (address,)
    assert not target.trusted


@pytest.mark.parametrize(
    "url", ["ftp://example.com/x", "file:///etc/passwd", "gopher://x/", "example.com", "//x/y"]
)
def test_only_http_and_https(url: str) -> None:
    with pytest.raises(FetchRefused, match="only http:// and https://"):
        NetGuard(resolver=no_dns).vet(url)


def test_every_resolved_address_is_checked() -> None:
    guard = NetGuard(resolver=lambda h, p: ["93.184.216.34", "::1"])
    with pytest.raises(FetchRefused, match=r"refused loopback address ::1 \(evil.example resolves"):
        guard.vet("https://evil.example/")
    ok = NetGuard(resolver=lambda h, p: ["93.184.216.34", "2606:4700::1"]).vet("http://a.example/")
    assert ok.addresses == ("93.184.216.34", "2606:4700::1")
    assert ok.port == 80


def test_resolution_failure_is_a_refusal() -> None:
    def fail(host: str, port: int) -> list[str]:
        raise OSError("no such host")

    with pytest.raises(FetchRefused, match=r"cannot resolve host 'gone\.example'"):
        NetGuard(resolver=fail).vet("http://gone.example/")


def test_allow_list_matches_the_written_host_only() -> None:
    guard = NetGuard(["localhost"], resolver=lambda h, p: ["127.0.0.1"])
    target = guard.vet("http://localhost:8080/")
    assert target.trusted and target.addresses == ("127.0.0.1",)
    for alias in ("http://127.0.0.1:8080/", "http://[::1]:8080/", "http://2130706433/"):
        with pytest.raises(FetchRefused, match="loopback"):
            guard.vet(alias)


def test_allow_list_ip_entry_covers_other_spellings_of_that_ip() -> None:
    guard = NetGuard(["127.0.0.1"], resolver=no_dns)
    assert guard.vet("http://2130706433/").trusted
    with pytest.raises(FetchRefused):
        guard.vet("http://127.0.0.2/")


def test_allow_list_port_and_wildcard_rules() -> None:
    guard = NetGuard(["localhost:8080", "*.intranet.test"], resolver=lambda h, p: ["10.0.0.5"])
    assert guard.is_trusted("localhost", 8080)
    assert not guard.is_trusted("localhost", 8081)
    assert guard.vet("http://wiki.intranet.test/").trusted
    assert guard.is_trusted("a.b.intranet.test", 443)
    assert not guard.is_trusted("intranet.test.evil.example", 80)
    with pytest.raises(FetchRefused, match="private"):
        guard.vet("http://intranet-test.example/")


def test_parse_ip_host_handles_brackets_and_zones() -> None:
    assert parse_ip_host("[::1]") == ipaddress.ip_address("::1")
    assert parse_ip_host("fe80::1%eth0") == ipaddress.ip_address("fe80::1")
    assert parse_ip_host("example.org") is None
