"""The web view's bind rule: loopback serves this machine only; any other address needs a token."""

from __future__ import annotations

import pytest

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.web.auth import check_bind, is_loopback


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
