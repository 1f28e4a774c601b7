"""What a page's shell session asks the harness for: `free-port` prints a free TCP port; `answers URL STATUS PID`
waits (up to 30 s, while process PID lives) until URL answers, and exits 1 unless it answered that status;
`says FILE TEXT PID` waits (up to 120 s, while PID lives) until FILE holds TEXT, and exits 1 if it never does."""

from __future__ import annotations

import os
import socket
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"  # not a zombie


def answers(url: str, status: int, pid: int, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and _alive(pid):
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


def says(path: str, text: str, pid: int, within: float = 120.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if text in Path(path).read_text(errors="replace"):
            return True
        if not _alive(pid):
            return text in Path(path).read_text(errors="replace")
        time.sleep(0.05)
    return False


if __name__ == "__main__":
    if sys.argv[1] == "free-port":
        print(free_port())
    elif sys.argv[1] == "says":
        sys.exit(0 if says(sys.argv[2], sys.argv[3], int(sys.argv[4])) else 1)
    else:
        sys.exit(0 if answers(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])) else 1)
