"""What a page's shell session asks the harness for: `free-port` prints a free TCP port; `answers URL STATUS`
waits (up to 30 s) until URL answers with that HTTP status, and exits 1 if it never does."""

from __future__ import annotations

import socket
import sys
import time
import urllib.error
import urllib.request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str, status: int, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                got = response.status
        except urllib.error.HTTPError as refused:
            got = refused.code
        except OSError:
            time.sleep(0.1)
            continue
        print(f"{url} answered {got}", file=sys.stderr)
        return got == status
    return False


if __name__ == "__main__":
    if sys.argv[1] == "free-port":
        print(free_port())
    else:
        sys.exit(0 if answers(sys.argv[2], int(sys.argv[3])) else 1)
