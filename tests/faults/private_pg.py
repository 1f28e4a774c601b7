"""A throw-away PostgreSQL cluster of a test's own (initdb + pg_ctl on a free port, in a temp dir), so that a
test may restart a server without touching the machine's shared one. As root, the server runs as the
`postgres` OS user (initdb refuses root)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [shutil.which(name) or ""]
    assert found[-1], f"{name} is needed for a private PostgreSQL cluster (apt-get install postgresql)"
    return found[-1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, folder: Path, port: int) -> None:
        self.folder, self.port = folder, port
        self.data, self.log = folder / "data", folder / "server.log"
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"

    def _run(self, *args: str, timeout: float = 120) -> None:
        command = list(args)
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}\n{self._log()}"

    def _log(self) -> str:
        return self.log.read_text()[-3000:] if self.log.exists() else ""

    def pg_ctl(self, action: str, *extra: str) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            _bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", action, *extra
        )

    def restart(self) -> None:
        """As an operator would: a fast shutdown (running transactions are cut) and a start."""
        self.pg_ctl("restart", "-m", "fast")


@contextmanager
def private_cluster() -> Iterator[Cluster]:
    folder = Path(tempfile.mkdtemp(prefix="blackboard-pg-"))
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
    cluster = Cluster(folder, _free_port())
    try:
        cluster._run(
            _bin("initdb"),
            "-D",
            str(cluster.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
        )
        cluster.pg_ctl("start")
        yield cluster
    finally:
        if (cluster.data / "postmaster.pid").exists():
            cluster.pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(folder, ignore_errors=True)
