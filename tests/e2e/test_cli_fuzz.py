"""Generated command lines, hostile on purpose: wrong types, huge numbers, unicode and control characters,
invalid JSON and YAML, path tricks. Whatever comes in, `blackboard` answers with an exit code of its table
and a message, never a traceback, and a refusal of bad input (exit 2) writes nothing.

Most examples run `main(argv)` in this process (a fresh container each, on one SQLite file of the test),
a few through the real executable; commands that would block are given a tiny or invalid `--timeout`,
and a worker always runs `--once`.
"""

from __future__ import annotations

import contextlib
import io
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.e2e.conftest import BLACKBOARD, TIMEOUT

ALLOWED = {0, 2, 3, 4, 5}  # done, bad input, refused, not found, timed out
SIGNAL_IDS = ("sig-00000001", "sig-0000beef", "sig-ffffffff", "sig-1", "SIG-00000001")
NAMES = ("ps-researcher", "ps-1", "e-1", "RESEARCH", "ANALYSIS", "POSTED", "k/1", "findings/a")
NUMBERS = (
    "0",
    "-1",
    "1",
    "0.5",
    "1e400",
    "-1e400",
    "nan",
    "inf",
    "-inf",
    "1e300",
    "9" * 30,
    str(2**63),
    str(-(2**63) - 1),
    "0x10",
    "1_000",
    "",
    " ",
    "+3",
    "½",
)
JSON_TEXTS = (
    "{}",
    '{"a": 1}',
    "[1, 2]",
    "{",
    '{"a":}',
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": 1e400}',
    '{"a": ' + "9" * 5000 + "}",
    "[" * 3000 + "]" * 3000,
    '{"a": ' + "[" * 40 + "]" * 40 + "}",
    '{"a": "\\ud800"}',
    '{"\\u0000": 1}',
    '"text"',
    "null",
    "true",
    '{"a": {"b": [1, 2, {"c": null}]}}',
)
PATHS = (
    "../../etc/passwd",
    "/etc/passwd",
    "/dev/null",
    "/nonexistent/x.json",
    "~",
    ".",
    "..",
    "-h",
    "--",
    "sqlite:///",
    "sqlite:////nonexistent/dir/x.db",
    "file:///etc/passwd",
    "C:\\\\x",
    "a/../../b",
)
HOSTILE_TEXT = (
    "'; DROP TABLE events; --",
    "$(touch /tmp/pwned)",
    "`id`",
    "\x1b[2J\x1b[31mred",
    "\r\n",
    "\t",
    "\u202eevil",
    "\udcff\udcfe",
    "\ud800",
    "x" * 5000,
    "ﷺ" * 10,
    "🧪",
    "\x7f",
    "a\x00b",
)
YAML_TEXTS = (
    "name: [unclosed",
    "name: x\ncapabilities: {RESEARCH: nan}",
    "capabilities: 5",
    ": :",
    "- a\n- b",
    "name: ps-fuzz\ncapabilities: {RESEARCH: 1e400}",
    "name: ps-fuzz\ncapabilities: {RESEARCH: 0.9}",
    "name: !!python/object:os.system x",
    "&a [*a]",
    "name: ps-fuzz\nthreshold: -5\ncapabilities: {REVIEW: 2}",
)

text = st.one_of(
    st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=30),
    st.sampled_from(HOSTILE_TEXT),
)
value = st.one_of(
    text,
    st.sampled_from(NUMBERS),
    st.sampled_from(JSON_TEXTS),
    st.sampled_from(PATHS),
    st.sampled_from(SIGNAL_IDS),
    st.sampled_from(NAMES),
    st.integers().map(str),
)
small_timeout = st.sampled_from(("0", "0.01", "-1", "nan", "inf", "1e400", "soon", ""))

# each command: its positional arguments, then the options it may be given
GRAMMAR: dict[tuple[str, ...], tuple[int, tuple[str, ...]]] = {
    ("post",): (
        0,
        (
            "--type",
            "--ps-id",
            "--entry-id",
            "--topic",
            "--prompt",
            "--context",
            "--capability",
            "--posted-by",
            "--blackboard",
            "--after",
            "--key",
            "--correlation-id",
            "--read-key",
            "--write-key",
        ),
    ),
    ("claim",): (1, ("--agent", "--token")),
    ("complete",): (1, ("--agent", "--artifact", "--knowledge", "--token")),
    ("fail",): (1, ("--agent", "--error", "--token")),
    ("retry",): (1, ("--posted-by",)),
    ("budget",): (1, ("--usd", "--tokens", "--by", "--reason")),
    ("webhooks",): (0, ("--blackboard",)),
    ("show",): (1, ("--at",)),
    ("signals",): (0, ("--status", "--type", "--capability", "--blackboard", "--limit", "--at")),
    ("match",): (1, ()),
    ("agents",): (0, ()),
    ("expire",): (0, ()),
    ("events",): (0, ("--blackboard", "--since", "--limit")),
    ("write",): (
        1,
        (
            "--blackboard",
            "--author",
            "--type",
            "--value",
            "--text",
            "--section",
            "--role",
            "--label",
            "--confidence",
            "--depends-on",
            "--topic",
            "--meta",
            "--replaces",
            "--token",
        ),
    ),
    ("read",): (1, ("--blackboard", "--at")),
    ("entries",): (0, ("--blackboard", "--type", "--topic", "--prefix", "--at", "--limit")),
    ("summary",): (0, ("--blackboard",)),
    ("import",): (1, ()),
    ("export",): (1, ()),
    ("worker",): (0, ("--agent", "--concurrency", "--board", "--grace", "--head-start")),
    ("watch",): (0, ("--type", "--topic", "--blackboard", "--since")),
    ("wait",): (1, ()),
    ("db", "upgrade"): (0, ()),
}


@st.composite
def command_lines(draw) -> list[str]:
    command = draw(st.sampled_from(sorted(GRAMMAR)))
    positional, options = GRAMMAR[command]
    argv = [*draw(st.sampled_from(([], ["--json"]))), *command]
    argv += [draw(value) for _ in range(positional)]
    for option in draw(st.lists(st.sampled_from(options), max_size=6)) if options else []:
        argv += [option, draw(value)]
    if command in (("watch",), ("wait",)):
        argv += ["--timeout", draw(small_timeout)]  # never block
    if command == ("worker",):
        argv.append("--once")
    return argv


def events_written(db: Path) -> int:
    if not db.exists():
        return 0
    with contextlib.closing(sqlite3.connect(db)) as conn:
        try:
            return conn.execute("SELECT count(*) FROM events").fetchone()[0]
        except sqlite3.OperationalError:
            return 0


def run_in_process(argv: list[str]) -> tuple[int, str, str]:
    from blackboard.infrastructure.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stopped:  # argparse: usage errors, --help
            code = stopped.code if isinstance(stopped.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def check(argv: list[str], code: int, stdout: str, stderr: str, written: int) -> None:
    shown = f"blackboard {argv!r}: exit {code}\nstdout: {stdout[-2000:]}\nstderr: {stderr[-2000:]}"
    assert code in ALLOWED, shown
    assert "Traceback" not in stderr and "Traceback" not in stdout, shown
    if code != 0:
        assert stderr.strip(), f"no message for a refusal: {shown}"
    if code == 2:
        assert written == 0, f"bad input wrote {written} event(s): {shown}"


def agents_folder(root: Path, frontmatter: str) -> Path:
    folder = root / "agents"
    folder.mkdir(exist_ok=True)
    (folder / "ps-researcher.md").write_text(
        "---\nname: ps-researcher\ncapabilities: {RESEARCH: 0.95, REVIEW: 0.9}\n---\nYou research.\n",
        encoding="utf-8",
    )
    (folder / "fuzz.md").write_text(f"---\n{frontmatter}\n---\nbody\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def board_root(tmp_path_factory) -> Path:
    """One SQLite file for every in-process example (migrated once), with a signal on it."""
    root = tmp_path_factory.mktemp("fuzz")
    agents_folder(root, "name: ps-fuzz")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        patch.setenv("BLACKBOARD_DB", f"sqlite:///{root / 'board.db'}")
        patch.setenv("BLACKBOARD_AGENTS_DIR", str(root / "agents"))
        code, _, stderr = run_in_process(
            ["post", "--type", "RESEARCH", "--ps-id", "ps-1", "--entry-id", "e-1", "--topic", "seed"]
        )
    assert code == 0, stderr
    return root


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(argv=command_lines(), frontmatter=st.sampled_from(YAML_TEXTS))
@example(argv=["budget", "--", "--usd", ""], frontmatter=YAML_TEXTS[0])  # an empty extra: no suggestion
def test_generated_command_lines_in_process(board_root, monkeypatch, argv, frontmatter):
    db = board_root / "board.db"
    monkeypatch.chdir(board_root)  # a relative path the fuzz names stays in here
    monkeypatch.setenv("BLACKBOARD_DB", f"sqlite:///{db}")
    monkeypatch.setenv("BLACKBOARD_AGENTS_DIR", str(agents_folder(board_root, frontmatter)))
    before = events_written(db)

    code, stdout, stderr = run_in_process(argv)

    check(argv, code, stdout, stderr, events_written(db) - before)


def _encodable(argv: list[str]) -> bool:
    try:
        return all("\x00" not in a and os.fsencode(a) is not None for a in argv)
    except UnicodeEncodeError:
        return False


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(argv=command_lines().filter(_encodable))
def test_generated_command_lines_through_the_executable(tmp_path_factory, agents_dir, argv):
    root = tmp_path_factory.mktemp("fuzz-exe")
    db = root / "board.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    env.update(BLACKBOARD_DB=f"sqlite:///{db}", BLACKBOARD_AGENTS_DIR=str(agents_dir))

    done = subprocess.run(
        [BLACKBOARD, *argv], env=env, cwd=root, capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL
    )

    stdout, stderr = (done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))
    check(argv, done.returncode, stdout, stderr, events_written(db))


@pytest.mark.parametrize(
    "argv",
    [["import", "a\x00b"], ["export", "ps-1", "--output", "a\x00b"]],
    ids=["import", "export"],
)
def test_a_file_name_holding_a_nul_is_bad_input(tmp_path, monkeypatch, capsys, argv):
    """Found by the generated command lines: only a caller in the process can pass a NUL (exec refuses one)."""
    from blackboard.infrastructure.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BLACKBOARD_DB", f"sqlite:///{tmp_path / 'board.db'}")
    assert main(["post", "--type", "RESEARCH", "--ps-id", "ps-1", "--entry-id", "e-1", "--topic", "t"]) == 0
    capsys.readouterr()
    assert main(argv) == 2
    assert "must be" in capsys.readouterr().err
    assert not list(tmp_path.glob("a*"))
