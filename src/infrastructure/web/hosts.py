"""The names the web view answers to, and the origins it takes a person's decision from (docs/web.md).

Every request's `Host` must be a loopback name, the bind host, or a name given with `--allow-host`, with a
token or without: a page of another site that reaches the server through DNS rebinding names its own host in
`Host`, and is answered 400 before anything else. A decision's `Origin` must be one of the server's own
origins as configured: `http://NAME:PORT` of each of those names, or an origin given whole with `--allow-host
https://NAME[:PORT]` (what a proxy in front of it serves); never one made from the request's own `Host`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from blackboard.domain.errors import InvalidInput

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
EVERY_ADDRESS = frozenset({"", "0.0.0.0", "::", "[::]"})  # a bind on every address names no host
DEFAULT_PORTS = {"http": 80, "https": 443}
_NAME = re.compile(r"(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*")
RULE = (
    "must be a host name (`board.example.com`, `*.example.com`, an IP address) or an origin "
    "(`https://board.example.com`, `http://10.0.0.5:8765`), without a path"
)


@dataclass(frozen=True, slots=True)
class Names:
    """The `Host` names (patterns: `*.example.com`) the server answers, and its own origins."""

    hosts: tuple[str, ...]
    origins: frozenset[str]

    def own(self, origin: str | None) -> bool:
        """Whether a request's `Origin` header is one of the server's own origins."""
        return origin is not None and _normal(origin) in self.origins


def served_names(host: str, port: int, allowed: Iterable[str] = ()) -> Names:
    """The names and origins of a server bound to `host`:`port`, with the names and origins of `--allow-host`
    (InvalidInput naming it for one that is neither)."""
    names, origins = list(LOOPBACK_NAMES), set()
    if host.lower() not in EVERY_ADDRESS:
        names.append(_bracketed(host.lower()))
    for given in allowed:
        if "://" in given:
            origin = _normal(given)
            if origin is None:
                raise InvalidInput("--allow-host", f"{RULE}; got {given!r}")
            names.append(_bracketed(str(urlsplit(origin).hostname)))
            origins.add(origin)
        else:
            names.append(_name(given))
    origins |= {_origin("http", name, port) for name in names if not name.startswith("*.")}
    return Names(tuple(dict.fromkeys(names)), frozenset(origins))


def _name(given: str) -> str:
    name = _bracketed(given.strip().lower())
    if _NAME.fullmatch(name) or _ip(name):
        return name
    raise InvalidInput("--allow-host", f"{RULE}; got {given!r}")


def _bracketed(name: str) -> str:
    """An IPv6 address as a `Host` header carries it: in brackets."""
    bare = name.strip("[]")
    try:
        return f"[{bare}]" if ipaddress.ip_address(bare).version == 6 else bare
    except ValueError:
        return name


def _ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def _origin(scheme: str, name: str, port: int | None) -> str:
    shown = "" if port is None or DEFAULT_PORTS.get(scheme) == port else f":{port}"
    return f"{scheme}://{name}{shown}"


def _normal(origin: str) -> str | None:
    """`scheme://host[:port]`, lower case, the scheme's default port left out; None for anything else (a
    path, credentials, another scheme, `null`)."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if (
        parts.scheme.lower() not in DEFAULT_PORTS
        or not parts.hostname
        or parts.username is not None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        return None
    name = _bracketed(parts.hostname.lower())
    if not (_NAME.fullmatch(name) or _ip(name)) or name.startswith("*"):
        return None
    return _origin(parts.scheme.lower(), name, port)
