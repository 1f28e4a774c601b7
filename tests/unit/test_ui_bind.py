"""The web view's bind rule: loopback serves this machine only; any other address needs a token."""

from __future__ import annotations

import pytest

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.web.auth import check_bind, is_loopback
from blackboard.infrastructure.web.hosts import served_names


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "127.255.255.254", "localhost", "::1", "[::1]"])
def test_loopback_addresses_are_local(host):
    assert is_loopback(host)
    check_bind(host, 8765, None)  # no token needed


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "192.168.1.4", "10.0.0.1", "example.com", "localhost.example.com", ""]
)
def test_any_other_address_needs_a_token(host):
    assert not is_loopback(host)
    with pytest.raises(InvalidInput) as refused:
        check_bind(host, 8765, None)
    assert str(refused.value).startswith("--host")

    if host:
        check_bind(host, 8765, "a-long-enough-token")


@pytest.mark.parametrize(
    "token", ["short", "has space in it", "semi;colon;token", "x" * 257, "ünïcode-token"]
)
def test_a_token_that_could_not_travel_in_a_header_a_query_and_a_cookie_is_refused(token):
    with pytest.raises(InvalidInput) as refused:
        check_bind("0.0.0.0", 8765, token)
    assert str(refused.value).startswith("--token")


@pytest.mark.parametrize("port", [0, -1, 65536])
def test_a_port_outside_1_to_65535_is_refused(port):
    with pytest.raises(InvalidInput) as refused:
        check_bind("127.0.0.1", port, None)
    assert str(refused.value).startswith("--port")


def test_the_server_s_own_origins_are_its_names_on_its_port_and_the_origins_given_whole():
    names = served_names("::1", 443, ["board.example.com", "https://Proxy.Example.org", "*.lan", "10.0.0.5"])

    assert names.hosts == (
        "localhost",
        "127.0.0.1",
        "[::1]",
        "board.example.com",
        "proxy.example.org",
        "*.lan",
        "10.0.0.5",
    )
    for origin in (
        "http://[::1]:443",
        "http://localhost:443/",
        "https://proxy.example.org:443",
        "http://10.0.0.5:443",
    ):
        assert names.own(origin), origin
    for origin in (
        "https://localhost:443",
        "http://x.lan:443",
        "http://evil.example",
        "null",
        None,
        "http://u@localhost:443",
    ):
        assert not names.own(origin), origin
    assert served_names("0.0.0.0", 80).hosts == ("localhost", "127.0.0.1", "[::1]")  # every address: no name
    assert served_names("127.0.0.1", 80).own("http://localhost")  # the scheme's own port left out
