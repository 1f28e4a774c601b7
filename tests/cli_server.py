"""A fork server for the `blackboard` CLI: each call is still a process of its own, with its own pipes, environment,
working folder and exit code, but it starts from a process that imported the CLI once, not from a cold interpreter.

Why: the suite runs the CLI several thousand times, and a cold start (an interpreter, SQLAlchemy, pydantic, the
package) costs most of a CPU-second on this machine, most of the suite's time on two cores. Importing is set-up the
suite shares, not the thing under test; the tests of the start itself (tests/integration/test_command_imports.py,
the README's tour, the install tests, the processes the product itself starts: `solve`'s workers, Claude Code's
board server) keep the real executable, and `BLACKBOARD_TEST_CLI=exec` makes every call a cold start again. The
processes a test starts in the background (workers, watches, the MCP and web servers: `CliServer.start`) and the
docs pages' `blackboard` (`CliServer.shim`) run through a shim, a process of their own that is the call's pipes,
signals and exit.

How: the server (one per test process, started on first use) listens on a Unix socket. A call sends its arguments,
environment and folder with three file descriptors (stdin, stdout, stderr). The server forks the *call*, its own
child: the call sets its descriptors, folder, environment and `sys.argv`, reseeds what a fork would share, and runs
the console script's own `main()`, ending as the script does (`sys.exit`, the interpreter's normal exit); the server
sends the call's pid at once (so a timeout can kill it) and its exit status when it ends, watching every call's
pidfd and caller in one loop (until 2026-11-27 17:00 a *waiter* forked per call did that: a second fork of the
whole server, about 12 ms of CPU a call). The server itself never holds a thread, a connection of its own or an
engine, so each fork starts clean.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import random
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_PID_FD = "CLI_SERVER_PID_FD"  # the variable that tells a shim of CliServer.start where to say its call's pid
_HEADER = struct.Struct("!I")


def _preload() -> None:
    """Import what the commands import, so a forked call finds it in memory."""
    import importlib
    import pkgutil

    import blackboard.infrastructure as infrastructure
    import blackboard.infrastructure.cli  # noqa: F401 - the console script's module

    # the MCP and web servers' modules too: the tests start dozens of each (CliServer.start, the MCP client's shim)
    for module in pkgutil.walk_packages(infrastructure.__path__, "blackboard.infrastructure."):
        if module.name.endswith("__main__"):
            continue
        with contextlib.suppress(Exception):
            importlib.import_module(module.name)
    # the model SDKs too: a worker of an API runner imports its SDK before its first claim (about 1 s of CPU
    # for anthropic's), which the runner tests' dozens of forked workers would each pay again
    for name in (
        "sqlalchemy.dialects.sqlite",
        "sqlalchemy.dialects.postgresql.psycopg",
        "psycopg",
        "alembic",
        "anthropic",
        "openai",
    ):
        with contextlib.suppress(Exception):
            importlib.import_module(name)


def _recv_exactly(conn: socket.socket, size: int, fds: list[int]) -> bytes:
    data = b""
    while len(data) < size:
        chunk, got, _flags, _addr = socket.recv_fds(conn, size - len(data), 8)
        fds.extend(got)
        if not chunk:
            raise EOFError("the caller hung up")
        data += chunk
    return data


def _run_call(request: dict, fds: list[int]) -> None:
    """In the forked call: become `blackboard ARGS` and end as the console script would."""
    for target, fd in zip((0, 1, 2), fds, strict=True):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if request.get("group"):
        os.setpgid(0, 0)  # a group of its own, as a shell's job: the shim's Ctrl-C reaches what it starts
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    random.seed()
    sys.argv = [request["argv0"], *request["args"]]
    from blackboard.infrastructure.cli import main

    sys.exit(main())


def _exit_code_of(request: dict, fds: list[int]) -> int:
    """Run the call and end it as the interpreter ends a script: SystemExit's code (None is 0, text is printed
    and 1), an uncaught exception's traceback and 1, then the atexit functions and the streams flushed."""
    import atexit
    import traceback

    try:
        _run_call(request, fds)
        code: object = 0
    except SystemExit as done:
        code = done.code
    except BaseException:  # noqa: BLE001 - what the interpreter would print
        traceback.print_exc()
        code = 1
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    return code & 0xFF


def _read_request(conn: socket.socket) -> tuple[dict, list[int]]:
    """The call a caller sent: its request and the three descriptors that came with it."""
    fds: list[int] = []
    try:
        (size,) = _HEADER.unpack(_recv_exactly(conn, _HEADER.size, fds))
        return json.loads(_recv_exactly(conn, size, fds)), fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


class _Call:
    """A call under way, as the server sees it: its pid, the caller's connection, its pidfd."""

    def __init__(self, pid: int, conn: socket.socket | None, group: bool) -> None:
        self.pid, self.conn, self.group = pid, conn, group
        self.ended = os.pidfd_open(pid)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            (os.killpg if self.group else os.kill)(self.pid, signal.SIGKILL)

    def hang_up(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def serve(path: str, parent: int) -> None:
    _preload()
    # what the server imported goes to the collector's permanent generation: a forked call's collections then
    # skip those objects instead of touching (and so copying) their pages (about 10,000 page faults and 0.7 s
    # of CPU fewer a server, measured over 61 calls)
    gc.collect()
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # CliServer.close: reap what ended, then go
    print("ready", flush=True)
    calls: list[_Call] = []
    try:
        # the test process that started the server went away: so does the server
        while os.getppid() == parent:
            watched: list = [listener]
            for call in calls:
                watched.append(call.ended)
                if call.conn is not None:
                    watched.append(call.conn)
            readable, _, _ = select.select(watched, [], [], 1.0)
            for call in list(calls):
                if call.ended in readable:  # the call ended: its exit status to the caller
                    _, status = os.waitpid(call.pid, 0)
                    if call.conn is not None:
                        with contextlib.suppress(OSError):
                            reply = {"returncode": os.waitstatus_to_exitcode(status)}
                            call.conn.sendall(json.dumps(reply).encode() + b"\n")
                    call.hang_up()
                    os.close(call.ended)
                    calls.remove(call)
                elif call.conn is not None and call.conn in readable:
                    # the caller went away first (killed, as a shell kills a job): so does the call
                    call.kill()
                    call.hang_up()
            if listener in readable:
                conn, _ = listener.accept()
                try:
                    calls.append(_start_call(conn, listener, calls))
                except Exception:  # noqa: BLE001 - a caller that went away mid-request takes nothing down
                    conn.close()
    finally:
        _reap()


def _start_call(conn: socket.socket, listener: socket.socket, calls: list[_Call]) -> _Call:
    """Read the call, fork it (the call is the server's own child: one fork a call), and send its pid."""
    conn.settimeout(10.0)  # a caller sends its request as soon as it connects
    request, fds = _read_request(conn)
    conn.settimeout(None)
    group = bool(request.get("group"))
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        # the call: nothing of the server's or of the other calls' stays open in it
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        listener.close()
        for other in calls:
            if other.conn is not None:
                other.conn.close()
            os.close(other.ended)
        conn.close()
        code = 1
        try:
            code = _exit_code_of(request, fds)
        finally:
            os._exit(code)
    for fd in fds:
        os.close(fd)
    if group:  # as the call does: whichever runs first, the group exists before its pid is sent
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
    call = _Call(pid, conn, group)
    try:
        conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    except OSError:
        call.kill()
        call.hang_up()
    return call


def _reap() -> None:
    """Wait for the calls that ended: their CPU time then counts as the server's children's, and the test
    process's once it waits for the server (`close`), so a `time make test` sees the calls' CPU."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


class CliServer:
    """The test process's side: start the server once, run calls through it."""

    def __init__(self, argv0: str) -> None:
        self.argv0 = argv0
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._path = ""
        self._ready = False
        self._starter = ""

    def _spawn(self) -> None:
        """Start the server's process, not waiting for it (the caller holds the lock)."""
        if self._proc is None or self._proc.poll() is not None:
            folder = tempfile.mkdtemp(prefix="bb-cli-server-")
            self._path = os.path.join(folder, "socket")
            self._ready = False
            self._proc = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    f"from tests.cli_server import serve; serve({self._path!r}, {os.getpid()})",
                ],
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                text=True,
            )

    def warm(self) -> None:
        """Start the server now, in the background, not waiting for it (tests/conftest.py does, while the
        tests are collected); the first call waits for what is left of its start."""
        with self._lock:
            if self._proc is None:
                self._spawn()

    def _ensure(self) -> str:
        with self._lock:
            self._spawn()
            if not self._ready:
                assert self._proc is not None
                line = self._proc.stdout.readline() if self._proc.stdout else ""
                if line.strip() != "ready":
                    raise RuntimeError(f"the CLI fork server did not start (it said {line!r})")
                self._ready = True
            return self._path

    def run(
        self, args: list[str], env: dict[str, str], cwd: str | os.PathLike[str], timeout: float
    ) -> tuple[int, str, str]:
        """Like `subprocess.run(..., capture_output=True, text=True, stdin=DEVNULL)`: (returncode, stdout, stderr);
        raises subprocess.TimeoutExpired after killing the call when it runs past `timeout`."""
        path = self._ensure()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        null = os.open(os.devnull, os.O_RDONLY)
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(path)
            body = json.dumps(
                {"args": list(args), "env": dict(env), "cwd": str(cwd), "argv0": self.argv0}
            ).encode()
            socket.send_fds(conn, [_HEADER.pack(len(body)) + body], [null, out_w, err_w])
        finally:
            for fd in (null, out_w, err_w):
                os.close(fd)
        chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}

        def drain(fd: int) -> None:
            while block := os.read(fd, 65536):
                chunks[fd].append(block)

        readers = [threading.Thread(target=drain, args=(fd,), daemon=True) for fd in (out_r, err_r)]
        for reader in readers:
            reader.start()
        deadline = time.monotonic() + timeout
        replies = conn.makefile("rb")
        try:
            conn.settimeout(timeout)
            pid = json.loads(replies.readline())["pid"]
            try:
                conn.settimeout(max(0.01, deadline - time.monotonic()))
                line = replies.readline()
            except TimeoutError:
                line = b""
            if not line:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                for reader in readers:
                    reader.join(5)
                raise subprocess.TimeoutExpired(
                    [self.argv0, *args], timeout, b"".join(chunks[out_r]), b"".join(chunks[err_r])
                )
            returncode = json.loads(line)["returncode"]
            for reader in readers:
                reader.join()
        finally:
            replies.close()
            conn.close()
            for reader in readers:
                reader.join(5)
            for fd in (out_r, err_r):
                os.close(fd)
        return returncode, _text(b"".join(chunks[out_r])), _text(b"".join(chunks[err_r]))

    def shim(self, folder: Path, group: bool = True) -> Path:
        """A `blackboard` executable in `folder` that runs each call through this server, for a shell to find
        first on its PATH: a process of its own that hands the call its stdin, stdout, stderr, arguments,
        environment and folder, passes on the signals it gets (to the call's process group, as a shell's
        Ctrl-C reaches a job's; with `group=False` to the call alone, as a signal sent to a started process
        reaches it alone), and ends as the call ends (its exit code, or the signal that ended it). When the
        shim is killed, the server kills the call. Returns the folder."""
        folder.mkdir(parents=True, exist_ok=True)
        script = folder / "blackboard"
        script.write_text(
            f"#!{sys.executable} -IS\n"
            + _SHIM.replace("SOCKET_PATH", repr(self._ensure()))
            .replace("PID_FD", repr(_PID_FD))
            .replace("ARGV0", repr(self.argv0))
            .replace("GROUP", repr(group))
        )
        script.chmod(0o755)
        return folder

    def executable(self) -> str:
        """The path of a `blackboard` shim (`group=False`) whose calls run forked from this server: for a program
        that starts `blackboard` itself, given a command (an MCP client). Written once per test process."""
        if not self._starter:  # written once (a second writer writes the same file in a folder of its own)
            self._starter = str(self.shim(Path(tempfile.mkdtemp(prefix="bb-cli-start-")), group=False))
        return os.path.join(self._starter, "blackboard")

    def start(
        self,
        args: list[str],
        env: dict[str, str],
        cwd: str | os.PathLike[str] | None,
        timeout: float = 60.0,
        **popen,
    ) -> subprocess.Popen:
        """`subprocess.Popen([blackboard, *args], ...)` for a process the test starts in the background (a
        worker, a watch, a server): the Popen of a shim (`group=False`) whose call runs forked from this
        server, so it starts warm. The shim is the Popen's process: its pipes are the call's, a signal sent
        to it reaches the call, it ends with the call's exit code or signal, and killing it kills the call.
        `call_pid` is the call's own pid (what the call says as its pid: a worker's presence, its children's
        parent)."""
        read_end, write_end = os.pipe()
        try:
            proc = subprocess.Popen(
                [self.executable(), *args],
                env={**env, _PID_FD: str(write_end)},
                cwd=cwd,
                pass_fds=(write_end,),
                **popen,
            )
        finally:
            os.close(write_end)
        try:
            ready, _, _ = select.select([read_end], [], [], timeout)
            said = os.read(read_end, 64) if ready else b""
        finally:
            os.close(read_end)
        if not said.strip():
            proc.kill()
            proc.wait()
            raise RuntimeError(f"`blackboard {' '.join(args)}` did not start through the CLI fork server")
        proc.call_pid = int(said)  # type: ignore[attr-defined]
        return proc

    def close(self) -> None:
        """Stop the server and wait for it (its calls' CPU time counts as this process's children's)."""
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            self._proc = None


# The shim's code (`-IS`: no site, no environment of Python's own; it imports only what the interpreter
# already holds, so it starts in a few milliseconds): the server's protocol of CliServer.run, from a script.
_SHIM = """\
import json, os, signal, socket, struct, sys

pending = []
call = None
pid_fd = os.environ.pop(PID_FD, None)  # CliServer.start: where to say the call's pid

def forward(signum, _frame):
    if call is None:
        pending.append(signum)
    else:
        try:
            (os.killpg if GROUP else os.kill)(call, signum)
        except ProcessLookupError:
            pass

for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
    signal.signal(signum, forward)
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(SOCKET_PATH)
body = json.dumps(
    {"args": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(), "argv0": ARGV0, "group": GROUP}
).encode()
socket.send_fds(conn, [struct.pack("!I", len(body)) + body], [0, 1, 2])
replies = conn.makefile("rb")
call = json.loads(replies.readline())["pid"]
if pid_fd is not None:
    os.write(int(pid_fd), b"%d\\n" % call)
    os.close(int(pid_fd))
for signum in pending:
    forward(signum, None)
code = json.loads(replies.readline())["returncode"]
if code < 0:  # ended by a signal: so does the shim, for its shell to see
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def _text(data: bytes) -> str:
    """As `text=True` decodes: the locale's encoding, universal newlines."""
    return data.decode("utf-8", errors="strict").replace("\r\n", "\n").replace("\r", "\n")


BLACKBOARD = str(Path(sys.executable).parent / "blackboard")
# BLACKBOARD_TEST_CLI=exec starts every call from a cold interpreter, as a user's shell does
SERVER = None if os.environ.get("BLACKBOARD_TEST_CLI") == "exec" else CliServer(BLACKBOARD)


def run_blackboard(
    args: list[str], env: dict[str, str], cwd: str | os.PathLike[str] | None = None, timeout: float = 60.0
) -> subprocess.CompletedProcess[str]:
    """`blackboard ARGS` in a process of its own (forked warm, or cold with BLACKBOARD_TEST_CLI=exec), its output
    captured as text, stdin empty; raises subprocess.TimeoutExpired past `timeout`."""
    if SERVER is None:
        return subprocess.run(
            [BLACKBOARD, *args],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    code, out, err = SERVER.run(list(args), env, cwd or os.getcwd(), timeout)
    return subprocess.CompletedProcess([BLACKBOARD, *args], code, out, err)


def blackboard_command() -> str:
    """The command that runs `blackboard` for a program that starts it itself (the MCP SDK's stdio client): a
    shim whose calls fork warm from the CLI fork server (`CliServer.executable`), the real executable with
    BLACKBOARD_TEST_CLI=exec."""
    return BLACKBOARD if SERVER is None else SERVER.executable()


def start_blackboard(
    args: list[str] | tuple[str, ...],
    env: dict[str, str],
    cwd: str | os.PathLike[str] | None,
    **popen: object,
) -> subprocess.Popen:
    """`subprocess.Popen([blackboard, *args], env=env, cwd=cwd, **popen)` for a process that runs in the
    background (a worker, a watch, a server): warm from the CLI fork server (`CliServer.start`: the Popen is
    a shim whose pipes, signals and exit are the call's), cold with BLACKBOARD_TEST_CLI=exec. `call_pid` is
    the pid of `blackboard` itself (what it reports as its own, its children's parent)."""
    if SERVER is None:
        proc = subprocess.Popen([BLACKBOARD, *args], env=env, cwd=cwd, **popen)
        proc.call_pid = proc.pid  # type: ignore[attr-defined]
        return proc
    return SERVER.start(list(args), env, cwd, **popen)
