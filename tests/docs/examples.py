"""The examples of the README and the docs: every fenced block of a page, with the note before it, and the
bash script that runs a page's shell blocks one after another in one shell.

A block is run by its language (test_examples.py): `bash`/`sh` in the page's shell session, `python` in a
subprocess, `json` parsed (and checked when it is a client configuration), `markdown` with frontmatter loaded
as an agent file by the real registry. `text` is a picture or an output: nothing to run. Any other block needs
a note right before it, `<!-- example: not run, REASON -->`. One more note exists:
`<!-- example: in the background -->` runs a shell block as a background job of the page (a loop that waits
for more work), stopped when the page's last block has run.

In a shell block:
- every command must exit 0, but one whose trailing comment says `# exit N` must exit N;
- `blackboard ui ...` serves on a free port instead of its own (pages run side by side), until it answers
  (200, or 401 when the command gives `--token`), then is stopped with Ctrl-C and must exit 0 or 130;
- `blackboard worker ...` without `--once`, in the background whether it ends in `&` or not, runs until the
  page's last block has run, from the moment it says it started (its log is shown at the end); any other
  command that ends in `&` runs in the background from where it is. At the end each gets Ctrl-C: it must
  still be running then and stop with exit 0 or 130, or have ended by itself with exit 0;
- a PostgreSQL URL (`postgresql+psycopg://...`) points at a database created for the page.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

SHELL = {"bash", "sh"}
NOT_RUN = "not run, "
BACKGROUND = "in the background"

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<lang>[^`\s]*)\s*$")
_NOTE = re.compile(r"^\s*<!--\s*example:\s*(?P<note>.*?)\s*-->\s*$")
_EXIT = re.compile(r"(?:^|\s)#\s*exit (\d+)\b")
_PG_URL = re.compile(r"postgresql\+psycopg://[^\s'\"]+")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # the page's line of the block's first line (after the fence)
    language: str
    text: str
    note: str | None  # the `<!-- example: ... -->` right before the fence

    @property
    def where(self) -> str:
        return f"{_shown(self.page)}:{self.line}"

    @property
    def not_run(self) -> bool:
        return self.note is not None and self.note.startswith(NOT_RUN)


def _shown(page: Path) -> str:
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else page.name


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, in order."""
    found, lines = [], page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        before = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
        note = _NOTE.match(before)
        body = [line[len(indent) :] if line.startswith(indent) else line for line in lines[index + 1 : end]]
        found.append(
            Block(page, index + 2, opening["lang"].lower(), "\n".join(body) + "\n", note and note["note"])
        )
        index = end + 1
    return found


def every_block() -> list[Block]:
    return [block for page in PAGES for block in blocks(page)]


# -- a page's shell session -----------------------------------------------------------------------------------
PRELUDE = r"""
set -e -m -o pipefail
__docs_jobs=()
__docs_logs=()
trap 'echo "DOCS-EXAMPLE-FAILED $? $LINENO" >&2' ERR
trap '__docs_abandon' EXIT

__docs_abandon() {  # on the way out, nothing of the page stays running, and the workers' logs are shown
  local pid
  for pid in "${__docs_jobs[@]}"; do kill -KILL -- -$pid 2>/dev/null || true; done
  __docs_show_logs
}

__docs_show_logs() {
  local log
  for log in "${__docs_logs[@]}"; do echo "--- the log of a worker" >&2; cat "$log" >&2; done
  __docs_logs=()
}

__docs_expect() {  # want, got, where
  [ "$2" = "$1" ] || { echo "DOCS-EXAMPLE-EXIT $3: exit $2, the page says exit $1" >&2; exit 97; }
}

__docs_background() {  # where, worker...: a worker that runs until the page ends, once it says it started
  local where=$1 log pid
  shift
  log=$(mktemp "$DOCS_TMP/worker-XXXXXX")
  "$@" 2>"$log" &
  pid=$!
  __docs_jobs+=($pid)
  __docs_logs+=("$log")
  "$DOCS_PYTHON" "$DOCS_HELPER" says "$log" " started (" $pid || {
    echo "DOCS-EXAMPLE-EXIT $where: the worker did not start" >&2; exit 97; }
}

__docs_serve() {  # where, command...: serve on a free port until it answers, then Ctrl-C it
  local where=$1 expect=200 prev= port replaced=0 pid rc
  shift
  port=$("$DOCS_PYTHON" "$DOCS_HELPER" free-port)
  local args=()
  for arg in "$@"; do
    if [ "$prev" = --port ]; then arg=$port; replaced=1; fi
    if [ "$prev" = --token ]; then expect=401; fi
    args+=("$arg"); prev=$arg
  done
  [ $replaced = 1 ] || args+=(--port "$port")
  "${args[@]}" &
  pid=$!
  if ! "$DOCS_PYTHON" "$DOCS_HELPER" answers "http://127.0.0.1:$port/" "$expect" $pid; then
    kill -INT -- -$pid 2>/dev/null || true
    echo "DOCS-EXAMPLE-EXIT $where: the server did not answer $expect on port $port" >&2
    exit 97
  fi
  kill -INT -- -$pid
  wait $pid && rc=0 || rc=$?
  case $rc in 0|130) ;; *) echo "DOCS-EXAMPLE-EXIT $where: exit $rc after Ctrl-C" >&2; exit 97;; esac
}

__docs_stop() {  # Ctrl-C every background job; each must still run, or have ended with 0
  local pid rc
  for pid in "${__docs_jobs[@]}"; do
    if kill -0 $pid 2>/dev/null; then
      kill -INT -- -$pid 2>/dev/null || kill -INT $pid 2>/dev/null || true
      wait $pid && rc=0 || rc=$?
      case $rc in 0|130) ;; *) echo "DOCS-EXAMPLE-EXIT background job: exit $rc after Ctrl-C" >&2; exit 97;; esac
    else
      wait $pid && rc=0 || rc=$?
      [ $rc = 0 ] || { echo "DOCS-EXAMPLE-EXIT background job: ended by itself with exit $rc" >&2; exit 97; }
    fi
  done
  __docs_jobs=()
  __docs_show_logs
}
"""


@dataclass(frozen=True)
class Script:
    text: str
    origin: list[str]  # the page line each script line comes from ("" for the harness's own)

    def where(self, line: int) -> str:
        return next((o for o in reversed(self.origin[:line]) if o), "?")


def shell_script(page_blocks: list[Block], setup: str = "", pg_url: str | None = None) -> Script:
    """One bash script running the page's shell blocks in order, then stopping what runs in the background."""
    lines: list[str] = PRELUDE.splitlines()
    origin = [""] * len(lines)

    def add(text: str, where: str) -> None:
        for line in text.splitlines():
            lines.append(line)
            origin.append(where)

    add(setup, "(the harness's set-up of the page)")
    for block in page_blocks:
        if block.language not in SHELL or block.not_run:
            continue
        text = _PG_URL.sub(pg_url, block.text) if pg_url else block.text
        add(f"echo '--- {block.where}' >&2", "")
        if block.note == BACKGROUND:
            add("(", block.where)
            _add_commands(text, block, add)
            add(") &", block.where)
            add("__docs_jobs+=($!)", block.where)
        else:
            _add_commands(text, block, add)
    add("__docs_stop", "(stopping the page's background jobs)")
    return Script("\n".join(lines) + "\n", origin)


def _add_commands(text: str, block: Block, add: Callable[[str, str], None]) -> None:
    for first, command in _commands(text):
        where = f"{_shown(block.page)}:{block.line + first}"
        last = command.splitlines()[-1]
        code = re.sub(r"\s#.*$", "", last).rstrip()
        expected = _EXIT.search(last)
        start = command.lstrip()
        if start.startswith("blackboard ui"):
            add(f"__docs_serve {where!r} {start}", where)
        elif start.startswith("blackboard worker") and "--once" not in command:
            add(f"__docs_background {where!r} {code.removesuffix('&').lstrip()}", where)
        elif expected:
            add("{ " + command, where)
            add("} && __docs_rc=0 || __docs_rc=$?", where)
            add(f"__docs_expect {expected[1]} $__docs_rc {where!r}", where)
        else:
            add(command, where)
            if code.endswith("&") and not code.endswith("&&"):
                add("__docs_jobs+=($!)", where)


def _commands(text: str) -> list[tuple[int, str]]:
    """(offset of its first line, the command) for each logical line: continuation lines joined."""
    found: list[tuple[int, str]] = []
    pending: list[str] = []
    for offset, line in enumerate(text.splitlines()):
        if not pending:
            start = offset
        pending.append(line)
        if not line.endswith("\\"):
            found.append((start, "\n".join(pending)))
            pending = []
    if pending:
        found.append((start, "\n".join(pending)))
    return found


# -- running it -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ran:
    returncode: int | None  # None: still running at the timeout (then stopped)
    output: str  # stdout and stderr, interleaved
    seconds: float
    cpu_seconds: float  # of every process the session waited for

    def failure(self, script: Script) -> str:
        """Where the session failed: the page's line and what happened."""
        if self.returncode is None:
            return "still running at the timeout"
        failed = re.search(r"DOCS-EXAMPLE-FAILED (\d+) (\d+)", self.output)
        if failed:
            return f"{script.where(int(failed[2]))}: exit {failed[1]}"
        said = re.search(r"DOCS-EXAMPLE-EXIT (.*)", self.output)
        return said[1] if said else f"the session ended with exit {self.returncode}"


def run(script: Script, folder: Path, env: Mapping[str, str], timeout: float) -> Ran:
    """Run the script with bash in `folder`; whatever it leaves running is stopped."""
    path, log = folder.parent / f"{folder.name}.sh", folder.parent / f"{folder.name}.log"
    path.write_text(script.text)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with log.open("w") as out:
        process = subprocess.Popen(
            ["bash", str(path)],
            cwd=folder,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            returncode: int | None = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            returncode = None
        finally:
            end_session(process.pid)
            process.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Ran(returncode, log.read_text(), time.monotonic() - started, cpu)


def end_session(session: int) -> None:
    """Kill every process of a session: a page's background jobs have process groups of their own."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == session:
                os.kill(int(stat.parent.name), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            continue
