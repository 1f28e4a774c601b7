"""The harness that runs the docs' examples fails when an example is wrong: pages of plain shell commands,
written for each rule, run through the same script and the same bash as the real pages."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.docs.examples import Ran, blocks, run, shell_script

HELPER = Path(__file__).with_name("helper.py")


def run_page(tmp_path: Path, markdown: str, timeout: float = 30.0) -> tuple[Ran, str]:
    tmp_path.mkdir(exist_ok=True)
    page = tmp_path / "page.md"
    page.write_text(markdown)
    folder = tmp_path / "work"
    folder.mkdir()
    script = shell_script(blocks(page))
    env = {**os.environ, "DOCS_PYTHON": sys.executable, "DOCS_HELPER": str(HELPER), "DOCS_TMP": str(tmp_path)}
    ran = run(script, folder, env, timeout)
    return ran, ran.failure(script)


def test_a_page_whose_commands_all_succeed_passes_and_its_blocks_share_one_shell(tmp_path):
    ran, _ = run_page(tmp_path, '```bash\nX=42\n```\n\ntext\n\n```bash\n[ "$X" = 42 ]\n```\n')
    assert ran.returncode == 0, ran.output


def test_a_failing_command_fails_the_page_naming_its_line(tmp_path):
    ran, failure = run_page(tmp_path, "# page\n\n```bash\ntrue\nfalse   # a comment\ntrue\n```\n")
    assert ran.returncode != 0 and failure == "page.md:5: exit 1", ran.output


def test_a_command_that_says_exit_n_must_exit_n(tmp_path):
    passes, _ = run_page(tmp_path / "a", "```bash\nsh -c 'exit 3' \\\n  --x   # exit 3: refused\n```\n")
    fails, failure = run_page(tmp_path / "b", "```bash\ntrue   # exit 3\n```\n")
    assert passes.returncode == 0, passes.output
    assert fails.returncode != 0 and "page.md:2: exit 0, the page says exit 3" in failure


def test_a_block_not_run_is_not_run(tmp_path):
    ran, _ = run_page(tmp_path, "<!-- example: not run, it would fail -->\n```bash\nfalse\n```\n")
    assert ran.returncode == 0, ran.output


def test_a_background_job_that_fails_by_itself_fails_the_page(tmp_path):
    ran, failure = run_page(tmp_path, "```bash\nsh -c 'exit 4' &\nsleep 1\n```\n")
    assert ran.returncode != 0 and "ended by itself with exit 4" in failure, ran.output


def test_a_background_job_still_running_at_the_end_is_stopped_and_the_page_passes(tmp_path):
    ran, _ = run_page(
        tmp_path,
        "```bash\nsleep 600 | cat &\n```\n"
        "<!-- example: in the background -->\n```bash\nwhile sleep 1; do :; done\n```\n",
    )
    assert ran.returncode == 0 and ran.seconds < 20, ran.output


def test_a_page_that_hangs_is_stopped_at_its_timeout(tmp_path):
    ran, failure = run_page(tmp_path, "```bash\nsleep 600\n```\n", timeout=2)
    assert ran.returncode is None and failure == "still running at the timeout"


FAKE = """#!/bin/sh
case "$1" in
  ui) shift; while [ $# -gt 0 ]; do [ "$1" = --port ] && port=$2; shift; done
      exec "{python}" -m http.server --bind 127.0.0.1 "$port" ;;
  worker) [ "$3" = fails ] && exit 1
          echo "worker $3 started ($3/1, concurrency 1)" >&2; exec sleep 600 ;;
esac
"""


@pytest.fixture
def fake_blackboard(tmp_path, monkeypatch):
    """A `blackboard` whose `ui` is a plain web server (it answers 200 to anyone) and whose worker fails."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "blackboard").write_text(FAKE.format(python=sys.executable))
    (bin_dir / "blackboard").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_a_server_is_started_on_a_free_port_checked_and_stopped(tmp_path, fake_blackboard):
    ran, _ = run_page(
        tmp_path, "```bash\nblackboard ui --port 8765   # it runs until Ctrl-C\necho after\n```\n"
    )
    assert ran.returncode == 0 and "after" in ran.output and ":8765/" not in ran.output, ran.output


def test_a_server_given_a_token_must_refuse_a_request_without_it(tmp_path, fake_blackboard):
    ran, failure = run_page(tmp_path, "```bash\nblackboard ui --token secret-1234\n```\n")
    assert ran.returncode != 0 and "did not answer 401" in failure, ran.output


def test_a_worker_runs_in_the_background_once_it_said_it_started_and_is_stopped_at_the_end(
    tmp_path, fake_blackboard
):
    ran, _ = run_page(tmp_path, "```bash\nblackboard worker --agent x &\necho after\n```\n")
    assert ran.returncode == 0 and ran.output.index("after") < ran.output.index("worker x started"), (
        ran.output
    )


def test_a_worker_that_never_starts_fails_the_page(tmp_path, fake_blackboard):
    ran, failure = run_page(tmp_path, "```bash\nblackboard worker --agent fails\necho after\n```\n")
    assert ran.returncode != 0 and "the worker did not start" in failure and "after" not in ran.output
