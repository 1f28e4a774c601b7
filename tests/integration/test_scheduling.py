"""The scheduler of `make test` (tests/scheduling.py) reads the `one_process` mark: under pytest-xdist on two
processes, the tests of a sample file that carries the mark share one process, while the same tests in a file that
only mentions the mark (a comment, a string) are spread over both; a mark put where the scheduler cannot see it stops
the run with a message saying where the mark belongs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.scheduling import marks_one_process

TESTS = """
import os

import pytest

{mark}


@pytest.mark.parametrize("n", range(4))
def test_says_its_process(n):
    with open(os.environ["RAN_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{{__name__}} {{os.environ.get('PYTEST_XDIST_WORKER', 'main')}}\\n")
"""
MARKED = "pytestmark = pytest.mark.one_process"
LISTED = 'pytestmark = [pytest.mark.filterwarnings("ignore"), pytest.mark.one_process]'
MENTIONED = '# pytestmark = pytest.mark.one_process\nNOTE = "pytestmark = pytest.mark.one_process"'
ON_A_TEST = "import pytest\n\n\n@pytest.mark.one_process\ndef test_alone():\n    pass\n"


def run(folder: Path, files: dict[str, str], *options: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    """pytest on a sample tree of `files` (with the suite's scheduler as its plugin); which processes ran
    each file's tests."""
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\nmarkers =\n    one_process: one process a file\n")
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    log = folder / "ran.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON"))}
    env.update(PYTHONPATH=str(ROOT), RAN_LOG=str(log))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tests.scheduling",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
        ]
        + [*options, str(folder)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    ran: dict[str, set[str]] = defaultdict(set)
    counts: dict[str, int] = defaultdict(int)
    for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        module, worker = line.split()
        ran[module].add(worker)
        counts[module] += 1
    return done, {module: (counts[module], ran[module]) for module in ran}


def test_a_marked_file_runs_on_one_process_and_an_unmarked_one_spreads(tmp_path):
    marked, output = run(
        tmp_path / "marked",
        {"test_marked.py": TESTS.format(mark=MARKED), "test_listed.py": TESTS.format(mark=LISTED)},
        "-n",
        "2",
    )
    mentioned, spread = run(
        tmp_path / "mentioned", {"test_mentioned.py": TESTS.format(mark=MENTIONED)}, "-n", "2"
    )

    assert marked.returncode == 0, marked.stdout + marked.stderr
    assert mentioned.returncode == 0, mentioned.stdout + mentioned.stderr
    assert {module: (count, len(workers)) for module, (count, workers) in output.items()} == {
        "test_marked": (4, 1),
        "test_listed": (4, 1),
    }
    # the control: the same four tests without the mark are four pieces of work, and the scheduler's first
    # round hands each process one, so they land on both
    assert spread["test_mentioned"][0] == 4 and spread["test_mentioned"][1] == {"gw0", "gw1"}


def test_a_mark_on_a_test_rather_than_its_file_stops_the_run(tmp_path):
    done, ran = run(tmp_path / "stray", {"test_stray.py": ON_A_TEST}, "-n", "0")

    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "put `pytestmark = pytest.mark.one_process` at the top level of test_stray.py" in done.stderr
    assert ran == {}


@pytest.mark.parametrize(
    ("text", "marked"),
    [
        (MARKED, True),
        (LISTED, True),
        ("pytestmark: list = [pytest.mark.one_process]", True),
        ("from pytest import mark\npytestmark = (mark.one_process,)", True),
        (MENTIONED, False),
        ("pytestmark = pytest.mark.faults", False),
        ("def helper():\n    pytestmark = pytest.mark.one_process", False),
        ("pytestmark = pytest.mark.one_process(", False),  # not Python: pytest reports it
    ],
)
def test_the_scheduler_reads_the_mark_from_the_module_s_own_pytestmark(tmp_path, text, marked):
    path = tmp_path / "test_sample.py"
    path.write_text(f"import pytest\n{text}\n", encoding="utf-8")

    assert marks_one_process(path) is marked
